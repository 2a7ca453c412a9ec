# The real Gemini CLI (from npm) does ordinary and hostile work inside
# `haven run --policy gemini-cli`, its key only in haven's environment:
# haven's gateway serves the Gemini API for it, against the HTTPS
# stand-in of agent_lib.sh as generativelanguage.googleapis.com.  The
# machinery (world, script, checks) is in agent_lib.sh, shared with
# test_agent_claude.sh and test_agent_codex.sh.

source "$(dirname "${BASH_SOURCE[0]}")/agent_lib.sh"

GEMINI_CLI_VERSION=${HAVEN_GEMINI_CLI_VERSION:-0.61.0}

GEMINI_NODE_VERSION=${HAVEN_GEMINI_NODE_VERSION:-22.23.3}

# need_gemini_cli: GEMINI, the CLI's bundle, and GEMINI_NODE, the node
# that runs it (the sandbox sees both: the host's files, read-only).  It
# wants Node 20 or later: the host's when it is that new, otherwise the
# official build from npm's registry (the node-linux-ARCH package, whose
# integrity npm checks; the image's install script takes the same), into
# the agents' cache, as the CLIs are (Debian 12's nodejs is 18).
need_gemini_cli() {
  local major=0 arch
  command -v node > /dev/null && major=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$major" -ge 20 ] 2> /dev/null; then
    GEMINI_NODE=$(command -v node)
  else
    arch=$(npm_arch) || skip "no Node $GEMINI_NODE_VERSION build on npm for $(uname -m)"
    need_npm_agent "node-$GEMINI_NODE_VERSION" "node-linux-$arch@$GEMINI_NODE_VERSION" "node-linux-$arch/bin/node"
    GEMINI_NODE=$AGENT_BIN
  fi
  need_npm_agent gemini-cli "@google/gemini-cli@$GEMINI_CLI_VERSION" "@google/gemini-cli/bundle/gemini.js"
  GEMINI=$AGENT_BIN
}

TEST_PREPARE_agent_gemini_cli_haven_run=need_gemini_cli

# The shared script in Gemini CLI's tools: run_shell_command and
# write_file.  Gemini CLI runs commands with git's global and system
# configuration off (GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM /dev/null,
# GIT_CONFIG_NOSYSTEM=1: its own hardening), so the commit step would not
# see the identity haven gives the sandbox (a system config,
# HV_GIT_IDENTITY_PATH in policy/git_identity_mount.h): that step names
# it again for itself.
gemini_script() { # PROJECT
  agent_steps "$1" | jq 'map(
    if .sh and (.sh | startswith("git add -A")) then
      .sh = "unset GIT_CONFIG_NOSYSTEM; export GIT_CONFIG_SYSTEM=/run/haven/git/config; " + .sh
    else . end
    | if .sh then {tool: "run_shell_command", input: {command: .sh}}
    elif .write then {tool: "write_file", input: {file_path: .write, content: .content}}
    else . end)'
}

# gemini_home_settings: the user's ~/.gemini/settings.json: the API key
# as the way to log in (the CLI asks otherwise), no folder trust prompt
# (an untrusted folder turns --yolo back to asking), no usage statistics.
gemini_home_settings() {
  mkdir -p "$AGENT_HOME/.gemini"
  cat > "$AGENT_HOME/.gemini/settings.json" <<'JSON'
{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
 "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}
JSON
}

test_agent_gemini_cli_haven_run() {
  need_haven
  need_gemini_cli
  agent_project
  gemini_home_settings
  local key
  key=$(gateway_key AIzaSy)
  # The shared steps, the leak scan (11), the final answer.
  gemini_script "$P" | jq --arg scan "$(leak_scan_step "$key")" \
    '.[:-1] + [{tool: "run_shell_command", input: {command: $scan}}] + .[-1:]' > script.json
  gateway_world generativelanguage.googleapis.com "$PWD/script.json" oauth2.googleapis.com registry.npmjs.org
  AGENT_ENV="GEMINI_API_KEY=$key"
  gateway_run gemini-cli -- "$GEMINI_NODE" "$GEMINI" -p "Add a calculator with a test and commit it" --yolo
  assert_eq 0 "$AGENT_RC" "gemini's exit status ($(tail -5 agent.err))"
  assert_contains "$AGENT_OUT" "all done" "gemini's final answer"
  # Every model request went to the Gemini API's generation and counting
  # methods, one of them streamed, through haven, with the real key;
  # never the placeholder.
  jq -se 'all(.[]; .event != "request" or (.path | test("^/v1beta/models/[^/:]+:(streamGenerateContent|generateContent|countTokens)$")))' \
    "$MOCKLOG" > /dev/null || fail "requests the stand-in did not expect: $(grep request "$MOCKLOG" | head -5)"
  jq -se 'any(.[]; .event == "request" and (.target | endswith(":streamGenerateContent?alt=sse")))' "$MOCKLOG" \
    > /dev/null || fail "no streamed request"
  check_stand_in_keys "$key" x-goog-api-key
  check_agent_work
  local env_seen scan
  env_seen=$(tool_result 6)
  assert_not_contains "$env_seen" "SSL_CERT_FILE" "the agent's environment"
  assert_not_contains "$env_seen" "SECRET_MARKER" "host secrets in the agent's environment"
  scan=$(tool_result 11)
  assert_contains "$scan" $'\nclean' "the leak scan in the sandbox"
  [[ $scan =~ environ\ read:\ ([^$'\n']*,)?node(,|$'\n') ]] \
    || fail "the leak scan did not read Gemini CLI's environment: $scan"
  check_no_key_on_host "$key" "Gemini CLI's run"
  assert_not_contains "$(cat "$PWLOG")" "203.0.113.1 " "a direct connection to generativelanguage.googleapis.com"
  check_agent_contained
}
