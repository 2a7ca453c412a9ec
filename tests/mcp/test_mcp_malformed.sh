# Malformed messages from a raw client (raw_client.py): each gets the
# JSON-RPC error the protocol says (or no answer, for what is no request),
# haven mcp keeps serving after each (a ping answered), and everything it
# writes on stdout is a JSON-RPC line.

# raw_error CASE CODES IDS: the case got exactly one answer, an error
# with one of CODES (space-separated) and an id among IDS (a JSON array).
raw_error() {
  local c=$1
  [ "$(jq -r --arg c "$c" '.cases[$c].alive' "$RAW")" = true ] || fail "$c: haven mcp no longer answers a ping after it"
  local got
  got=$(jq -c --arg c "$c" '.cases[$c].answers' "$RAW")
  [ "$(jq length <<< "$got")" = 1 ] || fail "$c: expected one answer, got $got"
  jq -e --arg codes "$2" --argjson ids "$3" \
    '.[0] | has("error") and (.error.code | tostring) as $k | ($codes | split(" ") | index($k)) != null
     and (.id as $i | $ids | index([$i])) != null and (.error.message | type) == "string"' <<< "$got" > /dev/null \
    || fail "$c: expected an error $2 with an id in $3, got $got"
}

# raw_silent CASE: no answer at all, and still serving.
raw_silent() {
  [ "$(jq -r --arg c "$1" '.cases[$c].alive' "$RAW")" = true ] || fail "$1: haven mcp no longer answers a ping after it"
  assert_eq "[]" "$(jq -c --arg c "$1" '.cases[$c].answers' "$RAW")" "$1: answers"
}

test_mcp_malformed() {
  local deep
  deep="$(printf '[%.0s' $(seq 200))$(printf ']%.0s' $(seq 200))"
  local script
  script=$(jq -cn --arg deep "$deep" --arg bad_utf8 "$(printf '{"jsonrpc":"2.0","id":13,"method":"ping","params":{"x":"\377\376"}}' | base64 -w0)" '[
    {case: "call_before_init", send: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"argv\":[\"true\"]}}}"},
    {case: "list_before_init", send: "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"},
    {send: "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"1999-01-01\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"0\"}}}", wait_id: "init"},
    {case: "initialized", send: "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"},
    {case: "init_again", send: "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"0\"}}}"},
    {case: "not_json", send: "{not json"},
    {case: "truncated_json", send: "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"pi"},
    {case: "number", send: "42"},
    {case: "string", send: "\"hello\""},
    {case: "batch", send: "[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}]"},
    {case: "empty_batch", send: "[]"},
    {case: "no_jsonrpc", send: "{\"id\":5,\"method\":\"ping\"}"},
    {case: "jsonrpc_1", send: "{\"jsonrpc\":\"1.0\",\"id\":6,\"method\":\"ping\"}"},
    {case: "id_bool", send: "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}"},
    {case: "id_object", send: "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}"},
    {case: "id_array", send: "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}"},
    {case: "id_null", send: "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}"},
    {case: "method_number", send: "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":42}"},
    {case: "unknown_method", send: "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"h-mcptests/nope\"}"},
    {case: "unknown_notification", send: "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/h-mcptests\"}"},
    {case: "client_response", send: "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}"},
    {case: "params_array", send: "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\",\"params\":[1]}"},
    {case: "unknown_tool", send: "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"h_mcptests_no_tool\",\"arguments\":{}}}"},
    {case: "tool_no_name", send: "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"arguments\":{}}}"},
    {case: "invalid_utf8", b64: $bad_utf8},
    {case: "too_deep", send: ("{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"ping\",\"params\":{\"a\":" + $deep + "}}")},
    {case: "huge", prefix: "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\",\"params\":{\"pad\":\"", repeat: ["a", 26214400], suffix: "\"}}", timeout: 60},
    {case: "crlf", send: "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"ping\"}\r"},
    {case: "string_id", send: "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\"}"},
    {send: "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/list\"}", wait_id: 20},
    {eof: true, timeout: 30}
  ]')
  mcp_raw "$script" --policy offline
  # Before initialize: only ping (the probes) is answered.
  raw_error call_before_init -32002 '[1]'
  raw_error list_before_init -32002 '[2]'
  # A revision haven does not speak: it answers with the one it speaks.
  local init
  init=$(jq -c '.waited["\"init\""]' "$RAW")
  [[ "$(jq -r .result.protocolVersion <<< "$init")" =~ ^20[0-9]{2}-[0-9]{2}-[0-9]{2}$ ]] \
    || fail "initialize with an unknown revision: $init"
  assert_eq haven "$(jq -r .result.serverInfo.name <<< "$init")" "serverInfo.name"
  raw_silent initialized
  raw_error init_again -32600 '[3]'
  raw_error not_json -32700 '[null]'
  raw_error truncated_json -32700 '[null]'
  raw_error number -32600 '[null]'
  raw_error string -32600 '[null]'
  # MCP has no batches: one error, not an array of answers.
  raw_error batch -32600 '[null]'
  raw_error empty_batch -32600 '[null]'
  raw_error no_jsonrpc -32600 '[5]'
  raw_error jsonrpc_1 -32600 '[6]'
  raw_error id_bool -32600 '[null]'
  raw_error id_object -32600 '[null]'
  raw_error id_array -32600 '[null]'
  raw_error id_null -32600 '[null]'
  raw_error method_number -32600 '[7]'
  raw_error unknown_method -32601 '[8]'
  raw_silent unknown_notification
  raw_silent client_response
  raw_error params_array "-32600 -32602" '[9]'
  raw_error unknown_tool -32602 '[10]'
  raw_error tool_no_name -32602 '[11]'
  raw_error invalid_utf8 -32700 '[null, 13]'
  raw_error too_deep -32700 '[null, 14]'
  # A line over the size bound is refused, not read into memory whole.
  raw_error huge -32700 '[null]'
  local got
  got=$(jq -c '.cases.crlf.answers' "$RAW")
  jq -e 'length == 1 and .[0].id == 17 and (.[0] | has("result"))' <<< "$got" > /dev/null || fail "a line ending in CRLF: $got"
  got=$(jq -c '.cases.string_id.answers' "$RAW")
  jq -e 'length == 1 and .[0].id == "abc" and (.[0] | has("result"))' <<< "$got" > /dev/null || fail "a string id: $got"
  assert_eq 6 "$(jq '.waited["20"].result.tools | length' "$RAW")" "tools/list after all that"
  assert_eq null "$(jq -c '.unexpected' "$RAW")" "answers nobody asked for"
  # Only protocol on stdout, and a clean exit at the end of the input.
  assert_eq "[]" "$(jq -c .bad_lines "$RAW")" "stdout lines that are not JSON-RPC"
  assert_eq 0 "$(jq -r .exit "$RAW")" "haven mcp's exit status at EOF"
}

# EOF while a call runs: the run is cancelled, the sandbox deleted, exit 0.
test_mcp_eof_in_flight() {
  start_service
  local script
  script=$(jq -cn '[
    {send: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"0\"}}}", wait_id: 1},
    {send: "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"},
    {send: "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"argv\":[\"sleep\",\"120\"]}}}"},
    {send: "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", wait_id: 3},
    {host: $note, "as": "note"},
    {eof: true, timeout: 30}
  ]' --arg note "here=$MCP_HERE; source $MCP_HERE/lib.sh; SOCK=$SOCK; for i in \$(seq 100); do api GET /v1/sandboxes; id=\$(jq -r '.sandboxes[0].id // empty' <<< \"\$BODY\"); [ -n \"\$id\" ] && [ \"\$(jq -r '.sandboxes[0].runs' <<< \"\$BODY\")\" = 1 ] && break; sleep 0.1; done; note_sandbox \$id; echo \$id")
  local t0=$SECONDS
  mcp_raw "$script" --socket "$SOCK" --policy offline
  assert_eq 0 "$(jq -r .exit "$RAW")" "haven mcp's exit status at EOF with a call in flight"
  [ $((SECONDS - t0)) -lt 60 ] || fail "haven mcp waited for the call to end ($((SECONDS - t0)) s)"
  assert_eq "[]" "$(jq -c .bad_lines "$RAW")" "stdout lines that are not JSON-RPC"
  api GET /v1/sandboxes
  assert_eq 0 "$(jq '.sandboxes | length' <<< "$BODY")" "the session's sandbox after EOF: $BODY"
  ID=$(jq -r .host.note.stdout "$RAW" | grep . | tail -1)
  [[ "$ID" =~ ^hvs- ]] || fail "the session's sandbox was not seen running its command: $(jq -c .host "$RAW")"
  sandbox_gone "$ID"
}
