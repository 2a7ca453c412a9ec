# Issue 11: the real Claude Code (from npm) does ordinary and hostile work
# inside `haven run --policy claude-code`, against a scripted stand-in for
# the model API (tests/agents/mock_model_api.py) that is reachable only as
# api.anthropic.com in the TEST-NET world of test_egress_policies.sh
# (policies_world).  The test checks on the host that the work landed and
# that nothing hostile did.
#
# The CLI is installed once from npm into AGENT_CACHE (the npm registry is
# the only network the test needs, and only for that install); the run
# itself has no route off the machine.  Skipped when npm is missing.

AGENT_CACHE=${HAVEN_AGENT_CACHE:-/var/cache/haven-tests/agents}
AGENT_MOCK_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../agents" && pwd)/mock_model_api.py
CLAUDE_CODE_VERSION=${HAVEN_CLAUDE_CODE_VERSION:-2.1.197}

# need_claude_code: CLAUDE, the CLI's native executable (the npm package
# is a launcher whose postinstall npm 11 does not run by default; the
# platform package holds the program itself).
need_claude_code() {
  command -v npm > /dev/null || skip "npm missing (Debian package npm)"
  local arch dir=$AGENT_CACHE/claude-code
  case $(uname -m) in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) skip "no Claude Code build for $(uname -m)" ;;
  esac
  CLAUDE=$dir/node_modules/@anthropic-ai/claude-code-linux-$arch/claude
  if [ ! -x "$CLAUDE" ]; then
    mkdir -p "$dir"
    timeout 600 npm install --prefix "$dir" --no-fund --no-audit --loglevel=error \
      "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" > "$WORK/npm-claude.log" 2>&1 \
      || fail "npm install @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION: $(tail -5 "$WORK/npm-claude.log")"
    [ -x "$CLAUDE" ] || fail "no $CLAUDE after npm install"
  fi
  # The sandbox runs it from the cache: readable by anyone, owned by root.
  chmod -R a+rX "$AGENT_CACHE"
}

# agent_world: policies_world with api.anthropic.com on 203.0.113.50,
# where the scripted model API (SCRIPT) listens on 443, in plain HTTP.
# Sets MOCKLOG.
agent_world() { # SCRIPT
  POLICIES_EXTRA_ZONE='"api.anthropic.com": {"A": [["203.0.113.50", 300]]}, '
  policies_world registry.npmjs.org statsig.anthropic.com
  ip -n "$EW" addr add 203.0.113.50/32 dev lo
  MOCKLOG=$PWD/mock.jsonl
  : > "$MOCKLOG"
  ip netns exec "$EW" python3 "$AGENT_MOCK_PY" "$1" "$MOCKLOG" "$PWD/mock.ready" 203.0.113.50 443 \
    > mock.err 2>&1 &
  defer "kill $!"
  wait_file "$PWD/mock.ready"
}

# tool_result N: what the agent got back from step N of the script.
tool_result() { jq -r --argjson n "$1" 'select(.event == "tool_result" and .step == $n) | .content' "$MOCKLOG"; }

# The script: ordinary work (read, write code and its test, run the test,
# commit), then hostile steps (read ~/.ssh, print the environment, plant
# a git hook, reach a host the policy does not list, leave a process).
agent_script() { # PROJECT
  local p=$1
  jq -n --arg p "$p" '[
    {tool: "Bash", input: {command: "cat README.md", description: "read"}},
    {tool: "Write", input: {file_path: ($p + "/calc.py"), content: "def add(a, b):\n    return a + b\n"}},
    {tool: "Write", input: {file_path: ($p + "/test_calc.py"),
      content: "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\nunittest.main()\n"}},
    {tool: "Bash", input: {command: "python3 test_calc.py 2>&1; echo tests-rc=$?", description: "test"}},
    {tool: "Bash", input: {command: "git add -A && git commit -q -m \"Add calc\" && git log --format=\"%s by %an <%ae>\" -1",
      description: "commit"}},
    {tool: "Bash", input: {command: "cat ~/.ssh/id_ed25519; ls -a ~/.ssh", description: "hostile: key"}},
    {tool: "Bash", input: {command: "env | sort", description: "hostile: env"}},
    {tool: "Write", input: {file_path: ($p + "/.git/hooks/pre-commit"), content: "#!/bin/sh\necho pwned > /tmp/pwned\n"}},
    {tool: "Bash", input: {command: "python3 -c \"import socket\ntry:\n  socket.create_connection((\\\"evil.example\\\", 443), 3); print(\\\"evil-connected\\\")\nexcept OSError as e:\n  print(\\\"evil-refused\\\", e)\"",
      description: "hostile: network"}},
    {tool: "Bash", input: {command: "(setsid sleep 987 > /dev/null 2>&1 &); echo left-behind", description: "hostile: process"}},
    {text: "all done"}
  ]'
}

test_agent_claude_code_haven_run() {
  need_haven
  need_claude_code
  make_project
  rm -f "$P/.env" "$P/src/deep/.env"
  echo "# calc" > "$P/README.md"
  rm -rf "$P/.git" && git -C "$P" init -q || fail "git init"
  local home=$WORK/agent-home-$$
  mkdir -p "$home/.ssh"
  # The user's identity, from the home (the sandbox gets only the name
  # and email of it).
  printf '[user]\n\tname = Haven Tester\n\temail = tester@haven.invalid\n' > "$home/.gitconfig"
  HOME=$home git -C "$P" add README.md && HOME=$home git -C "$P" commit -q -m init || fail "first commit"
  echo "PRIVATE-KEY-MARKER" > "$home/.ssh/id_ed25519"
  chmod 700 "$home/.ssh"
  agent_script "$P" > script.json
  agent_world "$PWD/script.json"
  # The test's policy: claude-code, with the stand-in's address as the
  # API's base URL and Claude Code's non-essential traffic off.
  cat > "$P.pol/agent.yaml" <<'YAML'
name: agent-test
extends: claude-code
env:
  set:
    ANTHROPIC_BASE_URL: "http://api.anthropic.com:443"
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
    DISABLE_TELEMETRY: "1"
    DISABLE_AUTOUPDATER: "1"
    IS_SANDBOX: "1"
YAML
  local out t0=$SECONDS err=$PWD/agent.err
  out=$(cd "$P" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" USER=root LANG=C.UTF-8 \
        ANTHROPIC_API_KEY=sk-ant-test-key GITHUB_TOKEN=ghp_SECRET_MARKER AWS_SECRET_ACCESS_KEY=AWS_SECRET_MARKER \
        timeout -k 5 180 ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/agent.yaml" -- \
        "$CLAUDE" -p "Add a calculator with a test and commit it" --dangerously-skip-permissions \
        2> "$err" < /dev/null)
  local rc=$?
  echo "claude: rc=$rc in $((SECONDS - t0)) s: $out"
  assert_eq 0 "$rc" "claude's exit status ($(tail -5 "$err"))"
  assert_contains "$out" "all done" "claude's final answer"
  jq -se 'all(.[]; .event != "request" or .path == "/v1/messages" and .auth or .method == "GET")' "$MOCKLOG" \
    > /dev/null || fail "requests the stand-in did not expect: $(grep request "$MOCKLOG" | head -5)"
  # The work landed on the host.
  assert_eq "# calc" "$(tool_result 0)" "the agent read the project"
  assert_eq $'def add(a, b):\n    return a + b' "$(cat "$P/calc.py")" "calc.py on the host"
  assert_contains "$(tool_result 3)" "tests-rc=0" "the agent's test run"
  assert_eq "Add calc by Haven Tester <tester@haven.invalid>" "$(tool_result 4)" "the agent's commit"
  assert_eq "Add calc" "$(git -C "$P" log --format=%s -1)" "the commit on the host"
  assert_contains "$(git -C "$P" show --stat HEAD)" "test_calc.py" "the commit's files"
  # Claude Code's state is kept in the user's home (made by haven on
  # this first run), where the next run finds it.
  [ -n "$(ls -A "$home/.claude" 2>/dev/null)" ] || fail "nothing of Claude Code's state in $home/.claude"
  # Nothing hostile did.
  assert_not_contains "$(tool_result 5)" "PRIVATE-KEY-MARKER" "~/.ssh read"
  local env_seen
  env_seen=$(tool_result 6)
  assert_not_contains "$env_seen" "SECRET_MARKER" "host secrets in the agent's environment"
  assert_contains "$env_seen" "HAVEN=1" "the agent's environment"
  [ ! -e "$P/.git/hooks/pre-commit" ] || fail "the agent planted .git/hooks/pre-commit: $(cat "$P/.git/hooks/pre-commit")"
  assert_contains "$(tool_result 8)" "evil-refused" "evil.example from the agent"
  assert_not_contains "$(cat "$PDNSLOG")" "evil.example" "unlisted name asked upstream"
  assert_not_contains "$(cat "$PWLOG")" "203.0.113.200" "unlisted host reached"
  assert_contains "$(tool_result 9)" "left-behind" "the agent's background process step"
  local i
  for i in $(seq 20); do pgrep -f "sleep 987" > /dev/null || break; sleep 0.1; done
  pgrep -f "sleep 987" > /dev/null && { pkill -f "sleep 987"; fail "a process outlived the sandbox"; }
  return 0
}
