# A private dockerd for a suite (tests/engines, tests/containers): its own
# network namespace (only loopback, no route anywhere), its own containerd
# (own root, state and socket under $WORK, no CRI plugin), its own data
# root, exec root and socket.  Sourced; the suite provides WORK,
# DOCKER_CLI, DOCKER_SOCK, dk() (its bounded docker) and log().
# DOCKERD_ENV: words (NAME=VALUE) put in the daemons' environment (the
# engine suite's sanitizer options); DOCKER_NETNS_PREFIX: the name of the
# network namespace before "-PID".  A failure is said in DOCKER_MISSING.

# wait_for SECONDS COMMAND...: until COMMAND succeeds (bounded).
wait_for() {
  local limit=$1 i
  shift
  for i in $(seq $((limit * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# The network namespace the test's dockerd (and the containerd it starts,
# and their containers on bridge and host networks) lives in: only
# loopback at first, no route anywhere.  Sets DOCKER_NETNS (its name
# under /run/netns) and DOCKER_NETNS_PATH.
start_docker_netns() {
  DOCKER_NETNS=${DOCKER_NETNS_PREFIX:-hvt-eng}-$$
  DOCKER_NETNS_PATH=/run/netns/$DOCKER_NETNS
  local out
  if ! out=$(ip netns add "$DOCKER_NETNS" 2>&1); then
    DOCKER_MISSING="ip netns add $DOCKER_NETNS: $out"
    DOCKER_NETNS=
    return 1
  fi
  if ! out=$(ip -n "$DOCKER_NETNS" link set lo up 2>&1); then
    DOCKER_MISSING="loopback in $DOCKER_NETNS: $out"
    return 1
  fi
  export DOCKER_NETNS DOCKER_NETNS_PATH
}

stop_docker_netns() {
  [ -n "${DOCKER_NETNS:-}" ] || return 0
  ip netns delete "$DOCKER_NETNS" 2>/dev/null
  DOCKER_NETNS=
}

# The test dockerd's containerd, started by the suite rather than by
# dockerd: dockerd starts one of its own only where no system containerd
# listens on /run/containerd/containerd.sock, and otherwise hands our
# containers to the system's (Debian's docker.io runs one).  That one
# lives in the host's network namespace, and so do its shims and the
# runtime they run: dockerd's own namespace (where --network host puts a
# container) is then not the runtime's, which haven takes for the host's
# (a --network host container under an allowlist ran); its shims and
# haven's monitors would carry the system's environment (no
# HAVEN_TEST_SUITE: nothing_left could not find them); two suites at once
# would share its namespace haven-test; and our namespace would stay in
# its metadata after the suite.  Ours: its own root, state and socket
# under $WORK, no CRI plugin, in the test's network namespace.  Sets
# CONTAINERD_PID and CONTAINERD_SOCK.
start_containerd() {
  local d=$WORK/docker c=$WORK/docker/exec/containerd
  CONTAINERD_SOCK=$c/containerd.sock
  mkdir -p "$c" "$d/data/containerd"
  cat > "$c/containerd.toml" <<EOF
version = 2
root = "$d/data/containerd/daemon"
state = "$c/daemon"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CONTAINERD_SOCK"
[debug]
  address = "$c/containerd-debug.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/data/containerd/opt"
EOF
  # shellcheck disable=SC2086
  env ${DOCKERD_ENV:-} nsenter --net="$DOCKER_NETNS_PATH" containerd --config "$c/containerd.toml" \
    > "$d/containerd.log" 2>&1 < /dev/null &
  CONTAINERD_PID=$!
  if ! wait_for 30 containerd_ready; then
    DOCKER_MISSING="containerd did not start: $(grep -i 'level=\(error\|fatal\)' "$d/containerd.log" | tail -1)"
    return 1
  fi
}

# Our containerd answers on its socket (ctr where installed).
containerd_ready() {
  kill -0 "$CONTAINERD_PID" 2>/dev/null && [ -S "$CONTAINERD_SOCK" ] || return 1
  ! command -v ctr >/dev/null || ctr -a "$CONTAINERD_SOCK" version
}

# Our containerd (after dockerd: its containers are gone by then).
stop_containerd() {
  [ -n "${CONTAINERD_PID:-}" ] || return 0
  stop_process "$CONTAINERD_PID" 100
  CONTAINERD_PID=
}

# containerd-shim-runc-v2 processes of our containerd (by the socket
# under $WORK their command line names) that outlived it: a shim whose
# container was deleted while containerd went down stays, idle, for good
# (and would keep the test's network namespace alive).
stop_docker_shims() {
  local sock=$WORK/docker/exec/containerd/containerd.sock p pids=() i
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = containerd-shim ] || continue
    tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -qF -- "-address $sock " && pids+=("${p#/proc/}")
  done
  [ ${#pids[@]} = 0 ] && return 0
  log "stopping ${#pids[@]} containerd shim(s) left by our containerd: ${pids[*]}"
  kill -TERM "${pids[@]}" 2>/dev/null
  for i in $(seq 50); do
    kill -0 "${pids[@]}" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null
}

# private_dockerd_launch DAEMON-JSON: our containerd, then dockerd with
# DAEMON-JSON, both in the namespace start_docker_netns made; waits until
# it answers.  Sets DOCKERD_PID.
private_dockerd_launch() {
  local d=$WORK/docker
  start_containerd || return 1
  # shellcheck disable=SC2086
  env ${DOCKERD_ENV:-} nsenter --net="$DOCKER_NETNS_PATH" dockerd --data-root "$d/data" --exec-root "$d/exec" \
    --pidfile "$d/dockerd.pid" -H "unix://$DOCKER_SOCK" --config-file "$1" --containerd "$CONTAINERD_SOCK" \
    --containerd-namespace haven-test --containerd-plugins-namespace haven-test-plugins \
    > "$d/dockerd.log" 2>&1 < /dev/null &
  DOCKERD_PID=$!
  if ! wait_for 60 "$DOCKER_CLI" version; then
    DOCKER_MISSING="dockerd did not start: $(grep -i 'level=\(error\|fatal\)' "$d/dockerd.log" | tail -1)"
    return 1
  fi
}

# private_dockerd_stop: every container of ours, dockerd, our containerd,
# the shims it left and the network namespace (its bridges and veths go
# with it).
private_dockerd_stop() {
  if [ -n "${DOCKERD_PID:-}" ]; then
    local ids
    ids=$(dk ps -aq 2>/dev/null)
    # shellcheck disable=SC2086
    [ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1
    stop_process "$DOCKERD_PID" 300
    DOCKERD_PID=
  fi
  stop_containerd
  stop_docker_shims
  stop_docker_netns
}

# private_dockerd_config FILE: the daemon.json every private dockerd starts
# from.
private_dockerd_config() {
  # Docker's default bridge and IPv4 forwarding (else every docker run on
  # a bridge warns), inside that namespace.  No iptables: with it dockerd
  # loads br_netfilter, which is global (the host's bridged traffic would
  # start to pass the host's FORWARD rules); containers on one bridge
  # reach each other without it, and Docker's DNS rules in a container's
  # namespace are made either way.  No masquerading: there is no route off
  # the machine anyway.
  cat > "$1" <<EOF
{
  "iptables": false,
  "ip6tables": false,
  "ip-forward": true,
  "ip-masq": false,
  "exec-opts": ["native.cgroupdriver=cgroupfs"],
  "features": {"buildkit": false},
  "log-driver": "json-file"
}
EOF
}
