# Compose stacks from compose/ (the files users copy) under haven-runc, and
# the VS Code devcontainer example's runArgs.

COMPOSE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../compose" && pwd)

test_compose_docker_compose_stack() {
  need_docker
  command -v docker-compose >/dev/null || skip "docker-compose is not installed"
  local p=hv$$ dc
  dc() { HAVEN_IMAGE=$IMAGE timeout -k 5 120 docker-compose -p "$p" -f "$COMPOSE_DIR/docker-compose.yml" "$@"; }
  defer "HAVEN_IMAGE=$IMAGE timeout 120 docker-compose -p $p -f '$COMPOSE_DIR/docker-compose.yml' down -t 1"
  dc up -d > up.log 2>&1 || fail "docker-compose up: $(tail -3 up.log)"
  local web client
  web=$(dc ps -q web)
  client=$(dc ps -q client)
  [ -n "$web" ] && [ -n "$client" ] || fail "services not created: $(dc ps 2>&1)"
  assert_eq "haven running" "$(dk_state "$web" '{{.HostConfig.Runtime}} {{.State.Status}}')" "web"
  assert_eq "haven running" "$(dk_state "$client" '{{.HostConfig.Runtime}} {{.State.Status}}')" "client"
  local want
  want=$(dk exec "$web" hostname)
  wait_for 20 sh -c "'$DOCKER_CLI' exec $client sh -c \"printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 web 8080\" | grep -q '^$want'" \
    || fail "client never reached web:8080"
  OUT=$(dc exec -T client sh -c 'printf "GET / HTTP/1.0\r\n\r\n" | nc -w 5 web 8080' 2>&1)
  assert_contains "$OUT" "200 OK" "docker-compose exec client -> web"
  assert_eq 0000000000000000 "$(dk exec "$client" sh -c 'grep CapEff /proc/self/status' | awk '{print $2}')" \
    "client's capabilities (cap_drop: ALL)"
  OUT=$(dk exec "$web" sh -c 'touch /x 2>&1')
  assert_contains "$OUT" "Read-only file system" "web's read_only root"
  dc down -t 1 > down.log 2>&1 || fail "docker-compose down: $(tail -3 down.log)"
  assert_eq "" "$(dk ps -aq --filter "label=com.docker.compose.project=$p")" "containers after down"
}

test_compose_podman_compose_stack() {
  need_podman
  command -v podman-compose >/dev/null || skip "podman-compose is not installed"
  local p=hv$$
  # podman-compose runs `podman`: our store and runtime through its options.
  pc() {
    HAVEN_IMAGE=$IMAGE timeout -k 5 120 podman-compose -p "$p" --podman-args="${PODMAN_GLOBAL[*]}" \
      --podman-run-args="--runtime haven" -f "$COMPOSE_DIR/podman-compose.yml" "$@"
  }
  defer "HAVEN_IMAGE=$IMAGE timeout 120 podman-compose -p $p --podman-args='${PODMAN_GLOBAL[*]}' -f '$COMPOSE_DIR/podman-compose.yml' down -t 1"
  pc up -d > up.log 2>&1 || fail "podman-compose up: $(tail -3 up.log)"
  local web=${p}_web_1 client=${p}_client_1 agent=${p}_agent_1
  assert_eq "haven running" "$(pm_state "$web" '{{.OCIRuntime}} {{.State.Status}}')" "web"
  assert_eq "haven running" "$(pm_state "$agent" '{{.OCIRuntime}} {{.State.Status}}')" "agent"
  assert_eq "haven running" "$(pm_state "$client" '{{.OCIRuntime}} {{.State.Status}}')" "client"
  local want
  want=$(pm exec "$web" hostname)
  wait_for 20 sh -c "podman ${PODMAN_GLOBAL[*]} exec $client sh -c \"printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 web 8080\" | grep -q '^$want'" \
    || fail "client never reached web:8080"
  # The agent asked for the default haven policy (no_new_privs, a
  # read-only root, no network: web is out of its reach at once); web did
  # not.
  OUT=$(pm exec "$agent" sh -c 'grep NoNewPrivs /proc/1/status; touch /x 2>&1; nc -w 5 web 8080 </dev/null 2>&1 || echo no-route')
  assert_contains "$OUT" "NoNewPrivs:	1" "agent under run.haven.policy=default"
  assert_contains "$OUT" "touch: /x: Read-only file system"
  assert_contains "$OUT" "no-route" "the agent reached web although its policy says network: none"
  OUT=$(pm exec "$web" sh -c 'grep NoNewPrivs /proc/1/status')
  assert_eq "NoNewPrivs:	0" "$OUT" "web without a policy"
  pc down -t 1 > down.log 2>&1 || fail "podman-compose down: $(tail -3 down.log)"
  assert_eq "" "$(pm ps -aq --filter "label=io.podman.compose.project=$p")" "containers after down"
}

test_compose_devcontainer_run_args() {
  need_docker
  local f=$COMPOSE_DIR/devcontainer/devcontainer.json args=()
  jq -e . "$f" >/dev/null || fail "$f is not valid JSON"
  mapfile -t args < <(jq -r '.runArgs[]' "$f")
  assert_eq "--runtime=haven" "${args[0]}" "first runArg"
  OUT=$(dk run --rm "${args[@]}" --network none "$IMAGE" sh -c 'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max' 2>&1)
  assert_contains "$OUT" "NoNewPrivs:	1"
  assert_contains "$OUT" "512"
  assert_contains "$OUT" "CapEff:	00000000000000cb" "CHOWN DAC_OVERRIDE FOWNER SETGID SETUID"
}

# Network policies in a docker-compose stack (one user-defined network,
# Docker's DNS at 127.0.0.11 in every container): "agent" runs under
# haven-default (network none) and has only loopback, so web is out of its
# reach; "fetcher" runs under an allowlist of web:8080 and
# api.example.com:443: web (a service name, answered by Docker's DNS) and
# api.example.com (forwarded by Docker's DNS to the stack's `dns:`, a
# stand-in) resolve and connect, an unlisted name is refused.  The
# network's subnet is TEST-NET-2, inside the test dockerd's namespace.
test_compose_docker_network_policies() {
  need_docker
  command -v docker-compose >/dev/null || skip "docker-compose is not installed"
  [ "$ENGINE_RUNTIME" = haven ] || skip "haven's policies"
  local p=hvn$$ pol=$PWD/cfwd.yaml gw agent fetcher
  printf 'extends: default\nnetwork:\n  allow: ["web:8080", "api.example.com:443"]\n' > "$pol"
  dke_runtimes "$pol"
  dke_subnet
  gw=$DKE_PFX$((DKE_LAST + 1))
  cat > stack.yml <<YML
version: "2.4"
services:
  web:
    image: $IMAGE
    runtime: runc
    command: ["sh", "-c", "nc -ll -p 443 -e echo api-443 & exec httpd -f -p 8080 -h /www"]
    networks: {backend: {ipv4_address: "$DKE_PFX$((DKE_LAST + 10))"}}
  agent:
    image: $IMAGE
    runtime: haven-default
    command: ["sleep", "600"]
    networks: [backend]
  fetcher:
    image: $IMAGE
    runtime: hvegress-cfwd
    command: ["sleep", "600"]
    dns: ["$gw"]
    networks: [backend]
networks:
  backend:
    ipam:
      config: [{subnet: "$DKE_SUB", gateway: "$gw"}]
YML
  dc() { timeout -k 5 120 docker-compose -p "$p" -f stack.yml "$@"; }
  defer "timeout 120 docker-compose -p $p -f '$PWD/stack.yml' down -t 1 > /dev/null 2>&1"
  dc up -d > up.log 2>&1 || fail "docker-compose up: $(tail -3 up.log)"
  printf '{"api.example.com": {"A": [["%s", 300]]}, "evil.example": {"A": [["%s", 300]]}}\n' \
    "$DKE_PFX$((DKE_LAST + 10))" "$DKE_PFX$((DKE_LAST + 10))" > zone.json
  dke_standin "$gw"
  agent=$(dc ps -q agent)
  fetcher=$(dc ps -q fetcher)
  [ -n "$agent" ] && [ -n "$fetcher" ] || fail "services not created: $(dc ps 2>&1)"
  OUT=$(dk exec "$agent" sh -c 'ls /sys/class/net | xargs
    printf "GET /index.html HTTP/1.0\r\n\r\n" | nc -w 3 web 8080 2>&1 | grep "served by" || echo web-unreachable' 2>&1)
  assert_eq "lo
web-unreachable" "$OUT" "agent (network none) in the stack"
  OUT=$(dk exec "$fetcher" sh -c 'printf "GET /index.html HTTP/1.0\r\n\r\n" | nc -w 3 web 8080 2>&1 | grep "served by"
    nc -w 3 api.example.com 443 </dev/null 2>&1; nslookup evil.example 2>&1' 2>&1)
  assert_contains "$OUT" "served by haven" "fetcher reaches web by its service name"
  assert_contains "$OUT" "api-443" "fetcher reaches api.example.com (forwarded by Docker's DNS)"
  assert_contains "$OUT" "evil.example: NXDOMAIN" "an unlisted name"
  assert_not_contains "$(cat dns.log)" "evil" "the stand-in saw the unlisted name"
  dc down -t 1 > down.log 2>&1 || fail "docker-compose down: $(tail -3 down.log)"
  assert_eq "" "$(dk ps -aq --filter "label=com.docker.compose.project=$p")" "containers after down"
}
