# A pod's network under a policy handler: one egress table and resolver
# for the whole pod (made by its sandbox container, shared by each of its
# containers), containers asking for other network rules refused, and
# network none holding in the namespace CNI gave the pod.  Checked from
# containerd's network namespace (where CNI's bridge and its gateway
# CNI_GATEWAY are): a DNS stand-in and servers there.

NET_PY=$here_lib/../integration
# A "world" address in containerd's network namespace only (a /32 on its
# loopback; never in the host's): what the allowed name resolves to.
NET_WORLD=198.51.100.10

# net_bg COMMAND...: COMMAND in containerd's network namespace, in the
# background, stopped when the test ends (nsenter execs it: $! is its pid).
net_bg() {
  nsenter -t "$(cat "$NS_PID_FILE")" -n "$@" &
  defer "kill $!"
}

# net_world: in containerd's network namespace, NET_WORLD on its
# loopback, listeners on NET_WORLD:443, NET_WORLD:22 and
# CNI_GATEWAY:8080 (connections logged to world.log), and the DNS
# stand-in on CNI_GATEWAY:53 answering zone.json (queries in dns.log).
# After a pod exists: CNI's bridge (and the gateway address) is made with
# the first pod.
net_world() {
  command -v python3 > /dev/null || skip "python3 missing"
  in_netns ip addr add "$NET_WORLD/32" dev lo 2> addr.err || fail "address $NET_WORLD: $(cat addr.err)"
  defer "in_netns ip addr del $NET_WORLD/32 dev lo"
  printf '{"registry.npmjs.org": {"A": [["%s", 300]]}, "evil.example": {"A": [["%s", 300]]}}\n' \
    "$NET_WORLD" "$NET_WORLD" > zone.json
  : > world.log
  : > dns.log
  net_bg python3 "$NET_PY/egress_world.py" listen "$PWD/world.log" "$PWD/world.ready" \
    "tcp:$NET_WORLD:443" "tcp:$NET_WORLD:22" "tcp:$CNI_GATEWAY:8080" > world.err 2>&1
  net_bg python3 "$NET_PY/egress_dns.py" server "$PWD/zone.json" "$PWD/dns.log" "$PWD/dns.ready" \
    "$CNI_GATEWAY" > dns.err 2>&1
  wait_for 10 test -e world.ready || fail "listeners: $(cat world.err)"
  wait_for 10 test -e dns.ready || fail "DNS stand-in: $(cat dns.err)"
}

# net_probe CID: from the container, the allowed name (registry.npmjs.org,
# claude-code's) resolved and connected on 443, an unlisted name, an
# unlisted port of the allowed address, and CNI's gateway by address.
net_probe() {
  cri_exec "$1" sh -c 'cat /etc/resolv.conf
    nslookup registry.npmjs.org 2>&1
    nc -w 3 registry.npmjs.org 443 < /dev/null 2>&1 || echo allowed-failed
    nslookup evil.example 2>&1
    nc -w 3 '"$NET_WORLD"' 22 < /dev/null 2>&1 || echo port-22-refused
    nc -w 3 '"$CNI_GATEWAY"' 8080 < /dev/null 2>&1 || echo gateway-refused' 2>&1
}

# The pod's table is in the pod's network namespace once (from the host:
# the sandbox's, not a table per container), and the resolver answers
# there (the sandbox's monitor).
net_assert_one_table() {
  local ppid=$1 n
  n=$(nsenter -t "$ppid" -n nft list tables 2>&1 | grep -c 'inet haven')
  assert_eq 1 "$n" "egress tables in the pod's network namespace"
}

# An allowlist (haven-claude-code) in a pod of two containers: the
# sandbox installs the table and runs the resolver; both containers
# resolve the allowed name through it (their resolv.conf names the pod's
# DNS server: the table sends port 53 to the resolver) and connect; an
# unlisted name is NXDOMAIN and never reaches the stand-in; an unlisted
# port and CNI's gateway are refused.  Removing one container leaves the
# pod's table for the other.
test_cri_network_allowlist_pod() {
  command -v nft > /dev/null || skip "nft (to look at the table from the host) missing"
  POD_EXTRA="{\"dns_config\": {\"servers\": [\"$CNI_GATEWAY\"]}}" run_pod allow haven-claude-code
  net_world
  local ppid a b out
  OUT=$(cri PodSandboxStatus "{\"pod_sandbox_id\": \"$POD_ID\", \"verbose\": true}" 2>&1) || fail "PodSandboxStatus: $OUT"
  ppid=$(json '.info.info | fromjson | .pid')
  net_assert_one_table "$ppid"
  create_container a sleep 600
  a=$CID
  start_container "$a"
  create_container b sleep 600
  b=$CID
  start_container "$b"
  net_assert_one_table "$ppid"
  for c in "$a" "$b"; do
    out=$(net_probe "$c")
    echo "$out"
    assert_contains "$out" "nameserver $CNI_GATEWAY" "the container's resolv.conf (the pod's)"
    assert_contains "$out" "Address: $NET_WORLD" "the allowed name, resolved in container $c"
    assert_contains "$out" "hi $NET_WORLD 443" "connect to the allowed name from container $c"
    assert_not_contains "$out" "allowed-failed" "connect to the allowed name from container $c"
    assert_contains "$out" "evil.example: NXDOMAIN" "an unlisted name in container $c"
    assert_contains "$out" "port-22-refused" "an unlisted port in container $c"
    assert_contains "$out" "gateway-refused" "CNI's gateway by address in container $c"
  done
  assert_contains "$(cat dns.log)" "registry.npmjs.org A" "the stand-in saw the allowed name"
  assert_not_contains "$(cat dns.log)" "evil" "the stand-in saw the unlisted name"
  assert_not_contains "$(cat world.log)" " 22" "the unlisted port was reached"
  assert_not_contains "$(cat world.log)" "8080" "CNI's gateway was reached"
  # One container gone: the pod's table stays, the other still resolves.
  OUT=$(cri StopContainer "{\"container_id\": \"$a\", \"timeout\": 5}" 2>&1) || fail "StopContainer: $OUT"
  OUT=$(cri RemoveContainer "{\"container_id\": \"$a\"}" 2>&1) || fail "RemoveContainer: $OUT"
  net_assert_one_table "$ppid"
  out=$(net_probe "$b")
  assert_contains "$out" "hi $NET_WORLD 443" "connect from the other container after one was removed"
  assert_contains "$out" "evil.example: NXDOMAIN" "an unlisted name after one container was removed"
  pod_remove "$POD_ID" || fail "StopPodSandbox/RemovePodSandbox"
  assert_pod_gone "$POD_ID" "$POD_CGROUP" "$a" "$b"
}

# A container asking for other network rules than its pod's (here
# run.haven.policy: claude-code-offline, a test policy extending the
# pod's with network none, in the pod of
# haven-claude-code's allowlist; containerd passes the annotation from
# the CreateContainer request's pod config) is refused with the reason,
# and the pod's first container keeps working.
test_cri_network_differing_policies() {
  run_pod differ haven-claude-code
  create_container same sleep 600
  start_container "$CID"
  local same=$CID err
  jq '.annotations = {"run.haven.policy": "claude-code-offline"}' "pod-$POD_NAME.json" > pod-other.json
  cp "pod-$POD_NAME.json" pod-orig.json
  cp pod-other.json "pod-$POD_NAME.json"
  create_container other sleep 600
  cp pod-orig.json "pod-$POD_NAME.json"
  OUT=$(cri StartContainer "{\"container_id\": \"$CID\"}" 2>&1) && fail "a container of policy claude-code-offline started in a pod of claude-code"
  err=$OUT
  assert_contains "$err" "all containers of a pod share one network policy" "the refusal"
  assert_contains "$err" "policy claude-code-offline" "the refusal names the container's policy"
  assert_contains "$err" "policy claude-code" "the refusal names the pod's policy"
  assert_contains "$err" "container other" "the refusal names the container"
  [ "$(container_state "$same")" = CONTAINER_RUNNING ] || fail "the pod's first container is $(container_state "$same")"
  OUT=$(cri_exec "$same" true 2>&1) || fail "exec in the pod's first container after the refusal: $OUT"
  pod_remove "$POD_ID" || fail "StopPodSandbox/RemovePodSandbox"
  assert_pod_gone "$POD_ID" "$POD_CGROUP" "$same" "$CID"
}

# Network none in a pod (haven-default): the pod keeps CNI's namespace
# (its containers share loopback: one reaches the other's server on
# 127.0.0.1), eth0 is there, and yet nothing but loopback leaves or
# enters: from a container (and an exec) CNI's gateway is not reached,
# and from containerd's network namespace (the node's side of the
# bridge) the pod's address is not either.
test_cri_network_none_pod() {
  command -v python3 > /dev/null || skip "python3 missing"
  run_pod none haven-default
  local ip srv cli out
  OUT=$(cri PodSandboxStatus "{\"pod_sandbox_id\": \"$POD_ID\"}" 2>&1) || fail "PodSandboxStatus: $OUT"
  ip=$(json .status.network.ip)
  [[ $ip == "${CNI_GATEWAY%.*}".* ]] || fail "no CNI address for the pod: '$ip'"
  : > world.log
  net_bg python3 "$NET_PY/egress_world.py" listen "$PWD/world.log" "$PWD/world.ready" "tcp:$CNI_GATEWAY:8080" \
    > world.err 2>&1
  wait_for 10 test -e world.ready || fail "listener: $(cat world.err)"
  create_container srv sh -c 'while :; do echo from-srv | nc -l -p 8000; done'
  srv=$CID
  start_container "$srv"
  create_container cli sleep 600
  cli=$CID
  start_container "$cli"
  out=$(cri_exec "$cli" sh -c 'ls /sys/class/net | xargs
    sleep 1; nc -w 3 127.0.0.1 8000 < /dev/null 2>&1 || echo loopback-failed
    nc -w 3 '"$CNI_GATEWAY"' 8080 < /dev/null 2>&1 || echo gateway-refused' 2>&1)
  echo "$out"
  assert_contains "$out" "eth0" "CNI's interface in the pod's namespace (the pod kept it)"
  assert_contains "$out" "from-srv" "the other container's server over the pod's loopback"
  assert_contains "$out" "gateway-refused" "CNI's gateway from a container"
  assert_not_contains "$out" "hi $CNI_GATEWAY" "CNI's gateway from a container"
  # From the node's side: the pod's address does not answer.
  out=$(in_netns python3 "$NET_PY/egress_world.py" connect tcp "$ip" 8000)
  case $out in
    connected*) fail "the pod's server was reached from containerd's network namespace: $out" ;;
  esac
  out=$(in_netns busybox ping -c 1 -W 2 "$ip" 2>&1) && fail "the pod's address answers ping: $out"
  [ -s world.log ] && fail "a connection from the pod reached CNI's gateway: $(cat world.log)"
  pod_remove "$POD_ID" || fail "StopPodSandbox/RemovePodSandbox"
  assert_pod_gone "$POD_ID" "$POD_CGROUP" "$srv" "$cli"
}

# kubectl exec (ExecSync) in a policed pod's container is policed as
# docker exec is: the policy's capabilities (none under default),
# no_new_privs, its seccomp filter, and a denied path stays denied.
test_cri_network_exec_policed() {
  run_pod execp haven-default
  create_container box sleep 600
  start_container "$CID"
  OUT=$(cri_exec "$CID" cat /proc/self/status 2>&1) || fail "ExecSync: $OUT"
  assert_eq 0000000000000000 "$(awk '$1 == "CapEff:" {print $2}' <<< "$OUT")" "the exec'd process's capabilities"
  assert_eq 0000000000000000 "$(awk '$1 == "CapBnd:" {print $2}' <<< "$OUT")" "the exec'd process's bounding set"
  assert_eq 1 "$(awk '$1 == "NoNewPrivs:" {print $2}' <<< "$OUT")" "NoNewPrivs of the exec'd process"
  assert_eq 2 "$(awk '$1 == "Seccomp:" {print $2}' <<< "$OUT")" "the exec'd process's seccomp mode"
  OUT=$(cri_exec "$CID" sh -c 'touch /usr/x 2>&1 || echo root-read-only' 2>&1)
  assert_contains "$OUT" "root-read-only" "the root filesystem in an exec"
  OUT=$(cri_exec "$CID" sh -c 'ls /sys/class/net | xargs; nc -w 2 '"$CNI_GATEWAY"' 80 < /dev/null 2>&1 || echo no-way-out' 2>&1)
  assert_contains "$OUT" "no-way-out" "the network of an exec"
}
