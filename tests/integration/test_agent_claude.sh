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

test_agent_claude_code_haven_run() {
  need_haven
  need_claude_code
  agent_project
  claude_script "$P" > script.json
  agent_world api.anthropic.com "$PWD/script.json" registry.npmjs.org statsig.anthropic.com
  # The test's policy: claude-code, with the stand-in's address as the
  # API's base URL and Claude Code's non-essential traffic off.  IS_SANDBOX
  # lets --dangerously-skip-permissions run as root (see policies/README.md,
  # "Agents' own sandboxes inside haven").
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
  AGENT_ENV="ANTHROPIC_API_KEY=sk-ant-test-key"
  agent_run "$P.pol/agent.yaml" "$CLAUDE" -p "Add a calculator with a test and commit it" \
    --dangerously-skip-permissions
  assert_eq 0 "$AGENT_RC" "claude's exit status ($(tail -5 agent.err))"
  assert_contains "$AGENT_OUT" "all done" "claude's final answer"
  jq -se 'all(.[]; .event != "request" or .path == "/v1/messages" and .auth or .method == "GET")' "$MOCKLOG" \
    > /dev/null || fail "requests the stand-in did not expect: $(grep request "$MOCKLOG" | head -5)"
  check_agent_work
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
