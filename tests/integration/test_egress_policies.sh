# Every shipped agent policy reaches exactly the hosts it lists through
# `haven run`, and nothing else.  The test's
# "host" is a network namespace joined by veth to a TEST-NET world whose
# DNS server (egress_dns.py, logging every query) gives each listed name
# an address of its own with listeners on 443 and 80; /etc/netns/HOST/
# resolv.conf points the host at that server, so haven's resolver
# forwards there.  Each policy's names come from what it compiles to
# (the run.haven.egress annotation), so a name added to a policy is
# tested without touching this file.
#
#   host eh0 192.0.2.2/24 -- ew0 192.0.2.1 world; world's lo: 198.51.100.54
#   (DNS), 203.0.113.1.. (one per listed name), 203.0.113.200 (unlisted)

POLICIES_DNS_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/egress_dns.py
POLICIES_WORLD_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/egress_world.py

# policies_world NAME...: the namespaces, a zone giving NAME i the address
# 203.0.113.i, listeners on 443 and 80 of each; sets EH, EW, PDNSLOG,
# PWLOG.  Unlisted names of the zone: evil.example, x.<first name>.
# POLICIES_EXTRA_ZONE: more zone entries ('"name": {...}, '), whose
# addresses and listeners are the caller's.
policies_world() {
  need_haven
  EH=$CTR_PREFIX-eh-$RANDOM
  EW=$CTR_PREFIX-ew-$RANDOM
  egress_world_link "$EH" "$EW"
  local i=0 n specs=() zone="{"
  for n in "$@"; do
    i=$((i + 1))
    ip -n "$EW" addr add "203.0.113.$i/32" dev lo
    specs+=("tcp:203.0.113.$i:443" "tcp:203.0.113.$i:80")
    zone+="\"$n\": {\"A\": [[\"203.0.113.$i\", 300]]}, \"x.$n\": {\"A\": [[\"203.0.113.$i\", 300]]}, "
  done
  zone+="${POLICIES_EXTRA_ZONE:-}\"evil.example\": {\"A\": [[\"203.0.113.200\", 300]]}}"
  echo "$zone" > zone.json
  PDNSLOG=$PWD/dns.log
  PWLOG=$PWD/world.log
  : > "$PDNSLOG"
  : > "$PWLOG"
  ip netns exec "$EW" python3 "$POLICIES_DNS_PY" server "$PWD/zone.json" "$PDNSLOG" "$PWD/dns.ready" \
    198.51.100.54 > dns.err 2>&1 &
  defer "kill $!"
  ip netns exec "$EW" python3 "$POLICIES_WORLD_PY" listen "$PWLOG" "$PWD/world.ready" \
    "${specs[@]}" tcp:203.0.113.200:443 > world.err 2>&1 &
  defer "kill $!"
  for i in $(seq 100); do [ -e dns.ready ] && [ -e world.ready ] && return 0; sleep 0.05; done
  fail "the world did not start: $(cat dns.err world.err)"
}

# The names and ports a policy allows, "NAME PORT" per line.
policy_names() {
  "$HAVEN" policy compile "$1" 2> /dev/null | jq -r '.annotations["run.haven.egress"]' \
    | jq -r '.names[] | select(.subdomains | not) | "\(.name) \(.ports)"' | sort -u
}

# The client run in the sandbox: for each "NAME PORT" argument, resolve
# and connect; prints "NAME PORT RESULT" (connected, refused-dns:...,
# refused, timeout, error) and how long it took.
POLICIES_CLIENT='
import socket, sys, time
for arg in sys.argv[1:]:
    name, port = arg.split(":")
    start = time.monotonic()
    try:
        addr = socket.getaddrinfo(name, int(port), socket.AF_INET, socket.SOCK_STREAM)[0][4]
    except socket.gaierror as e:
        print(name, port, "no-address", "%d" % ((time.monotonic() - start) * 1000)); continue
    s = socket.socket(); s.settimeout(5)
    try:
        s.connect(addr); r = "connected"
    except ConnectionRefusedError: r = "refused"
    except socket.timeout: r = "timeout"
    except OSError as e: r = "error:%d" % e.errno
    print(name, port, r, "%d" % ((time.monotonic() - start) * 1000)); s.close()
'

# check_policy POLICY: every listed name:port connects; port 8443 of a
# listed name, a subdomain of it and evil.example do not, fast, and the
# unlisted names never reach the world's DNS server.
check_policy() {
  local pol=$1 names n p args=() out line err=$PWD/run.err
  names=$(policy_names "$pol")
  [ -n "$names" ] || fail "policy $pol lists no names"
  # shellcheck disable=SC2086
  policies_world $(echo "$names" | awk '{print $1}' | sort -u)
  while read -r n p; do args+=("$n:$p"); done <<< "$names"
  local first=${args[0]%%:*}
  args+=("$first:8443" "x.$first:443" "evil.example:443")
  make_project
  # A home of the test's: the agent policies keep their audit trail in
  # ~/.local/state/haven/audit.log.
  local h=$P.home
  mkdir -p "$h"
  out=$(cd "$P" && HOME=$h timeout -k 2 120 ip netns exec "$EH" "$HAVEN" run --policy "$pol" -- \
        python3 -c "$POLICIES_CLIENT" "${args[@]}" 2> "$err")
  echo "$out" > client.out
  while read -r n p; do
    assert_contains "$out" "$n $p connected" "$pol: $n:$p ($(tail -3 "$err"))"
  done <<< "$names"
  for line in "$first 8443" "x.$first 443" "evil.example 443"; do
    case "$out" in
      *"$line connected"*) fail "$pol: $line connected" ;;
      *"$line refused"* | *"$line no-address"*) ;;
      *) fail "$pol: $line: expected a fast refusal, got: $(echo "$out" | grep "^$line")" ;;
    esac
  done
  # Refusals are fast: nothing waited for a timeout.
  assert_not_contains "$out" "timeout" "$pol"
  assert_not_contains "$(cat "$PDNSLOG")" "evil.example" "$pol: world DNS log"
  assert_not_contains "$(cat "$PDNSLOG")" "x.$first" "$pol: world DNS log"
  assert_not_contains "$(cat "$PWLOG")" "203.0.113.200" "$pol: world connection log"
  # The agent policies keep a trail, so `haven audit` shows the host
  # the agent was refused (it once printed nothing and exited 0).
  # (As root `haven audit` also reads engine containers' trails: only
  # haven run's records of this policy count.)
  local audit mine
  audit=$(HOME=$h "$HAVEN" audit --json -e dns-refused 2>&1) || fail "$pol: haven audit failed: $audit"
  mine=$(echo "$audit" | jq -c --arg p "$pol" 'select(.policy == $p and (.container | startswith("haven-run-")))')
  assert_contains "$mine" '"name":"evil.example","type":"A","why":"not in the policy"' "$pol: haven audit"
  assert_contains "$mine" "\"name\":\"x.$first\"" "$pol: haven audit"
  assert_contains "$(HOME=$h "$HAVEN" audit -e dns-refused 2>&1)" "name=evil.example type=A" "$pol: haven audit, as shown"
}

test_egress_policies_claude_code() { check_policy claude-code; }
test_egress_policies_codex() { check_policy codex; }
test_egress_policies_gemini_cli() { check_policy gemini-cli; }
test_egress_policies_aider() { check_policy aider; }
test_egress_policies_devcontainer() { check_policy devcontainer; }

# haven run with an audit trail: the resolver's refusals and the table's
# denials are recorded in the run's trail (the monitor writes to it),
# between the run's own start and exit records.
test_egress_policies_haven_run_trail() {
  policies_world api.example.com
  make_project
  local log=$WORK/trail-$$.jsonl
  printf 'extends: default\nnetwork: {allow: ["api.example.com:443"]}\naudit: {log: %s}\n' "$log" > "$P.pol/t.yaml"
  local out
  out=$(cd "$P" && timeout -k 2 60 ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/t.yaml" -- \
        python3 -c "$POLICIES_CLIENT" api.example.com:443 evil.example:443 2> "$PWD/run.err")
  assert_contains "$out" "api.example.com 443 connected" "$(cat run.err)"
  # The client from the project (the sandbox's /tmp is its own).
  cp "$POLICIES_WORLD_PY" "$P/egress_world.py"
  out=$(cd "$P" && timeout -k 2 60 ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/t.yaml" -- \
        python3 egress_world.py connect tcp 203.0.113.200 443 2> "$PWD/run.err")
  assert_contains "$out" "refused" "the direct connect ($(cat run.err))"
  [ -f "$log" ] || fail "no trail at $log"
  jq -se 'any(.[]; .event == "dns-refused" and .name == "evil.example")' "$log" > /dev/null \
    || fail "no dns-refused record: $(cat "$log")"
  jq -se 'any(.[]; .event == "net-denied" and .destination == "203.0.113.200" and .port == 443)' "$log" > /dev/null \
    || fail "no net-denied record: $(cat "$log")"
  assert_eq "start exit start exit" "$(jq -r 'select(.event == "start" or .event == "exit") | .event' "$log" | tr '\n' ' ' | sed 's/ $//')" \
    "the runs' own records (none of the monitor's)"
  # The monitor's records name the run the session's do: one id per run.
  assert_eq 2 "$(jq -r .run "$log" | sort -u | wc -l)" "run ids ($(cat "$log"))"
  jq -se '(map(select(.event == "start")) | .[0].run) as $r | any(.[]; .event == "dns-refused" and .run == $r)' \
    "$log" > /dev/null || fail "dns-refused not of the first run: $(cat "$log")"
}

# Under an allowlist: a name the policy does not list fails at
# once and for good, an allowed name still resolves, and haven says once,
# on its stderr, which name it refused and which key allows it.  The
# resolver answers a refused name NXDOMAIN with its Extended DNS Error
# (runtime/egress/egress_decide.h): on 782b205 it was REFUSED, which glibc turns
# into EAI_AGAIN ("temporary failure", -3) and npm retried for 70 s, with
# no word from haven.
LOOKUP_CLIENT='
import socket, sys, time
for name in sys.argv[1:]:
    t = time.monotonic()
    try:
        r = "address " + socket.getaddrinfo(name, 443, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except socket.gaierror as e:
        r = "gaierror %d" % e.errno
    print(name, r, "ms %d" % ((time.monotonic() - t) * 1000))
'
test_egress_policies_refused_name_fails_fast() {
  policies_world allowed.example
  make_project
  { echo "name: lookup-test"; echo "extends: default"; echo "network:"; echo "  mode: allowlist"
    echo "  allow: [allowed.example]"; } > "$P.pol/lookup.yaml"
  local out err=$PWD/lookup.err line ms
  out=$(cd "$P" && timeout -k 2 60 ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/lookup.yaml" -- \
        python3 -c "$LOOKUP_CLIENT" evil.example allowed.example x.allowed.example 2> "$err")
  echo "$out"
  cat "$err"
  assert_contains "$out" "allowed.example address 203.0.113.1" "an allowed name"
  for line in "evil.example" "x.allowed.example"; do
    assert_contains "$out" "$line gaierror $(python3 -c 'import socket; print(socket.EAI_NONAME)')" "$line"
    ms=$(echo "$out" | sed -n "s/^$line gaierror .* ms //p")
    [ -n "$ms" ] && [ "$ms" -lt 2000 ] || fail "$line: the lookup took $ms ms"
  done
  # Two refused names, one line, naming the first, the policy and the key.
  assert_eq 1 "$(grep -c '^haven: name .* refused by policy' "$err")" "notes on stderr"
  assert_contains "$(cat "$err")" "haven: name evil.example refused by policy lookup-test (not in network.allow)"
  assert_contains "$(cat "$err")" "add it to network.allow in a policy that extends lookup-test"
  assert_not_contains "$(cat "$PDNSLOG")" "evil.example" "world DNS log"
}

# The line is the sandbox's text made safe: a name with bytes a terminal
# would act on (ESC, BEL) is shown escaped, and a long one is cut.
test_egress_policies_refused_name_note_escaped() {
  policies_world allowed.example
  make_project
  { echo "name: lookup-test"; echo "extends: default"; echo "network:"; echo "  mode: allowlist"
    echo "  allow: [allowed.example]"; } > "$P.pol/lookup.yaml"
  local err=$PWD/escaped.err
  # The query tool from the project: the sandbox's /tmp is its own, and the
  # checkout may lie there.
  cp "$POLICIES_DNS_PY" "$P/egress_dns.py"
  (cd "$P" && timeout -k 2 60 ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/lookup.yaml" -- \
     python3 egress_dns.py query 127.0.0.1 "$(printf 'a\033]0;x\007b.%s.%s.example' "$(printf 'y%.0s' $(seq 60))" "$(printf 'z%.0s' $(seq 60))")" A \
     > /dev/null 2> "$err")
  cat -v "$err"
  assert_eq 1 "$(grep -c '^haven: name' "$err")" "notes on stderr"
  assert_not_contains "$(cat -v "$err")" "^[" "an escape byte on stderr"
  assert_contains "$(cat "$err")" 'haven: name a\027\x5d0\x3bx\007b.yyy' "the name, escaped"
  assert_contains "$(cat "$err")" '...' "the name, cut"
}

# npm retries every failed request, ENOTFOUND too (10 s then 60 s apart):
# under an allowlist it is told to wait less between retries, so a
# refused name fails within seconds and an allowed registry's transient
# failures are still retried.
test_egress_policies_refused_name_npm() {
  command -v npm > /dev/null || skip "npm missing"
  policies_world allowed.example
  make_project
  { echo "name: lookup-test"; echo "extends: default"; echo "network:"; echo "  mode: allowlist"
    echo "  allow: [allowed.example]"; } > "$P.pol/lookup.yaml"
  local out t0=$SECONDS took
  out=$(cd "$P" && timeout -k 2 120 ip netns exec "$EH" "$HAVEN" run --policy "$P.pol/lookup.yaml" -- \
        sh -c 'npm view left-pad version --registry http://not-allowed.example/; echo "npm=$?"' 2>&1)
  took=$((SECONDS - t0))
  echo "$out" | tail -5
  assert_contains "$out" "ENOTFOUND" "npm's error"
  assert_contains "$out" "haven: name not-allowed.example refused by policy lookup-test"
  [ "$took" -lt 15 ] || fail "npm took $took s to fail"
}

# Under a terminal (haven proxies it, in raw mode): the line still starts
# a line of its own and ends with "\r\n", and the run goes on.
test_egress_policies_refused_name_note_terminal() {
  command -v script > /dev/null || skip "script missing (util-linux)"
  policies_world allowed.example
  make_project
  { echo "name: lookup-test"; echo "extends: default"; echo "network:"; echo "  mode: allowlist"
    echo "  allow: [allowed.example]"; } > "$P.pol/lookup.yaml"
  local out
  out=$(cd "$P" && timeout -k 2 60 script -qec "ip netns exec $EH $HAVEN run --policy $P.pol/lookup.yaml -- \
        sh -c 'getent hosts evil.example; getent hosts evil2.example; echo rc=\$?'" /dev/null 2>&1 < /dev/null)
  echo "$out" | cat -A
  assert_contains "$out" "rc=2" "getent: not found"
  assert_eq 1 "$(echo "$out" | grep -c 'haven: name .* refused by policy')" "notes"
  echo "$out" | grep 'haven: name evil.example refused by policy lookup-test' | grep -q $'\r$' \
    || fail "the line does not end with \\r\\n under a terminal"
}
