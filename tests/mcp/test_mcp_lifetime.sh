# One MCP session, one sandbox: a cancelled call stops its command, the
# session's end (or haven mcp's death) destroys the sandbox, haven mcp
# uses a running service (and its pool) or starts a private one, and a
# policy that does not load fails the start.

# host_step AS COMMAND: a host step of a scenario; COMMAND runs with this
# suite's helpers (lib.sh) and the service's.
host_step() {
  jq -cn --arg name "$1" --arg cmd "here=\$MCP_HERE; source \"\$MCP_HERE/lib.sh\"; $2" '{op: "host", "as": $name, cmd: $cmd}'
}

# The host-step command that prints the processes of the noted sandbox
# running COMM ARGS, waiting (bounded) until there are some (WANT=1) or
# none (WANT=0).
sandbox_cmd_wait() { # WANT PATTERN
  echo "id=\$(jq -r .note.stdout \"\$MCP_RESULTS\"); for i in \$(seq 100); do l=\$(for p in \$(sandbox_pids \$id); do tr '\\0' ' ' < /proc/\$p/cmdline 2>/dev/null; echo; done | grep -x '$2 *'); if [ $1 = 1 ]; then [ -n \"\$l\" ] && break; else [ -z \"\$l\" ] && break; fi; sleep 0.1; done; echo \"\$l\""
}

TEST_PREPARE_mcp_cancel=need_mcp_sdk
test_mcp_cancel() {
  mcp_session "$(jq -cs . <<< "
    $WHERE_STEP $NOTE_STEP
    {\"op\":\"call\",\"as\":\"sleeper\",\"background\":true,\"tool\":\"run_command\",\"arguments\":{\"argv\":[\"sleep\",\"60\"]}}
    $(host_step running "$(sandbox_cmd_wait 1 'sleep 60')")
    {\"op\":\"abort\",\"name\":\"sleeper\"}
    {\"op\":\"await\",\"as\":\"cancelled\",\"name\":\"sleeper\"}
    $(host_step gone "$(sandbox_cmd_wait 0 'sleep 60')")
    {\"op\":\"call\",\"as\":\"after\",\"tool\":\"run_command\",\"arguments\":{\"argv\":[\"echo\",\"after\"]}}")" --policy offline
  host_ok note "noting the sandbox"
  host_ok running "the sandbox's processes"
  assert_contains "$HOST_OUT" "sleep 60" "the call's command ran in the sandbox"
  # The SDK's abort sends notifications/cancelled and ends the call at once.
  assert_eq true "$(res .results.cancelled.aborted)" "the call was aborted: $(result cancelled)"
  [ "$(res .results.cancelled.elapsed_ms)" -lt 30000 ] || fail "the cancelled call took $(res .results.cancelled.elapsed_ms) ms"
  host_ok gone "the sandbox's processes after the cancel"
  [ -z "$HOST_OUT" ] || fail "the cancelled command still runs in the sandbox: $HOST_OUT"
  # The session goes on (and no answer came for the cancelled id: the SDK
  # would have said so as a transport error, mcp_session checks none).
  call_ok after "a call after the cancelled one"
  assert_eq after "$(tool_sc after stdout)"
}

TEST_PREPARE_mcp_session_end_private=need_mcp_sdk
test_mcp_session_end_private() {
  default_service_answers && skip "a service answers on /run/haven/haven.sock: haven mcp would use it"
  mcp_session "$(jq -cs . <<< "
    $WHERE_STEP $NOTE_STEP
    $(host_step svc 'set -- $(private_service_of $MCP_PID) && echo $1 $2 $(stat -c %a $(dirname $2))')
    $(host_step listed 'sock=$(private_service_of $MCP_PID | cut -d" " -f2); curl -sS --unix-socket $sock http://haven/v1/sandboxes')
    {\"op\":\"call\",\"as\":\"bg\",\"tool\":\"run_command\",\"arguments\":{\"command\":\"sleep 300 > /dev/null 2>&1 &\"}}
    $(host_step bgseen "$(sandbox_cmd_wait 1 'sleep 300')")
    {\"op\":\"close\",\"as\":\"close\"}")" --policy default
  sandbox_of_session
  host_ok svc "the private service"
  local svc_pid sock mode
  read -r svc_pid sock mode <<< "$HOST_OUT"
  [ -n "$sock" ] || fail "haven mcp started no private haven serve (its children: $HOST_OUT)"
  assert_eq 700 "$mode" "the mode of the private service's directory"
  host_ok listed "the private service's sandboxes"
  assert_eq "$ID" "$(jq -r '.sandboxes[].id' <<< "$HOST_OUT")" "the private service's sandboxes"
  assert_eq false "$(jq -r '.sandboxes[0].pooled' <<< "$HOST_OUT")" "a private service has no pool"
  host_ok bgseen "the background process"
  assert_contains "$HOST_OUT" "sleep 300"
  # The session ended: haven mcp exited 0, the private service is gone,
  # and with it the sandbox and everything it ran.
  assert_eq 0 "$(res .exit.code)" "haven mcp's exit status at the end of its input ($(jq -c .exit "$OUT"))"
  local i
  for i in $(seq 100); do kill -0 "$svc_pid" 2> /dev/null || break; sleep 0.1; done
  ! kill -0 "$svc_pid" 2> /dev/null || fail "the private service $svc_pid runs on"
  [ ! -e "$sock" ] && [ ! -e "$(dirname "$sock")" ] || fail "the private service's directory $(dirname "$sock") is left"
  SVC_DIR=$(dirname "$sock")
  sandbox_gone "$ID"
}

TEST_PREPARE_mcp_running_service=need_mcp_sdk
test_mcp_running_service() {
  start_service --pool-size 1
  local s1
  s1=$(jq -cs . <<< "
    $WHERE_STEP $NOTE_STEP
    $(host_step listed 'curl -sS --unix-socket '"$SOCK"' http://haven/v1/sandboxes')
    $(host_step children 'private_service_of $MCP_PID || echo none')
    {\"op\":\"close\",\"as\":\"close\"}")
  mcp_session "$s1" --socket "$SOCK" --policy offline
  sandbox_of_session
  local first=$ID
  host_ok listed "the service's sandboxes"
  assert_eq "$ID" "$(jq -r '.sandboxes[].id' <<< "$HOST_OUT")" "the session's sandbox is the service's"
  host_ok children "haven mcp's children"
  assert_eq none "$HOST_OUT" "haven mcp started a service of its own beside $SOCK"
  assert_eq 0 "$(res .exit.code)" "haven mcp's exit status ($(jq -c .exit "$OUT"))"
  sandbox_gone "$first"
  api GET /v1/sandboxes
  assert_eq 0 "$(jq '.sandboxes | length' <<< "$BODY")" "sandboxes left in the service: $BODY"
  # The first create of the policy started its pool: a later session's
  # sandbox comes from it (bounded wait for the refill).
  local i pooled=false
  for i in $(seq 30); do
    mcp_session "$(jq -cs . <<< "$WHERE_STEP $(host_step get 'id=$(jq -r .where.result.structuredContent.stdout "$MCP_RESULTS" | xargs basename); curl -sS --unix-socket '"$SOCK"' http://haven/v1/sandboxes/$id')")" \
      --socket "$SOCK" --policy offline
    host_ok get "the sandbox"
    pooled=$(jq -r .pooled <<< "$HOST_OUT")
    [ "$pooled" = true ] && break
    sleep 1
  done
  assert_eq true "$pooled" "a session's sandbox from the service's pool"
  sandbox_of_session
  [ "$ID" != "$first" ] || fail "a sandbox served twice"
  for i in $(seq 50); do
    api GET /v1/sandboxes
    [ "$(jq '.sandboxes | length' <<< "$BODY")" = 0 ] && break
    sleep 0.1
  done
  assert_eq 0 "$(jq '.sandboxes | length' <<< "$BODY")" "the pooled sandbox outlived its session: $BODY"
  # --socket names the service: nothing there is an error, not a private one.
  MCP_EXPECT_CONNECT=0 mcp_session '[]' --socket "$PWD/none.sock" --policy offline
  assert_eq false "$(res .connect.ok)" "connected without the service --socket named"
  [ "$(res .exit.code)" != 0 ] || fail "haven mcp --socket NOTHING exited 0"
  assert_contains "$(res .stderr)" none.sock "the error names the socket"
}

TEST_PREPARE_mcp_killed=need_mcp_sdk
test_mcp_killed() {
  start_service
  MCP_EXPECT_CONNECT=0 mcp_session "$(jq -cs . <<< "
    $WHERE_STEP $NOTE_STEP
    {\"op\":\"call\",\"as\":\"bg\",\"tool\":\"run_command\",\"arguments\":{\"command\":\"sleep 300 > /dev/null 2>&1 &\"}}
    $(host_step kill 'kill -KILL $MCP_PID')
    {\"op\":\"sleep\",\"ms\":200}")" --socket "$SOCK" --policy default
  # (The SDK may report the broken pipe: the connection is not checked.)
  assert_eq true "$(res .connect.ok)" "connected"
  sandbox_of_session
  host_ok kill "kill -KILL haven mcp"
  # Its held connection closed with it: the service destroyed the sandbox.
  local i
  for i in $(seq 100); do
    api GET /v1/sandboxes
    [ "$(jq '.sandboxes | length' <<< "$BODY")" = 0 ] && break
    sleep 0.1
  done
  assert_eq 0 "$(jq '.sandboxes | length' <<< "$BODY")" "the sandbox of a killed haven mcp: $BODY"
  sandbox_gone "$ID"
}

TEST_PREPARE_mcp_bad_policy=need_mcp_sdk
test_mcp_bad_policy() {
  printf 'extends: default\nnetwork:\n  mode: h-mcptests-bogus\n' > "$PWD/bad.yaml"
  MCP_EXPECT_CONNECT=0 mcp_session '[]' --policy "$PWD/bad.yaml"
  assert_eq false "$(res .connect.ok)" "the SDK connected to a server with a bad policy"
  assert_eq 1 "$(res .exit.code)" "haven mcp's exit status with a bad policy ($(jq -c .exit "$OUT"))"
  assert_contains "$(res .stderr)" "bad.yaml:3" "the error names FILE:LINE"
  MCP_EXPECT_CONNECT=0 mcp_session '[]' --policy h-mcptests-no-such-policy
  assert_eq false "$(res .connect.ok)"
  assert_eq 1 "$(res .exit.code)" "haven mcp's exit status with a missing policy"
  assert_contains "$(res .stderr)" h-mcptests-no-such-policy "the error names the policy"
  # A bad option: usage on stderr, exit 2, nothing on stdout.
  local rc
  timeout 20 "$HAVEN" mcp --h-mcptests-bogus < /dev/null > "$PWD/usage.out" 2> "$PWD/usage.err"
  rc=$?
  assert_eq 2 "$rc" "haven mcp with a bad option"
  [ ! -s "$PWD/usage.out" ] || fail "a bad option wrote on stdout: $(head -c 200 "$PWD/usage.out")"
  grep -qi usage "$PWD/usage.err" || fail "no usage on stderr: $(head -c 200 "$PWD/usage.err")"
}

TEST_PREPARE_mcp_sigterm=need_mcp_sdk
test_mcp_sigterm() {
  # SIGTERM (a client that stops its servers so): the runs in flight
  # cancelled, the sandbox destroyed, exit 0.
  start_service
  MCP_EXPECT_CONNECT=0 mcp_session "$(jq -cs . <<< "
    $WHERE_STEP $NOTE_STEP
    {\"op\":\"call\",\"as\":\"sleeper\",\"background\":true,\"tool\":\"run_command\",\"arguments\":{\"argv\":[\"sleep\",\"60\"]}}
    $(host_step running "$(sandbox_cmd_wait 1 'sleep 60')")
    $(host_step term 'kill -TERM $MCP_PID; for i in $(seq 100); do mcp_ended $MCP_PID && break; sleep 0.1; done; mcp_ended $MCP_PID')
    {\"op\":\"await\",\"as\":\"ended\",\"name\":\"sleeper\"}")" --socket "$SOCK" --policy offline
  assert_eq true "$(res .connect.ok)" "connected"
  sandbox_of_session
  host_ok running "the call's command"
  assert_contains "$HOST_OUT" "sleep 60"
  host_ok term "haven mcp ends within 10 s of SIGTERM"
  assert_eq 0 "$(res .exit.code)" "haven mcp's exit status after SIGTERM ($(jq -c .exit "$OUT"))"
  api GET /v1/sandboxes
  assert_eq 0 "$(jq '.sandboxes | length' <<< "$BODY")" "the sandbox after SIGTERM: $BODY"
  sandbox_gone "$ID"
}

TEST_PREPARE_mcp_concurrent=need_mcp_sdk
test_mcp_concurrent() {
  # Calls run at once: a quick one answers while a slow one runs.
  mcp_session "$(jq -cs . <<< '
    {"op":"call","as":"slow","background":true,"tool":"run_command","arguments":{"argv":["sh","-c","sleep 4; echo slow"]}}
    {"op":"call","as":"quick","tool":"run_command","arguments":{"argv":["echo","quick"]}}
    {"op":"call","as":"file","tool":"write_file","arguments":{"path":"f","content":"x"}}
    {"op":"await","as":"slowdone","name":"slow"}')" --policy offline
  call_ok quick "the quick call"
  assert_eq quick "$(tool_sc quick stdout)"
  [ "$(res .results.quick.done_at_ms)" -lt "$(res .results.slowdone.done_at_ms)" ] \
    || fail "the quick call waited for the slow one ($(res .results.quick.elapsed_ms) ms)"
  call_ok file "write_file beside a run"
  call_ok slowdone "the slow call"
  assert_eq slow "$(tool_sc slowdone stdout)"
}
