# haven run's own askers of approvals (session/run_ask.h): the terminal
# the run started on, and HAVEN_ASK_COMMAND.  The sandbox looks up a name
# its policy marks `ask` (network.ask); the resolver holds the lookup and
# writes a request; the question is answered on the terminal (driven by
# pty_drive.py, as a person types), by `haven approve` from another
# process, or by the user's command.  The world is test_egress_policies.sh's
# (policies_world): asked.example has an address there.

ASKTTY_DRIVE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pty_drive.py

# asktty_setup [ASK_TIMEOUT]: the world, a project, a policy that asks for
# asked.example, a private state and config directory (the approvals
# directory, the approved files) and the trail at $PWD/trail.log.
asktty_setup() {
  command -v jq > /dev/null || skip "jq missing"
  policies_world allowed.example asked.example
  make_project
  { echo "name: asktest"; echo "extends: default"; echo "network:"; echo "  mode: allowlist"
    echo "  allow: [allowed.example]"; echo "  ask: [asked.example]"; echo "  ask_timeout: ${1:-15s}"
    echo "audit:"; echo "  log: $PWD/trail.log"; } > "$P.pol/ask.yaml"
  export XDG_STATE_HOME=$PWD/state XDG_CONFIG_HOME=$PWD/config
  unset HAVEN_ASK_COMMAND
}

# The sandbox's command: "ready", a second for keys typed now to be
# passed on, the lookup (an A query only), then a line read from the
# terminal.
ASKTTY_LOOKUP='echo ready; sleep 1; python3 -c "import socket; socket.gethostbyname(\"asked.example\")" 2> /dev/null \
  && echo lookup=ok || echo lookup=fail'

# asktty_run STEP...: haven run under the policy on a terminal of its own;
# the transcript in $OUT.
asktty_run() {
  OUT=$(cd "$P" && timeout -k 2 60 python3 "$ASKTTY_DRIVE" "$@" -- ip netns exec "$EH" "$HAVEN" run \
    --policy "$P.pol/ask.yaml" -- sh -c "$ASKTTY_LOOKUP; read a; echo got:\$a" 2>&1)
  echo "$OUT"
}

# The trail's ask records: "decision by" per line.
asktty_decisions() {
  jq -r 'select(.event == "ask") | "\(.decision) \(.by)"' trail.log
}

# Keys typed before the question reach the command, the question is on
# the terminal, "o" allows the lookup, keys typed after reach the command.
# Keys typed in the question's first second are not answers, even o r a
# d ("a", then "d": the user was typing for the agent): they reach the
# command after the question, in order.
test_ask_tty_once() {
  need_haven
  asktty_setup
  asktty_run expect=ready send=xyz1- 'expect=policy asktest asks: may the sandbox look up asked\.example' \
    'expect=\[o\]nce  \[r\]un .*\[a\]lways .*\[d\]eny' send=a sleep=0.2 send=d sleep=1.2 send=o \
    'expect=asked\.example: allowed once' expect=lookup=ok send='789\r' expect=got:xyz1-ad789
  assert_contains "$OUT" "exit=0" "the run ended"
  assert_eq "once terminal" "$(asktty_decisions)" "the trail's decision"
  [ -z "$(ls -A state/haven/approvals)" ] || fail "the approvals directory is not empty: $(ls -A state/haven/approvals)"
}

test_ask_tty_deny() {
  need_haven
  asktty_setup
  asktty_run expect=ready 'expect=\[d\]eny' sleep=1.1 send=d 'expect=asked\.example: denied' expect=lookup=fail \
    send='x\r' expect=got:x
  assert_contains "$OUT" "exit=0" "the run ended"
  assert_eq "deny terminal" "$(asktty_decisions)" "the trail's decision"
}

# `haven approve` from another process answers first: the question on the
# terminal is withdrawn, saying who answered, and the keys go to the
# command again.
test_ask_tty_approve_withdraws() {
  need_haven
  asktty_setup
  asktty_run expect=ready 'expect=\[d\]eny' \
    shell="id=\$('$HAVEN' approve --json | jq -r .id); '$HAVEN' approve \"\$id\" run" \
    'expect=asked\.example: (answered by approve: run|the question is withdrawn)' expect=lookup=ok \
    send='o\r' expect=got:o
  assert_contains "$OUT" "shell[0]:" "haven approve answered"
  assert_contains "$OUT" "exit=0" "the run ended"
  assert_eq "run approve" "$(asktty_decisions)" "the trail's decision"
}

# HAVEN_ASK_COMMAND, no terminal: run with the request in its
# environment and stdin /dev/null; "once" on its stdout allows; nothing is
# asked on the (absent) terminal.
test_ask_command_once() {
  need_haven
  asktty_setup
  { echo '#!/bin/sh'; echo "env | grep ^HAVEN_ASK_ > $PWD/ask.env"; echo "readlink /proc/self/fd/0 > $PWD/ask.stdin"
    echo 'echo once'; } > ask.sh
  chmod +x ask.sh
  local cmd=$PWD/ask.sh
  OUT=$(cd "$P" && HAVEN_ASK_COMMAND=$cmd timeout -k 2 60 ip netns exec "$EH" "$HAVEN" run \
    --policy "$P.pol/ask.yaml" -- sh -c "$ASKTTY_LOOKUP" 2>&1 < /dev/null)
  echo "$OUT"
  assert_contains "$OUT" "lookup=ok"
  assert_not_contains "$OUT" "asks: may the sandbox"
  assert_eq "once command" "$(asktty_decisions)" "the trail's decision"
  grep -qx "HAVEN_ASK_NAME=asked.example" ask.env || fail "HAVEN_ASK_NAME: $(cat ask.env)"
  grep -qx "HAVEN_ASK_POLICY=asktest" ask.env || fail "HAVEN_ASK_POLICY: $(cat ask.env)"
  grep -qx "HAVEN_ASK_PROJECT=$P" ask.env || fail "HAVEN_ASK_PROJECT: $(cat ask.env)"
  grep -q "^HAVEN_ASK_COMMAND_LINE=sh -c echo ready; sleep 1; python3" ask.env || fail "HAVEN_ASK_COMMAND_LINE: $(cat ask.env)"
  grep -q "^HAVEN_ASK_ID=[0-9a-f]\{16\}-[0-9]" ask.env || fail "HAVEN_ASK_ID: $(cat ask.env)"
  grep -q "^HAVEN_ASK_DEADLINE=[0-9]\{10\}$" ask.env || fail "HAVEN_ASK_DEADLINE: $(cat ask.env)"
  assert_eq /dev/null "$(cat ask.stdin)" "its stdin"
}

# A command that never answers is killed at the deadline (with what it
# started), and the deadline denies; on the terminal too the question
# ends with the deadline.
test_ask_command_hangs() {
  need_haven
  asktty_setup 2s
  { echo '#!/bin/sh'; echo "sleep 100 & echo \$! > $PWD/ask.child; echo \$\$ > $PWD/ask.pid; wait"; } > ask.sh
  chmod +x ask.sh
  export HAVEN_ASK_COMMAND=$PWD/ask.sh
  local t0=$SECONDS
  asktty_run expect=ready 'expect=\[d\]eny' 'expect=asked\.example: no answer before the deadline: denied' \
    expect=lookup=fail send='x\r' expect=got:x
  assert_contains "$OUT" "exit=0" "the run ended"
  assert_contains "$OUT" "HAVEN_ASK_COMMAND did not answer for asked.example before the deadline: killed"
  assert_eq "timeout timeout" "$(asktty_decisions)" "the trail's decision"
  local p
  for p in "$(cat ask.pid)" "$(cat ask.child)"; do
    [ -n "$p" ] || fail "no pid written"
    for _ in $(seq 50); do
      { [ ! -e "/proc/$p" ] || grep -q '^State:.*Z' "/proc/$p/status" 2> /dev/null; } && break
      sleep 0.1
    done
    { [ ! -e "/proc/$p" ] || grep -q '^State:.*Z' "/proc/$p/status" 2> /dev/null; } || fail "process $p still runs"
  done
  [ $((SECONDS - t0)) -lt 20 ] || fail "the run took $((SECONDS - t0)) s"
}

# A terminal and HAVEN_ASK_COMMAND both: the command's answer, first,
# withdraws the question on the terminal.
test_ask_tty_command_first() {
  need_haven
  asktty_setup
  { echo '#!/bin/sh'; echo 'sleep 1; echo deny'; } > ask.sh
  chmod +x ask.sh
  export HAVEN_ASK_COMMAND=$PWD/ask.sh
  asktty_run expect=ready 'expect=\[d\]eny' 'expect=asked\.example: answered by command: deny' expect=lookup=fail \
    send='o\r' expect=got:o
  assert_contains "$OUT" "exit=0" "the run ended"
  assert_eq "deny command" "$(asktty_decisions)" "the trail's decision"
}
