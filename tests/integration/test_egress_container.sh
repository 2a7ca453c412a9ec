# The egress table at create (runtime/egress/include/egress_sandbox.h).  A
# bundle with the run.haven.egress annotation, in a network namespace
# made like an engine's (egress_world, test_egress_table.sh), gets the
# table before its process runs; a config whose table cannot be made
# does not start and leaves nothing behind.

# egress_bundle JSON ARGS...: $B in $SB's namespace with the annotation.
egress_bundle() {
  local json=$1
  shift
  cfg "$B" '.annotations["run.haven.egress"] = $e
            | .linux.namespaces = [.linux.namespaces[] | select(.type != "network")] + [{type: "network", path: $p}]' \
    --arg e "$json" --arg p "/run/netns/$SB"
  args "$B" "$@"
}

EGRESS_JSON='{"policy":"t","connect":"engine","allow":[{"cidr":"203.0.113.0/24","ports":"any"}],"deny":[{"cidr":"203.0.113.10/32","ports":"443"}]}'

test_egress_container_allowlist() {
  skip_on_runc "haven's egress table"
  egress_world
  egress_bundle "$EGRESS_JSON" sh -c 'nc -w 3 203.0.113.20 8080 </dev/null; echo " rc=$?";
    nc -w 3 203.0.113.10 443 </dev/null; echo " rc=$?"; nc -w 3 198.51.100.10 80 </dev/null; echo " rc=$?"'
  local t0=$SECONDS
  run_ctr "$B"
  assert_eq 0 "$RC" "run ($OUT)"
  assert_contains "$OUT" "hi 203.0.113.20 8080" "allowed CIDR"
  assert_eq 1 "$(echo "$OUT" | grep -c "rc=0")" "one connected ($OUT)"
  # Denied and unlisted: refused at once (three nc timeouts would be 9 s).
  [ $((SECONDS - t0)) -lt 5 ] || fail "refusals were not immediate ($((SECONDS - t0)) s): $OUT"
  assert_eq 2 "$(echo "$OUT" | grep -c 'rc=1')" "two refused ($OUT)"
  assert_not_contains "$(cat "$WLOG")" "tcp 203.0.113.10 443" "denied destination reached"
  assert_not_contains "$(cat "$WLOG")" "tcp 198.51.100.10 80" "unlisted destination reached"
  # run deleted the container: its table left the namespace it joined.
  assert_not_contains "$(ip netns exec "$SB" nft list tables)" "table inet haven" "table left after run"
}

# The table is there before the process runs, the monitor holds the
# namespace, and delete leaves no monitor and no state.
test_egress_container_lifecycle() {
  skip_on_runc "haven's egress table"
  egress_world
  egress_bundle "$EGRESS_JSON" sleep 30
  local id m
  id=$(new_id egress)
  defer "rt delete --force $id"
  rt create --bundle "$B" "$id" > create.out 2>&1 || fail "create: $(cat create.out)"
  local rules
  rules=$(ip netns exec "$SB" nft list table inet haven)
  assert_contains "$rules" "policy drop" "table at create"
  assert_contains "$rules" "@deny4 goto deny"
  m=$(cut -d' ' -f1 "$STATE_ROOT/$id/monitor.pid")
  assert_eq haven-monitor "$(cat /proc/$m/comm)" "monitor started for egress alone"
  rt start "$id" || fail "start"
  rt delete --force "$id" || fail "delete"
  gone "$m" || fail "monitor $m still running after delete"
  [ ! -e "$STATE_ROOT/$id" ] || fail "state directory left behind"
  # The namespace outlives the container (a pod's, an engine's): the
  # table goes with the container, and the next one makes its own.
  assert_not_contains "$(ip netns exec "$SB" nft list tables)" "table inet haven" "table left after delete"
  id=$(new_id egress)
  defer "rt delete --force $id"
  rt create --bundle "$B" "$id" > create.out 2>&1 || fail "second create in the namespace: $(cat create.out)"
  assert_contains "$(ip netns exec "$SB" nft list tables)" "table inet haven" "second container's table"
  rt delete --force "$id" || fail "delete"
  # A record naming a namespace that is another one by now (a reused
  # /proc/PID path, a name given again) removes nothing.
  id=$(new_id egress)
  defer "rt delete --force $id"
  rt create --bundle "$B" "$id" > create.out 2>&1 || fail "third create: $(cat create.out)"
  local rec=$STATE_ROOT/$id/egress-netns
  [ -f "$rec" ] || fail "no egress-netns record"
  read -r dev ino path < "$rec"
  echo "$dev $((ino + 1)) $path" > "$rec"
  rt delete --force "$id" || fail "delete"
  assert_contains "$(ip netns exec "$SB" nft list tables)" "table inet haven" "another namespace's table removed"
  ip netns exec "$SB" nft delete table inet haven
}

# Fail closed: a table of that name already in the namespace (the batch
# fails) or a bad annotation: create fails with the reason, and leaves
# no state, no monitor, and the table that was there untouched.
test_egress_container_fails_closed() {
  skip_on_runc "haven's egress table"
  egress_world
  ip netns exec "$SB" nft add table inet haven || fail "nft add table"
  ip netns exec "$SB" nft add chain inet haven mine || fail "nft add chain"
  egress_bundle "$EGRESS_JSON" true
  local id
  id=$(new_id egress)
  OUT=$(rt create --bundle "$B" "$id" 2>&1) && fail "create succeeded over an existing table"
  assert_contains "$OUT" "egress rules of policy t (run.haven.egress)"
  assert_contains "$OUT" "File exists (the network namespace already has haven's egress table: another container"
  assert_contains "$OUT" "only one of them at a time may have an egress policy)"
  [ ! -e "$STATE_ROOT/$id" ] || fail "state directory left behind"
  assert_eq "" "$(pgrep -x haven-monitor -a | grep -F "$id" || true)" "monitor left behind"
  assert_contains "$(ip netns exec "$SB" nft list table inet haven)" "chain mine" "someone else's table kept"
  egress_bundle '{"policy":"t","connect":"engine","allow":[{"cidr":"10.0.0.1/8","ports":"any"}]}' true
  OUT=$(rt create --bundle "$B" "$id" 2>&1) && fail "create succeeded with a bad annotation"
  assert_contains "$OUT" 'config.json: .annotations["run.haven.egress"].allow[0].cidr: "10.0.0.1/8": address has bits set beyond the /8 prefix'
  [ ! -e "$STATE_ROOT/$id" ] || fail "state directory left behind"
}

# --- names: the monitor runs the resolver (runtime/egress/include/monitor_egress.h) ---

CTR_DNS_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/egress_dns.py
NAMES_JSON='{"policy":"t","connect":"engine","allow":[],"deny":[],
  "names":[{"name":"api.example.com","subdomains":false,"ports":"443"},
           {"name":"www.cdn.example.com","subdomains":false,"ports":"8080"}],"deny_names":[]}'

# egress_dns_world: egress_world plus a DNS server in the world on
# 198.51.100.54 (its queries in DNSLOG), named by the container's
# resolv.conf, which the bundle binds on /etc/resolv.conf as an engine does.
egress_dns_world() {
  egress_world
  ip -n "$W" addr add 198.51.100.54/32 dev lo
  cat > zone.json <<'ZONE'
{"api.example.com": {"A": [["203.0.113.10", 300]], "AAAA": [["2001:db8:2::10", 300]]},
 "www.cdn.example.com": {"CNAME": ["edge.cdnnet.example", 120]},
 "edge.cdnnet.example": {"A": [["203.0.113.20", 60]]},
 "evil.example": {"A": [["203.0.113.10", 300]]}}
ZONE
  DNSLOG=$PWD/dns.log
  : > "$DNSLOG"
  ip netns exec "$W" python3 "$CTR_DNS_PY" server "$PWD/zone.json" "$DNSLOG" "$PWD/dns.ready" 198.51.100.54 \
    > dns.err 2>&1 &
  defer "kill $!"
  wait_file "$PWD/dns.ready"
  printf '# written by the engine\nsearch example.com\nnameserver 198.51.100.54\noptions ndots:0\n' > resolv.conf
  touch "$B/rootfs/etc/resolv.conf"
}

# names_bundle ARGS...: $B with NAMES_JSON, the engine's resolv.conf bound
# and a trail at $TRAIL.
names_bundle() {
  TRAIL=$PWD/trail/c.jsonl
  egress_bundle "$NAMES_JSON" "$@"
  cfg "$B" '.annotations["run.haven.audit"] = $t
            | .mounts += [{destination: "/etc/resolv.conf", type: "bind", source: $r, options: ["rbind", "ro"]}]' \
    --arg t "$TRAIL" --arg r "$PWD/resolv.conf"
}

# Inside the container: an allowed name resolves and connects at once,
# through a CNAME chain too; an unlisted name is refused and never asked
# upstream; an address never resolved is refused; the trail says what
# was refused, and names the name whose answer held a denied destination.
test_egress_container_names() {
  skip_on_runc "haven's egress resolver"
  egress_dns_world
  names_bundle sh -c '
    o=$(nslookup api.example.com 2>&1); case $o in *203.0.113.10*) echo "api resolved";; *) echo "api: $o";; esac
    nc -w 3 203.0.113.10 443 </dev/null; echo " api443 rc=$?"
    o=$(nslookup www.cdn.example.com 2>&1); case $o in *203.0.113.20*) echo "cdn resolved";; *) echo "cdn: $o";; esac
    nc -w 3 203.0.113.20 8080 </dev/null; echo " cdn8080 rc=$?"
    o=$(nslookup evil.example 2>&1); case $o in *NXDOMAIN*) echo "evil refused";; *) echo "evil: $o";; esac
    nc -w 3 198.51.100.10 80 </dev/null; echo " unresolved rc=$?"
    nc -w 3 203.0.113.10 81 </dev/null; echo " api81 rc=$?"'
  local t0=$SECONDS
  run_ctr "$B"
  echo "$OUT"
  assert_eq 0 "$RC" "run ($OUT)"
  [ $((SECONDS - t0)) -lt 8 ] || fail "took $((SECONDS - t0)) s: something waited for a timeout"
  assert_contains "$OUT" "api resolved"
  assert_contains "$OUT" $'hi 203.0.113.10 443\n api443 rc=0' "connect right after the answer"
  assert_contains "$OUT" "cdn resolved"
  assert_contains "$OUT" $'hi 203.0.113.20 8080\n cdn8080 rc=0' "CNAME chain to an unlisted name"
  assert_contains "$OUT" "evil refused"
  assert_contains "$OUT" " unresolved rc=1"
  assert_contains "$OUT" " api81 rc=1"
  assert_not_contains "$(cat "$DNSLOG")" "evil" "queries for the unlisted name upstream"
  assert_contains "$(cat "$DNSLOG")" "udp api.example.com A"
  assert_not_contains "$(cat "$WLOG")" "198.51.100.10 80" "unresolved destination reached"
  jq -se 'any(.[]; .event == "dns-refused" and .name == "evil.example" and .type == "A"
                  and .why == "not in the policy")' "$TRAIL" >/dev/null \
    || fail "no dns-refused record: $(cat "$TRAIL")"
  jq -se 'any(.[]; .event == "net-denied" and .destination == "203.0.113.10" and .port == 81
                  and .protocol == "tcp" and .names == ["api.example.com"])' "$TRAIL" >/dev/null \
    || fail "no net-denied record naming api.example.com: $(cat "$TRAIL")"
  jq -se 'any(.[]; .event == "net-denied" and .destination == "198.51.100.10" and .port == 80 and .names == [])' \
    "$TRAIL" >/dev/null || fail "no net-denied record for the unresolved address: $(cat "$TRAIL")"
  jq -se 'all(.[]; .event != "egress-error")' "$TRAIL" >/dev/null || fail "egress error: $(cat "$TRAIL")"
}

# egress_ctr_started: $B created and started as ID (deleted at the
# end); MON is its monitor's pid.
egress_ctr_started() {
  ID=$(new_id egress)
  defer "rt delete --force $ID"
  rt create --bundle "$B" "$ID" > create.out 2>&1 || fail "create: $(cat create.out)"
  rt start "$ID" || fail "start"
  MON=$(cut -d' ' -f1 "$STATE_ROOT/$ID/monitor.pid")
}

# in_ctr ID COMMAND...: COMMAND in the sandbox's network namespace and in
# container ID's cgroup (v2), as the container's own processes are (init
# and every exec).  A process that only enters the namespace is not the
# container's: its DNS is not redirected (runtime/egress/include/egress_table.h: Docker's
# DNS forwards from inside the container's namespace).
in_ctr() {
  local pid cg mnt=/sys/fs/cgroup/unified
  pid=$(rt state "$1" | jq -r .pid)
  cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
  [ "$(stat -fc %T "$mnt" 2> /dev/null)" = cgroup2fs ] || mnt=/sys/fs/cgroup
  [ -n "$cg" ] && [ -e "$mnt$cg/cgroup.procs" ] || fail "no cgroup v2 of container $1 (pid $pid): '$mnt$cg'"
  shift
  timeout -k 2 20 sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec ip netns exec "$@"' sh "$mnt$cg" "$SB" "$@"
}

# The refusal's EDE names haven and the policy; when the monitor dies DNS
# fails (no answer) and nothing opens; delete leaves no monitor and no
# resolver socket (the engine's namespace, here the test's, outlives the
# container, and the table with it).
test_egress_container_names_fail_closed() {
  skip_on_runc "haven's egress resolver"
  egress_dns_world
  names_bundle sleep 30
  local id m out
  egress_ctr_started
  id=$ID m=$MON
  # Any server address the sandbox names lands at haven's resolver.
  out=$(in_ctr "$id" python3 "$CTR_DNS_PY" query 8.8.8.8 evil.example A)
  assert_eq 'NXDOMAIN ede=haven_egress_policy_"t":_evil.example_(type_1):_not_in_the_policy;_allow_it_with_network:_{allow:_[evil.example]}' "$out"
  out=$(in_ctr "$id" python3 "$CTR_DNS_PY" query 198.51.100.54 api.example.com A tcp)
  assert_eq "NOERROR ede= A:203.0.113.10:300" "$out" "allowed over TCP"
  expect_connects 203.0.113.10 443
  kill -9 "$m"
  gone "$m" || fail "monitor $m survived SIGKILL"
  out=$(in_ctr "$id" python3 "$CTR_DNS_PY" query 198.51.100.54 api.example.com A)
  [[ "$out" == error:* || "$out" == timeout ]] || fail "DNS answered without the monitor: $out"
  out=$(in_ctr "$id" python3 "$CTR_DNS_PY" query 198.51.100.54 evil.example A tcp)
  [[ "$out" == error:* || "$out" == timeout ]] || fail "DNS over TCP answered without the monitor: $out"
  assert_not_contains "$(cat "$DNSLOG")" "evil" "queries upstream"
  # A process of the namespace outside the container's cgroup (Docker's
  # DNS forwarding) asks its server itself; TCP of it is filtered as ever.
  out=$(in_sb python3 "$CTR_DNS_PY" query 198.51.100.54 api.example.com A)
  assert_eq "NOERROR ede= A:203.0.113.10:300" "$out" "DNS of a process outside the container's cgroup"
  expect_refused_fast 198.51.100.10 80
  rt delete --force "$id" || fail "delete"
  [ ! -e "$STATE_ROOT/$id" ] || fail "state directory left behind"
  assert_eq "" "$(in_sb ss -Hlnup 'sport = :53'; in_sb ss -Hlntp 'sport = :53')" "resolver sockets left"
  echo "left in the engine's namespace after delete: $(in_sb nft list tables)"
}

# A container without a cgroup of its own (here: run.haven.cgroup
# if-limited and no limits) cannot be told from other processes of its
# namespace: every DNS query there, a process's that only entered it
# too, goes to haven's resolver (the unlisted name is refused, never
# asked upstream).
test_egress_container_dns_without_own_cgroup() {
  skip_on_runc "haven's egress resolver"
  egress_dns_world
  names_bundle sleep 30
  cfg "$B" '.annotations["run.haven.cgroup"] = "if-limited" | del(.linux.resources) | del(.linux.cgroupsPath)'
  local out
  egress_ctr_started
  assert_eq '""' "$(jq .cgroupPath "$STATE_ROOT/$ID/state.json")" "cgroup of the container"
  out=$(in_sb python3 "$CTR_DNS_PY" query 198.51.100.54 evil.example A)
  assert_eq 'NXDOMAIN ede=haven_egress_policy_"t":_evil.example_(type_1):_not_in_the_policy;_allow_it_with_network:_{allow:_[evil.example]}' "$out" \
    "a query from the namespace without the container's own cgroup"
  assert_not_contains "$(cat "$DNSLOG")" "evil" "queries upstream"
}

# An engine container with no resolv.conf of the engine's (Podman's
# --network none binds none): the resolver has nobody to ask, still
# refuses unlisted names, answers SERVFAIL for allowed ones, and the
# trail says why.  (The monitor once read a count it never set here and
# died, leaving the container without DNS answers and its exec broken.)
test_egress_container_no_resolv_conf() {
  skip_on_runc "haven's egress resolver"
  egress_world
  TRAIL=$PWD/trail/c.jsonl
  egress_bundle "$NAMES_JSON" sleep 30
  cfg "$B" '.annotations["run.haven.audit"] = $t' --arg t "$TRAIL"
  local id m out
  egress_ctr_started
  id=$ID m=$MON
  out=$(in_sb python3 "$CTR_DNS_PY" query 127.0.0.1 evil.example A)
  assert_contains "$out" "NXDOMAIN ede=haven" "an unlisted name"
  out=$(in_sb python3 "$CTR_DNS_PY" query 127.0.0.1 api.example.com A)
  assert_eq "SERVFAIL ede=" "$out" "an allowed name with no upstream"
  assert_eq haven-monitor "$(cat /proc/$m/comm 2>&1)" "the monitor after the queries"
  jq -se 'any(.[]; .event == "egress-error" and .part == "upstreams")' "$TRAIL" >/dev/null \
    || fail "no egress-error record for the upstreams: $(cat "$TRAIL")"
}

# What an engine's shim needs (containerd-shim-runc-v2: a subreaper that
# gives the container pipes, runs kill ID 9, waits for init's exit
# through its own waitpid, runs delete, waits for EOF on the pipes): with
# the egress resolver and its monitor, every step ends at once and
# nothing of haven's stays under the shim.  (Docker's shims stayed
# behind in the engine tests; the cause was the tests removing the
# runtime before the container, tests/engines/lib.sh
# dk_uninstall_runtime: this pins down that the runtime holds its part.)
SHIM_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/shim_emulator.py
test_egress_container_shim_contract() {
  skip_on_runc "haven's egress resolver"
  command -v python3 > /dev/null || skip "python3 missing"
  egress_dns_world
  names_bundle sh -c 'nslookup api.example.com; echo to-stdout; echo to-stderr >&2; exec sleep 30'
  local id
  id=$(new_id shim)
  defer "rt delete --force $id"
  OUT=$(timeout -k 5 60 python3 "$SHIM_PY" "$RUNTIME" "$STATE_ROOT" "$B" "$id" "$PWD/init.pid" 2>&1)
  RC=$?
  echo "$OUT"
  assert_eq 0 "$RC" "the shim's steps ($OUT)"
  assert_contains "$OUT" "init exited, signal 9"
  assert_contains "$OUT" "stdio EOF"
  assert_contains "$OUT" "nothing left"
  [ ! -e "$STATE_ROOT/$id" ] || fail "state directory left behind"
  jq -se 'any(.[]; .event == "exit")' "$TRAIL" > /dev/null || fail "no exit record: $(cat "$TRAIL")"
}
