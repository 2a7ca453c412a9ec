#!/usr/bin/env bash
# Engine tests: haven-runc as the runtime of real engines.
#   [RUNTIME=/path/to/haven-runc] tests/engines/run.sh [PATTERN...]
# Starts a private dockerd (own socket, data root, exec root and
# daemon.json, haven registered with `haven install docker`), a private
# Podman store (own containers.conf from `haven install podman`), imports a
# busybox image into both, runs the tests, and stops and removes all of it.
# Prints "ok NAME", "not ok NAME: reason" or "skip NAME: reason" per test
# and ends with "N passed, N failed"; exits non-zero if any failed, 77 when
# not root or when neither docker nor podman is installed.  Needs
# busybox-static, jq, script (util-linux), tar; docker.io (dockerd,
# containerd), podman, docker-compose and podman-compose as available.
set -u
here=$(cd "$(dirname "$0")" && pwd)
ENGINE_TEST_TIMEOUT=${ENGINE_TEST_TIMEOUT:-180}

if [ "${1:-}" = --one ]; then
  # Internal: one test in its own process, bounded by the harness.
  t=$2 tdir=$3
  source "$here/lib.sh"
  for f in "$here"/test_*.sh; do source "$f"; done
  FAIL_FILE=$tdir/.fail
  SKIP_FILE=$tdir/.skip
  trap 'run_deferred' EXIT
  trap 'exit 143' TERM INT
  cd "$tdir" || exit 1
  "$t"
  exit $?
fi

if [ "$(id -u)" != 0 ]; then
  echo "engine tests need root: skipped"
  exit 77
fi
if ! command -v dockerd >/dev/null && ! command -v podman >/dev/null; then
  echo "neither docker (docker.io) nor podman is installed: skipped"
  exit 77
fi
for tool in busybox jq timeout script tar; do
  command -v "$tool" >/dev/null || { echo "missing $tool"; exit 1; }
done
source "$here/lib.sh"
for f in "$here"/test_*.sh; do source "$f"; done
[ -x "$RUNTIME" ] || { echo "RUNTIME $RUNTIME is not an executable"; exit 1; }

DOCKERD_PID=
CONTAINERD_PID=
log() { echo "# $*"; }

# The image: a busybox root filesystem (what the integration tests use),
# imported into each engine as $IMAGE.
build_image() {
  local r=$WORK/rootfs
  "$here/../make-rootfs.sh" "$r" || return 1
  mkdir -p "$r/www"
  echo "served by haven" > "$r/www/index.html"
  # What the policy tests ask the kernel (static: busybox's root has no
  # libc), and a user as plain `useradd` writes it (empty comment field)
  # with a file of the image's in its home.
  mkdir -p "$r/usr/bin"
  if [ ! -x "$here/../helpers/syscall_probe" ]; then
    echo "tests/helpers/syscall_probe is not built: run 'make check' or 'make tests/helpers/syscall_probe' first" >&2
    return 1
  fi
  cp "$here/../helpers/syscall_probe" "$r/usr/bin/syscall_probe" || return 1
  echo "dev:x:1001:1001::/home/dev:/bin/sh" >> "$r/etc/passwd"
  echo "dev:x:1001:" >> "$r/etc/group"
  mkdir -p "$r/home/dev"
  echo "image file" > "$r/home/dev/.profile"
  chown -R 1001:1001 "$r/home/dev"
  tar -C "$r" -cf "$WORK/image.tar" .
}

# The sanitizers' reports (ASan build) go to files, never to the shim or
# to conmon: the runtime's stderr is the container's during create.
sanitizer_env() {
  if ldd "$RUNTIME" 2>/dev/null | grep -q 'libasan\|libubsan'; then
    mkdir -p "$WORK/sanitizer"
    # Leaks are the integration suite's business; a leak report here
    # would change the exit status of a runtime call the engine checks.
    echo "ASAN_OPTIONS=detect_leaks=0:log_path=$WORK/sanitizer/asan UBSAN_OPTIONS=print_stacktrace=1:log_path=$WORK/sanitizer/ubsan"
  fi
}

start_docker() {
  if ! command -v dockerd >/dev/null || [ -z "$DOCKER_CLI" ] || ! command -v containerd >/dev/null; then
    DOCKER_MISSING="docker.io (dockerd, docker, containerd) is not installed"
    return 1
  fi
  local d=$WORK/docker
  mkdir -p "$d/data" "$d/exec"
  # dockerd lives in a network namespace of the test's own: its docker0,
  # the bridges of the tests' networks and its iptables rules are made
  # there and go with it, whatever subnets the tests pick.  The machine's
  # own docker0, routes and firewall are never touched, and another
  # dockerd's firewall (which drops traffic on bridges it does not know)
  # never sees our containers' traffic.  Only the network namespace: the
  # data root's mounts stay visible to the tests.  Its containerd is ours
  # too (start_containerd), in the same namespace.
  if ! start_docker_netns; then
    DOCKER_MISSING="no network namespace for dockerd: $DOCKER_MISSING"
    return 1
  fi
  # Settings of our own first: `haven install docker` must keep them.
  private_dockerd_config "$d/daemon.json"
  local out
  if ! out=$(haven install docker --daemon-json "$d/daemon.json" --runtime "$RUNTIME" 2>&1) \
    || ! out=$(haven install docker --daemon-json "$d/daemon.json" --runtime "$RUNTIME" --name haven-default \
      --policy default 2>&1) \
    || ! out=$(haven install docker --daemon-json "$d/daemon.json" --runtime "$RUNTIME" --name haven-strict \
      --policy strict 2>&1); then
    DOCKER_MISSING="haven install docker failed: $out"
    return 1
  fi
  log "$out"
  DOCKERD_ENV=$(sanitizer_env)
  private_dockerd_launch "$d/daemon.json" || return 1
  if ! out=$(dk import "$WORK/image.tar" "$IMAGE" 2>&1); then
    DOCKER_MISSING="docker import failed: $out"
    return 1
  fi
  log "dockerd $(dk version -f '{{.Server.Version}}' 2>/dev/null) on $DOCKER_SOCK, runtimes: $(dk info -f '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' 2>/dev/null)"
  return 0
}

stop_docker() {
  private_dockerd_stop
}

# A /24 in 10.100.0.0-10.250.255.0 that no route of the host's (any
# table) overlaps, for Podman's default network (its bridge is in the
# suite's own namespace now: a subnet the host uses would still confuse
# whoever reads the tests' addresses).
free_subnet() {
  python3 - <<'PY'
import ipaddress, random, subprocess
out = subprocess.run(["ip", "-4", "route", "show", "table", "all"], capture_output=True, text=True).stdout
taken = []
for line in out.splitlines():
    words = line.split()
    if words and words[0] in ("local", "broadcast", "unicast", "blackhole", "unreachable", "prohibit"):
        words = words[1:]
    if not words or words[0] == "default":
        continue
    try:
        taken.append(ipaddress.ip_network(words[0] if "/" in words[0] else words[0] + "/32", strict=False))
    except ValueError:
        pass
for _ in range(500):
    c = ipaddress.ip_network("10.%d.%d.0/24" % (random.randint(100, 250), random.randint(0, 255)))
    if not any(c.overlaps(t) for t in taken):
        print(c)
        break
else:
    raise SystemExit(1)
PY
}

# The namespaces the suite's rootful Podman runs in (every call, through
# the `podman` of $WORK/bin that start_podman puts first in PATH: pm(),
# podman-compose and the tests' own calls alike; rootless Podman is not
# concerned).  Its own network namespace: Podman's bridges (netavark makes
# them where podman runs) are otherwise the host's, where a system
# dockerd's firewall (FORWARD policy DROP, br_netfilter on) drops the
# traffic between two containers of an --internal network, which has no
# rule of netavark's to accept it (podman-compose's stack timed out beside
# a system Docker); --network host is that namespace too.  Its own mount
# namespace (a slave of the host's): rootful netavark keeps aardvark-dns's
# configuration in /run/containers/networks whatever the store, and one
# aardvark-dns serves every network listed there from the namespace it
# was started in; a directory of the suite's bound there keeps a system
# Podman's and another suite's apart.  Container mounts made by Podman
# stay in that namespace and go with it.  Sets PODMAN_NS_PID (the holder)
# and PODMAN_NETNS.
start_podman_ns() {
  PODMAN_NETNS=hvt-pm-$$
  local out path=/run/netns/hvt-pm-$$
  if ! out=$(ip netns add "$PODMAN_NETNS" 2>&1); then
    PODMAN_MISSING="ip netns add $PODMAN_NETNS: $out"
    PODMAN_NETNS=
    return 1
  fi
  if ! out=$(ip -n "$PODMAN_NETNS" link set lo up 2>&1); then
    PODMAN_MISSING="loopback in $PODMAN_NETNS: $out"
    return 1
  fi
  mkdir -p "$PODMAN_DIR/netrun"
  # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
  nsenter --net="$path" unshare --mount --propagation slave sh -c \
    'mkdir -p /run/containers/networks && mount --bind "$1" /run/containers/networks && : > "$2" && exec sleep infinity' \
    sh "$PODMAN_DIR/netrun" "$PODMAN_DIR/ns.ready" > "$PODMAN_DIR/ns.log" 2>&1 < /dev/null &
  PODMAN_NS_PID=$!
  if ! wait_for 10 test -e "$PODMAN_DIR/ns.ready"; then
    PODMAN_MISSING="no namespaces for Podman: $(cat "$PODMAN_DIR/ns.log")"
    return 1
  fi
  mkdir -p "$WORK/bin"
  cat > "$WORK/bin/podman" <<EOF
#!/bin/sh
# The engine tests' rootful Podman, in the suite's network and mount
# namespaces (tests/engines/run.sh, start_podman_ns).
exec nsenter -t $PODMAN_NS_PID -m -n --wd="\$(pwd)" $(command -v podman) "\$@"
EOF
  chmod 755 "$WORK/bin/podman"
  export PATH=$WORK/bin:$PATH
}

# The holder of Podman's namespaces (once its containers are gone) and
# the network namespace; the mount namespace goes with its last process.
stop_podman_ns() {
  if [ -n "${PODMAN_NS_PID:-}" ]; then
    stop_process "$PODMAN_NS_PID" 50
    PODMAN_NS_PID=
  fi
  if [ -n "${PODMAN_NETNS:-}" ]; then
    ip netns delete "$PODMAN_NETNS" 2>/dev/null
    PODMAN_NETNS=
  fi
}

start_podman() {
  if ! command -v podman >/dev/null || ! command -v conmon >/dev/null; then
    PODMAN_MISSING="podman (and conmon) is not installed"
    return 1
  fi
  mkdir -p "$PODMAN_DIR"/{root,run,tmp}
  start_podman_ns || return 1
  local out
  if ! out=$(haven install podman --conf "$PODMAN_DIR/haven.conf" --runtime "$RUNTIME" 2>&1); then
    PODMAN_MISSING="haven install podman failed: $out"
    return 1
  fi
  log "$out"
  # CONTAINERS_CONF is the only file Podman reads: haven's drop-in, plus
  # limits this host allows (no CAP_SYS_RESOURCE: Podman's default nofile
  # of 1048576 cannot be set), cgroupfs and file events (no systemd).
  # Its networks: netavark's files in the store's own directory (never
  # the host's /etc/containers/networks), and the default network
  # "podman" on a subnet no route of the host's covers (picked now).
  local sub
  sub=$(free_subnet) || { PODMAN_MISSING="no free subnet for Podman's default network"; return 1; }
  mkdir -p "$PODMAN_DIR/networks"
  {
    printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\nlog_driver = "k8s-file"\n\n'
    printf '[network]\nnetwork_config_dir = "%s"\ndefault_subnet = "%s"\n\n' "$PODMAN_DIR/networks" "$sub"
    sed 's/^\[engine\]$/[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"/' "$PODMAN_DIR/haven.conf"
  } > "$CONTAINERS_CONF"
  if ! out=$(pm import "$WORK/image.tar" "$IMAGE" 2>&1); then
    PODMAN_MISSING="podman import failed: $out"
    return 1
  fi
  log "podman $(podman --version | awk '{print $3}'), runtime haven: $(pm info -f '{{.Host.OCIRuntime.Path}}' --runtime haven 2>/dev/null)"
  return 0
}

stop_podman() {
  if [ "${HAVE_PODMAN:-0}" = 1 ]; then
    pm rm -f -a -t 0 >/dev/null 2>&1
    pm network prune -f >/dev/null 2>&1
    pm rmi -a -f >/dev/null 2>&1
  fi
  stop_podman_ns
}

cleanup_between_tests() {
  if [ "${HAVE_DOCKER:-0}" = 1 ]; then
    local ids
    ids=$(dk ps -aq 2>/dev/null)
    [ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1
    dk network prune -f >/dev/null 2>&1
    dk volume prune -f >/dev/null 2>&1
  fi
  if [ "${HAVE_PODMAN:-0}" = 1 ]; then
    pm rm -f -a -t 0 >/dev/null 2>&1
  fi
  shims_left_by_test "${1:-}"
}

# shims_left_by_test DIR: with every container removed, no containerd
# shim of the suite's (suite_owns: the private containerd's, or the
# system containerd's for one of our containers) may be left: one that is
# fails the test that ran (DIR/.fail) and is ended, so that the next test
# starts clean.  (A shim outlives its containerd and the suite.)
shims_left_by_test() {
  local tdir=$1 left i p
  [ "${HAVE_DOCKER:-0}" = 1 ] && [ -n "$tdir" ] || return 0
  for i in $(seq 50); do
    left=$(for p in $(pgrep containerd-shim); do suite_owns "$p" "$WORK" && echo "$p $(tr '\0' ' ' < "/proc/$p/cmdline")"; done)
    [ -n "$left" ] || return 0
    sleep 0.1
  done
  echo "left behind $(echo "$left" | wc -l) containerd shim(s) with every container removed:" \
    "$(echo "$left" | sed -n 's/.* -id \([0-9a-f]\{12\}\).*/\1/p' | tr '\n' ' ')($(dk ps -a --format '{{.ID}} {{.Status}}' 2>/dev/null | tr '\n' ';'))" \
    >> "$tdir/.fail"
  for p in $(echo "$left" | awk '{print $1}'); do kill -KILL "$p" 2>/dev/null; done
}

# The engines are stopped before the suite's last check (nothing_left,
# tests/lib/harness.sh): their processes are the suite's too.  final_cleanup
# then finds nothing more to stop.
stop_engines_then_check() {
  stop_docker
  DOCKERD_PID=
  stop_podman
  HAVE_PODMAN=0
  check_nothing_left "$WORK"
}

final_cleanup() {
  stop_docker
  stop_podman
  # Nothing under $WORK may stay mounted before it is removed (overlay
  # layers, network namespaces, Podman's storage).
  local m
  for m in $(awk -v w="$WORK" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null
  done
  # The audit trails our policed containers left (they outlive delete):
  # those whose bundle was ours (Podman's under $WORK, Docker's in our
  # containerd namespace).
  local t b
  for t in /var/log/haven/containers/*.jsonl; do
    [ -f "$t" ] || continue
    b=$(head -1 "$t" | jq -r '.bundle // ""' 2>/dev/null)
    case $b in "$WORK"/* | */haven-test/*) rm -f "$t" ;; esac
  done
  [ -n "${HAVEN_TEST_KEEP:-}" ] && echo "# kept $WORK" || rm -rf "$WORK"
}
# The harness first: final_cleanup stops the daemons with its stop_process.
source "$here/../lib/harness.sh"
trap final_cleanup EXIT
trap 'exit 130' INT TERM

if ! build_image; then
  echo "not ok engine_test_image: the engine tests' image could not be built (see above)"
  echo "0 passed, 1 failed"
  exit 1
fi
HAVE_DOCKER=0
HAVE_PODMAN=0
DOCKER_MISSING=
PODMAN_MISSING=
if start_docker; then HAVE_DOCKER=1; else log "docker: $DOCKER_MISSING"; fi
if start_podman; then HAVE_PODMAN=1; else log "podman: $PODMAN_MISSING"; fi
export HAVE_DOCKER HAVE_PODMAN DOCKER_MISSING PODMAN_MISSING

# An engine that is installed but would not start is a failure, not a
# skip: its tests are skipped with that reason below.
if command -v dockerd >/dev/null && [ $HAVE_DOCKER = 0 ]; then
  report_fail docker_daemon_started "$DOCKER_MISSING"
  tail -20 "$WORK/docker/dockerd.log" 2>/dev/null | sed 's/^/    /'
fi
if command -v podman >/dev/null && [ $HAVE_PODMAN = 0 ]; then
  report_fail podman_ready "$PODMAN_MISSING"
fi

run_test_functions "$here/run.sh" "$ENGINE_TEST_TIMEOUT" cleanup_between_tests "$@"

# Under an ASan build: any report written while the engines drove the
# runtime is a failure of its own.
if [ -d "$WORK/sanitizer" ]; then
  reports=$(ls "$WORK/sanitizer" 2>/dev/null)
  if [ -n "$reports" ]; then
    report_fail no_sanitizer_reports "$(echo "$reports" | wc -l) report(s)"
    for r in $reports; do head -30 "$WORK/sanitizer/$r" | sed 's/^/    /'; done
  else
    echo "ok no_sanitizer_reports"
    passed=$((passed + 1))
  fi
fi
stop_engines_then_check
[ $skipped = 0 ] || echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
