# Approvals with the real Claude Code (issue 30): under a policy that
# extends claude-code and marks one unlisted name `network.ask`, the
# scripted model (tests/agents/mock_model_api.py, through haven's
# gateway, as in test_agent_claude.sh) has Claude Code's Bash tool curl
# that name, then write a file, then finish.  The sandbox's resolver holds
# the lookup and files a request in the approvals directory; the test, as
# another process, sees it with `haven approve --json` and answers it
# with `haven approve ID once|deny`, or not at all (the policy's
# ask_timeout, then deny).  Checked: the request as filed, the curl's
# result in the sandbox, whether the name's HTTP server in the world was
# reached (only after "once") and its name asked upstream (only after
# "once": nothing is asked or pinned before the answer), the trail's `ask`
# record (decision and by), that the agent went on and finished, and that
# nothing of the run is left (processes, mounts, netns, requests).
#
# The world is agent_lib.sh's (gateway_world) plus unlisted.example on an
# address of its own in the world namespace, served by a small HTTP server
# that logs every request.

source "$(dirname "${BASH_SOURCE[0]}")/agent_lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/leaks.sh"

ASK_NAME=unlisted.example
ASK_ADDR=203.0.113.77
ASK_PORT=8080
# The answered tests keep the default ask_timeout (30 s: an answer under
# load never races the deadline); the test of no answer sets a short one
# (ask_policy), so that it stays short.
ASK_TIMEOUT_DEFAULT=30
ASK_TIMEOUT_SHORT=4

# The name's HTTP server (in the world namespace): answers every GET with
# "unlisted-ok" and logs "GET PATH" to LOG.  ASK_HTTP_PY ADDR PORT LOG READY.
ASK_HTTP_PY='
import http.server, sys
addr, port, log, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        with open(log, "a") as f: f.write("GET %s\n" % self.path)
        body = b"unlisted-ok\n"
        self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers()
        self.wfile.write(body)
srv = http.server.ThreadingHTTPServer((addr, port), H)
open(ready, "w").close()
srv.serve_forever()
'

TEST_PREPARE_agent_claude_code_ask_once=need_claude_code
TEST_PREPARE_agent_claude_code_ask_deny=need_claude_code
TEST_PREPARE_agent_claude_code_ask_timeout=need_claude_code

# ask_script PROJECT [again]: step 0 curls the name (the outcome, its
# exit status and how long it took into ask-outcome.txt); with "again",
# step 1 does the same into ask-again.txt; then a step writes
# ask-continued.txt whatever the curls got, and the last is the final
# answer.
ask_script() {
  local curl_step again_step=""
  curl_step="s=\$(date +%s%N); curl -sS --max-time 40 http://$ASK_NAME:$ASK_PORT/x > OUT 2>&1; "
  curl_step+="echo \"curl-rc=\$? ms=\$(( (\$(date +%s%N) - s) / 1000000 ))\" >> OUT; cat OUT"
  [ "${2:-}" = again ] && again_step=${curl_step//OUT/ask-again.txt}
  jq -n --arg p "$1" --arg c "${curl_step//OUT/ask-outcome.txt}" --arg a "$again_step" '[
    {tool: "Bash", input: {command: $c, description: "fetch"}}] +
    (if $a != "" then [{tool: "Bash", input: {command: $a, description: "fetch again"}}] else [] end) + [
    {tool: "Write", input: {file_path: ($p + "/ask-continued.txt"), content: "continued\n"}},
    {text: "all done"}]'
}

# ask_world: gateway_world with ASK_NAME in the zone at ASK_ADDR, where
# the HTTP server listens on ASK_PORT.  Sets ASK_HTTPLOG.
ask_world() {
  POLICIES_EXTRA_ZONE="\"$ASK_NAME\": {\"A\": [[\"$ASK_ADDR\", 300]]}, "
  gateway_world api.anthropic.com "$PWD/script.json" registry.npmjs.org statsig.anthropic.com
  ip -n "$EW" addr add "$ASK_ADDR/32" dev lo || fail "the name's address in the world"
  ASK_HTTPLOG=$PWD/unlisted-http.log
  : > "$ASK_HTTPLOG"
  ip netns exec "$EW" python3 -c "$ASK_HTTP_PY" "$ASK_ADDR" "$ASK_PORT" "$ASK_HTTPLOG" "$PWD/http.ready" \
    > http.err 2>&1 &
  defer "kill $!"
  wait_file "$PWD/http.ready"
}

# ask_policy FILE [SECONDS]: claude_gateway_policy with ASK_NAME:ASK_PORT
# asked, and network.ask_timeout SECONDS (default: not set).  Sets
# ASK_TIMEOUT, the seconds the run waits for an answer.
ask_policy() {
  claude_gateway_policy "$1"
  printf 'network:\n  ask: ["%s:%s"]\n' "$ASK_NAME" "$ASK_PORT" >> "$1"
  ASK_TIMEOUT=$ASK_TIMEOUT_DEFAULT
  if [ -n "${2:-}" ]; then
    printf '  ask_timeout: %ss\n' "$2" >> "$1"
    ASK_TIMEOUT=$2
  fi
}

# ask_approve ARGS...: `haven approve ARGS` as the run's user, from
# another process (the run's HOME, nothing else of the test's
# environment: the approvals directory is found from it as haven run
# found it); output in ASK_OUT, status in ASK_RC.
ask_approve() {
  ASK_OUT=$(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$AGENT_HOME" LANG=C.UTF-8 \
              timeout 20 "$HAVEN" approve "$@" 2>&1 < /dev/null)
  ASK_RC=$?
}

# ask_pending FILE: the pending requests for ASK_NAME into FILE, one
# JSON object a line (`haven approve --json`: an array, or one object a
# line).
ask_pending() {
  ask_approve --json
  [ "$ASK_RC" = 0 ] || fail "haven approve --json: status $ASK_RC: $ASK_OUT"
  echo "$ASK_OUT" | jq -c --arg n "$ASK_NAME" '(if type == "array" then .[] else . end) | select(.name == $n)' \
    > "$1" || fail "haven approve --json is not JSON: $ASK_OUT"
}

# ask_run DECISION...: the run in the background; the Nth request for
# ASK_NAME answered with the Nth DECISION (the last for any later one) as
# it appears, until the agent has written ask-continued.txt or ended;
# DECISION "none": left unanswered.  One request a lookup: the resolver
# holds the stub's A and AAAA queries under one.  Sets ASK_REQS (the
# requests seen, one JSON object a line) and ASK_IDS (those answered).
ask_run() {
  local decisions=("$@") decision bg i req id seen=" " n=0
  ASK_REQS=""
  ASK_IDS=""
  gateway_run "$P.pol/agent.yaml" -- "$CLAUDE" -p "Fetch the page, then write the file" \
    --dangerously-skip-permissions &
  bg=$!
  # A test that fails midway ends the run (haven's pid), not only the
  # shell waiting for it: Claude Code would retry the stand-in for
  # minutes once it is gone.
  defer "ask_stop $bg"
  # Claude Code's start and its first turn take 5-15 s here; the bound
  # is the test's.
  for i in $(seq 600); do
    [ -e "$P/ask-continued.txt" ] && break
    [ -e "/proc/$bg" ] || break
    ask_pending "$PWD/pending.jsonl"
    while read -r req; do
      [ -n "$req" ] || continue
      id=$(jq -r .id <<< "$req")
      [[ $seen == *" $id "* ]] && continue
      seen+="$id "
      ASK_REQS+="$req"$'\n'
      decision=${decisions[n]:-${decisions[-1]}}
      n=$((n + 1))
      [ "$decision" = none ] && continue
      ask_approve "$id" "$decision"
      [ "$ASK_RC" = 0 ] || fail "haven approve $id $decision: status $ASK_RC: $ASK_OUT"
      ASK_IDS+="$id "
      # A second answer is refused: the first one won (still there:
      # "already answered"; taken by the resolver already: no such request).
      ask_approve "$id" deny
      [ "$ASK_RC" != 0 ] || fail "a second answer to $id was taken: $ASK_OUT"
      case $ASK_OUT in
        *"already answered"* | *"no pending request $id"*) ;;
        *) fail "a second answer to $id: $ASK_OUT" ;;
      esac
    done < "$PWD/pending.jsonl"
    sleep 0.1
  done
  wait "$bg"
  gateway_result
  [ -n "$ASK_REQS" ] || fail "no request for $ASK_NAME appeared in haven approve --json ($(tail -5 agent.err))"
}

# ask_stop PID: end the run gateway_run started (SIGTERM to haven, then
# SIGKILL to its process group, timeout's), and PID, the shell waiting.
ask_stop() {
  local h i
  h=$(cat "$PWD/haven.pid" 2> /dev/null)
  if [ -n "$h" ] && kill -TERM "$h" 2> /dev/null; then
    for i in $(seq 50); do kill -0 "$h" 2> /dev/null || break; sleep 0.1; done
    kill -KILL -- "-$(ps -o pgid= "$h" | tr -d ' ')" 2> /dev/null
  fi
  kill "$1" 2> /dev/null
}

# ask_check_request: what the requests said: the name, the run's policy,
# its command (Claude Code), the project, a deadline ASK_TIMEOUT ahead.
ask_check_request() {
  local req
  req=$(head -1 <<< "$ASK_REQS")
  assert_eq "agent-test" "$(jq -r .policy <<< "$req")" "the request's policy"
  assert_contains "$(jq -r '.command | join(" ")' <<< "$req")" "$CLAUDE" "the request's command"
  assert_eq "$P" "$(jq -r .project <<< "$req")" "the request's project"
  [[ $(jq -r .run <<< "$req") =~ ^[0-9a-f]{16}$ ]] || fail "the request's run id: $req"
  [[ $(jq -r .id <<< "$req") == "$(jq -r .run <<< "$req")"-* ]] || fail "the request's id is not RUN-N: $req"
  jq -e '.type == "A" or .type == "AAAA"' <<< "$req" > /dev/null || fail "the request's type: $req"
  local left_ms
  left_ms=$(($(jq -r .deadline_ms <<< "$req") - $(date +%s%3N)))
  # Seen within 10 s of being filed (this loop looks every 0.1 s).
  if [ "$left_ms" -gt $((ASK_TIMEOUT * 1000)) ] || [ "$left_ms" -lt $((ASK_TIMEOUT * 1000 - 10000)) ]; then
    fail "the request's deadline is $left_ms ms ahead, ask_timeout ${ASK_TIMEOUT} s: $req"
  fi
}

# ask_check_trail BY DECISION...: the trail's `ask` records for ASK_NAME
# are one per request seen, in order, the Nth with the Nth DECISION (the
# last for any later one), its id and type, and BY ("approve" for an
# answer, "timeout"); where the trail names runs ("run" on the start
# record), they are the run's: the same run id as the requests'.
ask_check_trail() {
  local by=$1 trail=$AGENT_HOME/.local/state/haven/audit.log run recs
  shift
  local decisions=("$@")
  [ -f "$trail" ] || fail "no trail at $trail"
  run=$(head -1 <<< "$ASK_REQS" | jq -r .run)
  recs=$(jq -c --arg n "$ASK_NAME" 'select(.event == "ask" and .name == $n)' "$trail")
  [ -n "$recs" ] || fail "no ask record for $ASK_NAME in the trail: $(tail -5 "$trail")"
  assert_eq "$(grep -c . <<< "$ASK_REQS")" "$(grep -c . <<< "$recs")" "ask records, one per request ($recs)"
  local req n=0
  while read -r req; do
    [ -n "$req" ] || continue
    jq -se --argjson q "$req" --arg d "${decisions[n]:-${decisions[-1]}}" --arg b "$by" \
      'map(select(.id == $q.id)) | length == 1 and .[0].type == $q.type and .[0].decision == $d and .[0].by == $b' \
      <<< "$recs" > /dev/null || fail "request $req: no ask record with decision ${decisions[n]:-${decisions[-1]}}, by $by: $recs"
    n=$((n + 1))
  done <<< "$ASK_REQS"
  if jq -se 'any(.[]; .event == "start" and .run != null)' "$trail" > /dev/null; then
    jq -se --arg r "$run" 'all(.[]; .run == $r)' <<< "$recs" > /dev/null \
      || fail "ask records not of the request's run $run: $recs"
    jq -se --arg r "$run" 'any(.[]; .event == "start" and .run == $r)' "$trail" > /dev/null \
      || fail "the request's run $run is no start record's: $(grep '"start"' "$trail" | head -3)"
  fi
}

# ask_check_end: the agent went on after the curl and finished; nothing
# of the run is left: no request or answer in the approvals directory,
# nothing pending, and no process, mount, netns, cgroup or state of the
# run (tests/lib/leaks.sh).
ask_check_end() {
  assert_eq 0 "$AGENT_RC" "claude's exit status ($(tail -5 agent.err))"
  assert_contains "$AGENT_OUT" "all done" "claude's final answer"
  assert_eq "continued" "$(cat "$P/ask-continued.txt" 2> /dev/null)" "the file written after the curl"
  assert_eq "$(cat "$P/ask-outcome.txt")" "$(tool_result 0)" "what the model got back from the curl"
  local dir=$AGENT_HOME/.local/state/haven/approvals left
  left=$(ls -A "$dir" 2> /dev/null)
  [ -z "$left" ] || fail "left in the approvals directory: $left"
  ask_approve --json
  assert_eq "" "$(echo "$ASK_OUT" | jq -c '(if type == "array" then .[] else . end)')" "pending after the run"
  local pid out end=$((SECONDS + 5))
  pid=$(cat "$PWD/haven.pid")
  while ! out=$(leaks_list --haven-run "$pid"); do
    [ "$SECONDS" -lt "$end" ] || fail "the run left: $out"
    sleep 0.1
  done
}

# The request is answered "once": the held lookup gets its answer, curl
# reaches the name's server, and the trail says once, by approve.  The
# next lookup of the name (a second curl) asks again: "once" is not "for
# this run"; that one is denied.
test_agent_claude_code_ask_once() {
  need_haven
  need_claude_code
  agent_project
  ask_script "$P" again > script.json
  ask_world
  ask_policy "$P.pol/agent.yaml"
  AGENT_ENV="ANTHROPIC_API_KEY=$(gateway_key sk-ant-api03-)"
  ask_run once deny
  ask_check_request
  local outcome
  outcome=$(cat "$P/ask-outcome.txt")
  assert_contains "$outcome" "unlisted-ok" "curl after once"
  assert_contains "$outcome" "curl-rc=0 " "curl after once"
  assert_eq "GET /x" "$(cat "$ASK_HTTPLOG")" "the name's server"
  assert_contains "$(cat "$PDNSLOG")" "$ASK_NAME" "the name asked upstream once approved"
  assert_eq 2 "$(grep -c . <<< "$ASK_REQS")" "requests (the second lookup asked again)"
  assert_contains "$(cat "$P/ask-again.txt")" "curl-rc=6 " "the second curl, denied"
  assert_eq "$(cat "$P/ask-again.txt")" "$(tool_result 1)" "what the model got back from the second curl"
  ask_check_trail approve once deny
  ask_check_end
}

# Denied: the lookup fails at once after the answer (not found), the
# name is never asked upstream nor its server reached.
test_agent_claude_code_ask_deny() {
  need_haven
  need_claude_code
  agent_project
  ask_script "$P" > script.json
  ask_world
  ask_policy "$P.pol/agent.yaml"
  AGENT_ENV="ANTHROPIC_API_KEY=$(gateway_key sk-ant-api03-)"
  ask_run deny
  ask_check_request
  local outcome ms
  outcome=$(cat "$P/ask-outcome.txt")
  assert_contains "$outcome" "curl-rc=6 " "curl after deny"
  assert_contains "$outcome" "Could not resolve host: $ASK_NAME" "curl after deny"
  ms=$(sed -n 's/.*curl-rc=[0-9]* ms=\([0-9]*\).*/\1/p' <<< "$outcome")
  # Well before the deadline: the answer ended the hold.
  [ "${ms:-99999}" -lt $((ASK_TIMEOUT * 1000 / 2)) ] || fail "curl took ${ms:-?} ms with deny (ask_timeout ${ASK_TIMEOUT}s)"
  assert_eq "" "$(cat "$ASK_HTTPLOG")" "the name's server after deny"
  assert_not_contains "$(cat "$PDNSLOG")" "$ASK_NAME" "the world's DNS server after deny"
  ask_check_trail approve deny
  ask_check_end
}

# No answer: at ask_timeout the lookup is denied (decision timeout, by
# timeout), the agent goes on and finishes.
test_agent_claude_code_ask_timeout() {
  need_haven
  need_claude_code
  agent_project
  ask_script "$P" > script.json
  ask_world
  ask_policy "$P.pol/agent.yaml" "$ASK_TIMEOUT_SHORT"
  AGENT_ENV="ANTHROPIC_API_KEY=$(gateway_key sk-ant-api03-)"
  ask_run none
  ask_check_request
  local outcome ms
  outcome=$(cat "$P/ask-outcome.txt")
  assert_contains "$outcome" "curl-rc=6 " "curl after no answer"
  ms=$(sed -n 's/.*curl-rc=[0-9]* ms=\([0-9]*\).*/\1/p' <<< "$outcome")
  # Held until the deadline (less the few ms between the stub's query
  # and curl's start), and not much longer.
  if [ "${ms:-0}" -lt $((ASK_TIMEOUT * 1000 - 500)) ] || [ "$ms" -ge $((ASK_TIMEOUT * 1000 + 3000)) ]; then
    fail "curl took ${ms:-?} ms without an answer (ask_timeout ${ASK_TIMEOUT}s)"
  fi
  assert_eq "" "$(cat "$ASK_HTTPLOG")" "the name's server after no answer"
  assert_not_contains "$(cat "$PDNSLOG")" "$ASK_NAME" "the world's DNS server after no answer"
  ask_check_trail timeout timeout
  ask_check_end
}
