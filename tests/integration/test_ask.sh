# Approvals (network.ask, network.mode: ask): haven's resolver holds the
# first lookup of a name to ask, writes a request in the approvals
# directory (session/approvals.h) and answers once someone runs
# `haven approve ID DECISION` in another process, or denies at
# network.ask_timeout.  The world is test_egress_policies.sh's
# (policies_world): names that resolve, listeners on 443 and 80.

# A client that resolves and connects to each NAME:PORT (NAME:PORT:any:
# A and AAAA asked at once), printing "NAME PORT RESULT MS".
ASK_CLIENT='
import socket, sys, time
for arg in sys.argv[1:]:
    name, port = arg.split(":")[:2]
    fam = socket.AF_UNSPEC if arg.endswith(":any") else socket.AF_INET
    t = time.monotonic()
    try:
        addr = [a for a in socket.getaddrinfo(name, int(port), fam, socket.SOCK_STREAM) if a[0] == socket.AF_INET][0][4]
        s = socket.socket(); s.settimeout(5)
        try:
            s.connect(addr); r = "connected"
        except OSError as e: r = "connect-error:%s" % e
        s.close()
    except socket.gaierror as e:
        r = "gaierror:%d" % e.errno
    print(name, port, r, int((time.monotonic() - t) * 1000), flush=True)
'

# ask_setup POLICY-YAML NAME...: the world with NAMEs, a project, a home
# of the test's own (the approvals directory and the trail live there),
# the policy in $P.pol/ask.yaml (name: ask-test).
ask_setup() {
  local yaml=$1
  shift
  policies_world "$@"
  make_project
  ASK_HOME=$P.home
  mkdir -p "$ASK_HOME"
  ASK_TRAIL=$ASK_HOME/trail.jsonl
  printf 'name: ask-test\nextends: default\n%s\naudit: {log: %s}\n' "$yaml" "$ASK_TRAIL" > "$P.pol/ask.yaml"
  ASK_DIR=$ASK_HOME/.local/state/haven/approvals
}

# ask_haven ARGS...: haven as the test's user would run it (its home, no
# XDG overrides), from the project.
ask_haven() {
  (cd "$P" && HOME=$ASK_HOME env -u XDG_STATE_HOME -u XDG_CONFIG_HOME timeout -k 2 60 "$HAVEN" "$@")
}

# ask_run_bg ARGS...: haven run --policy ask.yaml in the world, in the
# background, its output in $PWD/ask.out and ask.err; sets ASK_PID.
ask_run_bg() {
  local here=$PWD
  (cd "$P" && HOME=$ASK_HOME env -u XDG_STATE_HOME -u XDG_CONFIG_HOME timeout -k 2 60 \
     ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/ask.yaml" -- "$@" > "$here/ask.out" 2> "$here/ask.err") &
  ASK_PID=$!
  defer "kill $ASK_PID 2>/dev/null"
}

# ask_wait_request NAME: the pending request for NAME (its id in $ASK_ID),
# within 10 s.
ask_wait_request() {
  local i
  for i in $(seq 200); do
    ASK_ID=$(ask_haven approve --json 2>/dev/null | jq -r --arg n "$1" 'select(.name == $n) | .id' | head -1)
    [ -n "$ASK_ID" ] && return 0
    sleep 0.05
  done
  fail "no request for $1: $(cat ask.err) / $(ls -la "$ASK_DIR" 2>&1)"
}

test_ask_once_then_deny() {
  need_haven
  ask_setup 'network:
  allow: [allowed.example]
  ask: [asked.example, denied.example]' allowed.example asked.example denied.example
  ask_run_bg python3 -c "$ASK_CLIENT" allowed.example:443 asked.example:443 denied.example:443 asked.example:80
  # The allowed name never waits; the asked one is held.
  ask_wait_request asked.example
  local listed
  listed=$(ask_haven approve 2>&1 < /dev/null)
  assert_contains "$listed" "$ASK_ID  asked.example (A)  policy ask-test"
  assert_contains "$listed" "command: python3 -c"
  assert_contains "$listed" "project: $P"
  # Nothing reached the world's DNS for it before the answer.
  assert_not_contains "$(cat "$PDNSLOG")" "asked.example" "world DNS log before the answer"
  assert_contains "$(ask_haven approve "$ASK_ID" once 2>&1)" "$ASK_ID: once"
  # A second answer: refused (already answered, or taken and gone: the
  # holder removes a request once it has its answer).
  local again
  again=$(ask_haven approve "$ASK_ID" deny 2>&1) && fail "a second answer was taken: $again"
  case "$again" in
    *"request $ASK_ID already answered"* | *"no pending request $ASK_ID"*) ;;
    *) fail "a second answer: $again" ;;
  esac
  ask_wait_request denied.example
  local denied_id=$ASK_ID t0 t1
  t0=$(date +%s%N)
  ask_haven approve "$denied_id" deny > /dev/null || fail "deny"
  # "once": asked.example:80 is asked again; an answer that is not one
  # (planted by hand) is a deny, then the run ends.
  ask_wait_request asked.example
  echo '{"decision":"yes please","by":"approve"}' > "$ASK_DIR/$ASK_ID.answer"
  wait "$ASK_PID"
  t1=$(date +%s%N)
  local out
  out=$(cat ask.out)
  assert_contains "$out" "allowed.example 443 connected" "$(cat ask.err)"
  assert_contains "$out" "asked.example 443 connected" "$(cat ask.err)"
  assert_contains "$out" "denied.example 443 gaierror:$(python3 -c 'import socket; print(socket.EAI_NONAME)')"
  assert_contains "$out" "asked.example 80 gaierror:" "once is the held lookup only"
  # A denial fails at once after the answer (not at a client's timeout).
  local ms
  ms=$(echo "$out" | awk '$1 == "denied.example" {print $4}')
  [ "$ms" -lt $(( (t1 - t0) / 1000000 + 1000 )) ] || fail "the denied lookup took $ms ms"
  # The trail has each decision, and the files are gone.
  local asks
  asks=$(jq -c 'select(.event == "ask") | [.name, .decision, .by]' "$ASK_TRAIL")
  assert_contains "$asks" '["asked.example","once","approve"]'
  assert_contains "$asks" '["denied.example","deny","approve"]'
  assert_contains "$asks" '["asked.example","deny","invalid"]'
  jq -se 'any(.[]; .event == "dns-refused" and .name == "denied.example" and .why == "denied by approval")' \
    "$ASK_TRAIL" > /dev/null || fail "no dns-refused record for the denied name: $(cat "$ASK_TRAIL")"
  assert_eq "" "$(ls "$ASK_DIR")" "the approvals directory after the run"
  assert_eq "700" "$(stat -c %a "$ASK_DIR")" "the approvals directory's mode"
}

# No answer: denied at ask_timeout, and the command goes on.
test_ask_timeout() {
  need_haven
  ask_setup 'network:
  ask: [slow.example]
  ask_timeout: 2s' slow.example
  local out t0 t1
  t0=$(date +%s%N)
  out=$(cd "$P" && HOME=$ASK_HOME env -u XDG_STATE_HOME -u XDG_CONFIG_HOME timeout -k 2 60 \
        ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/ask.yaml" -- \
        sh -c "python3 -c '$ASK_CLIENT' slow.example:443; echo continued" 2> /dev/null)
  t1=$(date +%s%N)
  assert_contains "$out" "slow.example 443 gaierror:"
  assert_contains "$out" "continued"
  local ms
  ms=$(echo "$out" | awk '$1 == "slow.example" {print $4}')
  [ "$ms" -ge 1800 ] && [ "$ms" -lt 6000 ] || fail "the lookup ended after $ms ms (ask_timeout 2s)"
  assert_contains "$(jq -c 'select(.event == "ask") | [.name, .decision, .by]' "$ASK_TRAIL")" \
    '["slow.example","timeout","timeout"]'
  jq -se 'any(.[]; .event == "dns-refused" and .name == "slow.example"
                  and (.why | startswith("not approved in time")))' "$ASK_TRAIL" > /dev/null || fail "no dns-refused record: $(cat "$ASK_TRAIL")"
  echo "timeout lookup: $ms ms, run $(( (t1 - t0) / 1000000 )) ms"
}

# always: the run goes on, the name is written to the approved file, and
# the next run does not ask; `haven policy explain` shows the layer.
# network.mode: ask: every unlisted name asks.
test_ask_always_and_mode_ask() {
  need_haven
  ask_setup 'network:
  mode: ask
  deny: [never.example]' kept.example never.example
  ask_run_bg python3 -c "$ASK_CLIENT" kept.example:443:any never.example:443
  ask_wait_request kept.example
  # On a terminal, haven approve asks about each pending request.
  local tty
  tty=$(cd "$P" && echo a | HOME=$ASK_HOME env -u XDG_STATE_HOME -u XDG_CONFIG_HOME timeout -k 2 20 \
        script -qec "$HAVEN approve" /dev/null 2>&1)
  assert_contains "$tty" "$ASK_ID  kept.example (A)  policy ask-test" "$tty"
  assert_contains "$tty" "[o]nce, [r]un, [a]lways, [d]eny, [s]kip?"
  assert_contains "$tty" "$ASK_ID: always"
  wait "$ASK_PID"
  assert_contains "$(cat ask.out)" "kept.example 443 connected" "$(cat ask.err)"
  # The A and the AAAA asked together: one request, both sent upstream
  # once approved.
  assert_eq 1 "$(jq -c 'select(.event == "ask" and .name == "kept.example")' "$ASK_TRAIL" | wc -l)" "one request"
  assert_contains "$(cat "$PDNSLOG")" "kept.example A"
  assert_contains "$(cat "$PDNSLOG")" "kept.example AAAA"
  # Deny wins over ask: refused at once, never asked.
  assert_contains "$(cat ask.out)" "never.example 443 gaierror:"
  assert_not_contains "$(jq -r 'select(.event == "ask") | .name' "$ASK_TRAIL")" "never.example"
  local file=$ASK_HOME/.config/haven/approved/ask-test.yaml
  assert_eq "600" "$(stat -c %a "$file")" "the approved file's mode"
  assert_eq "700" "$(stat -c %a "$(dirname "$file")")" "the approved directory's mode"
  assert_contains "$(cat "$file")" '    - "kept.example"'
  assert_contains "$(cat "$file")" "# approved by approve at "
  assert_contains "$(ask_haven policy explain "$P.pol/ask.yaml")" "kept.example: TCP 443, 80 (approved in $file:"
  # The next run: no request, connected at once.
  local out
  out=$(cd "$P" && HOME=$ASK_HOME env -u XDG_STATE_HOME -u XDG_CONFIG_HOME timeout -k 2 30 \
        ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/ask.yaml" -- \
        python3 -c "$ASK_CLIENT" kept.example:443 2> "$ASK_HOME/ask2.err")
  assert_contains "$out" "kept.example 443 connected" "$(cat "$ASK_HOME/ask2.err")"
  assert_eq 1 "$(jq -c 'select(.event == "ask" and .name == "kept.example")' "$ASK_TRAIL" | wc -l)" \
    "the second run did not ask"
}

# The sandbox can neither read nor write the approvals directory nor the
# approved files, so it cannot answer its own request; under --isolation
# landlock a policy that asks is refused by name.
test_ask_sandbox_cannot_answer() {
  need_haven
  ask_setup 'network:
  ask: [self.example]
  ask_timeout: 3s' self.example
  # A home outside /tmp (the sandbox's /tmp is its own, which would hide
  # a home there whatever haven does about the directories).
  ASK_HOME=$(mktemp -d /var/lib/hvt-ask-home.XXXXXX)
  defer "rm -rf $ASK_HOME"
  chmod 755 "$ASK_HOME"
  ASK_TRAIL=$ASK_HOME/trail.jsonl
  ASK_DIR=$ASK_HOME/.local/state/haven/approvals
  sed -i "s|^audit: .*|audit: {log: $ASK_TRAIL}|" "$P.pol/ask.yaml"
  mkdir -p "$ASK_HOME/.config/haven/approved" && chmod 700 "$ASK_HOME/.config/haven/approved"
  # The sandbox's process tries to find its request and answer it.
  local script='
d=$HOME/.local/state/haven/approvals
( getent hosts self.example > /dev/null; echo "lookup $?" ) &
sleep 1
ls "$d"/*.request > /dev/null 2>&1 && echo "sees-request" || echo "no-request"
for f in "$d"/*.request; do id=${f##*/}; id=${id%.request}
  echo "{\"decision\":\"always\",\"by\":\"approve\"}" > "$d/$id.answer" 2>/dev/null && echo "wrote-answer"; done
echo x >> "$HOME/.config/haven/approved/ask-test.yaml" 2>/dev/null && echo "wrote-approved"
wait'
  local out
  out=$(cd "$P" && HOME=$ASK_HOME env -u XDG_STATE_HOME -u XDG_CONFIG_HOME timeout -k 2 30 \
        ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/ask.yaml" -- sh -c "$script" 2> "$ASK_HOME/ask.err")
  assert_contains "$out" "no-request" "$(cat "$ASK_HOME/ask.err")"
  assert_not_contains "$out" "wrote-answer"
  assert_not_contains "$out" "wrote-approved"
  assert_contains "$out" "lookup 2" "the lookup was denied at the timeout"
  assert_contains "$(jq -c 'select(.event == "ask") | [.name, .decision]' "$ASK_TRAIL")" '["self.example","timeout"]'
  [ -e "$ASK_HOME/.config/haven/approved/ask-test.yaml" ] && fail "an approved file was written"
  # A policy that shows the home: both directories are hidden all the same.
  printf 'name: ask-test\nextends: default\nfilesystem: {hide_home: false}\nnetwork:\n  ask: [self.example]\n  ask_timeout: 3s\n' \
    > "$P.pol/shown.yaml"
  # (The sandbox does see the rest of that home.)
  echo visible > "$ASK_HOME/visible"
  script="cat \$HOME/visible; $script"
  out=$(cd "$P" && HOME=$ASK_HOME env -u XDG_STATE_HOME -u XDG_CONFIG_HOME timeout -k 2 30 \
        ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/shown.yaml" -- sh -c "$script" 2> "$ASK_HOME/ask.err")
  assert_contains "$out" "visible" "home shown: $(cat "$ASK_HOME/ask.err")"
  assert_contains "$out" "no-request" "home shown: $(cat "$ASK_HOME/ask.err")"
  assert_not_contains "$out" "wrote-answer" "home shown"
  assert_not_contains "$out" "wrote-approved" "home shown"
  [ -e "$ASK_HOME/.config/haven/approved/ask-test.yaml" ] && fail "an approved file was written (home shown)"
  # Without namespaces there is no resolver to hold a lookup: refused by name.
  local err
  err=$(cd "$P" && HOME=$ASK_HOME timeout -k 2 30 "$HAVEN" run --isolation landlock --policy "$P.pol/ask.yaml" -- true 2>&1) \
    && fail "--isolation landlock ran a policy that asks"
  assert_contains "$err" "network.ask" "$err"
  # ...and under landlock (a policy without ask) the directory is not
  # reachable either (a project Landlock can hold: no .env, no .git).
  rm -rf "$P/.env" "$P/src/deep/.env" "$P/.git"
  printf 'extends: default\nbest_effort: [private_tmp]\n' > "$P.pol/plain.yaml"
  mkdir -p "$ASK_DIR" && echo '{}' > "$ASK_DIR/0123456789abcdef-1.request"
  out=$(cd "$P" && HOME=$ASK_HOME timeout -k 2 30 "$HAVEN" run --isolation landlock --policy "$P.pol/plain.yaml" -- \
        sh -c "cat $ASK_DIR/0123456789abcdef-1.request 2>/dev/null && echo read; touch $ASK_DIR/x.answer 2>/dev/null && echo wrote; echo done" 2>&1)
  assert_contains "$out" "done" "$out"
  assert_not_contains "$out" "read"
  assert_not_contains "$out" "wrote"
}

# Bad keys: file:line:column errors.
test_ask_policy_errors() {
  need_haven
  make_project
  printf 'extends: default\nnetwork:\n  ask: ["192.0.2.1"]\n' > "$P.pol/bad1.yaml"
  printf 'extends: default\nnetwork:\n  ask_timeout: 1h\n' > "$P.pol/bad2.yaml"
  haven_in "$P" policy check "$P.pol/bad1.yaml"
  assert_contains "$OUT" "$P.pol/bad1.yaml:3:9: network.ask: \"192.0.2.1\": an address cannot be asked for"
  haven_in "$P" policy check "$P.pol/bad2.yaml"
  assert_contains "$OUT" "$P.pol/bad2.yaml:3:16: network.ask_timeout: expected a duration such as 30s or 2m"
  # haven approve's own errors.
  local h=$P.home2
  mkdir -p "$h"
  OUT=$(HOME=$h "$HAVEN" approve 0123456789abcdef-1 once 2>&1) && fail "answered nothing"
  assert_contains "$OUT" "no pending request 0123456789abcdef-1"
  OUT=$(HOME=$h "$HAVEN" approve 0123456789abcdef-1 maybe 2>&1) && fail "took maybe"
  assert_contains "$OUT" "\"maybe\" is not once, run, always or deny"
  assert_contains "$(HOME=$h "$HAVEN" approve 2>&1)" "No pending requests."
}

# At most 16 names wait at once: the 17th is refused at once, recorded
# with why, and the others are still held until the timeout.
test_ask_bound() {
  need_haven
  ask_setup 'network:
  mode: ask
  ask_timeout: 2s' one.example
  local client='
import socket, sys, threading, time
res = {}
def look(n):
    t = time.monotonic()
    try:
        socket.getaddrinfo(n, 443, socket.AF_INET, socket.SOCK_STREAM); r = "address"
    except socket.gaierror as e: r = "gaierror"
    res[n] = (r, int((time.monotonic() - t) * 1000))
ts = [threading.Thread(target=look, args=("n%d.example" % i,)) for i in range(17)]
for t in ts: t.start(); time.sleep(0.02)
for t in ts: t.join()
fast = [n for n, (r, ms) in res.items() if ms < 1500]
print("fast", len(fast), "slow", len([1 for r, ms in res.values() if ms >= 1500]),
      "all-refused", all(r == "gaierror" for r, ms in res.values()))
'
  local out
  out=$(cd "$P" && HOME=$ASK_HOME env -u XDG_STATE_HOME -u XDG_CONFIG_HOME timeout -k 2 60 \
        ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/ask.yaml" -- python3 -c "$client" 2> /dev/null)
  assert_contains "$out" "fast 1 slow 16 all-refused True"
  assert_eq 1 "$(jq -c 'select(.event == "ask" and .by == "resolver" and .why == "too many names waiting for approval")' \
    "$ASK_TRAIL" | wc -l)" "the refusal's record"
  assert_eq 16 "$(jq -c 'select(.event == "ask" and .decision == "timeout")' "$ASK_TRAIL" | wc -l)" "timeouts"
}

# As an ordinary user (uid 65534): the monitor that holds the lookup is the
# user's, the approvals directory too, and haven approve run by the user
# answers, here "run": the name's next lookup is not asked for.
test_ask_rootless() {
  need_haven
  ask_setup 'network:
  ask: [asked.example]' asked.example
  chown -R 65534:65534 "$P" "$ASK_HOME"
  chmod 755 "$P.pol"
  local haven here=$PWD
  haven=$(world_readable_copy "$HAVEN")
  (cd "$P" && exec ip netns exec "$EH" unshare -m --propagation private sh -c '
     if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -w /dev/net/tun; then
       mknod -m 666 "$1.tun" c 10 200 && mount --bind "$1.tun" /dev/net/tun && rm -f "$1.tun" || exit 99
     fi
     h=$2; shift 2
     exec setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_STATE_HOME -u XDG_CONFIG_HOME HOME="$h" XDG_RUNTIME_DIR= \
       timeout 30 "$@"' sh "$P" "$ASK_HOME" "$haven" run --policy "$P.pol/ask.yaml" -- \
       python3 -c "$ASK_CLIENT" asked.example:443 asked.example:80 > "$here/ask.out" 2> "$here/ask.err" < /dev/null) &
  ASK_PID=$!
  defer "kill $ASK_PID 2>/dev/null"
  local id=""
  for _ in $(seq 200); do
    id=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_STATE_HOME -u XDG_CONFIG_HOME HOME="$ASK_HOME" "$haven" approve --json \
         2>/dev/null | jq -r 'select(.name == "asked.example") | .id' | head -1)
    [ -n "$id" ] && break
    sleep 0.05
  done
  [ -n "$id" ] || fail "no request: $(cat ask.err)"
  assert_eq "65534" "$(stat -c %u "$ASK_DIR/$id.request")" "the request's owner"
  (cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_STATE_HOME -u XDG_CONFIG_HOME HOME="$ASK_HOME" "$haven" approve "$id" run) \
    > /dev/null || fail "the user's answer"
  wait "$ASK_PID"
  # "run": the second lookup of the name is not asked for again.
  assert_contains "$(cat ask.out)" "asked.example 443 connected" "$(cat ask.err)"
  assert_contains "$(cat ask.out)" "asked.example 80 connected" "$(cat ask.err)"
  assert_eq '["asked.example","run","approve"]' "$(jq -c 'select(.event == "ask") | [.name, .decision, .by]' "$ASK_TRAIL")" \
    "one decision"
}
