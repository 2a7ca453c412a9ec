# Learn mode (policies/README.md, "Learn mode and haven policy suggest"):
# `haven run --learn` runs a small real project's build under a base
# policy exactly, the trail keeps every refusal it can see, `haven
# policy suggest` turns them into a policy extending the base, and the
# build passes under it.  The suggestion holds exactly what the build
# needed and nothing of ~/.ssh.
#
# Landlock's refusals (the program the base does not allow) reach the
# trail only through the kernel's audit, which the test turns on for its
# run and back off (audit_enabled.py, as test_landlock_audit.sh does).
# The kernel sends its records to one network namespace only, not to one
# haven would run in under `ip netns exec` (the learn run says so), so
# haven runs in the test's own namespace here and the world is reached
# through a veth: a world namespace with a DNS server (egress_dns.py)
# giving build.example an address with a listener on 8443, routed from
# this namespace over 198.19.77.0/30 (the benchmarking range, never a
# TEST-NET one), and haven's resolver pointed at it by a resolv.conf
# bound over /etc/resolv.conf in a mount namespace of the run only.
#
#   here hvlN 198.19.77.1/30 -- lw0 198.19.77.2 world; world's lo:
#   198.19.78.53 (DNS), 198.19.78.1 (build.example, tcp 8443)

LEARN_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# learn_audit_on: the kernel's audit on for this test, put back after.
learn_audit_on() {
  [ "$(id -u)" = 0 ] || skip "Landlock's refusals reach a trail only as root"
  local was
  was=$(python3 "$LEARN_HERE/audit_enabled.py" get 2>/dev/null) || skip "cannot read the kernel's audit status"
  if [ "$was" != 1 ]; then
    python3 "$LEARN_HERE/audit_enabled.py" set 1 || skip "cannot enable the kernel's audit"
    defer "python3 '$LEARN_HERE/audit_enabled.py' set 0"
  fi
}

# The build: fetches from build.example:PORT (a name the base does not
# allow) and runs a generator kept outside the project (a program the
# base's allow_exec does not name), which also tries to read ~/.ssh.
# `make -k`: every step is tried, so that one run shows every refusal.
learn_project() {
  local port=$1
  make_project
  # Outside the project and visible in the sandbox (its /tmp is its own).
  LEARN_TOOLS=$(mktemp -d /opt/hvt-learn.XXXXXX)
  defer "rm -rf '$LEARN_TOOLS'"
  chmod 755 "$LEARN_TOOLS"
  mkdir -p "$P.home/.ssh"
  echo "not a key" > "$P.home/.ssh/id_rsa"
  printf '#!/bin/sh\ncat ~/.ssh/id_rsa > /dev/null 2>&1\necho generated > "$1"\n' > "$LEARN_TOOLS/gen"
  chmod 755 "$LEARN_TOOLS/gen"
  cat > "$P/fetch.py" <<EOF
import socket, sys
s = socket.create_connection(("build.example", $port), timeout=5)
open(sys.argv[1], "w").write(s.makefile().readline())
EOF
  printf 'all: payload gen.out\n\npayload:\n\t/usr/bin/python3 fetch.py payload\n\ngen.out:\n\t%s gen.out\n' \
    "$LEARN_TOOLS/gen" > "$P/Makefile"
  # The base: the default policy, an allowlist of no name, and the
  # programs the build runs but the generator.
  printf 'name: learnbase\nextends: default\nnetwork: {mode: allowlist}\nprocess: {allow_exec: [make, sh, cat, /usr/bin/python3]}\n' \
    > "$P.pol/base.yaml"
}

# learn_world: the world namespace, its link and route, DNS and listener;
# sets LW (the namespace), LDNSLOG, LWLOG, LRESOLV.
learn_world() {
  need_haven
  [ -x /usr/bin/pasta ] || skip "pasta missing (Debian package passt)"
  command -v nft > /dev/null || skip "nft missing (Debian package nftables)"
  ip route show 198.19.78.0/24 | grep -q . && skip "198.19.78.0/24 is routed here already"
  LW=$CTR_PREFIX-lw-$RANDOM
  local link=hvl$RANDOM i
  ip netns add "$LW" || fail "ip netns add $LW"
  # Deleting the namespace deletes the veth pair, and the route with it.
  defer "ip netns del $LW"
  ip link add "$link" type veth peer name lw0 netns "$LW" || fail "veth"
  ip addr add 198.19.77.1/30 dev "$link"
  ip link set "$link" up
  ip -n "$LW" link set lo up
  ip -n "$LW" addr add 198.19.77.2/30 dev lw0
  ip -n "$LW" link set lw0 up
  ip -n "$LW" addr add 198.19.78.1/32 dev lo
  ip -n "$LW" addr add 198.19.78.53/32 dev lo
  ip -n "$LW" route add default via 198.19.77.1
  ip route add 198.19.78.0/24 via 198.19.77.2 || fail "route"
  echo '{"build.example": {"A": [["198.19.78.1", 300]]}}' > zone.json
  LDNSLOG=$PWD/dns.log
  LWLOG=$PWD/world.log
  : > "$LDNSLOG"
  : > "$LWLOG"
  ip netns exec "$LW" python3 "$LEARN_HERE/egress_dns.py" server "$PWD/zone.json" "$LDNSLOG" "$PWD/dns.ready" \
    198.19.78.53 > dns.err 2>&1 &
  defer "kill $!"
  ip netns exec "$LW" python3 "$LEARN_HERE/egress_world.py" listen "$LWLOG" "$PWD/world.ready" \
    tcp:198.19.78.1:8443 > world.err 2>&1 &
  defer "kill $!"
  LRESOLV=$PWD/resolv.conf
  echo "nameserver 198.19.78.53" > "$LRESOLV"
  for i in $(seq 100); do [ -e dns.ready ] && [ -e world.ready ] && return 0; sleep 0.05; done
  fail "the world did not start: $(cat dns.err world.err)"
}

# haven ARGS in the project, its resolver asking the world's DNS server.
learn_haven() {
  (cd "$P" && HOME=$P.home timeout -k 2 40 unshare -m --propagation private \
     sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$LRESOLV" "$HAVEN" "$@")
}

test_learn_suggest_then_run() {
  learn_audit_on
  learn_world
  local port=8443
  learn_project "$port"
  local trail=$P.home/.local/state/haven/audit.log err=$PWD/learn.err rc=0
  learn_haven run --learn --policy "$P.pol/base.yaml" -- make -k > learn.out 2> "$err" || rc=$?
  [ "$rc" != 0 ] || fail "the build passed under the base: $(cat "$err")"
  # The base keeps no trail: learn mode writes the default one, and says
  # so; it says what it cannot see.
  assert_contains "$(cat "$err")" 'haven: learn: the policy "learnbase" keeps no trail: this run writes its records to ~/.local/state/haven/audit.log'
  assert_contains "$(cat "$err")" "haven: learn: not seen, so haven policy suggest cannot learn them: reads of hidden paths"
  assert_contains "$(cat "$err")" "haven: learn: recorded: denied system calls, refused names and connects, programs allow_exec/block_shell refuse"
  [ -f "$trail" ] || fail "no trail at $trail"
  jq -se 'map(select(.event == "start"))[-1] | .learn == true and .base == "'"$P.pol/base.yaml"'"' "$trail" > /dev/null \
    || fail "start record: $(grep '"start"' "$trail")"
  jq -se 'any(.[]; .event == "landlock-denied" and .path == "'"$LEARN_TOOLS/gen"'")' "$trail" > /dev/null \
    || fail "the generator's refusal is not in the trail: $(cat "$trail")"
  # The name got a sinkhole: the table refused the connect to it (its
  # record names the name and the port) and nothing left: the world's
  # DNS server was never asked, its listener never reached.
  jq -se 'any(.[]; .event == "net-denied" and (.destination | startswith("240.")) and .port == '"$port"'
          and .names == ["build.example"])' "$trail" > /dev/null || fail "no net-denied to a sinkhole: $(cat "$trail")"
  assert_contains "$(cat "$err")" "haven: learn: a name the policy does not list resolves to a sinkhole address"
  assert_not_contains "$(cat "$err")" "lookups fail as not found" "the learn run's stderr"
  assert_eq "" "$(cat "$LDNSLOG")" "the world's DNS log during the learn run"
  assert_eq "" "$(cat "$LWLOG")" "the world's connection log during the learn run"

  HOME=$P.home "$HAVEN" policy suggest -o "$P.pol/learned.yaml" 2> suggest.err || fail "suggest: $(cat suggest.err)"
  cat "$P.pol/learned.yaml"
  HOME=$P.home "$HAVEN" policy explain "$P.pol/learned.yaml" > explain.out 2>&1 || fail "explain: $(cat explain.out)"
  # Exactly what the build needed: the name (with the port its connect
  # was refused on, or 443 and 80 where no connect showed it) and the
  # generator; the base by its file.
  assert_eq "extends: \"$P.pol/base.yaml\"" "$(grep '^extends:' "$P.pol/learned.yaml")"
  # The run by its id: the same suggestion.
  local id
  id=$(jq -r 'select(.event == "start") | .run' "$trail" | tail -1)
  [[ "$id" =~ ^[0-9a-f]{16}$ ]] || fail "the start record's run id: $id"
  assert_contains "$(head -2 "$P.pol/learned.yaml")" "run $id"
  assert_eq "$(cat "$P.pol/learned.yaml")" "$(HOME=$P.home "$HAVEN" policy suggest --run "$id" 2>/dev/null)" "--run $id"
  assert_eq "\"$LEARN_TOOLS/gen\"
\"build.example:$port\"" "$(sed -n 's/^    - \("[^"]*"\).*/\1/p' "$P.pol/learned.yaml" | sort)" "the suggestion's entries"
  assert_not_contains "$(grep -v '^#' "$P.pol/learned.yaml")" ".ssh" "the suggestion"

  rc=0
  learn_haven run --policy "$P.pol/learned.yaml" -- make -k > run.out 2> run.err || rc=$?
  assert_eq 0 "$rc" "the build under the suggestion ($(tail -5 run.err))"
  assert_eq "hi 198.19.78.1 $port" "$(cat "$P/payload")"
  assert_eq generated "$(cat "$P/gen.out")"

  # In a network namespace of its own the kernel's audit sends haven
  # nothing: learn mode says so at the start instead of learning less.
  local out
  out=$(cd "$P" && HOME=$P.home timeout -k 2 20 unshare -n "$HAVEN" run --learn --policy "$P.pol/base.yaml" -- true 2>&1)
  assert_contains "$out" "haven: learn: not seen: programs allow_exec/block_shell refuse (Landlock tells only the kernel's audit): the kernel's audit sends its records to another network namespace"
}

# From the default policy (network.mode: none, no --policy): learn mode
# runs an allowlist of nothing (run_learn.c), so the name the build
# needs is recorded, nothing reaches the world, the suggestion is
# `extends: default` plus that one entry, and the build passes under it.
test_learn_from_default() {
  learn_world
  make_project
  local port=8443 trail=$P.home/.local/state/haven/audit.log rc=0
  cat > "$P/fetch.py" <<EOF
import socket, sys
s = socket.create_connection(("build.example", $port), timeout=5)
open(sys.argv[1], "w").write(s.makefile().readline())
EOF
  # ifaces, retries: the sandbox's network interfaces and package
  # managers' retry variables during the learn run.
  printf 'all: ifaces payload\n\nifaces:\n\ttail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " > ifaces\n\tprintenv npm_config_fetch_retries PIP_RETRIES CARGO_NET_RETRY > retries\n\npayload:\n\t/usr/bin/python3 fetch.py payload\n' \
    > "$P/Makefile"
  # pasta asked for: learn mode over none takes the forwarder anyway.
  HAVEN_EGRESS_WAY=pasta learn_haven run --learn -- make > learn.out 2> learn.err || rc=$?
  [ "$rc" != 0 ] || fail "the build passed under default: $(cat learn.err)"
  assert_contains "$(cat learn.err)" 'haven: learn: the policy "default" has no network (network.mode: none): this run is an allowlist of nothing instead'
  assert_contains "$(cat learn.err)" "recorded: denied system calls, refused names and connects"
  assert_not_contains "$(cat learn.err)" "not seen: names and connects" "the learn run's stderr"
  jq -se 'any(.[]; .event == "net-denied" and (.destination | startswith("240.")) and .port == '"$port"'
          and .names == ["build.example"] and .policy == "default")' "$trail" > /dev/null \
    || fail "no net-denied to a sinkhole: $(cat "$trail")"
  assert_eq "" "$(cat "$LDNSLOG")" "the world's DNS log during the learn run"
  assert_eq "" "$(cat "$LWLOG")" "the world's connection log during the learn run"
  # Loopback only, as under none: the forwarder, never pasta's tap.
  assert_eq lo "$(cat "$P/ifaces")" "the learn run's interfaces"
  # ... and the package managers told not to retry, as under none.
  assert_eq "0 0 0" "$(echo $(cat "$P/retries"))" "the learn run's retry variables"
  HOME=$P.home "$HAVEN" policy suggest -o "$P.pol/learned.yaml" 2> suggest.err || fail "suggest: $(cat suggest.err)"
  assert_eq 'extends: "default"' "$(grep '^extends:' "$P.pol/learned.yaml")"
  assert_eq '"build.example:8443"' "$(sed -n 's/^    - \("[^"]*"\).*/\1/p' "$P.pol/learned.yaml")" "the suggestion's entries"
  assert_eq "network:
  allow:" "$(grep -v '^ *#' "$P.pol/learned.yaml" | grep -v '^ *- ' | grep -v '^extends:')" "the suggestion's keys"
  rc=0
  learn_haven run --policy "$P.pol/learned.yaml" -- make > run.out 2> run.err || rc=$?
  assert_eq 0 "$rc" "the build under the suggestion ($(tail -5 run.err))"
  assert_eq "hi 198.19.78.1 $port" "$(cat "$P/payload")"
}

# Bad input names the file and line; a run that is not there is said.
test_learn_suggest_bad_input() {
  need_haven
  make_project
  printf 'extends: default\n' > "$P.pol/base.yaml"
  local t=$P.pol/trail.log out
  printf '{"event":"start","policy":"b","learn":true,"base":"%s","project":"%s","command":["x"]}\n{"event":"net-denied",\n' \
    "$P.pol/base.yaml" "$P" > "$t"
  out=$("$HAVEN" policy suggest --from "$t" 2>&1) && fail "a broken trail was read: $out"
  assert_contains "$out" "$t:2: not a JSON record"
  printf '{"event":"start","policy":"b","learn":true,"base":"%s","project":"%s","command":["x"]}\n{"event":"dns-refused","policy":"b"}\n' \
    "$P.pol/base.yaml" "$P" > "$t"
  out=$("$HAVEN" policy suggest --from "$t" 2>&1) && fail "a record without its name was read: $out"
  assert_contains "$out" "$t:2: a \"dns-refused\" record without \"name\""
  out=$("$HAVEN" policy suggest --from "$t" --run 0123456789abcdef 2>&1) && fail "a missing run was found: $out"
  assert_contains "$out" "$t: no run 0123456789abcdef"
  printf '{"event":"start","policy":"b","project":"%s","command":["x"]}\n' "$P" > "$t"
  out=$("$HAVEN" policy suggest --from "$t" 2>&1) && fail "a trail with no learn run was read: $out"
  assert_contains "$out" "$t: no learn run"
}

# Two learn runs written at once into one trail: each suggestion has
# only its own run's records (by the run id every record carries).
test_learn_suggest_picks_the_run() {
  need_haven
  make_project
  printf 'extends: default\nnetwork: {mode: allowlist}\n' > "$P.pol/base.yaml"
  local t=$P.pol/trail.log out
  {
    printf '{"event":"start","policy":"b","run":"aaaaaaaaaaaaaaaa","learn":true,"base":"%s","project":"%s","command":["a"]}\n' "$P.pol/base.yaml" "$P"
    printf '{"event":"start","policy":"b","run":"bbbbbbbbbbbbbbbb","learn":true,"base":"%s","project":"%s","command":["b"]}\n' "$P.pol/base.yaml" "$P"
    printf '{"event":"dns-refused","policy":"b","run":"aaaaaaaaaaaaaaaa","name":"a.example","type":"A","why":"not in the policy"}\n'
    printf '{"event":"net-denied","policy":"b","run":"bbbbbbbbbbbbbbbb","destination":"240.0.0.1","port":8443,"protocol":"tcp","names":["b.example"]}\n'
    printf '{"event":"exit","policy":"b","run":"aaaaaaaaaaaaaaaa","status":1}\n'
  } > "$t"
  out=$("$HAVEN" policy suggest --from "$t" 2>&1) || fail "$out"
  assert_contains "$out" '- "b.example:8443"'
  assert_not_contains "$out" "a.example"
  out=$("$HAVEN" policy suggest --from "$t" --run aaaaaaaaaaaaaaaa 2>&1) || fail "$out"
  assert_contains "$out" '- "a.example"   # lookup A, 1 time; no connect showed its port: TCP 443 and 80'
  assert_not_contains "$out" "b.example"
}

# Without namespaces nothing is recorded: learn mode refuses to run.
test_learn_refuses_without_namespaces() {
  need_haven
  make_project
  local out
  out=$(cd "$P" && HOME=$P.pol "$HAVEN" run --learn --isolation landlock -- true 2>&1) && fail "ran: $out"
  assert_contains "$out" "haven run --learn: without namespaces"
}
