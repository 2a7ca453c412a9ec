# An allowlist policy's sandbox made by the service has the network
# `haven run` gives it: pasta, started by the maker, lives as long as the
# sandbox (not as long as the maker), is gone after DELETE, and does not
# outlive a service that was killed.  The service runs in a "host"
# network namespace joined by veth to a TEST-NET world (the egress
# tests' layout): a DNS stand-in gives good.example and evil.example an
# address each, with a listener on 443; the policy allows good.example.
#
#   host eh0 192.0.2.2/24 -- ew0 192.0.2.1 world; world's lo: 198.51.100.54
#   (DNS), 203.0.113.1 (good.example), 203.0.113.200 (evil.example)

SVC_EGRESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../integration" && pwd)

# svc_egress_world: the namespaces, the DNS stand-in and the listeners;
# sets SEH (the host namespace), SDNSLOG, SWLOG.
svc_egress_world() {
  SEH=h-svcegress-eh-$RANDOM
  local ew=h-svcegress-ew-$RANDOM i
  egress_world_link "$SEH" "$ew"
  ip -n "$ew" addr add 203.0.113.1/32 dev lo
  echo '{"good.example": {"A": [["203.0.113.1", 300]]}, "evil.example": {"A": [["203.0.113.200", 300]]}}' \
    > zone.json
  SDNSLOG=$PWD/dns.log
  SWLOG=$PWD/world.log
  : > "$SDNSLOG"
  : > "$SWLOG"
  ip netns exec "$ew" python3 "$SVC_EGRESS_DIR/egress_dns.py" server "$PWD/zone.json" "$SDNSLOG" "$PWD/dns.ready" \
    198.51.100.54 > dns.err 2>&1 &
  defer "kill $!"
  ip netns exec "$ew" python3 "$SVC_EGRESS_DIR/egress_world.py" listen "$SWLOG" "$PWD/world.ready" \
    tcp:203.0.113.1:443 tcp:203.0.113.200:443 > world.err 2>&1 &
  defer "kill $!"
  for i in $(seq 100); do [ -e dns.ready ] && [ -e world.ready ] && break; sleep 0.05; done
  [ -e dns.ready ] && [ -e world.ready ] || fail "the world did not start: $(cat dns.err world.err)"
  printf 'name: svc-egress-test\nextends: default\nnetwork:\n  mode: allowlist\n  allow: [good.example]\n' \
    > "$PWD/egress.yaml"
}

# start_egress_service [ARGS...]: start_service's, in the host namespace.
start_egress_service() { SVC_NETNS=$SEH start_service "$@"; }

SVC_EGRESS_CLIENT='
import socket, sys
for arg in sys.argv[1:]:
    name, port = arg.split(":")
    try:
        addr = socket.getaddrinfo(name, int(port), socket.AF_INET, socket.SOCK_STREAM)[0][4]
    except socket.gaierror as e:
        print(name, port, "no-address"); continue
    s = socket.socket(); s.settimeout(5)
    try:
        s.connect(addr); r = "connected"
    except ConnectionRefusedError: r = "refused"
    except socket.timeout: r = "timeout"
    except OSError as e: r = "error:%d" % e.errno
    print(name, port, r); s.close()
'

# egress_probe ID: good.example connects, evil.example does not (refused
# fast, its name never asked of the world's DNS, nothing reached its host).
egress_probe() {
  run_in "$1" "$(jq -nc --arg c "$SVC_EGRESS_CLIENT" '{argv: ["python3", "-c", $c, "good.example:443", "evil.example:443"]}')"
  assert_eq 0 "$EXIT" "$1: the client: $BODY"
  assert_contains "$OUT" "good.example 443 connected" "$1: the allowed host ($(ip_of_sandbox "$1"))"
  case "$OUT" in
    *"evil.example 443 refused"* | *"evil.example 443 no-address"*) ;;
    *) fail "$1: evil.example: expected a refusal, got: $OUT" ;;
  esac
  assert_not_contains "$(cat "$SDNSLOG")" "evil.example" "$1: world DNS log"
  assert_not_contains "$(cat "$SWLOG")" "203.0.113.200" "$1: world connection log"
}

# ip_of_sandbox ID: its interfaces, for a failure's message.
ip_of_sandbox() {
  run_in "$1" '{"argv":["cat","/proc/net/dev"]}'
  echo "$OUT" | awk -F: 'NR > 2 {gsub(/ /, "", $1); printf "%s ", $1}'
}

# sandbox_netns ID: its network namespace (of its init, noted at create).
sandbox_netns() {
  local ns init start
  read -r ns init start < "$PWD/ns.$1" 2> /dev/null || return 0
  readlink "/proc/$init/ns/net" 2> /dev/null
}

# pasta_of NETNS: the pasta processes that hold that namespace (pasta has
# it as its fd 3, from outside).
pasta_of() {
  local p
  for p in $(pgrep -f '^pasta '); do
    [ "$(readlink "/proc/$p/fd/3" 2> /dev/null)" = "$1" ] && echo "$p"
  done
  return 0
}

# gone_within SECONDS PID...: every one has exited.
gone_within() {
  local t=$1 i p left
  shift
  for i in $(seq $((t * 10))); do
    left=
    for p in "$@"; do [ -d "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2> /dev/null)" != Z ] && left+="$p "; done
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  echo "$left"
  return 1
}

test_service_egress_fresh_and_deleted() {
  svc_egress_world
  start_egress_service
  create "$PWD/egress.yaml" '"pool":false'
  local id=$ID net pastas left
  net=$(sandbox_netns "$id")
  [ -n "$net" ] || fail "$id: no network namespace"
  pastas=$(pasta_of "$net")
  [ -n "$pastas" ] || fail "$id: no pasta holds its network namespace after the maker exited ($(ip_of_sandbox "$id"))"
  egress_probe "$id"
  # Still there for the next command (nothing of it was the maker's).
  egress_probe "$id"
  api DELETE "/v1/sandboxes/$id"
  assert_eq 200 "$CODE" "delete: $BODY"
  # shellcheck disable=SC2086
  left=$(gone_within 1 $pastas) || fail "$id: pasta left after DELETE: $left"
  # Reaped by the service, not left a zombie of it.
  for p in $pastas; do [ ! -d "/proc/$p" ] || fail "$id: pasta $p not reaped: $(cat "/proc/$p/stat")"; done
  sandbox_gone "$id"
}

test_service_egress_pooled() {
  svc_egress_world
  start_egress_service --pool-size 2
  create "$PWD/egress.yaml"
  assert_eq false "$(jq -r .pooled <<< "$BODY")" "the first create of a policy is made fresh"
  egress_probe "$ID"
  local i pooled=0 ids=("$ID")
  # The pool fills in the background, and refills after each claim.
  for i in 1 2 3; do
    sleep 2
    create "$PWD/egress.yaml"
    ids+=("$ID")
    [ "$(jq -r .pooled <<< "$BODY")" = true ] && pooled=$((pooled + 1))
    egress_probe "$ID"
  done
  [ $pooled -ge 2 ] || fail "only $pooled of 3 creates came from the pool"
  for i in "${ids[@]}"; do
    local net pastas left
    net=$(sandbox_netns "$i")
    pastas=$(pasta_of "$net")
    api DELETE "/v1/sandboxes/$i"
    assert_eq 200 "$CODE" "delete $i: $BODY"
    # shellcheck disable=SC2086
    left=$(gone_within 1 $pastas) || fail "$i: pasta left after DELETE: $left"
    sandbox_gone "$i"
  done
}

test_service_egress_killed() {
  svc_egress_world
  start_egress_service --pool-size 1
  create "$PWD/egress.yaml"
  local id=$ID pastas="" p left i
  egress_probe "$id"
  # The pool's sandbox of the policy, made in the background, too: the
  # service's children both (the maker's siblings).
  for i in $(seq 100); do
    pastas=
    for p in $(pgrep -f '^pasta '); do
      [ "$(awk '{print $4}' "/proc/$p/stat" 2> /dev/null)" = "$SVC_PID" ] && pastas+="$p "
    done
    [ "$(wc -w <<< "$pastas")" -ge 2 ] && break
    sleep 0.1
  done
  [ "$(wc -w <<< "$pastas")" -ge 2 ] || fail "expected pasta of the sandbox and of the pooled one: $pastas"
  kill -KILL "$SVC_PID"
  wait "$SVC_PID" 2> /dev/null
  SVC_PID=
  # shellcheck disable=SC2086
  left=$(gone_within 5 $pastas) || fail "pasta outlived the killed service: $left"
  # The next start removes what else is left.
  start_egress_service
  sandbox_gone "$id"
}

# A maker killed once its sandbox runs, before it hands it over:
# the create fails, and its pasta, which the service never heard of, does
# not live on as the service's child.
test_service_egress_maker_killed() {
  svc_egress_world
  export HAVEN_TEST_KILL_AT=start.process-running
  start_egress_service
  unset HAVEN_TEST_KILL_AT
  api POST /v1/sandboxes "{\"policy\":\"$PWD/egress.yaml\",\"pool\":false}"
  [ "$CODE" != 201 ] || fail "created with its maker killed: $BODY"
  assert_contains "$BODY" "maker killed by signal 9"
  local i p left
  for i in $(seq 20); do
    left=
    for p in $(pgrep -f '^pasta '); do
      [ "$(awk '{print $4}' "/proc/$p/stat" 2> /dev/null)" = "$SVC_PID" ] \
        && [ "$(awk '{print $3}' "/proc/$p/stat" 2> /dev/null)" != Z ] && left+="$p "
    done
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ] || fail "the dead maker's pasta lives on: $left"
  # Nor its workspace.
  [ -z "$(ls "$SVC_DIR/.workspaces" 2> /dev/null)" ] || fail "workspace left: $(ls "$SVC_DIR/.workspaces")"
}

# The maker killed around the way out's start (pasta up, the resolver
# passed, the way out checked), before the sandbox's init serves: the
# create answers within a bound with the maker's death (init held a copy
# of the maker's end of the record's socket: no hang-up came), and no
# pasta, init, state directory or workspace of it is left.
test_service_egress_maker_killed_early() {
  svc_egress_world
  local point
  for point in create.pasta-started create.resolver-started create.egress-up; do
    HAVEN_TEST_KILL_AT=$point start_egress_service
    check_create_maker_killed "$point" "$PWD/egress.yaml"
  done
}
