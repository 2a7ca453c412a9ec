# Helpers of the `haven mcp` tests (sourced by run.sh and by each test's
# process).  A test drives `haven mcp` with the official MCP TypeScript
# SDK's client (client.mjs: a scenario in, one JSON object of results
# out: mcp_session) or, for malformed messages, with raw lines
# (raw_client.py: mcp_raw), then checks the results with jq and the host
# with the service tests' helpers (tests/service/lib.sh: start_service,
# api, note_sandbox, sandbox_pids, sandbox_gone).
if [ -z "${WORK:-}" ]; then
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/h-mcp-tests.XXXXXX")
  chmod 0755 "$WORK"
  export WORK
fi
export HAVEN_TEST_SUITE=${HAVEN_TEST_SUITE:-mcp-$$}
source "$here/../service/lib.sh"
MCP_HERE=$here
export MCP_HERE

# The SDK's client, from npm, pinned; installed once into a cache by the
# tests' prepare step (need_mcp_sdk), before any test's clock starts.
MCP_SDK_SPEC=@modelcontextprotocol/sdk@1.32.2
MCP_SDK_DIR=${HAVEN_MCP_SDK:-/var/cache/haven-tests/mcp-sdk}

# need_mcp_sdk: the prepare step of every SDK test (TEST_PREPARE_<name>).
need_mcp_sdk() {
  command -v node > /dev/null || skip "node missing (Debian package nodejs)"
  command -v npm > /dev/null || skip "npm missing (Debian package npm)"
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" -ge 18 ] || skip "node $(node --version) is older than the SDK's engines (node >= 18)"
  if [ "$(jq -r .version "$MCP_SDK_DIR/node_modules/@modelcontextprotocol/sdk/package.json" 2> /dev/null)" \
      != "${MCP_SDK_SPEC##*@}" ]; then
    mkdir -p "$MCP_SDK_DIR"
    timeout 600 npm install --prefix "$MCP_SDK_DIR" --no-fund --no-audit --loglevel=error "$MCP_SDK_SPEC" \
      > "$PWD/npm.log" 2>&1 || fail "npm install $MCP_SDK_SPEC: $(tail -5 "$PWD/npm.log")"
  fi
  # The client loads on this node (a dependency that needs a newer one
  # fails here, said as such, not as a failed test).
  node --input-type=module -e "
    await import('$MCP_SDK_DIR/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js');
    await import('$MCP_SDK_DIR/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js');" \
    > "$PWD/node.log" 2>&1 || fail "the SDK's client does not load on node $(node --version): $(tail -3 "$PWD/node.log")"
}

# mcp_session STEPS [HAVEN-MCP-ARGS...]: client.mjs runs haven mcp with
# the ARGS (after "mcp") through the scenario STEPS (a JSON array, see
# client.mjs); its output is in $PWD/out.N.json, N counting the sessions
# of the test, and OUT names it.  The session must have connected unless
# MCP_EXPECT_CONNECT=0.
MCP_N=0
mcp_session() {
  local steps=$1
  shift
  MCP_N=$((MCP_N + 1))
  local scn=$PWD/scenario.$MCP_N.json
  OUT=$PWD/out.$MCP_N.json
  # (Each argument through jq -R: jq's --args would take "--policy" as
  # one of its own options.)
  local args a
  args=$(for a in "$@"; do printf '%s' "$a" | jq -Rs .; done | jq -cs .)
  jq -n --arg cmd "$HAVEN" --argjson steps "$steps" --argjson args "$args" \
    '{command: $cmd, args: (["mcp"] + $args), steps: $steps}' > "$scn" || fail "scenario $MCP_N: bad steps: $steps"
  # In the background, so that a test killed at its limit ends the client
  # (and with its pipe haven mcp) through its deferred kill.
  timeout -k 5 150 node "$MCP_HERE/client.mjs" "$MCP_SDK_DIR" "$scn" > "$OUT" 2> "$PWD/client.$MCP_N.err" &
  local cpid=$!
  defer "kill -TERM $cpid"
  wait "$cpid"
  local rc=$?
  [ $rc = 0 ] && jq -e . "$OUT" > /dev/null 2>&1 \
    || fail "client.mjs exited $rc: $(tail -c 600 "$PWD/client.$MCP_N.err") $(tail -c 300 "$OUT")"
  # What haven mcp wrote on stderr, for the test's log; a sanitizer
  # build's report there (a leak at exit) fails the test.
  jq -r '.stderr' "$OUT" | sed "s/^/mcp.$MCP_N stderr: /" >&2
  ! jq -r .stderr "$OUT" | grep -q "ERROR: .*Sanitizer" \
    || fail "haven mcp: $(jq -r .stderr "$OUT" | grep -m1 -A3 "ERROR: .*Sanitizer" | tr '\n' ' ')"
  if [ "${MCP_EXPECT_CONNECT:-1}" = 1 ]; then
    [ "$(jq -r .connect.ok "$OUT")" = true ] || fail "the SDK did not connect: $(jq -c .connect.error "$OUT") $(jq -r .stderr "$OUT" | tail -3)"
    # The SDK's transport saw only protocol on stdout (a line that is not
    # a JSON-RPC message is a transport error).
    [ "$(jq '.transport_errors | length' "$OUT")" = 0 ] || fail "transport errors: $(jq -c .transport_errors "$OUT")"
  fi
}

# res FILTER: jq -r FILTER over the last session's output.
res() { jq -r "$1" "$OUT"; }
# result NAME: the step's result (JSON).
result() { jq -c --arg n "$1" '.results[$n]' "$OUT"; }
# tool_text NAME: the text of a call's result.
tool_text() { jq -r --arg n "$1" '.results[$n].text // empty' "$OUT"; }
# tool_sc NAME FIELD: a field of a call's structuredContent.
tool_sc() { jq -r --arg n "$1" --arg f "$2" '.results[$n].result.structuredContent[$f]' "$OUT"; }
# tool_error NAME: "true" when a call's result says isError.
tool_error() { jq -r --arg n "$1" '.results[$n].result.isError // false' "$OUT"; }

# call_ok NAME WHAT: the call answered, and not with isError.
call_ok() {
  [ "$(jq -r --arg n "$1" '.results[$n] | has("result")' "$OUT")" = true ] || fail "$2: no result: $(result "$1")"
  [ "$(tool_error "$1")" = false ] || fail "$2: isError: $(tool_text "$1")"
}

# call_refused NAME WHAT: the call answered with isError true.
call_refused() {
  [ "$(jq -r --arg n "$1" '.results[$n] | has("result")' "$OUT")" = true ] || fail "$2: no result: $(result "$1")"
  [ "$(tool_error "$1")" = true ] || fail "$2: not refused (isError false): $(tool_text "$1")"
}

# host_ok NAME WHAT: a host step exited 0; HOST_OUT is its stdout.
host_ok() {
  [ "$(jq -r --arg n "$1" '.results[$n].status' "$OUT")" = 0 ] \
    || fail "$2: $(jq -r --arg n "$1" '.results[$n] | "\(.status): \(.stderr) \(.stdout)"' "$OUT" | tail -c 400)"
  HOST_OUT=$(jq -r --arg n "$1" '.results[$n].stdout' "$OUT")
}

# The steps that find the session's sandbox: its workspace is the
# commands' working directory, named by the sandbox's id.
WHERE_STEP='{"op":"call","as":"where","tool":"run_command","arguments":{"argv":["pwd"]}}'
# sandbox_of_session: ID and WS of the sandbox of the last session (from
# its "where" step).
sandbox_of_session() {
  call_ok where "pwd"
  WS=$(tool_sc where stdout | head -1)
  ID=$(basename "$WS")
  [[ "$ID" =~ ^hvs-[0-9a-f]{8}$ ]] || fail "the workspace $WS is not named by a sandbox id"
}

# A host step that notes the sandbox (its pid namespace and init) while
# the session holds it, into $PWD/ns.ID (tests/service/lib.sh's
# note_sandbox), and prints its id.
NOTE_STEP='{"op":"host","as":"note","cmd":"here=$MCP_HERE; source \"$MCP_HERE/../service/lib.sh\"; id=$(jq -r .where.result.structuredContent.stdout \"$MCP_RESULTS\" | head -1 | xargs basename); note_sandbox \"$id\"; [ -s ns.$id ] && echo $id"}'

# private_service_of PID: the `haven serve` a haven mcp (PID) started as
# its child: "PID SOCKET".
private_service_of() {
  local p
  for p in $(ps -o pid= --ppid "$1"); do
    # (Its comm is the executable's: haven-runc, haven's link target.)
    if [ "$(tr '\0' '\n' < "/proc/$p/cmdline" 2> /dev/null | sed -n 2p)" = serve ]; then
      echo "$p $(tr '\0' '\n' < "/proc/$p/cmdline" | grep -A1 -x -- --socket | tail -1)"
      return 0
    fi
  done
  return 1
}

# mcp_ended PID: haven mcp (PID) has exited: gone, or a zombie (in a host
# step node is blocked in it and has not reaped its child yet).
mcp_ended() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2> /dev/null) || return 0
  [ -z "$state" ] || [ "$state" = Z ]
}

# default_service_answers: a service answers on root's default socket
# (then haven mcp without --socket uses it, and a test of the private
# service cannot run).
default_service_answers() {
  curl -sf --max-time 2 --unix-socket /run/haven/haven.sock http://haven/v1/version > /dev/null 2>&1
}

# mcp_raw SCRIPT [HAVEN-MCP-ARGS...]: raw_client.py writes the SCRIPT's
# lines (a JSON array, see raw_client.py) to haven mcp; its output in
# $PWD/raw.json (RAW).
mcp_raw() {
  local script=$1
  shift
  printf '%s' "$script" > "$PWD/raw-script.json"
  RAW=$PWD/raw.json
  timeout -k 5 150 python3 "$MCP_HERE/raw_client.py" "$PWD/raw-script.json" -- "$HAVEN" mcp "$@" \
    > "$RAW" 2> "$PWD/raw.err" &
  local cpid=$!
  defer "kill -TERM $cpid"
  wait "$cpid" || fail "raw_client.py: $(tail -c 600 "$PWD/raw.err")"
  jq -r .stderr "$RAW" | sed 's/^/mcp stderr: /' >&2
  ! jq -r .stderr "$RAW" | grep -q "ERROR: .*Sanitizer" \
    || fail "haven mcp: $(jq -r .stderr "$RAW" | grep -m1 -A3 "ERROR: .*Sanitizer" | tr '\n' ' ')"
}
