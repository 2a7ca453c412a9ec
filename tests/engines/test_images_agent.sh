# The real Claude Code, in the Claude Code image (images/,
# built as test_images.sh builds it), does the scripted session of
# tests/integration/agent_lib.sh under `docker run --runtime=haven-claude-code`
# (a runtime registered with `haven install docker --policy claude-code`).
#
# The world is an --internal Docker network on a TEST-NET subnet (as in
# test_docker_egress.sh: haven's resolver drops private answers):
#   "api":  network aliases api.anthropic.com (and the policy's other
#           names, statsig.anthropic.com and registry.npmjs.org); runs
#           tests/agents/mock_model_api.py (plain HTTP on 443).  The agent
#           image has no python3, so this container's image is made here:
#           only the merged-/usr links (bin -> usr/bin, lib64 -> usr/lib64,
#           ...), with the host's /usr bound in read-only (the host's
#           python3 and its libraries);
#   "evil": network alias evil.example, logging every connection to 443.
# Docker's embedded DNS answers both names; haven's refusal is the only
# thing between the agent and evil.example.
#
# The agent runs as the image's user (agent, uid 1000) with the project
# bound on /workspace, ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY given with
# -e (the policy passes both by name) next to two secrets it must drop,
# its ~/.claude a host directory (home_allow keeps it; settings.json there
# turns telemetry off: CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC given with
# -e would be dropped, the policy does not pass it) and a host ~/.ssh
# mounted into its home (hide_home must hide it).  The image has node, not
# python: the script's Python steps become Node ones (img_agent_script).
# The checks are on the host, as agent_lib.sh's: the work landed in the
# project, nothing hostile did, no process outlived the container.

source "$here_lib/../integration/agent_lib.sh"

# A first build of the image is longer than the suite's per-test limit.
TEST_TIMEOUT_images_claude_code_agent_session_docker=900
# How long the agent's session may take (the whole test, image import
# included, takes about 20 s here with the tarball cached).
IMG_AGENT_LIMIT=240

# img_agent_script SECONDS: agent_steps for a project on /workspace in
# Claude Code's tools, the Python steps as Node ones (same step numbers,
# same markers: tests-rc=, evil-refused / evil-connected), and the process
# left behind `sleep SECONDS`: a number of this test's, so that the check
# on the host finds only its own (other suites on the machine run
# agent_steps' left-behind sleep).
img_agent_script() {
  local sleeper=$1 evil='const s = require("net").connect(443, "evil.example");
s.setTimeout(3000, () => { console.log("evil-timeout"); process.exit(0); });
s.on("connect", () => { console.log("evil-connected"); process.exit(0); });
s.on("error", (e) => console.log("evil-refused", e.code));'
  agent_steps /workspace | jq --arg evil "$evil" --arg sleeper "sleep $sleeper" 'map(
    if .write and (.write | endswith("/calc.py")) then
      {write: "/workspace/calc.js", content: "exports.add = (a, b) => a + b;\n"}
    elif .write and (.write | endswith("/test_calc.py")) then
      {write: "/workspace/test_calc.js",
       content: "const assert = require(\"assert\");\nconst { add } = require(\"./calc\");\nassert.strictEqual(add(2, 3), 5);\nconsole.log(\"ok\");\n"}
    elif .sh and (.sh | startswith("python3 test_calc.py")) then {sh: "node test_calc.js 2>&1; echo tests-rc=$?"}
    elif .sh and (.sh | test("evil.example")) then {sh: ("node -e \u0027" + $evil + "\u0027")}
    elif .sh and (.sh | test("sleep [0-9]+ ")) then {sh: (.sh | sub("sleep [0-9]+ "; $sleeper + " "))}
    else . end)
    | map(if .sh then {tool: "Bash", input: {command: .sh, description: "step"}}
          elif .write then {tool: "Write", input: {file_path: .write, content: .content}}
          else . end)'
}

# img_agent_project: the project P (README.md committed; the identity in
# the repository's own config, as the container has no ~/.gitconfig),
# owned by the image's user.
img_agent_project() {
  P=$PWD/project
  mkdir -p "$P"
  echo "# calc" > "$P/README.md"
  git -C "$P" init -q && git -C "$P" config user.name "Haven Tester" \
    && git -C "$P" config user.email tester@haven.invalid \
    && git -C "$P" add README.md && git -C "$P" commit -q -m init || fail "the project's first commit"
  chown -R 1000:1000 "$P"
}

# hgit ARGS...: git on the host, as root, in the project uid 1000 owns.
hgit() { git -c safe.directory='*' -C "$P" "$@"; }

# img_agent_world: DKE_NET, the "api" container running the stand-in
# (script $PWD/mock/script.json, log MOCKLOG) and the "evil" one (IMG_EVIL).
img_agent_world() {
  local root=$PWD/pyroot tag=haven-test/pyhost:$$ api
  mkdir -p "$root"/{usr,etc,tmp,proc,sys,dev}
  ln -s usr/bin "$root/bin"
  ln -s usr/sbin "$root/sbin"
  ln -s usr/lib "$root/lib"
  ln -s usr/lib64 "$root/lib64"
  echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
  tar -C "$root" -cf pyhost.tar . && dk import pyhost.tar "$tag" > /dev/null 2> import.err \
    || fail "import the stand-in's image: $(cat import.err)"
  defer "dk rmi -f '$tag' > /dev/null 2>&1"
  dke_network
  MOCKLOG=$PWD/mock/mock.jsonl
  : > "$MOCKLOG"
  api=$(new_name api)
  # The policy's other names too: should Claude Code ask for them,
  # Docker's DNS answers here rather than asking the host's upstream.
  dk run -d --name "$api" --network "$DKE_NET" --network-alias api.anthropic.com \
    --network-alias statsig.anthropic.com --network-alias registry.npmjs.org \
    -v /usr:/usr:ro -v "$AGENT_MOCK_PY:/mock.py:ro" -v "$PWD/mock:/out" "$tag" \
    python3 /mock.py /out/script.json /out/mock.jsonl /out/mock.ready 0.0.0.0 443 > /dev/null 2> run.err \
    || fail "the stand-in's container: $(cat run.err)"
  wait_for 20 test -e "$PWD/mock/mock.ready" || fail "the stand-in did not start: $(dk logs "$api" 2>&1 | tail -5)"
  IMG_EVIL=$(new_name evil)
  dk run -d --name "$IMG_EVIL" --network "$DKE_NET" --network-alias evil.example "$IMAGE" \
    sh -c "touch /tmp/conn.log; nc -ll -p 443 -e sh -c 'echo 443 >> /tmp/conn.log'" > /dev/null 2> run.err \
    || fail "evil: $(cat run.err)"
  wait_for 20 dke_listens "$IMG_EVIL" 1 || fail "evil does not listen on 443"
}

test_images_claude_code_agent_session_docker() {
  images_docker_prepare claude-code
  command -v git > /dev/null || skip "git missing"
  img_agent_project
  mkdir -p mock
  local sleeper=$((900000 + RANDOM))
  img_agent_script "$sleeper" > mock/script.json || fail "the script"
  ! grep -q python3 mock/script.json || fail "a Python step agent_steps added is not mapped to Node: $(grep -o '"[^"]*python3[^"]*"' mock/script.json)"
  grep -q "sleep $sleeper" mock/script.json || fail "agent_steps has no left-behind sleep step to map"
  img_agent_world
  # The user's ~/.ssh, mounted into the home by mistake; their
  # ~/.claude with settings that turn Claude Code's own traffic off.
  local ssh=$PWD/ssh state=$PWD/claude-state n id trail rc m
  mkdir -p "$ssh" "$state"
  echo "PRIVATE-KEY-MARKER" > "$ssh/id_ed25519"
  printf '{"env": {"DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}}\n' \
    > "$state/settings.json"
  chown -R 1000:1000 "$ssh" "$state"
  chmod 700 "$ssh" "$state"
  n=$(new_name claude)
  dk run -d --name "$n" --runtime "$RT" --network "$DKE_NET" \
    -v "$P:/workspace" -v "$state:/home/agent/.claude" -v "$ssh:/home/agent/.ssh" \
    -e ANTHROPIC_BASE_URL=http://api.anthropic.com:443 -e ANTHROPIC_API_KEY=sk-ant-test-key \
    -e GITHUB_TOKEN=ghp_SECRET_MARKER -e AWS_SECRET_ACCESS_KEY=AWS_SECRET_MARKER \
    "$IMAGE_TAG" claude -p "Add a calculator with a test and commit it" --dangerously-skip-permissions \
    > /dev/null 2> run.err || fail "docker run claude: $(cat run.err)"
  id=$(dk_state "$n" '{{.Id}}')
  trail=/var/log/haven/containers/$id.jsonl
  defer "rm -f '$trail'"
  local t0=$SECONDS
  rc=$(timeout -k 5 "$IMG_AGENT_LIMIT" "$DOCKER_CLI" wait "$n") \
    || fail "claude did not end within $IMG_AGENT_LIMIT s: $(dk logs "$n" 2>&1 | tail -5)"
  dk logs "$n" > agent.out 2> agent.err
  echo "# claude: rc=$rc in $((SECONDS - t0)) s: $(cat agent.out)"
  assert_eq 0 "$rc" "claude's exit status ($(tail -5 agent.err))"
  assert_contains "$(cat agent.out)" "all done" "claude's final answer"
  jq -se 'all(.[]; .event != "request" or .path == "/v1/messages" and .auth or .method == "GET")' "$MOCKLOG" \
    > /dev/null || fail "requests the stand-in did not expect: $(grep request "$MOCKLOG" | head -5)"
  assert_eq claude-code "$(head -1 "$trail" | jq -r 'select(.event == "start") | .policy')" "the trail's policy"
  m=$(head -1 "$trail" | jq -r '.monitor_pid')

  # The work landed in the project on the host.
  assert_eq "# calc" "$(tool_result 0)" "the agent read the project"
  assert_eq "exports.add = (a, b) => a + b;" "$(cat "$P/calc.js")" "calc.js on the host"
  assert_contains "$(tool_result 3)" "tests-rc=0" "the agent's test run"
  assert_eq "Add calc by Haven Tester <tester@haven.invalid>" "$(tool_result 4)" "the agent's commit"
  assert_eq "Add calc" "$(hgit log --format=%s -1)" "the commit on the host"
  assert_contains "$(hgit show --stat HEAD)" "test_calc.js" "the commit's files"
  # Its state went to the host's ~/.claude, bound in (home_allow).
  [ -n "$(ls -A "$state" | grep -vx settings.json)" ] || fail "nothing of Claude Code's state in the host's ~/.claude"

  # Nothing hostile did anything.
  assert_not_contains "$(tool_result 5)" "PRIVATE-KEY-MARKER" "~/.ssh read"
  local env_seen
  env_seen=$(tool_result 6)
  assert_not_contains "$env_seen" "SECRET_MARKER" "secrets given with -e in the agent's environment"
  assert_contains "$env_seen" "HAVEN=1" "the agent's environment"
  assert_contains "$env_seen" "ANTHROPIC_BASE_URL=http://api.anthropic.com:443" "the API's address"
  assert_contains "$(cat agent.err)" "env: not passed into the container" "the runtime's note"
  assert_contains "$(cat agent.err)" "GITHUB_TOKEN" "the note's names"
  [ ! -e "$P/.git/hooks/pre-commit" ] || fail "the agent planted .git/hooks/pre-commit: $(cat "$P/.git/hooks/pre-commit")"
  assert_contains "$(tool_result 8)" "evil-refused" "evil.example from the agent"
  assert_eq "" "$(dk exec "$IMG_EVIL" cat /tmp/conn.log)" "connections evil.example's container got"
  jq -se 'any(.[]; .event == "dns-refused" and .name == "evil.example")' "$trail" > /dev/null \
    || fail "no dns-refused record for evil.example in the trail: $(grep -c . "$trail") records"
  assert_contains "$(tool_result 9)" "left-behind" "the agent's background process step"
  # Outside the project: the image's root is read-only, the home a
  # tmpfs gone with the container.
  local outside
  outside=/outside-$$
  assert_contains "$(tool_result 10)" "/etc/haven-agent-test: Read-only file system" "writing the image's /etc"
  assert_contains "$(tool_result 10)" "$outside: Read-only file system" "writing beside the project"
  assert_contains "$(tool_result 10)" "wrote /home/agent/.profile" "writing the container's home"
  [ ! -e "$ssh/.profile" ] && [ ! -e "$state/.profile" ] || fail "the home's write reached a host directory"
  # Nothing outlives the container: its processes, its monitor.
  dk rm -f "$n" > /dev/null || fail "docker rm $n"
  local left what
  wait_for 2 sh -c "! pgrep -f 'sleep $sleeper\$'"
  left=$(pgrep -f "sleep $sleeper\$")
  if [ -n "$left" ]; then
    what=$(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)")
    kill $left
    fail "a process outlived the container: $what"
  fi
  [[ "$m" =~ ^[0-9]+$ ]] || fail "no monitor_pid in the trail: $(head -1 "$trail")"
  wait_for 10 sh -c "[ ! -e /proc/$m ] || grep -q '^State:.*Z' /proc/$m/status" \
    || fail "the monitor $m outlived the container"
}
