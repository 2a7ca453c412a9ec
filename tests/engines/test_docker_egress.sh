# Egress in engine containers: every shipped agent policy
# reaches exactly the hosts it lists, and nothing else, from a container
# that Docker runs under haven-runc with policy P (a runtime registered
# with `haven install docker --policy P`: dockerd 20.10 has no
# `docker run --annotation`) on a user network, where Docker's embedded DNS (127.0.0.11) is the
# upstream of haven's resolver.
#
# The world: an --internal network (nothing leaves the machine) with a
# TEST-NET subnet, because haven's resolver drops private answers
# (runtime/egress/egress_decide.c: 10/8, 172.16/12, 192.168/16, 100.64/10, ...)
# unless a CIDR entry allows them, and Docker's default address pools are
# 172.x: a policy that lists only names would never reach a container
# there.  203.0.113.0/24 and 198.51.100.0/24 are not in that list.
#   "world": network aliases = every name a policy lists (x.ZONE for
#            *.ZONE) and `db`; listens on each listed port, on 8443 and
#            on 5433, logging the port of every connection;
#   "evil":  aliases evil.example and x.NAME (a subdomain of a listed,
#            non-wildcard name); same listeners, its own log.
# Docker resolves every one of those names: haven's refusal is the only
# thing between the container and them.
#
# Each policy's names come from what it compiles to (the run.haven.egress
# annotation) and the policies from policies/*.yaml, so a policy or a name
# added later is tested without touching this file.  Which DNS queries
# reach Docker's DNS is seen from the host: a table of the test's own in
# the container's network namespace counts, after NAT, the UDP queries to
# 127.0.0.11 that carry a given name (haven's redirect sends the
# container's own queries to 127.0.0.1, so only the resolver's upstream
# queries are counted there); a listed name is counted too, so the
# counter is shown to see what it should.

DKE_POLICY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../policies" && pwd)
# A port no shipped policy lists (the world listens there too).
DKE_OTHER_PORT=8443

# dke_annotation POLICY: the run.haven.egress annotation it compiles to.
dke_annotation() {
  haven policy compile "$1" 2>/dev/null | jq -r '.annotations["run.haven.egress"] // empty'
}

# dke_targets POLICY: "HOST PORT" per line, each name entry's host (x.ZONE
# for a wildcard *.ZONE) and the first port of its range.
dke_targets() {
  dke_annotation "$1" | jq -r '.names[] | "\(if .subdomains then "x." else "" end)\(.name) \(.ports | split("-")[0])"' \
    | sort -u
}

# dke_subdomain POLICY: x.NAME for the first listed name that is not a
# wildcard and whose x. subdomain no wildcard of the policy covers.
dke_subdomain() {
  dke_annotation "$1" | jq -r '[.names[] | select(.subdomains) | .name] as $z
    | [.names[] | select(.subdomains | not) | "x." + .name
       | select(. as $x | any($z[]; . as $zone | $x | endswith("." + $zone)) | not)] | first // empty'
}

# The shipped policies that list names (an allowlist of names).
dke_name_policies() {
  local f p
  for f in "$DKE_POLICY_DIR"/*.yaml; do
    p=$(basename "$f" .yaml)
    [ -n "$(dke_targets "$p")" ] && echo "$p"
  done
}

# The wire form of a DNS name (hex), as it follows the 12-byte header of
# a query; at most 16 bytes (an nftables raw match of 128 bits).
dke_qname_hex() {
  local l hex="" labels
  IFS=. read -ra labels <<< "$1"
  for l in "${labels[@]}"; do
    hex+=$(printf '%02x' "${#l}")$(printf '%s' "$l" | od -An -tx1 | tr -d ' \n')
  done
  hex+=00
  echo "${hex:0:32}"
}

# dke_world NET ALIASES_FILE PORTS...: start "world" and "evil" (the
# engine's default runtime: they are the test's world, not under test)
# and wait until each listens on every port.  Sets DKE_WORLD, DKE_EVIL.
dke_world() {
  local net=$1 aliases_file=$2 port script="" a args
  shift 2
  for port in "$@"; do
    script+="nc -ll -p $port -e sh -c 'echo $port >> /tmp/conn.log' & "
  done
  script+="touch /tmp/conn.log; wait"
  DKE_WORLD=$(new_name world)
  DKE_EVIL=$(new_name evil)
  args=()
  while read -r a; do args+=(--network-alias "$a"); done < "$aliases_file"
  dk run -d --name "$DKE_WORLD" --network "$net" "${args[@]}" "$IMAGE" sh -c "$script" > /dev/null 2> run.err \
    || fail "world: $(cat run.err)"
  args=()
  while read -r a; do args+=(--network-alias "$a"); done < evil.aliases
  dk run -d --name "$DKE_EVIL" --network "$net" "${args[@]}" "$IMAGE" sh -c "$script" > /dev/null 2> run.err \
    || fail "evil: $(cat run.err)"
  local c
  for c in "$DKE_WORLD" "$DKE_EVIL"; do
    wait_for 20 dke_listens "$c" $# \
      || fail "$c does not listen on $*: $(dk exec "$c" netstat -ltn 2>&1)"
  done
}

# dke_listens CONTAINER N: N TCP listeners of the test's (not counting
# Docker's DNS on 127.0.0.11).
dke_listens() {
  [ "$(dk exec "$1" netstat -ltn | grep -c ' :::[0-9]')" = "$2" ]
}

# dke_network: an --internal network on a TEST-NET-3 /27, made in the
# test dockerd's own network namespace (run.sh), never in the host's.
# Sets DKE_NET.
dke_network() {
  DKE_NET=$(new_name enet)
  local sub="203.0.113.$((32 * (RANDOM % 8)))/27"
  dk network create --internal --subnet "$sub" "$DKE_NET" > /dev/null 2> net.err \
    || fail "network create --internal --subnet $sub: $(cat net.err)"
}

# dke_observe NAME CONTAINER NAMES...: in CONTAINER's network namespace, a
# table hvobs with one counter per NAME (c0, c1, ...) of the UDP queries
# for it that reach 127.0.0.11 after NAT (Docker's embedded DNS).
dke_observe() {
  local c=$1 pid i=0 n hex
  shift
  pid=$(dk_state "$c" '{{.State.Pid}}')
  [[ "$pid" =~ ^[0-9]+$ ]] && [ "$pid" != 0 ] || fail "no pid for $c: $pid"
  {
    echo "table inet hvobs {"
    for i in $(seq 0 $(($# - 1))); do echo "  counter c$i { }"; done
    echo "  chain out { type filter hook output priority 100; policy accept;"
    i=0
    for n in "$@"; do
      hex=$(dke_qname_hex "$n")
      echo "    meta l4proto udp ip daddr 127.0.0.11 @ih,96,$((${#hex} * 4)) 0x$hex counter name \"c$i\""
      i=$((i + 1))
    done
    echo "  }"
    echo "}"
  } > obs.nft
  nsenter -t "$pid" -n nft -f obs.nft 2> obs.err || fail "observer table: $(cat obs.err)"
}

# dke_observed CONTAINER I: the packets counter c<I> counted.
dke_observed() {
  nsenter -t "$(dk_state "$1" '{{.State.Pid}}')" -n nft -j list counter inet hvobs "c$2" \
    | jq -r '.nftables[] | select(.counter) | .counter.packets'
}

# dke_gone_after_rm CONTAINER: docker rm -f, then no monitor of its (by
# the audit trail's monitor_pid and by name), no runtime state.
dke_gone_after_rm() {
  local c=$1 id trail m
  id=$(dk_state "$c" '{{.Id}}')
  trail=/var/log/haven/containers/$id.jsonl
  m=$(jq -s '.[0].monitor_pid' "$trail" 2> /dev/null)
  [ -n "$m" ] && [ "$(cat "/proc/$m/comm" 2> /dev/null)" = haven-monitor ] \
    || fail "$c: no monitor while it runs (trail: $(head -c 300 "$trail" 2>&1))"
  # The runtime's state while it runs (Docker 20.10's layout:
  # <exec-root>/runtime-<runtime name>/<containerd namespace>/<id>).
  local state
  state=$(ls -d "$WORK"/docker/exec/runtime-*/*/"$id" 2> /dev/null)
  [ -n "$state" ] || fail "$c: no runtime state found under $WORK/docker/exec (the test's layout is out of date)"
  dk rm -f "$c" > /dev/null || fail "docker rm -f $c"
  wait_for 10 sh -c "[ ! -e /proc/$m ] || grep -q '^State:.*Z' /proc/$m/status" || fail "monitor $m outlived docker rm -f $c"
  assert_eq "" "$(pgrep -x haven-monitor -a | grep -F "$id" || true)" "$c: a haven-monitor left"
  [ ! -e "$state" ] || fail "$c: runtime state left in $state"
  rm -f "$trail"
}

# dke_probe_policy POLICY: one container under POLICY with
# NET_RAW/NET_ADMIN asked for; every listed host:port connects, another
# port, a subdomain and an unlisted name are refused at once, unlisted
# names never reach Docker's DNS, no raw capability, no packet socket, no
# table access; nothing left after docker rm -f.
dke_probe_policy() {
  local pol=$1 c targets sub first firstport h p probes=() out line
  targets=$(dke_targets "$pol")
  [ -n "$targets" ] || fail "policy $pol lists no names"
  sub=$(dke_subdomain "$pol")
  [ -n "$sub" ] || fail "policy $pol: no non-wildcard name to take a subdomain of"
  read -r first firstport <<< "$(echo "$targets" | head -1)"
  while read -r h p; do probes+=("connect:$h:$p"); done <<< "$targets"
  # The other port must be one the policy does not allow for that host.
  dke_annotation "$pol" | jq -e --arg h "${first#x.}" --argjson o "$DKE_OTHER_PORT" \
    'any(.names[]; .name == $h and (.ports | split("-") | map(tonumber) | .[0] <= $o and (.[1] // .[0]) >= $o))' \
    > /dev/null && fail "policy $pol allows $first:$DKE_OTHER_PORT: change DKE_OTHER_PORT"
  probes+=("connect:$first:$DKE_OTHER_PORT" "connect:$sub:$firstport" "connect:evil.example:$firstport"
    "dns:evil.example" "dns:$sub" packet sock-packet raw nft-list nft-delete)
  c=$(new_name "p-$pol")
  dk run -d --name "$c" --runtime "hvegress-$pol" --network "$DKE_NET" \
    --cap-add NET_RAW --cap-add NET_ADMIN "$IMAGE" sleep 600 > /dev/null 2> run.err \
    || fail "$pol: docker run: $(cat run.err)"
  dke_observe "$c" evil.example "$sub" "$first"
  out=$(timeout -k 5 60 "$DOCKER_CLI" exec "$c" sh -c \
    'grep ^CapEff /proc/1/status; grep ^CapEff /proc/self/status; exec /usr/bin/syscall_probe "$@"' sh "${probes[@]}" 2>&1)
  echo "$out" > "probe-$pol.out"
  # CAP_NET_ADMIN is bit 12, CAP_NET_RAW bit 13 (init and docker exec).
  local cap
  for cap in $(echo "$out" | awk '/^CapEff/ {print $2}'); do
    (((0x$cap >> 12) & 3)) && fail "$pol: CapEff $cap has CAP_NET_ADMIN or CAP_NET_RAW despite the policy"
  done
  [ "$(echo "$out" | grep -c ^CapEff)" = 2 ] || fail "$pol: no CapEff lines: $out"
  while read -r h p; do
    assert_contains "$out" "connect:$h:$p: connected " "$pol: $h:$p"
  done <<< "$targets"
  # Refused at once: by the resolver (NXDOMAIN, a definite "not found";
  # "no data" where allowed names lie below) or the table (a reset or an
  # ICMP error), in well under the probe's 3 s bound.
  for line in "connect:$first:$DKE_OTHER_PORT" "connect:$sub:$firstport" "connect:evil.example:$firstport"; do
    [[ "$out" =~ $line:\ (refused|unreachable|dns-NXDOMAIN|no-address)\ ([0-9]+)ms ]] \
      || fail "$pol: $line: expected a refusal, got: $(echo "$out" | grep -F "$line:")"
    [ "${BASH_REMATCH[2]}" -lt 1000 ] || fail "$pol: $line took ${BASH_REMATCH[2]} ms"
  done
  assert_contains "$out" "dns:evil.example: NXDOMAIN ede=15 haven egress policy \"$pol\": evil.example (type 1)" \
    "$pol: the resolver's refusal names haven and the policy"
  assert_contains "$out" "dns:$sub: NXDOMAIN ede=15 haven egress policy \"$pol\"" "$pol: $sub"
  local probe
  for probe in packet sock-packet raw nft-list nft-delete; do
    assert_contains "$out" "$probe: Operation not permitted" "$pol: $probe"
  done
  # Docker's DNS saw the listed name (the counter works) and never the
  # unlisted ones; neither world logged a connection it should not have.
  [ "$(dke_observed "$c" 2)" -ge 1 ] || fail "$pol: the observer counted no query for $first: $(nsenter -t "$(dk_state "$c" '{{.State.Pid}}')" -n nft list table inet hvobs 2>&1)"
  assert_eq 0 "$(dke_observed "$c" 0)" "$pol: queries for evil.example that reached Docker's DNS"
  assert_eq 0 "$(dke_observed "$c" 1)" "$pol: queries for $sub that reached Docker's DNS"
  assert_eq "" "$(dk exec "$DKE_EVIL" cat /tmp/conn.log)" "$pol: connections the unlisted names' container got"
  assert_not_contains "$(dk exec "$DKE_WORLD" cat /tmp/conn.log)" "$DKE_OTHER_PORT" "$pol: world's other port"
  # The monitor's trail names what it refused.
  local trail
  trail=/var/log/haven/containers/$(dk_state "$c" '{{.Id}}').jsonl
  jq -se 'any(.[]; .event == "dns-refused" and .name == "evil.example")' "$trail" > /dev/null \
    || fail "$pol: no dns-refused record for evil.example: $(tail -5 "$trail" 2>&1)"
  jq -se --argjson o "$DKE_OTHER_PORT" 'any(.[]; .event == "net-denied" and .port == $o)' "$trail" > /dev/null \
    || fail "$pol: no net-denied record for port $DKE_OTHER_PORT: $(tail -5 "$trail" 2>&1)"
  jq -se 'all(.[]; .event != "egress-error")' "$trail" > /dev/null || fail "$pol: egress error: $(cat "$trail")"
  dke_gone_after_rm "$c"
}

# dke_runtimes POLICY...: a Docker runtime "hvegress-NAME" for each
# policy (haven-runc --policy POLICY; NAME is the file's name without
# .yaml), registered with `haven install docker` and picked up by dockerd
# on SIGHUP; removed when the test ends.  dockerd 20.10 (API 1.41) has no
# `docker run --annotation`, so a Docker user picks a policy this way; the
# runtime applies it as it does run.haven.policy (cli/config_policy.c).
dke_runtimes() {
  local pol name names=() daemon=$WORK/docker/daemon.json
  for pol in "$@"; do
    name=hvegress-$(basename "$pol" .yaml)
    haven install docker --daemon-json "$daemon" --runtime "$RUNTIME" --name "$name" --policy "$pol" \
      > install.out 2>&1 || fail "haven install docker --policy $pol: $(cat install.out)"
    defer "dk_uninstall_runtime '$daemon' '$name'"
    names+=("$name")
  done
  kill -HUP "$(cat "$WORK/docker/dockerd.pid")"
  for name in "${names[@]}"; do
    wait_for 20 sh -c "'$DOCKER_CLI' info -f '{{range \$k, \$v := .Runtimes}}{{\$k}} {{end}}' | grep -qw $name" \
      || fail "dockerd did not pick up runtime $name"
  done
}

# dke_setup_world POLICY...: the network and the world for POLICIES
# (aliases for all of them, `db`), listeners on their ports.
dke_setup_world() {
  local pol ports=("$DKE_OTHER_PORT" 5432 5433)
  : > ports.list
  : > world.aliases
  : > evil.aliases
  echo evil.example >> evil.aliases
  echo db >> world.aliases
  for pol in "$@"; do
    dke_targets "$pol" | awk '{print $1}' >> world.aliases
    dke_targets "$pol" | awk '{print $2}' >> ports.list
    dke_subdomain "$pol" >> evil.aliases
  done
  sort -u -o world.aliases world.aliases
  sort -u -o evil.aliases evil.aliases
  mapfile -t -O 3 ports < <(sort -nu ports.list)
  dke_network
  dke_world "$DKE_NET" world.aliases "${ports[@]}"
}

test_docker_egress_agent_policies() {
  need_docker
  [ "$ENGINE_RUNTIME" = haven ] || skip "haven's egress table and resolver"
  command -v nft > /dev/null || skip "nft missing (Debian package nftables)"
  command -v nsenter > /dev/null || skip "nsenter missing (util-linux)"
  local pols pol
  mapfile -t pols < <(dke_name_policies)
  [ "${#pols[@]}" -ge 5 ] || fail "only ${#pols[@]} policies with names in $DKE_POLICY_DIR: ${pols[*]}"
  local want
  for want in claude-code codex gemini-cli aider devcontainer; do
    [[ " ${pols[*]} " == *" $want "* ]] || fail "shipped policy $want lists no names"
  done
  dke_runtimes "${pols[@]}"
  dke_setup_world "${pols[@]}"
  for pol in "${pols[@]}"; do
    dke_probe_policy "$pol"
    echo "# $pol: $(grep -c ': connected ' "probe-$pol.out") connected, refusals and probes as expected"
  done
  # The listed names did reach the world (each probe's connect landed).
  [ "$(dk exec "$DKE_WORLD" cat /tmp/conn.log | wc -l)" -ge "${#pols[@]}" ] \
    || fail "the world logged fewer connections than there were policies"
}

# A compose-style service name: `db` is a container alias on the network,
# reached by name when a policy allows db:5432, and nothing else of it.
# `--network host` with an allowlist is refused with haven's message.
test_docker_egress_service_name_and_host_network() {
  need_docker
  [ "$ENGINE_RUNTIME" = haven ] || skip "haven's egress table and resolver"
  local pol=$PWD/compose-db.yaml c out
  # It keeps CAP_NET_RAW and CAP_NET_ADMIN (the shipped policies keep no
  # capability at all): the allowlist must take them away all the same.
  printf 'extends: default\nnetwork:\n  allow: ["db:5432"]\nprocess:\n  capabilities: [CAP_CHOWN, CAP_NET_RAW, CAP_NET_ADMIN]\n' \
    > "$pol"
  dke_runtimes "$pol" claude-code
  dke_setup_world
  c=$(new_name dbclient)
  dk run -d --name "$c" --runtime hvegress-compose-db --network "$DKE_NET" --cap-add NET_RAW --cap-add NET_ADMIN \
    "$IMAGE" sleep 600 > /dev/null 2> run.err || fail "docker run: $(cat run.err)"
  out=$(dk exec "$c" sh -c 'grep ^CapEff /proc/1/status; grep ^CapEff /proc/self/status
    exec /usr/bin/syscall_probe "$@"' sh connect:db:5432 connect:db:5433 connect:evil.example:5432 \
    dns:evil.example packet sock-packet raw nft-list nft-delete 2>&1)
  # CAP_CHOWN (bit 0) kept, CAP_NET_ADMIN (12) and CAP_NET_RAW (13) not.
  assert_eq "CapEff:	0000000000000001
CapEff:	0000000000000001" "$(echo "$out" | grep ^CapEff)" "capabilities of init and docker exec"
  local probe
  for probe in packet sock-packet raw nft-list nft-delete; do
    assert_contains "$out" "$probe: Operation not permitted" "$probe"
  done
  assert_contains "$out" "connect:db:5432: connected " "db:5432 by its service name"
  [[ "$out" =~ connect:db:5433:\ (refused|unreachable)\ ([0-9]+)ms ]] && [ "${BASH_REMATCH[2]}" -lt 1000 ] \
    || fail "db:5433 not refused at once: $out"
  assert_contains "$out" "connect:evil.example:5432: dns-NXDOMAIN" "an unlisted name"
  assert_contains "$out" "dns:evil.example: NXDOMAIN ede=15 haven egress policy \"compose-db\"" "the refusal's text"
  assert_eq 5432 "$(dk exec "$DKE_WORLD" cat /tmp/conn.log)" "connections the world got"
  # busybox's own resolver (getaddrinfo of its libc) reaches it too.
  OUT=$(dk exec "$c" sh -c 'nc -w 3 db 5432 < /dev/null && echo nc-ok' 2>&1)
  assert_contains "$OUT" "nc-ok" "nc db 5432"
  dke_gone_after_rm "$c"

  OUT=$(dk run --rm --runtime hvegress-claude-code --network host "$IMAGE" true 2>&1 < /dev/null)
  RC=$?
  [ "$RC" != 0 ] || fail "docker run --network host with an allowlist policy ran"
  # Docker names its host namespace (/var/run/docker/netns/default);
  # without a path the refusal says "shares the host's network".
  case $OUT in
    *"is the host's: policy claude-code allows only some destinations (network.allow), which cannot be enforced there"*) ;;
    *"policy claude-code allows only some destinations (network.allow), but the container shares the host's network"*) ;;
    *) fail "--network host: not haven's refusal: $OUT" ;;
  esac
}

# --- Every Docker network mode ---

DKE_DNS_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../integration" && pwd)/egress_dns.py

# dke_http_from CONTAINER-ARGS... -- ADDR: "served by haven" when the
# container made by `docker run --rm ARGS IMAGE` reaches httpd on ADDR:8080,
# "unreachable" else; "interfaces: ..." first.
dke_http_from() {
  local args=() addr
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  addr=$2
  dk run --rm "${args[@]}" "$IMAGE" sh -c "echo interfaces: \$(ls /sys/class/net | xargs)
    printf 'GET /index.html HTTP/1.0\r\n\r\n' | nc -w 3 $addr 8080 2>&1 | grep 'served by' || echo unreachable" \
    2>&1 < /dev/null
}

# Network none under Docker: a container of haven-default (policy
# default: network none) has only loopback and reaches no server on the
# network Docker gave it: the default bridge, a user-defined network (what
# compose makes; Docker's DNS on 127.0.0.11), the host's, another
# container's.  Docker sets bridge networks up with a hook
# (libnetwork-setkey) that moves eth0 into init's network namespace,
# whichever namespace that is.  The servers run under runc, as the rest of
# a stack would, and a runc client reaches them (the test can see a
# reachable server).
test_docker_network_none_every_mode() {
  need_docker
  [ "$ENGINE_RUNTIME" = haven ] || skip "haven's policy"
  local net srvb srvu ipb ipu mode
  net=$(new_name nnet)
  dk network create "$net" > /dev/null 2> net.err || fail "network create: $(cat net.err)"
  srvb=$(new_name srvb)
  srvu=$(new_name srvu)
  dk run -d --name "$srvb" --runtime runc "$IMAGE" httpd -f -p 8080 -h /www > /dev/null 2> run.err \
    || fail "server on the default bridge: $(cat run.err)"
  dk run -d --name "$srvu" --runtime runc --network "$net" "$IMAGE" httpd -f -p 8080 -h /www > /dev/null 2> run.err \
    || fail "server on $net: $(cat run.err)"
  ipb=$(dk_state "$srvb" '{{.NetworkSettings.IPAddress}}')
  ipu=$(dk_state "$srvu" "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}")
  [[ "$ipb" =~ ^[0-9.]+$ && "$ipu" =~ ^[0-9.]+$ ]] || fail "no server addresses: '$ipb' '$ipu'"
  OUT=$(dke_http_from --runtime runc -- "$ipb")
  assert_contains "$OUT" "served by haven" "runc on the default bridge reaches the server"
  OUT=$(dke_http_from --runtime runc --network "$net" -- "$srvu")
  assert_contains "$OUT" "served by haven" "runc on $net reaches the server by name"
  for mode in "bridge $ipb" "$net $ipu" "$net $srvu" "host $ipb" "container:$srvu 127.0.0.1"; do
    OUT=$(dke_http_from --runtime haven-default --network "${mode% *}" -- "${mode#* }")
    assert_eq "interfaces: lo
unreachable" "$(echo "$OUT" | grep -v '^WARNING')" "haven-default on --network ${mode% *} (to ${mode#* })"
  done
  # A long-lived one: still nothing once Docker is done with it.
  local c
  c=$(new_name nonec)
  dk run -d --name "$c" --runtime haven-default --network "$net" "$IMAGE" sleep 600 > /dev/null 2> run.err \
    || fail "detached: $(cat run.err)"
  assert_eq lo "$(dk exec "$c" sh -c 'ls /sys/class/net | xargs')" "interfaces of a detached container"
  # docker network connect later: Docker never learnt the namespace (its
  # hook did not run), so nothing arrives there.
  dk network connect bridge "$c" > /dev/null 2>&1
  assert_eq lo "$(dk exec "$c" sh -c 'ls /sys/class/net | xargs')" "interfaces after docker network connect"
}

# dke_standin GW: a DNS server in the test dockerd's network namespace on
# GW:53 (a network's gateway there: what Docker's DNS forwards to with
# --dns GW), answering from zone.json, logging to dns.log.
dke_standin() {
  [ -n "${DOCKER_NETNS_PATH:-}" ] || skip "the harness's dockerd has no network namespace of its own"
  command -v python3 > /dev/null || skip "python3 missing"
  : > dns.log
  rm -f dns.ready
  nsenter --net="$DOCKER_NETNS_PATH" python3 "$DKE_DNS_PY" server "$PWD/zone.json" "$PWD/dns.log" "$PWD/dns.ready" \
    "$1" > dns.err 2>&1 &
  defer "kill $!"
  wait_for 10 test -e dns.ready || fail "DNS stand-in on $1: $(cat dns.err)"
}

# dke_subnet: a /27 in 198.51.100.0/24 (TEST-NET-2, inside the test
# dockerd's network namespace only); sets DKE_BASE (its first three
# octets and the base of the last), DKE_SUB.
dke_subnet() {
  local b=$((32 * (RANDOM % 8)))
  DKE_BASE=198.51.100.$b
  DKE_SUB=$DKE_BASE/27
  DKE_PFX=198.51.100.
  DKE_LAST=$b
}

# An allowlist on a user-defined network (compose's kind: Docker's DNS
# at 127.0.0.11 is the container's nameserver): a name Docker's DNS does
# not know itself and forwards (here to a stand-in, --dns) resolves and
# connects when the policy lists it; an unlisted name is refused and never
# reaches the stand-in; Docker's DNS on its own port is not reachable
# around haven's resolver.  Before, the forwarded query came back to
# haven's resolver (a loop) and every listed name failed (SERVFAIL).
test_docker_egress_forwarded_name() {
  need_docker
  [ "$ENGINE_RUNTIME" = haven ] || skip "haven's egress table and resolver"
  local pol=$PWD/fwd.yaml net gw world c port
  printf 'extends: default\nnetwork:\n  allow: ["api.example.com:443"]\n' > "$pol"
  dke_runtimes "$pol"
  dke_subnet
  gw=$DKE_PFX$((DKE_LAST + 1))
  net=$(new_name fnet)
  dk network create --subnet "$DKE_SUB" --gateway "$gw" "$net" > /dev/null 2> net.err \
    || fail "network create --subnet $DKE_SUB: $(cat net.err)"
  world=$(new_name fworld)
  dk run -d --name "$world" --runtime runc --network "$net" --ip "$DKE_PFX$((DKE_LAST + 10))" "$IMAGE" \
    sh -c 'nc -ll -p 443 -e echo reached-443 & nc -ll -p 80 -e echo reached-80 & wait' > /dev/null 2> run.err \
    || fail "world: $(cat run.err)"
  printf '{"api.example.com": {"A": [["%s", 300]]}, "evil.example": {"A": [["%s", 300]]}}\n' \
    "$DKE_PFX$((DKE_LAST + 10))" "$DKE_PFX$((DKE_LAST + 10))" > zone.json
  dke_standin "$gw"
  c=$(new_name fclient)
  dk run -d --name "$c" --runtime hvegress-fwd --network "$net" --dns "$gw" "$IMAGE" sleep 600 > /dev/null 2> run.err \
    || fail "client: $(cat run.err)"
  assert_contains "$(dk exec "$c" cat /etc/resolv.conf)" "nameserver 127.0.0.11" "the client's nameserver is Docker's"
  OUT=$(dk exec "$c" sh -c 'nslookup api.example.com 2>&1; nc -w 3 api.example.com 443 </dev/null 2>&1;
    nslookup evil.example 2>&1; nc -w 3 api.example.com 80 </dev/null 2>&1 || echo port-80-refused' 2>&1)
  echo "$OUT"
  assert_contains "$OUT" "Address: $DKE_PFX$((DKE_LAST + 10))" "the listed name, forwarded by Docker's DNS"
  assert_contains "$OUT" "reached-443" "connect to the listed name"
  assert_contains "$OUT" "evil.example: NXDOMAIN" "an unlisted name"
  assert_contains "$OUT" "port-80-refused" "an unlisted port"
  assert_not_contains "$OUT" "reached-80" "an unlisted port"
  assert_contains "$(cat dns.log)" "api.example.com A" "the stand-in saw the listed name"
  assert_not_contains "$(cat dns.log)" "evil" "the stand-in saw the unlisted name"
  # Docker's DNS listens on 127.0.0.11 on a port of its own (the container
  # can read it in /proc/net/udp): asked there directly, it would answer
  # any name and forward the rest.
  port=$(dk exec "$c" netstat -lnu | awk '$4 ~ /^127\.0\.0\.11:/ {sub(/.*:/, "", $4); print $4; exit}')
  [[ "$port" =~ ^[0-9]+$ ]] || fail "no port of Docker's DNS in the container: $(dk exec "$c" netstat -lnu 2>&1)"
  OUT=$(dk exec "$c" sh -c "nslookup evil.example 127.0.0.11:$port 2>&1; nslookup $world 127.0.0.11:$port 2>&1")
  assert_not_contains "$OUT" "Address: $DKE_PFX" "Docker's DNS asked on its own port $port"
  assert_not_contains "$(cat dns.log)" "evil" "the stand-in saw the unlisted name (asked on Docker's port)"
}

# The same on the default bridge (no embedded DNS: --dns is the
# container's nameserver, asked by haven's resolver itself).
test_docker_egress_default_bridge_name() {
  need_docker
  [ "$ENGINE_RUNTIME" = haven ] || skip "haven's egress table and resolver"
  local pol=$PWD/brname.yaml gw c
  printf 'extends: default\nnetwork:\n  allow: ["api.example.com:443"]\n' > "$pol"
  dke_runtimes "$pol"
  [ -n "${DOCKER_NETNS_PATH:-}" ] || skip "the harness's dockerd has no network namespace of its own"
  # Docker 20.10 names no gateway of its default bridge: docker0's address.
  gw=$(nsenter --net="$DOCKER_NETNS_PATH" ip -4 -o addr show docker0 | awk '{sub(/\/.*/, "", $4); print $4; exit}')
  [[ "$gw" =~ ^[0-9.]+$ ]] || fail "no address of docker0: $gw"
  printf '{"api.example.com": {"A": [["203.0.113.10", 300]]}, "evil.example": {"A": [["203.0.113.10", 300]]}}\n' \
    > zone.json
  dke_standin "$gw"
  c=$(new_name bclient)
  dk run -d --name "$c" --runtime hvegress-brname --dns "$gw" "$IMAGE" sleep 600 > /dev/null 2> run.err \
    || fail "client: $(cat run.err)"
  OUT=$(dk exec "$c" sh -c 'cat /etc/resolv.conf; nslookup api.example.com 2>&1; nslookup evil.example 2>&1' 2>&1)
  assert_contains "$OUT" "nameserver $gw" "the client's nameserver"
  assert_contains "$OUT" "Address: 203.0.113.10" "the listed name"
  assert_contains "$OUT" "evil.example: NXDOMAIN" "an unlisted name"
  assert_not_contains "$(cat dns.log)" "evil" "the stand-in saw the unlisted name"
}
