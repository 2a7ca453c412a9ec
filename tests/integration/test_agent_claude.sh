# The real Claude Code (from npm) does ordinary and hostile work
# inside `haven run --policy claude-code`, against a scripted stand-in for
# the Messages API reachable only as api.anthropic.com.  The machinery
# (world, script, checks) is in agent_lib.sh, shared with
# test_agent_codex.sh.

source "$(dirname "${BASH_SOURCE[0]}")/agent_lib.sh"

CLAUDE_CODE_VERSION=${HAVEN_CLAUDE_CODE_VERSION:-2.1.197}

# need_claude_code: CLAUDE, the CLI's native executable (the npm package
# is a launcher whose postinstall npm 11 does not run by default; the
# platform package holds the program itself).
need_claude_code() {
  local arch
  arch=$(npm_arch) || skip "no Claude Code build for $(uname -m)"
  need_npm_agent claude-code "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
    "@anthropic-ai/claude-code-linux-$arch/claude"
  CLAUDE=$AGENT_BIN
}

# The npm install is fetched before the test's clock starts (harness.sh):
# a first download can take longer than the test's 90 s.
TEST_PREPARE_agent_claude_code_haven_run=need_claude_code

# The shared script in Claude Code's tools: Bash and Write.
claude_script() { # PROJECT
  agent_steps "$1" | jq 'map(
    if .sh then {tool: "Bash", input: {command: .sh, description: "step"}}
    elif .write then {tool: "Write", input: {file_path: .write, content: .content}}
    else . end)'
}

# claude_gateway_policy FILE: claude-code (which serves the Messages API
# through haven's gateway when ANTHROPIC_API_KEY is in haven's
# environment), with Claude Code's non-essential traffic off.  IS_SANDBOX
# lets --dangerously-skip-permissions run as root (see policies/README.md,
# "Agents' own sandboxes inside haven").  No base URL: the policy points
# Claude Code at the gateway.
claude_gateway_policy() {
  cat > "$1" <<'YAML'
name: agent-test
extends: claude-code
env:
  set:
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
    DISABLE_TELEMETRY: "1"
    DISABLE_AUTOUPDATER: "1"
    IS_SANDBOX: "1"
YAML
}

# The key only in haven's environment: Claude Code runs its scripted,
# streamed session through the gateway, which alone holds the key.
test_agent_claude_code_haven_run() {
  need_haven
  need_claude_code
  agent_project
  local key
  key=$(gateway_key sk-ant-api03-)
  # The shared steps, then the leak scan (step 11), then the final answer.
  claude_script "$P" | jq --arg scan "$(leak_scan_step "$key")" \
    '.[:-1] + [{tool: "Bash", input: {command: $scan, description: "scan"}}] + .[-1:]' > script.json
  gateway_world api.anthropic.com "$PWD/script.json" registry.npmjs.org statsig.anthropic.com
  claude_gateway_policy "$P.pol/agent.yaml"
  AGENT_ENV="ANTHROPIC_API_KEY=$key"
  gateway_run "$P.pol/agent.yaml" -- "$CLAUDE" -p "Add a calculator with a test and commit it" \
    --dangerously-skip-permissions
  assert_eq 0 "$AGENT_RC" "claude's exit status ($(tail -5 agent.err))"
  assert_contains "$AGENT_OUT" "all done" "claude's final answer"
  jq -se 'all(.[]; .event != "request" or .path == "/v1/messages" or .method == "GET")' "$MOCKLOG" \
    > /dev/null || fail "requests the stand-in did not expect: $(grep request "$MOCKLOG" | head -5)"
  jq -se 'any(.[]; .event == "request" and .stream)' "$MOCKLOG" > /dev/null || fail "no streamed request"
  # Every request reached the stand-in over TLS, through haven, with the
  # real key; never the placeholder.
  check_stand_in_keys "$key" x-api-key
  check_agent_work
  local scan
  scan=$(tool_result 11)
  assert_contains "$scan" $'\nclean' "the leak scan in the sandbox"
  [[ $scan =~ environ\ read:\ ([^$'\n']*,)?claude(,|$'\n') ]] \
    || fail "the leak scan did not read Claude Code's environment: $scan"
  local env_seen
  env_seen=$(tool_result 6)
  assert_contains "$env_seen" "ANTHROPIC_API_KEY=$GW_PLACEHOLDER" "the agent's environment"
  assert_contains "$env_seen" "ANTHROPIC_BASE_URL=http://127.0.0.1:8961" "the agent's environment"
  assert_not_contains "$env_seen" "SSL_CERT_FILE" "the agent's environment"
  check_no_key_on_host "$key" "Claude Code's run"
  # Nothing went to the API's name directly (the world's listener for it).
  assert_not_contains "$(cat "$PWLOG")" "203.0.113.1 " "a direct connection to api.anthropic.com"
  # Claude Code's transcript of this project is data, kept for real in
  # the user's home (made by haven on this first run), where the next run
  # and the host's `claude --resume` find it.  Everything else it wrote
  # in ~/.claude (shell snapshots, session state, todos...) stayed in the
  # project's copy: the real ~/.claude holds projects/ only.
  local dashed
  dashed=$(printf '%s' "$P" | sed 's/[^a-zA-Z0-9]/-/g')
  ls "$AGENT_HOME/.claude/projects/$dashed/"*.jsonl > /dev/null 2>&1 \
    || fail "no transcript in $AGENT_HOME/.claude/projects/$dashed: $(find "$AGENT_HOME/.claude" | head -20)"
  assert_eq "projects" "$(ls -A "$AGENT_HOME/.claude")" "what Claude Code wrote for real in ~/.claude"
  check_agent_contained
}

TEST_PREPARE_agent_claude_code_gateway_killed=need_claude_code

# The gateway (the monitor) killed while Claude Code runs a command: its
# next request fails, nothing more reaches the provider, and the sandbox
# has no other path with the key (it never had the key).
test_agent_claude_code_gateway_killed() {
  need_haven
  need_claude_code
  agent_project
  local key m i
  key=$(gateway_key sk-ant-api03-)
  jq -n '[{tool: "Bash", input: {command: "touch gw-kill-now; while [ ! -e gw-killed ]; do sleep 0.1; done; echo slept",
                                  description: "wait"}},
          {tool: "Bash", input: {command: "touch after-kill; echo after-kill", description: "after"}},
          {text: "all done"}]' > script.json
  gateway_world api.anthropic.com "$PWD/script.json" registry.npmjs.org statsig.anthropic.com
  claude_gateway_policy "$P.pol/agent.yaml"
  # Claude Code retries a failed request (10 times by default, backing
  # off): twice is enough to see them fail.
  printf '    CLAUDE_CODE_MAX_RETRIES: "2"\n' >> "$P.pol/agent.yaml"
  AGENT_ENV="ANTHROPIC_API_KEY=$key"
  gateway_run "$P.pol/agent.yaml" -- "$CLAUDE" -p "Run the commands" --dangerously-skip-permissions &
  local bg=$!
  defer "kill $bg 2> /dev/null"
  for i in $(seq 600); do [ -e "$P/gw-kill-now" ] && break; sleep 0.1; done
  [ -e "$P/gw-kill-now" ] || fail "Claude Code never ran the first command: $(cat agent.out agent.err | tail -5)"
  m=$(gateway_monitor)
  kill -KILL "$m"
  for i in $(seq 50); do [ -e "/proc/$m" ] || break; sleep 0.1; done
  [ ! -e "/proc/$m" ] || fail "monitor $m survived SIGKILL"
  # What reached the stand-in until now (a side request of Claude Code's
  # in flight at the kill may have landed): nothing more may.
  sleep 0.5
  local before
  before=$(jq -s '[.[] | select(.event == "request")] | length' "$MOCKLOG")
  touch "$P/gw-killed"
  wait "$bg"
  gateway_result
  [ "$AGENT_RC" != 0 ] || assert_not_contains "$AGENT_OUT" "all done" "Claude Code after the kill"
  assert_eq "$before" "$(jq -s '[.[] | select(.event == "request")] | length' "$MOCKLOG")" \
    "requests at the stand-in after the kill"
  [ -z "$(tool_result 0)" ] || fail "the first command's result reached the provider after the kill"
  assert_not_contains "$(cat "$PWLOG")" "203.0.113.1 " "a direct connection to api.anthropic.com"
  check_stand_in_keys "$key" x-api-key
  check_no_key_on_host "$key" "the run whose gateway was killed"
  [ ! -e "$P/after-kill" ] || fail "the step after the kill ran"
}

TEST_PREPARE_agent_claude_code_gateway_bearer=need_claude_code

# The key as a bearer token (credentials.api header authorization, from
# ANTHROPIC_AUTH_TOKEN, as a gateway or a `claude setup-token` user has
# it): Claude Code gets the placeholder in ANTHROPIC_AUTH_TOKEN and the
# stand-in gets "Authorization: Bearer KEY", no x-api-key.
test_agent_claude_code_gateway_bearer() {
  need_haven
  need_claude_code
  agent_project
  local key
  key=$(gateway_key sk-ant-oat01-)
  jq -n --arg scan "$(leak_scan_step "$key")" '[{tool: "Bash", input: {command: "env | sort", description: "env"}},
    {tool: "Bash", input: {command: $scan, description: "scan"}}, {text: "all done"}]' > script.json
  gateway_world api.anthropic.com "$PWD/script.json" registry.npmjs.org statsig.anthropic.com
  claude_gateway_policy "$P.pol/agent.yaml"
  cat >> "$P.pol/agent.yaml" <<'YAML'
credentials:
  api:
    - {host: api.anthropic.com, header: authorization, token_env: ANTHROPIC_AUTH_TOKEN}
YAML
  AGENT_ENV="ANTHROPIC_AUTH_TOKEN=$key"
  gateway_run "$P.pol/agent.yaml" -- "$CLAUDE" -p "Run the commands" --dangerously-skip-permissions
  assert_eq 0 "$AGENT_RC" "claude's exit status ($(tail -5 agent.err))"
  assert_contains "$AGENT_OUT" "all done" "claude's final answer"
  check_stand_in_keys "$key" authorization
  jq -se 'all(.[]; .event != "request" or .headers["x-api-key"] == null)' "$MOCKLOG" > /dev/null \
    || fail "an x-api-key reached the stand-in"
  assert_contains "$(tool_result 1)" $'\nclean' "the leak scan in the sandbox"
  assert_contains "$(tool_result 0)" "ANTHROPIC_AUTH_TOKEN=$GW_PLACEHOLDER" "the agent's environment"
  assert_not_contains "$(tool_result 0)" "ANTHROPIC_API_KEY=" "the agent's environment"
  check_no_key_on_host "$key" "Claude Code's run with a bearer token"
}

TEST_PREPARE_agent_claude_code_as_user=need_claude_code

# The same session with haven run by an ordinary user (uid 65534) on
# this host, whose /dev/net/tun only root opens: pasta cannot run, so the
# allowlist's way out is haven's forwarder (docs/egress.md, "The way
# out").  The model API goes through the gateway (the key only in haven's
# environment); the agent's own TCP to a listed name goes through the
# forwarder: an extra step prints the sandbox's default route (lo: the
# forwarder's, pasta's is an interface of its own) and what the world's
# listener for registry.npmjs.org answered.
test_agent_claude_code_as_user() {
  need_haven
  need_claude_code
  command -v setpriv > /dev/null || skip "setpriv missing (util-linux)"
  local way_env=""
  if setpriv --reuid=65534 --regid=65534 --clear-groups test -w /dev/net/tun; then
    # Where the user can open tun, pasta would be chosen: force the
    # forwarder, the way this test is about.
    way_env=HAVEN_EGRESS_WAY=forwarder
  fi
  agent_project
  local key route_step
  key=$(gateway_key sk-ant-api03-)
  route_step='awk '\''$2 == "00000000" {print "route", $1}'\'' /proc/net/route; python3 -c "import socket
s = socket.create_connection((\"registry.npmjs.org\", 443), 5); print(\"world:\", s.makefile().readline().strip())" 2>&1'
  claude_script "$P" | jq --arg scan "$(leak_scan_step "$key")" --arg route "$route_step" \
    '.[:-1] + [{tool: "Bash", input: {command: $scan, description: "scan"}},
               {tool: "Bash", input: {command: $route, description: "route"}}] + .[-1:]' > script.json
  gateway_world api.anthropic.com "$PWD/script.json" registry.npmjs.org statsig.anthropic.com
  claude_gateway_policy "$P.pol/agent.yaml"
  chmod 755 "$WORK" "$PWD" "$PWD/tls" "$P.pol"
  chmod 644 "$GW_CA" "$P.pol/agent.yaml" "$GW_HOSTS"
  chown -R 65534:65534 "$P" "$AGENT_HOME"
  # The checks read the user's repository as root: git's protected
  # configuration (command scope) trusts it.
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=$P
  AGENT_ENV="ANTHROPIC_API_KEY=$key $way_env"
  GW_AS_USER=65534
  GW_HAVEN=$(world_readable_copy "$HAVEN")
  gateway_run "$P.pol/agent.yaml" -- "$CLAUDE" -p "Add a calculator with a test and commit it" \
    --dangerously-skip-permissions
  assert_eq 0 "$AGENT_RC" "claude's exit status as uid 65534 ($(tail -5 agent.err))"
  assert_contains "$AGENT_OUT" "all done" "claude's final answer"
  assert_not_contains "$(cat agent.err)" "pasta" "haven's stderr"
  jq -se 'any(.[]; .event == "request" and .stream)' "$MOCKLOG" > /dev/null || fail "no streamed request"
  check_stand_in_keys "$key" x-api-key
  check_agent_work
  assert_contains "$(tool_result 11)" $'\nclean' "the leak scan in the sandbox"
  # The forwarder: the sandbox's default route is lo, and a listed name
  # reached the world (which logged the connection).
  local way
  way=$(tool_result 12)
  assert_contains "$way" "route lo" "the sandbox's default route (the forwarder's)"
  assert_contains "$way" "world: hi 203.0.113.2 443" "registry.npmjs.org through the forwarder"
  assert_contains "$(cat "$PWLOG")" "tcp 203.0.113.2 443" "the world's log"
  assert_contains "$(tool_result 6)" "ANTHROPIC_API_KEY=$GW_PLACEHOLDER" "the agent's environment"
  check_no_key_on_host "$key" "Claude Code's run as uid 65534"
  assert_not_contains "$(cat "$PWLOG")" "203.0.113.1 " "a direct connection to api.anthropic.com"
  local dashed
  dashed=$(printf '%s' "$P" | sed 's/[^a-zA-Z0-9]/-/g')
  ls "$AGENT_HOME/.claude/projects/$dashed/"*.jsonl > /dev/null 2>&1 \
    || fail "no transcript in $AGENT_HOME/.claude/projects/$dashed: $(find "$AGENT_HOME/.claude" | head -20)"
  check_agent_contained
  [ ! -s "$EVILLOG" ] || fail "evil.example's listener was reached: $(cat "$EVILLOG")"
  # Nothing of the run left: no process of uid 65534 (monitor, relays,
  # sandbox), no connection (test_egress_forward.sh's check).
  fwd_nothing_left
}
