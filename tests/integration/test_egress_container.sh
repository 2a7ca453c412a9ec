# Issue 10: the egress table at create (runtime/egress_sandbox.h).  A
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
  local rules
  rules=$(ip netns exec "$SB" nft list table inet haven)
  assert_contains "$rules" "policy drop"
  assert_contains "$rules" "@deny4 goto deny"
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
  assert_contains "$(ip netns exec "$SB" nft list tables)" "table inet haven" "table at create"
  m=$(cut -d' ' -f1 "$STATE_ROOT/$id/monitor.pid")
  assert_eq haven-monitor "$(cat /proc/$m/comm)" "monitor started for egress alone"
  rt start "$id" || fail "start"
  rt delete --force "$id" || fail "delete"
  gone "$m" || fail "monitor $m still running after delete"
  [ ! -e "$STATE_ROOT/$id" ] || fail "state directory left behind"
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
  [ ! -e "$STATE_ROOT/$id" ] || fail "state directory left behind"
  assert_eq "" "$(pgrep -x haven-monitor -a | grep -F "$id" || true)" "monitor left behind"
  assert_contains "$(ip netns exec "$SB" nft list table inet haven)" "chain mine" "someone else's table kept"
  egress_bundle '{"policy":"t","connect":"engine","allow":[{"cidr":"10.0.0.1/8","ports":"any"}]}' true
  OUT=$(rt create --bundle "$B" "$id" 2>&1) && fail "create succeeded with a bad annotation"
  assert_contains "$OUT" 'config.json: .annotations["run.haven.egress"].allow[0].cidr: "10.0.0.1/8": address has bits set beyond the /8 prefix'
  [ ! -e "$STATE_ROOT/$id" ] || fail "state directory left behind"
}
