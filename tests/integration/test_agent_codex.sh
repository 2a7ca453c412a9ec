# The real Codex CLI (from npm) does ordinary and hostile work
# inside `haven run --policy codex`, against a scripted stand-in for the
# OpenAI Responses API reachable only as api.openai.com.  The machinery
# (world, script, checks) is in agent_lib.sh, shared with
# test_agent_claude.sh.

source "$(dirname "${BASH_SOURCE[0]}")/agent_lib.sh"

CODEX_VERSION=${HAVEN_CODEX_VERSION:-0.169.0}

# need_codex: CODEX, the CLI's native executable.  @openai/codex is a
# node launcher (bin/codex.js, no postinstall) that execs the binary of
# the platform package npm installs beside it as an optional dependency
# (@openai/codex-linux-x64, an alias of @openai/codex@VERSION-linux-x64):
# vendor/<target>/bin/codex, with rg in vendor/<target>/codex-path and a
# bwrap for its own sandbox in vendor/<target>/codex-resources.
need_codex() {
  local arch target
  arch=$(npm_arch) || skip "no Codex build for $(uname -m)"
  case $arch in
    x64) target=x86_64-unknown-linux-musl ;;
    arm64) target=aarch64-unknown-linux-musl ;;
  esac
  need_npm_agent codex "@openai/codex@$CODEX_VERSION" "@openai/codex-linux-$arch/vendor/$target/bin/codex"
  CODEX=$AGENT_BIN
}

# The npm install is fetched before each test's clock starts (harness.sh):
# a first download can take longer than the test's 90 s.
TEST_PREPARE_agent_codex_haven_run=need_codex
TEST_PREPARE_agent_codex_own_sandbox_refused=need_codex

# The shared script in Codex's tool for commands, exec_command (what
# codex 0.169 offers a gpt-5 model; files are written by commands too),
# and one more hostile step before the final answer: rewriting the
# user's Codex settings (step 11).
codex_script() { # PROJECT
  agent_steps "$1" | jq '.[:-1] + [{sh: "echo sandbox_mode = 1 >> ~/.codex/config.toml && echo appended"}] + .[-1:]
    | map(
    if .sh then {tool: "exec_command", input: {cmd: .sh, login: false, tty: false}}
    elif .write then {tool: "exec_command",
                      input: {cmd: ("printf %s " + (.content | @sh) + " > " + (.write | @sh)), login: false, tty: false}}
    else . end)'
}

# codex_home_config [BASE_URL]: the user's ~/.codex/config.toml on the
# host, which the codex policy shows copy-on-write.  Codex >= 0.119
# ignores OPENAI_BASE_URL: the base URL is openai_base_url there (or -c);
# BASE_URL "-" leaves it out.  The shell's environment policy passes the
# commands everything Codex got, so that the environment step sees what
# haven let through (by default Codex itself drops names with KEY, SECRET
# or TOKEN in them).
codex_home_config() {
  local url=${1:-http://api.openai.com:443/v1}
  mkdir -p "$AGENT_HOME/.codex"
  {
    [ "$url" = - ] || echo "openai_base_url = \"$url\""
    cat <<'TOML'
model = "gpt-5.2"

[shell_environment_policy]
inherit = "all"
ignore_default_excludes = true
TOML
  } > "$AGENT_HOME/.codex/config.toml"
  cp "$AGENT_HOME/.codex/config.toml" codex-config.toml
}

# The key only in haven's environment (OPENAI_API_KEY): Codex runs its
# scripted, streamed session through the gateway, which alone holds the
# key.  Codex takes its base URL from its own configuration only (it
# ignores the OPENAI_BASE_URL the policy sets): `-c openai_base_url=`, as
# policies/codex.yaml says.
test_agent_codex_haven_run() {
  need_haven
  need_codex
  agent_project
  codex_home_config -
  local key
  key=$(gateway_key sk-proj-)
  # The shared steps and Codex's own (11), the leak scan (12), the final
  # answer.
  codex_script "$P" | jq --arg scan "$(leak_scan_step "$key")" \
    '.[:-1] + [{tool: "exec_command", input: {cmd: $scan, login: false, tty: false}}] + .[-1:]' > script.json
  gateway_world api.openai.com "$PWD/script.json" chatgpt.com registry.npmjs.org
  # Codex's own sandbox off: haven is the sandbox (policies/README.md,
  # "Agents' own sandboxes inside haven").  `codex exec` never asks for
  # approval.
  AGENT_ENV="OPENAI_API_KEY=$key"
  gateway_run codex -- "$CODEX" exec -c openai_base_url=http://127.0.0.1:8962/v1 --sandbox danger-full-access \
    "Add a calculator with a test and commit it"
  assert_eq 0 "$AGENT_RC" "codex's exit status ($(tail -5 agent.err))"
  assert_contains "$AGENT_OUT" "all done" "codex's final answer"
  # Every model request went to the Responses API (a GET is its WebSocket
  # attempt, which the stand-in refuses), streamed, through haven, with
  # the real key; never the placeholder.
  jq -se 'any(.[]; .event == "request" and .method == "POST")
          and all(.[]; .event != "request" or .path == "/v1/responses")' \
    "$MOCKLOG" > /dev/null || fail "requests the stand-in did not expect: $(grep request "$MOCKLOG" | head -5)"
  jq -se 'any(.[]; .event == "request" and .stream)' "$MOCKLOG" > /dev/null || fail "no streamed request"
  check_stand_in_keys "$key" authorization
  check_agent_work
  check_agent_contained
  local env_seen scan
  env_seen=$(tool_result 6)
  assert_contains "$env_seen" "OPENAI_API_KEY=$GW_PLACEHOLDER" "the agent's environment"
  assert_not_contains "$env_seen" "SSL_CERT_FILE" "the agent's environment"
  scan=$(tool_result 12)
  assert_contains "$scan" $'\nclean' "the leak scan in the sandbox"
  [[ $scan =~ environ\ read:\ ([^$'\n']*,)?codex(,|$'\n') ]] \
    || fail "the leak scan did not read Codex's environment: $scan"
  check_no_key_on_host "$key" "Codex's run"
  assert_not_contains "$(cat "$PWLOG")" "203.0.113.1 " "a direct connection to api.openai.com"
  # ~/.codex is copy-on-write: Codex's session is kept in this project's
  # layer, for its next run, and the agent changed this project's copy of
  # the settings, never the user's.
  local state=$AGENT_HOME/.local/state/haven/projects
  [ -n "$(find "$state/$(basename "$P")"-*/home-layers/*/upper/.codex -path '*/sessions/*.jsonl' 2>/dev/null)" ] \
    || fail "no Codex session in this project's layer of ~/.codex ($state)"
  [ ! -e "$AGENT_HOME/.codex/sessions" ] || fail "Codex wrote its session into the user's ~/.codex"
  assert_contains "$(tool_result 11)" "appended" "the agent's write to ~/.codex/config.toml"
  cmp -s "$AGENT_HOME/.codex/config.toml" codex-config.toml \
    || fail "the agent changed the host's ~/.codex/config.toml: $(tail -2 "$AGENT_HOME/.codex/config.toml")"
}

# What happens when Codex's own sandbox is left on inside haven: its
# bubblewrap cannot make a user namespace (the agent profile answers
# clone(CLONE_NEWUSER) with EPERM, which the audit trail records), so
# every command fails and nothing runs.  The reason the docs recommend
# --sandbox danger-full-access under haven.
test_agent_codex_own_sandbox_refused() {
  need_haven
  need_codex
  agent_project
  # Codex makes its sandbox helper (codex-linux-sandbox, an alias of
  # itself) only under a CODEX_HOME outside the temporary directory.
  AGENT_HOME=$(mktemp -d /var/tmp/hvt-codex-home-XXXXXX)
  defer "rm -rf $AGENT_HOME"
  codex_home_config
  jq -n '[{tool: "exec_command", input: {cmd: "echo ran > ran.txt; echo ran", login: false, tty: false}},
          {text: "all done"}]' > script.json
  agent_world api.openai.com "$PWD/script.json" chatgpt.com registry.npmjs.org
  cat > "$P.pol/agent.yaml" <<YAML
name: agent-test
extends: codex
audit: {log: $PWD/audit.jsonl}
YAML
  AGENT_ENV="CODEX_API_KEY=sk-codex-test-key"
  agent_run "$P.pol/agent.yaml" "$CODEX" exec --sandbox workspace-write "Run one command"
  assert_eq 0 "$AGENT_RC" "codex's exit status ($(tail -5 agent.err))"
  local res
  res=$(tool_result 0)
  assert_contains "$res" "bwrap: No permissions to create new namespace" "the command under Codex's sandbox"
  assert_not_contains "$res" "ran" "the command under Codex's sandbox"
  [ ! -e "$P/ran.txt" ] || fail "the command ran"
  # clone with CLONE_NEWUSER (0x10000000) in its flags, refused by haven.
  jq -se 'any(.[]; .event == "denied" and .syscall == "clone" and .comm == "bwrap"
          and ((.args[0] | ltrimstr("0x") | explode | map(if . >= 97 then . - 87 else . - 48 end)
                | reduce .[] as $d (0; . * 16 + $d) / 268435456 | floor) % 2 == 1))' audit.jsonl > /dev/null \
    || fail "no refused clone(CLONE_NEWUSER) in the audit trail: $(grep denied audit.jsonl | head -3)"
}

TEST_PREPARE_agent_codex_gateway_killed=need_codex

# The gateway (the monitor) killed while Codex runs a command: its next
# request is refused, nothing more reaches the provider, and the sandbox
# has no other path with the key (it never had the key).  Codex 0.169
# does not give up on a refused connection ("Reconnecting... waiting for
# network", without end): once it says so, the test ends the run.
test_agent_codex_gateway_killed() {
  need_haven
  need_codex
  agent_project
  codex_home_config -
  local key m i before
  key=$(gateway_key sk-proj-)
  jq -n '[{tool: "exec_command", input: {cmd: "touch gw-kill-now; while [ ! -e gw-killed ]; do sleep 0.1; done; echo slept",
                                         login: false, tty: false}},
          {tool: "exec_command", input: {cmd: "touch after-kill; echo after-kill", login: false, tty: false}},
          {text: "all done"}]' > script.json
  gateway_world api.openai.com "$PWD/script.json" chatgpt.com registry.npmjs.org
  AGENT_ENV="OPENAI_API_KEY=$key"
  gateway_run codex -- "$CODEX" exec -c openai_base_url=http://127.0.0.1:8962/v1 --sandbox danger-full-access \
    "Run the commands" &
  local bg=$!
  # haven first: the background shell ends only when the run does.
  defer "kill -INT \$(cat $PWD/haven.pid) 2> /dev/null; kill $bg 2> /dev/null"
  for i in $(seq 600); do [ -e "$P/gw-kill-now" ] && break; sleep 0.1; done
  [ -e "$P/gw-kill-now" ] || fail "Codex never ran the first command: $(cat agent.out agent.err | tail -5)"
  m=$(gateway_monitor)
  kill -KILL "$m"
  for i in $(seq 50); do [ -e "/proc/$m" ] || break; sleep 0.1; done
  [ ! -e "/proc/$m" ] || fail "monitor $m survived SIGKILL"
  sleep 0.5
  before=$(jq -s '[.[] | select(.event == "request")] | length' "$MOCKLOG")
  # Codex's stderr from here on: its request failing and its retries.
  local n0 after
  n0=$(wc -l < agent.err)
  touch "$P/gw-killed"
  for i in $(seq 300); do
    after=$(tail -n +$((n0 + 1)) agent.err)
    [[ $after == *Reconnecting* ]] && break
    kill -0 "$bg" 2> /dev/null || break
    sleep 0.1
  done
  assert_contains "$after" "Reconnecting" "Codex's request after the kill"
  # Ctrl-C: haven passes it to Codex (which, the sandbox's first process,
  # gets only the signals it handles: not TERM).
  kill -INT "$(cat haven.pid)" 2> /dev/null
  wait "$bg"
  gateway_result
  assert_not_contains "$AGENT_OUT" "all done" "Codex after the kill"
  assert_eq "$before" "$(jq -s '[.[] | select(.event == "request")] | length' "$MOCKLOG")" \
    "requests at the stand-in after the kill"
  [ -z "$(tool_result 0)" ] || fail "the first command's result reached the provider after the kill"
  [ ! -e "$P/after-kill" ] || fail "the step after the kill ran"
  assert_not_contains "$(cat "$PWLOG")" "203.0.113.1 " "a direct connection to api.openai.com"
  check_stand_in_keys "$key" authorization
  check_no_key_on_host "$key" "the run whose gateway was killed"
}
