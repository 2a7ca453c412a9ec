# The real Claude Code under `haven run` inside an ordinary devcontainer
# (the devcontainer CLI's `up` on the private dockerd, as in
# test_devcontainer.sh), as the container's user dev: Claude Code runs
# its scripted session against the stand-in model API
# (tests/agents/mock_model_api.py) and its Bash and Write tools do the
# stand-in's work.  No namespaces can be made there, so the policy is
# claude-code with the weaker forms accepted (best_effort: private_tmp,
# protect_after_run, network_ports: the shipped one is refused by name):
# the stand-in listens inside the container on 127.0.0.1:443, the only
# port the allowlist allows (api.anthropic.com's), and Claude Code is
# pointed at it (ANTHROPIC_BASE_URL, plain HTTP; a token, not an API key:
# without ANTHROPIC_API_KEY there is no gateway to refuse).  One more line
# is needed there: CLAUDE_CONFIG_DIR in the project.  Without namespaces
# the copy-on-write ~/.claude is read-only and its private entries are
# never granted, and Claude Code's Bash tool makes
# ~/.claude/session-env/SESSION before every command: each one fails with
# EACCES (its Write tool works).  Checked from
# outside the container: the file the agent wrote is in the project,
# ~/.ssh/id_rsa never reached the stand-in, a connect to a listener on a
# port the allowlist does not name (127.0.0.1:8080) was refused, and
# nothing the agent started is left.  Each hostile step is first run
# without haven (the control): it shows the key and connects.
#
# Claude Code is the native program from the npm cache
# tests/integration/test_agent_claude.sh installs (HAVEN_AGENT_CACHE),
# bound read-only into the container; skipped where it is not cached.

CC_AGENT_CACHE=${HAVEN_AGENT_CACHE:-/var/cache/haven-tests/agents}
CC_CLAUDE_DIR=$CC_AGENT_CACHE/claude-code
CC_MOCK_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../agents" && pwd)/mock_model_api.py
CC_KEY=H-CCDEV-PRIVATE-KEY
TEST_PREPARE_devcontainer_claude_user=ct_devcontainer_cli

# ct_cc_claude: CC_REL, the CLI's native program (the npm package's
# platform part), relative to the cache's claude-code directory.
ct_cc_claude() {
  local arch
  case $(uname -m) in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) skip "no Claude Code build for $(uname -m)" ;;
  esac
  CC_REL=node_modules/@anthropic-ai/claude-code-linux-$arch/claude
}

# ct_cc_result N: what Claude Code sent back to the stand-in for step N.
ct_cc_result() {
  jq -r --argjson n "$1" 'select(.event == "tool_result" and .step == $n) | .content' cc/mock.jsonl
}

test_devcontainer_claude_user() {
  need_docker
  [ -x "$DEVC_CLI" ] || fail "the devcontainer CLI is not in $DEVC_CLI_DIR"
  local ws=$PWD/ws-claude ctr=$CTR_PREFIX-devc-claude sleep_n=$((97700 + RANDOM)) proj=/workspaces/ws-claude
  ct_cc_claude
  [ -f "$CC_CLAUDE_DIR/$CC_REL" ] && [ -x "$CC_CLAUDE_DIR/$CC_REL" ] \
    || skip "Claude Code is not cached in $CC_CLAUDE_DIR (tests/integration/run.sh agent_claude installs it)"
  mkdir -p "$ws/.devcontainer" cc
  chown "$CT_USER_ID:$CT_USER_ID" "$ws"
  cp "$CC_MOCK_PY" cc/
  # The policy: claude-code with the weaker forms a run without
  # namespaces offers, Claude Code's own traffic off (telemetry, updates:
  # the stand-in is all it may reach), and its state in the project (see
  # the top: the read-only ~/.claude would fail every Bash command).
  cat > cc/claude.yaml <<'YAML'
name: h-ccdev-claude-code
extends: claude-code
best_effort: [private_tmp, protect_after_run, network_ports]
env:
  set:
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
    DISABLE_TELEMETRY: "1"
    DISABLE_AUTOUPDATER: "1"
    CLAUDE_CONFIG_DIR: /workspaces/ws-claude/.claude-state
YAML
  # The script: read the key, write a file in the project, connect to a
  # port the allowlist does not name, leave a process; then the answer.
  jq -n --arg p "$proj" --arg sleep "$sleep_n" '[
    {tool: "Bash", input: {command: "cat ~/.ssh/id_rsa; echo ssh-rc=$?", description: "key"}},
    {tool: "Write", input: {file_path: ($p + "/hello.py"), content: "print(\"hello from claude\")\n"}},
    {tool: "Bash", input: {command: "(exec 3<>/dev/tcp/127.0.0.1/8080) 2>&1 && echo port8080-connected || echo port8080-refused",
                           description: "connect"}},
    {tool: "Bash", input: {command: ("(setsid sleep " + $sleep + " > /dev/null 2>&1 &); echo left-behind; echo tmpdir=$TMPDIR"), description: "leave"}},
    {text: "all done"}]' > cc/script.json
  : > cc/mock.jsonl
  chmod -R a+rX cc
  cat > "$ws/.devcontainer/devcontainer.json" <<JSON
{
  "name": "h-ccdev-claude",
  "image": "$IMAGE",
  "remoteUser": "dev", "updateRemoteUserUID": false,
  "runArgs": ["--name", "$ctr"],
  "mounts": [
    "source=/usr,target=/usr,type=bind,readonly",
    "source=$INST/usr/local,target=/usr/local,type=bind,readonly",
    "source=$CC_CLAUDE_DIR,target=/opt/claude-code,type=bind,readonly",
    "source=$PWD/cc,target=/opt/cc,type=bind"
  ]
}
JSON
  defer "dk rm -f $ctr"
  ct_devc up "$ws" > up.json 2> up.log \
    || fail "devcontainer up: $(tail -1 up.json | jq -r '.message // empty' 2>/dev/null) $(grep -a -m1 'Error' up.log | cut -c1-300)"
  [ "$(tail -1 up.json | jq -r .outcome)" = success ] || fail "devcontainer up: $(tail -1 up.json)"
  # Outside haven, as root in the container: the stand-in on
  # 127.0.0.1:443, and a listener on 127.0.0.1:8080 that logs each
  # connection it accepts.
  dk exec -d -u 0 "$ctr" python3 /opt/cc/mock_model_api.py /opt/cc/script.json /opt/cc/mock.jsonl \
    /opt/cc/mock.ready 127.0.0.1 443 || fail "docker exec the stand-in"
  dk exec -d -u 0 "$ctr" python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 8080)); s.listen(8)
open("/opt/cc/8080.ready", "w").close()
while True:
    c, _ = s.accept(); open("/opt/cc/8080.log", "a").write("accepted\n"); c.close()' || fail "docker exec the listener"
  local i
  for i in $(seq 100); do [ -e cc/mock.ready ] && [ -e cc/8080.ready ] && break; sleep 0.1; done
  { [ -e cc/mock.ready ] && [ -e cc/8080.ready ]; } || fail "the stand-in or the listener did not start"
  # The key in dev's home, and the controls: without haven, dev reads it
  # and connects to 8080.
  ct_devc exec "$ws" /usr/bin/bash -c "mkdir -p ~/.ssh && echo $CC_KEY > ~/.ssh/id_rsa && chmod 600 ~/.ssh/id_rsa
    cat ~/.ssh/id_rsa; (exec 3<>/dev/tcp/127.0.0.1/8080) && echo port8080-connected" > control.out 2>&1
  assert_contains "$(cat control.out)" "$CC_KEY" "the control: dev reads ~/.ssh/id_rsa without haven"
  assert_contains "$(cat control.out)" "port8080-connected" "the control: dev connects to 8080 without haven"
  rm -f cc/8080.log
  # Claude Code, as dev, from the workspace, under haven.
  ct_devc exec "$ws" /usr/bin/env ANTHROPIC_BASE_URL=http://127.0.0.1:443 ANTHROPIC_AUTH_TOKEN=h-ccdev-token \
    /usr/local/bin/haven run --policy /opt/cc/claude.yaml -- "/opt/claude-code/$CC_REL" \
    -p "Do the steps" --dangerously-skip-permissions > agent.out 2> agent.err < /dev/null
  local rc=$?
  echo "claude: rc=$rc: $(tail -3 agent.out)"
  sed 's/^/agent.err: /' agent.err | tail -20
  sed 's/^/mock: /' cc/mock.jsonl | cut -c1-300
  assert_eq 0 "$rc" "haven run claude's exit status ($(tail -3 agent.err | tr '\n' ' '))"
  assert_contains "$(cat agent.out)" "all done" "Claude Code's final answer"
  assert_contains "$(cat agent.err)" "namespaces cannot be made" "haven's note (the run without namespaces)"
  # The scripted work landed in the project, on the outside.
  assert_eq 'print("hello from claude")' "$(cat "$ws/hello.py" 2>/dev/null)" "hello.py the agent wrote"
  # The key: the Bash step ran, and what it sent back holds none of it.
  assert_contains "$(ct_cc_result 0)" "ssh-rc=" "the agent's cat ~/.ssh/id_rsa step"
  assert_not_contains "$(ct_cc_result 0)" "$CC_KEY" "~/.ssh/id_rsa read by the agent"
  ! grep -q "$CC_KEY" cc/mock.jsonl || fail "the key reached the stand-in"
  # The port the allowlist does not name: refused, nothing accepted.
  assert_contains "$(ct_cc_result 2)" "port8080-refused" "the agent's connect to 127.0.0.1:8080"
  [ ! -s cc/8080.log ] || fail "the listener on 8080 accepted a connection from the agent"
  # Nothing left: the process the agent left behind was ended with the
  # run, and no haven is still running in the container.
  assert_contains "$(ct_cc_result 3)" "left-behind" "the agent's background process step"
  local left
  for i in $(seq 20); do
    left=$(dk exec "$ctr" pgrep -af "sleep $sleep_n|/usr/local/bin/haven")
    [ -n "$left" ] || break
    sleep 0.1
  done
  [ -z "$left" ] || fail "left in the container after the run: $left"
  # The scratch TMPDIR (best_effort private_tmp) is removed with the run.
  local tmpdir
  tmpdir=$(ct_cc_result 3 | sed -n 's/^tmpdir=//p')
  [[ $tmpdir == */haven-tmp-* ]] || fail "the agent's TMPDIR is not haven's scratch directory: '$tmpdir'"
  ! dk exec "$ctr" test -e "$tmpdir" || fail "the scratch TMPDIR $tmpdir is left in the container"
}
