# Denials of the egress table as audit records (runtime/egress/egress_denials.c,
# runtime/egress/egress_audit.c), in the world of test_egress_table.sh
# (egress_world, in_sb, probe...).  tests/helpers/egress_denials_tool
# runs in the host's namespace and listens on the NFLOG group in the
# sandbox's (--netns), printing the records the monitor would write.

DENIALS_TOOL=$(cd "$(dirname "$RUNTIME")" && pwd)/tests/helpers/egress_denials_tool
DENIALS_GROUP=4207

# denials_listen SECONDS [ARGS...]: the listener in the background,
# records to denials.out; waits until it is bound.
denials_listen() {
  [ -x "$DENIALS_TOOL" ] || skip "tests/helpers/egress_denials_tool not built (make check builds it)"
  local seconds=$1 i
  shift
  timeout -k 2 $((seconds + 10)) "$DENIALS_TOOL" --netns "/run/netns/$SB" "$@" "$DENIALS_GROUP" "$seconds" \
    > denials.out 2> denials.err &
  DENIALS_PID=$!
  defer "kill $DENIALS_PID 2>/dev/null; kill -CONT $DENIALS_PID 2>/dev/null"
  for i in $(seq 100); do grep -q listening denials.err && return 0; sleep 0.05; done
  fail "denials listener did not start: $(cat denials.err)"
}

# denials_wait JQ_FILTER N: until N records match (bounded: 5 s).
denials_wait() {
  local i n=0
  for i in $(seq 100); do
    n=$(jq -c "select($1)" denials.out 2>/dev/null | wc -l)
    [ "$n" -ge "$2" ] && return 0
    sleep 0.05
  done
  fail "$n of $2 records matching $1: $(cat denials.out denials.err)"
}

# denials_count JQ_FILTER: how many records match.
denials_count() { jq -c "select($1)" denials.out | wc -l; }

test_egress_denials_records() {
  egress_world
  tool create "hv_$RANDOM" --allow 203.0.113.0/24 443 --nflog "$DENIALS_GROUP" > /dev/null || fail "create failed"
  denials_listen 20 --name 198.51.100.10=example.test --name 2001:db8:2::10=v6.example.test \
    --refused 'evil.example:16:not in the policy'
  # The listener's socket is in the sandbox's namespace; the tool itself
  # came back to its own.
  assert_contains "$(cat denials.err)" "listening in $(readlink /proc/self/ns/net)"
  expect_refused_fast 198.51.100.10 81
  local out
  out=$(probe udp 203.0.113.20 9999)
  assert_eq denied "${out%% *}" "udp 203.0.113.20 9999"
  in_sb busybox ping -c 1 -W 1 198.51.100.53 > ping.out 2>&1 && fail "ping went through"
  expect_refused_fast 2001:db8:2::10 444
  in_sb busybox ping -6 -c 1 -W 1 2001:db8:2::20 > ping.out 2>&1 && fail "ping -6 went through"
  # An allowed connection is no denial.
  expect_connects 203.0.113.10 443
  denials_wait '.event == "net-denied"' 5
  sleep 0.3 # anything more would come now
  local nd='.event == "net-denied"'
  assert_eq 1 "$(denials_count "$nd and .destination == \"198.51.100.10\" and .port == 81 and .protocol == \"tcp\" and .names == [\"example.test\"]")" "tcp 198.51.100.10 81"
  assert_eq 1 "$(denials_count "$nd and .destination == \"203.0.113.20\" and .port == 9999 and .protocol == \"udp\" and .names == []")" "udp 203.0.113.20 9999"
  assert_eq 1 "$(denials_count "$nd and .destination == \"198.51.100.53\" and .port == 0 and .protocol == \"icmp\"")" "icmp 198.51.100.53"
  assert_eq 1 "$(denials_count "$nd and .destination == \"2001:db8:2::10\" and .port == 444 and .protocol == \"tcp\" and .names == [\"v6.example.test\"]")" "tcp [2001:db8:2::10]:444"
  assert_eq 1 "$(denials_count "$nd and .destination == \"2001:db8:2::20\" and .port == 0 and .protocol == \"icmpv6\"")" "icmpv6 2001:db8:2::20"
  assert_eq 0 "$(denials_count "$nd and .destination == \"203.0.113.10\"")" "the allowed connection"
  assert_eq 1 "$(denials_count '.event == "dns-refused" and .name == "evil.example" and .type == "TXT" and .why == "not in the policy"')" "dns-refused"
  # Every line is a record of the trail's shape.
  assert_eq 0 "$(jq -c 'select(.time == null or .policy != "test")' denials.out | wc -l)" "records without time or policy"
  # Packets another rule logs to the group (another prefix) are not
  # denials: here one the table then allows.
  in_sb nft add table inet other || fail "nft add table"
  in_sb nft add chain inet other out '{ type filter hook output priority -300; }' || fail "nft add chain"
  in_sb nft add rule inet other out tcp dport 443 log group "$DENIALS_GROUP" prefix other-rule || fail "nft add rule"
  expect_connects 203.0.113.10 443
  # Anyone in the namespace may send to the listener's netlink port: a
  # forged denial (with the prefix, well formed) is delivered and ignored.
  local portid
  portid=$(in_sb awk '$2 == 12 && $3 != 0 {print $3}' /proc/net/netlink)
  [ -n "$portid" ] || fail "the listener's socket is not in the sandbox's namespace"
  in_sb python3 -c '
import socket, struct, sys
def attr(t, v):
    a = struct.pack("=HH", 4 + len(v), t) + v
    return a + b"\0" * (-len(a) % 4)
ip = bytes([0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 192, 0, 2, 2, 198, 51, 100, 99])
tcp = struct.pack("!HH", 40000, 6666) + bytes(16)
body = struct.pack("!BBH", socket.AF_INET, 0, 4207) + attr(10, b"haven-egress\0") + attr(9, ip + tcp)
msg = struct.pack("=IHHII", 16 + len(body), 4 << 8, 0, 1, 0) + body
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)
s.bind((0, 0))
s.sendto(msg, (int(sys.argv[1]), 0))
' "$portid" || fail "forged message not delivered"
  expect_refused_fast 198.51.100.10 83
  denials_wait "$nd and .port == 83" 1
  assert_eq 0 "$(denials_count "$nd and .destination == \"198.51.100.99\"")" "a forged denial"
  assert_eq 0 "$(denials_count "$nd and .destination == \"203.0.113.10\"")" "other-rule's log of an allowed connection"
}

# flood ADDR N: N TCP connects (ports 1000 on) from the sandbox; prints
# "REFUSED MS".
flood() {
  in_sb python3 -c '
import socket, sys, time
addr, n = sys.argv[1], int(sys.argv[2])
start, refused = time.monotonic(), 0
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.connect((addr, 1000 + i % 30000))
    except ConnectionRefusedError:
        refused += 1
    except OSError:
        pass
    s.close()
print(refused, int((time.monotonic() - start) * 1000))
' "$@"
}

# flood_same ADDR PORT N: N TCP connects to one destination; prints REFUSED.
flood_same() {
  in_sb python3 -c '
import socket, sys
addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
refused = 0
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.connect((addr, port))
    except ConnectionRefusedError:
        refused += 1
    except OSError:
        pass
    s.close()
print(refused)
' "$@"
}

# Junk denials in the same second once pushed the one that matters
# out of the trail ("11 more denials suppressed", no address): first the
# listener's 20 a second, then the kernel's limit (20/s, burst 40) on the
# log.  A new destination is recorded however much junk came before it.
test_egress_denials_novelty_survives_junk() {
  egress_world
  tool create "hv_$RANDOM" --nflog "$DENIALS_GROUP" > /dev/null || fail "create failed"
  denials_listen 20
  local nd='.event == "net-denied"'
  # 20 junk connects, then the one that matters, within a second.
  flood 198.51.100.10 20 > /dev/null || fail "flood failed"
  expect_refused_fast 203.0.113.20 8080
  denials_wait "$nd and .destination == \"203.0.113.20\" and .port == 8080" 1
  # 2000 junk destinations (past the kernel's old burst), then another.
  flood 198.51.100.11 2000 > /dev/null || fail "flood failed"
  expect_refused_fast 203.0.113.21 8081
  denials_wait "$nd and .destination == \"203.0.113.21\" and .port == 8081" 1
  # 3000 repeats of one junk destination, then another: the repeats are
  # one record and a count, the new one is recorded.
  assert_eq 3000 "$(flood_same 198.51.100.12 7 3000)" "repeats refused"
  expect_refused_fast 203.0.113.22 8082
  denials_wait "$nd and .destination == \"203.0.113.22\" and .port == 8082" 1
  assert_eq 1 "$(denials_count "$nd and .destination == \"198.51.100.12\"")" "records of the repeated destination"
  denials_wait '.event == "denials-suppressed" and .repeated["tcp 198.51.100.12 7"] > 0' 1
  # Every record is of a distinct destination and port (repeats are
  # summarised), and every one of the 2021 distinct ones is there.
  assert_eq 2024 "$(jq -s -c "map(select($nd)) | map([.destination, .port]) | unique | length" denials.out)" "distinct records"
  assert_eq 2024 "$(denials_count "$nd")" "net-denied records"
  # The repeats add up: every one counted in a summary, none lost.
  sleep 1.1
  assert_eq 2999 "$(jq -s '[.[] | select(.event == "denials-suppressed") | .repeated["tcp 198.51.100.12 7"] // 0] | add' denials.out)" "repeats counted"
  assert_eq 0 "$(jq -c 'select(.event == "denials-suppressed" and .novelty_lost)' denials.out | wc -l)" "novelty lost"
}

test_egress_denials_flood_bounded() {
  egress_world
  tool create "hv_$RANDOM" --nflog "$DENIALS_GROUP" > /dev/null || fail "create failed"
  local base with stopped
  denials_listen 20
  # 10000 distinct destinations (ports): more than the listener keeps
  # (HV_DENIAL_KEYS_MAX, 4096).
  with=$(flood 198.51.100.10 10000) || fail "flood failed"
  assert_eq 10000 "${with% *}" "connects refused (listener)"
  # A listener that reads nothing (stopped): the kernel logs without
  # waiting for anyone.
  kill -STOP "$DENIALS_PID"
  stopped=$(flood 198.51.100.10 10000)
  kill -CONT "$DENIALS_PID"
  assert_eq 10000 "${stopped% *}" "connects refused (listener stopped)"
  # The summaries come within a second of what they count.
  denials_wait '.event == "denials-suppressed"' 1
  sleep 1.1
  local records summaries unrecorded repeats
  records=$(denials_count '.event == "net-denied"')
  summaries=$(denials_count '.event == "denials-suppressed"')
  unrecorded=$(jq -s '[.[] | select(.event == "denials-suppressed") | .unrecorded_new] | add' denials.out)
  repeats=$(jq -s '[.[] | select(.event == "denials-suppressed") | .repeats] | add' denials.out)
  echo "$records records, $summaries summaries: $repeats repeats, $unrecorded new unrecorded; $(tail -1 denials.err)"
  # Bounded: the 4096 the listener remembers, then at most 20 new ones
  # a second (a window per summary, and the one running).
  [ "$records" -ge 4096 ] || fail "only $records records"
  [ "$records" -le $((4096 + 20 * (summaries + 2))) ] || fail "$records records for $summaries summaries"
  # Past the cap novelty was lost, and the trail says so.
  [ "$unrecorded" -gt 0 ] || fail "no new denial left unrecorded past the cap"
  assert_eq 0 "$(jq -c 'select(.event == "denials-suppressed" and .unrecorded_new > 0 and (.novelty_lost != true or (.message | test("NEW ones not recorded") | not)))' denials.out | wc -l)" "summaries that lose novelty say so"
  # What the stopped listener's socket could not hold is said too.
  local lost
  lost=$(sed -n 's/.*lost \([0-9]*\)$/\1/p' denials.err)
  if [ "${lost:-0}" -gt 0 ]; then
    assert_eq "$lost" "$(jq -s '[.[] | select(.event == "denials-suppressed") | .overruns // 0] | add' denials.out)" "overruns said"
  fi
  # Still listening after all that: a remembered destination is a
  # repeat, a new one past the cap is among the 20 a second.
  : > denials.out
  sleep 1.1
  expect_refused_fast 203.0.113.20 8080
  denials_wait '.event == "net-denied" and .destination == "203.0.113.20" and .port == 8080' 1
  # The same flood with no listener at all takes about as long.
  kill "$DENIALS_PID"
  base=$(flood 198.51.100.10 10000) || fail "flood failed"
  assert_eq 10000 "${base% *}" "connects refused (no listener)"
  echo "10000 refused connects: ${base#* } ms alone, ${with#* } ms with the listener, ${stopped#* } ms with it stopped"
  local b=${base#* }
  [ "${with#* }" -le $((2 * b + 2000)) ] || fail "the listener slowed the sandbox: ${with#* } ms against $b ms"
  [ "${stopped#* }" -le $((2 * b + 2000)) ] || fail "a stopped listener slowed the sandbox: ${stopped#* } ms against $b ms"
}
