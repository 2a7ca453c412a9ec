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

CASK_NAME=unlisted.example
CASK_ADDR=203.0.113.77
CASK_PORT=8080
# The answered tests keep the default ask_timeout (30 s: an answer under
# load never races the deadline); the test of no answer sets a short one
# (cask_policy), so that it stays short.
CASK_TIMEOUT_DEFAULT=30
CASK_TIMEOUT_SHORT=4

# The name's HTTP server (in the world namespace): answers every GET with
# "unlisted-ok" and logs "GET PATH" to LOG.  CASK_HTTP_PY ADDR PORT LOG READY.
CASK_HTTP_PY='
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

# cask_script PROJECT [again]: step 0 curls the name (the outcome, its
# exit status and how long it took into ask-outcome.txt); with "again",
# step 1 does the same into ask-again.txt; then a step writes
# ask-continued.txt whatever the curls got, and the last is the final
# answer.
cask_script() {
  local curl_step again_step=""
  curl_step="s=\$(date +%s%N); curl -sS --max-time 40 http://$CASK_NAME:$CASK_PORT/x > OUT 2>&1; "
  curl_step+="echo \"curl-rc=\$? ms=\$(( (\$(date +%s%N) - s) / 1000000 ))\" >> OUT; cat OUT"
  [ "${2:-}" = again ] && again_step=${curl_step//OUT/ask-again.txt}
  jq -n --arg p "$1" --arg c "${curl_step//OUT/ask-outcome.txt}" --arg a "$again_step" '[
    {tool: "Bash", input: {command: $c, description: "fetch"}}] +
    (if $a != "" then [{tool: "Bash", input: {command: $a, description: "fetch again"}}] else [] end) + [
    {tool: "Write", input: {file_path: ($p + "/ask-continued.txt"), content: "continued\n"}},
    {text: "all done"}]'
}

# cask_world: gateway_world with CASK_NAME in the zone at CASK_ADDR, where
# the HTTP server listens on CASK_PORT.  Sets CASK_HTTPLOG.
cask_world() {
  POLICIES_EXTRA_ZONE="\"$CASK_NAME\": {\"A\": [[\"$CASK_ADDR\", 300]]}, "
  gateway_world api.anthropic.com "$PWD/script.json" registry.npmjs.org statsig.anthropic.com
  ip -n "$EW" addr add "$CASK_ADDR/32" dev lo || fail "the name's address in the world"
  CASK_HTTPLOG=$PWD/unlisted-http.log
  : > "$CASK_HTTPLOG"
  ip netns exec "$EW" python3 -c "$CASK_HTTP_PY" "$CASK_ADDR" "$CASK_PORT" "$CASK_HTTPLOG" "$PWD/http.ready" \
    > http.err 2>&1 &
  defer "kill $!"
  wait_file "$PWD/http.ready"
}

# cask_policy FILE [SECONDS]: claude_gateway_policy with CASK_NAME:CASK_PORT
# asked, and network.ask_timeout SECONDS (default: not set).  Sets
# CASK_TIMEOUT, the seconds the run waits for an answer.
cask_policy() {
  claude_gateway_policy "$1"
  printf 'network:\n  ask: ["%s:%s"]\n' "$CASK_NAME" "$CASK_PORT" >> "$1"
  CASK_TIMEOUT=$CASK_TIMEOUT_DEFAULT
  if [ -n "${2:-}" ]; then
    printf '  ask_timeout: %ss\n' "$2" >> "$1"
    CASK_TIMEOUT=$2
  fi
}

# cask_approve ARGS...: `haven approve ARGS` as the run's user, from
# another process (the run's HOME, nothing else of the test's
# environment: the approvals directory is found from it as haven run
# found it); output in CASK_OUT, status in CASK_RC.
cask_approve() {
  CASK_OUT=$(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$AGENT_HOME" LANG=C.UTF-8 \
              timeout 20 "$HAVEN" approve "$@" 2>&1 < /dev/null)
  CASK_RC=$?
}

# cask_pending FILE: the pending requests for CASK_NAME into FILE, one
# JSON object a line (`haven approve --json`: an array, or one object a
# line).
cask_pending() {
  cask_approve --json
  [ "$CASK_RC" = 0 ] || fail "haven approve --json: status $CASK_RC: $CASK_OUT"
  echo "$CASK_OUT" | jq -c --arg n "$CASK_NAME" '(if type == "array" then .[] else . end) | select(.name == $n)' \
    > "$1" || fail "haven approve --json is not JSON: $CASK_OUT"
}

# cask_run DECISION...: the run in the background; the Nth request for
# CASK_NAME answered with the Nth DECISION (the last for any later one) as
# it appears, until the agent has written ask-continued.txt or ended;
# DECISION "none": left unanswered.  One request a lookup: the resolver
# holds the stub's A and AAAA queries under one.  Sets CASK_REQS (the
# requests seen, one JSON object a line) and CASK_IDS (those answered).
cask_run() {
  local decisions=("$@") decision bg i req id seen=" " n=0
  CASK_REQS=""
  CASK_IDS=""
  gateway_run "$P.pol/agent.yaml" -- "$CLAUDE" -p "Fetch the page, then write the file" \
    --dangerously-skip-permissions &
  bg=$!
  # A test that fails midway ends the run (haven's pid), not only the
  # shell waiting for it: Claude Code would retry the stand-in for
  # minutes once it is gone.
  defer "cask_stop $bg"
  # Claude Code's start and its first turn take 5-15 s here; the bound
  # is the test's.
  for i in $(seq 600); do
    [ -e "$P/ask-continued.txt" ] && break
    [ -e "/proc/$bg" ] || break
    cask_pending "$PWD/pending.jsonl"
    while read -r req; do
      [ -n "$req" ] || continue
      id=$(jq -r .id <<< "$req")
      [[ $seen == *" $id "* ]] && continue
      seen+="$id "
      CASK_REQS+="$req"$'\n'
      decision=${decisions[n]:-${decisions[-1]}}
      n=$((n + 1))
      [ "$decision" = none ] && continue
      cask_approve "$id" "$decision"
      [ "$CASK_RC" = 0 ] || fail "haven approve $id $decision: status $CASK_RC: $CASK_OUT"
      CASK_IDS+="$id "
      # A second answer is refused: the first one won (still there:
      # "already answered"; taken by the resolver already: no such request).
      cask_approve "$id" deny
      [ "$CASK_RC" != 0 ] || fail "a second answer to $id was taken: $CASK_OUT"
      case $CASK_OUT in
        *"already answered"* | *"no pending request $id"*) ;;
        *) fail "a second answer to $id: $CASK_OUT" ;;
      esac
    done < "$PWD/pending.jsonl"
    sleep 0.1
  done
  wait "$bg"
  gateway_result
  [ -n "$CASK_REQS" ] || fail "no request for $CASK_NAME appeared in haven approve --json ($(tail -5 agent.err))"
}

# cask_stop PID: end the run gateway_run started (SIGTERM to haven, then
# SIGKILL to its process group, timeout's), and PID, the shell waiting.
cask_stop() {
  local h i
  h=$(cat "$PWD/haven.pid" 2> /dev/null)
  if [ -n "$h" ] && kill -TERM "$h" 2> /dev/null; then
    for i in $(seq 50); do kill -0 "$h" 2> /dev/null || break; sleep 0.1; done
    kill -KILL -- "-$(ps -o pgid= "$h" | tr -d ' ')" 2> /dev/null
  fi
  kill "$1" 2> /dev/null
}

# cask_check_request: what the requests said: the name, the run's policy,
# its command (Claude Code), the project, a deadline CASK_TIMEOUT ahead.
cask_check_request() {
  local req
  req=$(head -1 <<< "$CASK_REQS")
  assert_eq "agent-test" "$(jq -r .policy <<< "$req")" "the request's policy"
  assert_contains "$(jq -r '.command | join(" ")' <<< "$req")" "$CLAUDE" "the request's command"
  assert_eq "$P" "$(jq -r .project <<< "$req")" "the request's project"
  [[ $(jq -r .run <<< "$req") =~ ^[0-9a-f]{16}$ ]] || fail "the request's run id: $req"
  [[ $(jq -r .id <<< "$req") == "$(jq -r .run <<< "$req")"-* ]] || fail "the request's id is not RUN-N: $req"
  jq -e '.type == "A" or .type == "AAAA"' <<< "$req" > /dev/null || fail "the request's type: $req"
  local left_ms
  left_ms=$(($(jq -r .deadline_ms <<< "$req") - $(date +%s%3N)))
  # Seen within 10 s of being filed (this loop looks every 0.1 s).
  if [ "$left_ms" -gt $((CASK_TIMEOUT * 1000)) ] || [ "$left_ms" -lt $((CASK_TIMEOUT * 1000 - 10000)) ]; then
    fail "the request's deadline is $left_ms ms ahead, ask_timeout ${CASK_TIMEOUT} s: $req"
  fi
}

# cask_check_trail BY DECISION...: the trail's `ask` records for CASK_NAME
# are one per request seen, in order, the Nth with the Nth DECISION (the
# last for any later one), its id and type, and BY ("approve" for an
# answer, "timeout"); where the trail names runs ("run" on the start
# record), they are the run's: the same run id as the requests'.
cask_check_trail() {
  local by=$1 trail=$AGENT_HOME/.local/state/haven/audit.log run recs
  shift
  local decisions=("$@")
  [ -f "$trail" ] || fail "no trail at $trail"
  run=$(head -1 <<< "$CASK_REQS" | jq -r .run)
  recs=$(jq -c --arg n "$CASK_NAME" 'select(.event == "ask" and .name == $n)' "$trail")
  [ -n "$recs" ] || fail "no ask record for $CASK_NAME in the trail: $(tail -5 "$trail")"
  assert_eq "$(grep -c . <<< "$CASK_REQS")" "$(grep -c . <<< "$recs")" "ask records, one per request ($recs)"
  local req n=0
  while read -r req; do
    [ -n "$req" ] || continue
    jq -se --argjson q "$req" --arg d "${decisions[n]:-${decisions[-1]}}" --arg b "$by" \
      'map(select(.id == $q.id)) | length == 1 and .[0].type == $q.type and .[0].decision == $d and .[0].by == $b' \
      <<< "$recs" > /dev/null || fail "request $req: no ask record with decision ${decisions[n]:-${decisions[-1]}}, by $by: $recs"
    n=$((n + 1))
  done <<< "$CASK_REQS"
  if jq -se 'any(.[]; .event == "start" and .run != null)' "$trail" > /dev/null; then
    jq -se --arg r "$run" 'all(.[]; .run == $r)' <<< "$recs" > /dev/null \
      || fail "ask records not of the request's run $run: $recs"
    jq -se --arg r "$run" 'any(.[]; .event == "start" and .run == $r)' "$trail" > /dev/null \
      || fail "the request's run $run is no start record's: $(grep '"start"' "$trail" | head -3)"
  fi
}

# cask_check_end: the agent went on after the curl and finished; nothing
# of the run is left: no request or answer in the approvals directory,
# nothing pending, and no process, mount, netns, cgroup or state of the
# run (tests/lib/leaks.sh).
cask_check_end() {
  assert_eq 0 "$AGENT_RC" "claude's exit status ($(tail -5 agent.err))"
  assert_contains "$AGENT_OUT" "all done" "claude's final answer"
  assert_eq "continued" "$(cat "$P/ask-continued.txt" 2> /dev/null)" "the file written after the curl"
  assert_eq "$(cat "$P/ask-outcome.txt")" "$(tool_result 0)" "what the model got back from the curl"
  local dir=$AGENT_HOME/.local/state/haven/approvals left
  left=$(ls -A "$dir" 2> /dev/null)
  [ -z "$left" ] || fail "left in the approvals directory: $left"
  cask_approve --json
  assert_eq "" "$(echo "$CASK_OUT" | jq -c '(if type == "array" then .[] else . end)')" "pending after the run"
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
  cask_script "$P" again > script.json
  cask_world
  cask_policy "$P.pol/agent.yaml"
  AGENT_ENV="ANTHROPIC_API_KEY=$(gateway_key sk-ant-api03-)"
  cask_run once deny
  cask_check_request
  local outcome
  outcome=$(cat "$P/ask-outcome.txt")
  assert_contains "$outcome" "unlisted-ok" "curl after once"
  assert_contains "$outcome" "curl-rc=0 " "curl after once"
  assert_eq "GET /x" "$(cat "$CASK_HTTPLOG")" "the name's server"
  assert_contains "$(cat "$PDNSLOG")" "$CASK_NAME" "the name asked upstream once approved"
  assert_eq 2 "$(grep -c . <<< "$CASK_REQS")" "requests (the second lookup asked again)"
  assert_contains "$(cat "$P/ask-again.txt")" "curl-rc=6 " "the second curl, denied"
  assert_eq "$(cat "$P/ask-again.txt")" "$(tool_result 1)" "what the model got back from the second curl"
  cask_check_trail approve once deny
  cask_check_end
}

# Denied: the lookup fails at once after the answer (not found), the
# name is never asked upstream nor its server reached.
test_agent_claude_code_ask_deny() {
  need_haven
  need_claude_code
  agent_project
  cask_script "$P" > script.json
  cask_world
  cask_policy "$P.pol/agent.yaml"
  AGENT_ENV="ANTHROPIC_API_KEY=$(gateway_key sk-ant-api03-)"
  cask_run deny
  cask_check_request
  local outcome ms
  outcome=$(cat "$P/ask-outcome.txt")
  assert_contains "$outcome" "curl-rc=6 " "curl after deny"
  assert_contains "$outcome" "Could not resolve host: $CASK_NAME" "curl after deny"
  ms=$(sed -n 's/.*curl-rc=[0-9]* ms=\([0-9]*\).*/\1/p' <<< "$outcome")
  # Well before the deadline: the answer ended the hold.
  [ "${ms:-99999}" -lt $((CASK_TIMEOUT * 1000 / 2)) ] || fail "curl took ${ms:-?} ms with deny (ask_timeout ${CASK_TIMEOUT}s)"
  assert_eq "" "$(cat "$CASK_HTTPLOG")" "the name's server after deny"
  assert_not_contains "$(cat "$PDNSLOG")" "$CASK_NAME" "the world's DNS server after deny"
  cask_check_trail approve deny
  cask_check_end
}

# No answer: at ask_timeout the lookup is denied (decision timeout, by
# timeout), the agent goes on and finishes.
test_agent_claude_code_ask_timeout() {
  need_haven
  need_claude_code
  agent_project
  cask_script "$P" > script.json
  cask_world
  cask_policy "$P.pol/agent.yaml" "$CASK_TIMEOUT_SHORT"
  AGENT_ENV="ANTHROPIC_API_KEY=$(gateway_key sk-ant-api03-)"
  cask_run none
  cask_check_request
  local outcome ms
  outcome=$(cat "$P/ask-outcome.txt")
  assert_contains "$outcome" "curl-rc=6 " "curl after no answer"
  ms=$(sed -n 's/.*curl-rc=[0-9]* ms=\([0-9]*\).*/\1/p' <<< "$outcome")
  # Held until the deadline (less the few ms between the stub's query
  # and curl's start), and not much longer.
  if [ "${ms:-0}" -lt $((CASK_TIMEOUT * 1000 - 500)) ] || [ "$ms" -ge $((CASK_TIMEOUT * 1000 + 3000)) ]; then
    fail "curl took ${ms:-?} ms without an answer (ask_timeout ${CASK_TIMEOUT}s)"
  fi
  assert_eq "" "$(cat "$CASK_HTTPLOG")" "the name's server after no answer"
  assert_not_contains "$(cat "$PDNSLOG")" "$CASK_NAME" "the world's DNS server after no answer"
  cask_check_trail timeout timeout
  cask_check_end
}
