#!/usr/bin/env bash
# CRI tests: haven-runc as a Kubernetes runtime handler of containerd,
# driven over containerd's CRI socket by the calls kubelet makes.
#   [RUNTIME=/path/to/haven-runc] tests/cri/run.sh [PATTERN...]
# Installs the test client's gRPC packages from npm (once, into a cache),
# builds a busybox image and a pause image, starts a private containerd
# with its CRI plugin (own config, root, state and socket, in a network
# and a mount namespace of its own; CNI's bridge there), imports the
# images, runs the tests, and stops and removes all of it.  Prints
# "ok NAME", "not ok NAME: reason" or "skip NAME: reason" per test and
# ends with "N passed, N failed"; exits non-zero if any failed, 77 when
# not root or when containerd, the CNI plugins or Node are missing.
# Needs busybox-static, jq, tar, util-linux (nsenter, unshare), iproute2,
# containerd, containernetworking-plugins, nodejs and npm.
set -u
here=$(cd "$(dirname "$0")" && pwd)
CRI_TEST_TIMEOUT=${CRI_TEST_TIMEOUT:-180}
CNI_BIN_DIR=${CNI_BIN_DIR:-/usr/lib/cni}

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

# run.sh --run COMMAND [ARG...]: the harness without the tests (the
# benchmarks, tests/bench/cri-bench.sh): COMMAND runs once containerd is
# up, in a directory of its own, with lib.sh's settings in its
# environment (WORK, CRI_SUITE_ID, CRI_SOCK...: it may source lib.sh);
# the pods and containers it notes in $WORK/pods and $WORK/containers
# are checked as a test's are, and it is reported as one ("ok run").
RUN_CMD=()
if [ "${1:-}" = --run ]; then
  shift
  RUN_CMD=("$@")
  set --
fi

if [ "$(id -u)" != 0 ]; then
  echo "CRI tests need root: skipped"
  exit 77
fi
for tool in containerd ctr containerd-shim-runc-v2 runc; do
  command -v "$tool" > /dev/null || { echo "$tool is not installed (Debian: containerd, runc): skipped"; exit 77; }
done
for plugin in bridge host-local loopback; do
  [ -x "$CNI_BIN_DIR/$plugin" ] || { echo "no CNI plugin $CNI_BIN_DIR/$plugin (Debian: containernetworking-plugins): skipped"; exit 77; }
done
for tool in node npm; do
  command -v "$tool" > /dev/null || { echo "$tool is not installed (Debian: nodejs, npm): skipped"; exit 77; }
done
for tool in busybox jq timeout tar nsenter unshare ip sha256sum; do
  command -v "$tool" > /dev/null || { echo "missing $tool"; exit 1; }
done
source "$here/lib.sh"
for f in "$here"/test_*.sh; do source "$f"; done
[ -x "$RUNTIME" ] || { echo "RUNTIME $RUNTIME is not an executable"; exit 1; }

CONTAINERD_PID=
NS_HOLDER=
CRI_NETNS=
log() { echo "# $*"; }

# The client's gRPC packages (@grpc/grpc-js, @grpc/proto-loader) from
# npm's registry into CRI_CLIENT_CACHE, unless the versions the suite
# names are there already: before any test's clock starts, and the only
# download the suite makes.
need_cri_client() {
  local spec name have missing=0
  for spec in "${CRI_GRPC_PACKAGES[@]}"; do
    name=${spec%@*}
    have=$(jq -r .version "$CRI_NODE_MODULES/$name/package.json" 2> /dev/null)
    [ "$have" = "${spec##*@}" ] || missing=1
  done
  [ $missing = 1 ] || return 0
  mkdir -p "$CRI_CLIENT_CACHE"
  if ! timeout 600 npm install --prefix "$CRI_CLIENT_CACHE" --no-fund --no-audit --loglevel=error \
    "${CRI_GRPC_PACKAGES[@]}" > "$WORK/npm.log" 2>&1; then
    CRI_MISSING="npm install ${CRI_GRPC_PACKAGES[*]}: $(tail -3 "$WORK/npm.log" | tr '\n' ' ')"
    return 1
  fi
}


# The images, from the busybox root filesystem the other suites use: the
# containers' (a shell) and the pods' sandbox image (what a pause image
# does: wait until killed).  Imported into containerd by start_containerd.
build_images() {
  local r=$WORK/rootfs
  "$here/../make-rootfs.sh" "$r" || return 1
  # What the policy tests ask the kernel (static: busybox's root has no
  # libc), as the engine tests' image has it.
  if [ ! -x "$here/../helpers/syscall_probe" ]; then
    echo "tests/helpers/syscall_probe is not built: run 'make check TESTS=' or 'make tests/helpers/syscall_probe' first" >&2
    return 1
  fi
  mkdir -p "$r/usr/bin"
  cp "$here/../helpers/syscall_probe" "$r/usr/bin/syscall_probe" || return 1
  "$here/make-image.sh" "$r" "$IMAGE" "$WORK/image.tar" || return 1
  # The pause program: a static binary that is no shell, as the real
  # pause is (busybox's sleep is busybox, which strict's exec rules refuse
  # as a shell); it waits, and StopPodSandbox kills it.
  "$here/make-image.sh" "$r" "$PAUSE_IMAGE" "$WORK/pause.tar" '["/usr/bin/syscall_probe"]' '["sleep"]'
}

# made_dir DIR: DIR exists, made (and noted for final_cleanup) if it did not.
made_dir() {
  [ -d "$1" ] && return 0
  mkdir -p "$1" && echo "$1" >> "$WORK/made-dirs"
}

# containerd's namespaces, held by a process of their own so that they
# outlive a containerd restart and the harness can enter them (in_ns,
# in_netns): a network namespace with only loopback (CNI's bridge, the
# pods' veths and addresses live there and go with it, whatever the
# subnet), and a mount namespace (a slave of the host's) where a
# directory of WORK is bound on /run/containerd (containerd 1.6 keeps its
# shims' sockets there whatever its state directory: a system
# containerd's are not touched) and another on /var/lib/cni (where CNI
# caches its results: the host's is not touched).  The containers'
# mounts and the pods' network namespace mounts are made in that
# namespace and go with its last process.
start_namespaces() {
  CRI_NETNS=hvt-cri-$CRI_SUITE_ID
  local out
  if ! out=$(ip netns add "$CRI_NETNS" 2>&1); then
    CRI_MISSING="ip netns add $CRI_NETNS: $out"
    CRI_NETNS=
    return 1
  fi
  if ! out=$(ip -n "$CRI_NETNS" link set lo up 2>&1); then
    CRI_MISSING="loopback in $CRI_NETNS: $out"
    return 1
  fi
  mkdir -p "$CTRD_RUN" "$WORK/var-lib-cni"
  made_dir /run/containerd && made_dir /var/lib/cni || { CRI_MISSING="no mount points for containerd"; return 1; }
  # shellcheck disable=SC2016 # $1..$3 are the inner shell's
  nsenter --net="/run/netns/$CRI_NETNS" unshare --mount --propagation slave sh -c \
    'mount --bind "$1" /run/containerd && mount --bind "$2" /var/lib/cni && echo $$ > "$3.new" && mv "$3.new" "$3" &&
     exec sleep infinity' sh "$CTRD_RUN" "$WORK/var-lib-cni" "$NS_PID_FILE" > "$WORK/ns.log" 2>&1 < /dev/null &
  NS_HOLDER=$!
  if ! wait_for 10 test -s "$NS_PID_FILE"; then
    CRI_MISSING="no namespaces for containerd: $(cat "$WORK/ns.log")"
    return 1
  fi
}

stop_namespaces() {
  if [ -n "$NS_HOLDER" ]; then
    stop_process "$NS_HOLDER" 50
    NS_HOLDER=
  fi
  if [ -n "$CRI_NETNS" ]; then
    ip netns delete "$CRI_NETNS" 2> /dev/null
    CRI_NETNS=
  fi
}

# The pods' network, as a node's CNI configuration would have it: a bridge
# (in containerd's network namespace) with host-local addresses, whose
# allocations are kept in WORK; no masquerading and no port maps (no
# iptables rule anywhere).  containerd adds the loopback plugin itself.
write_cni_config() {
  mkdir -p "$WORK/cni/net.d" "$CNI_IPAM_DIR"
  jq -n --arg name "$CNI_NET" --arg subnet "$CNI_SUBNET" --arg gw "$CNI_GATEWAY" --arg data "$CNI_IPAM_DIR" '{
    cniVersion: "1.0.0", name: $name,
    plugins: [{type: "bridge", bridge: "hvtcri0", isGateway: true, ipMasq: false,
               ipam: {type: "host-local", ranges: [[{subnet: $subnet, gateway: $gw}]],
                      routes: [{dst: "0.0.0.0/0"}], dataDir: $data}}]
  }' > "$WORK/cni/net.d/10-$CNI_NET.conflist"
}

# The private containerd: its own root, state, socket and CRI settings,
# in the namespaces above.  Two runtime handlers, as RuntimeClasses name
# them: runc (the machine's runc, the reference) and haven (the runtime
# under test as the runc shim's binary).  restrict_oom_score_adj: root
# here may lack CAP_SYS_RESOURCE, and CRI asks -998 for every pause
# container.  No AppArmor (the host may have no parser for CRI's default
# profile).  Sets CONTAINERD_PID.
start_containerd() {
  mkdir -p "$CTRD_DIR" "$CTRD_ROOT" "$CTRD_STATE"
  write_cni_config
  cat > "$CTRD_DIR/config.toml" << EOF
version = 2
root = "$CTRD_ROOT"
state = "$CTRD_STATE"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$CRI_SOCK"
[debug]
  address = "$CTRD_DIR/debug.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CTRD_DIR/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.haven]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.haven.options]
        BinaryName = "$RUNTIME"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$WORK/cni/net.d"
    max_conf_num = 1
EOF
  install_policy_handlers || return 1
  # shellcheck disable=SC2046 # sanitizer_env's words
  env $(sanitizer_env) "$(cri_policy_path_env)" nsenter -t "$(cat "$NS_PID_FILE")" -m -n --wd="$CTRD_DIR" containerd --config "$CTRD_DIR/config.toml" \
    > "$CTRD_DIR/containerd.log" 2>&1 < /dev/null &
  CONTAINERD_PID=$!
  # A test that restarts containerd (test_cri_deploy.sh, as a node
  # installer would) writes its new pid here, for stop_containerd.
  echo "$CONTAINERD_PID" > "$CTRD_DIR/containerd.pid"
  # Ready when its CRI service answers (the plugin loads after the rest).
  if ! wait_for 30 containerd_ready; then
    CRI_MISSING="containerd's CRI service did not answer: $(grep -i 'level=\(error\|fatal\)' "$CTRD_DIR/containerd.log" | tail -1)"
    return 1
  fi
  for f in image pause; do
    if ! out=$(ctrd images import "$WORK/$f.tar" 2>&1); then
      CRI_MISSING="ctr images import $f.tar: $out"
      return 1
    fi
  done
  for f in "$IMAGE" "$PAUSE_IMAGE"; do
    out=$(cri ImageStatus "{\"image\": {\"image\": \"$f\"}}" 2>&1)
    if [ -z "$(jq -r '.image.id // empty' <<< "$out" 2> /dev/null)" ]; then
      CRI_MISSING="CRI does not see the imported image $f: $out"
      return 1
    fi
  done
  log "$(cri Version | jq -r '"\(.runtime_name) \(.runtime_version), CRI \(.runtime_api_version)"'), handlers runc ($(command -v runc)), haven ($RUNTIME), haven-POLICY for $CRI_POLICIES, $CRI_LOCKED_HANDLER"
}

# A handler per shipped policy, haven-POLICY, and haven-strict-locked
# (strict with --policy-lock: a pod's run.haven.policy is refused), as an
# administrator registers them: by `haven install containerd` on
# containerd's config, its wrappers in CRI_HANDLER_DIR (removed with WORK).
# The handlers find the policies of this checkout (HAVEN_POLICY_PATH in
# containerd's environment, which its shims and the runtime inherit).
install_policy_handlers() {
  local p out
  mkdir -p "$CRI_HANDLER_DIR"
  for p in $CRI_POLICIES; do
    if ! out=$(haven install containerd --config "$CTRD_DIR/config.toml" --name "haven-$p" --policy "$p" \
      --runtime "$RUNTIME" --handler-dir "$CRI_HANDLER_DIR" 2>&1); then
      CRI_MISSING="haven install containerd --policy $p: $out"
      return 1
    fi
  done
  if ! out=$(haven install containerd --config "$CTRD_DIR/config.toml" --name "$CRI_LOCKED_HANDLER" --policy strict \
    --policy-lock --runtime "$RUNTIME" --handler-dir "$CRI_HANDLER_DIR" 2>&1); then
    CRI_MISSING="haven install containerd --policy strict --policy-lock: $out"
    return 1
  fi
}

containerd_ready() {
  kill -0 "$CONTAINERD_PID" 2> /dev/null && [ -S "$CRI_SOCK" ] && cri Version > /dev/null 2>&1
}

# containerd, then the shims it leaves (a shim outlives its containerd;
# one still running once every pod is removed is a leak, and the last
# check, nothing_left, reports it: they are left for it to see).
stop_containerd() {
  [ -n "$CONTAINERD_PID" ] || return 0
  [ -s "$CTRD_DIR/containerd.pid" ] && CONTAINERD_PID=$(cat "$CTRD_DIR/containerd.pid")
  stop_process "$CONTAINERD_PID" 100
  CONTAINERD_PID=
}

# After each test: every pod it ran is gone with nothing left
# (pod_leftovers), and no pod or container of containerd's is left for
# the next test.  What is found fails the test that ran (DIR/.fail).
cleanup_between_tests() {
  local tdir=$1 pod cg cids left ids id
  [ "${HAVE_CRI:-0}" = 1 ] || return 0
  # Pods the test did not remove (a test killed by its time limit).
  ids=$(cri ListPodSandbox 2> /dev/null | jq -r '.items[].id')
  for id in $ids; do
    echo "pod $id was left running by the test" >> "$tdir/.fail"
    pod_remove "$id" > /dev/null 2>&1
  done
  ids=$(cri ListContainers 2> /dev/null | jq -r '.containers[].id')
  for id in $ids; do
    echo "container $id was left by the test" >> "$tdir/.fail"
    cri RemoveContainer "{\"container_id\": \"$id\"}" > /dev/null 2>&1
  done
  if [ -s "$WORK/pods" ]; then
    cids=$(cat "$WORK/containers" 2> /dev/null)
    # shellcheck disable=SC2086 # container ids, one word each
    left=$(pods_leftovers "$WORK/pods" $cids) || echo "left after the test: $(tr '\n' ';' <<< "$left")" >> "$tdir/.fail"
  fi
  cat "$WORK/pods" "$WORK/containers" 2> /dev/null | awk '{print $1}' >> "$WORK/all-ids"
  : > "$WORK/pods"
  : > "$WORK/containers"
}

final_cleanup() {
  stop_containerd
  stop_namespaces
  # Nothing under WORK may stay mounted before it is removed.
  local m d t id
  for m in $(awk -v w="$WORK" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2> /dev/null
  done
  # The pods' cgroup parent (kubelet's part), deepest first.
  for d in $(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup" || $(i + 1) == "cgroup2") print $5 }' /proc/self/mountinfo); do
    [ -d "$d$CGROUP_PARENT" ] && find "$d$CGROUP_PARENT" -depth -type d -exec rmdir {} + 2> /dev/null
  done
  # The audit trails haven-runc kept for our containers (they outlive delete).
  for id in $(cat "$WORK/all-ids" 2> /dev/null); do
    t=/var/log/haven/containers/$id.jsonl
    [ -f "$t" ] && rm -f "$t"
  done
  # The mount points made for containerd's namespace, if they were made here.
  for d in $(cat "$WORK/made-dirs" 2> /dev/null); do rmdir "$d" 2> /dev/null; done
  [ -n "${HAVEN_TEST_KEEP:-}" ] && echo "# kept $WORK" || rm -rf "$WORK"
}
trap final_cleanup EXIT
trap 'exit 130' INT TERM

source "$here/../lib/harness.sh"
HAVE_CRI=0
CRI_MISSING=
if ! need_cri_client; then
  report_fail cri_client_installed "$CRI_MISSING"
  echo "$passed passed, $failed failed"
  exit 1
fi
if ! build_images; then
  report_fail cri_test_images "the CRI tests' images could not be built (see above)"
  echo "$passed passed, $failed failed"
  exit 1
fi
if start_namespaces && start_containerd; then
  HAVE_CRI=1
else
  report_fail containerd_started "$CRI_MISSING"
  tail -20 "$CTRD_DIR/containerd.log" 2> /dev/null | sed 's/^/    /'
fi
export HAVE_CRI CRI_MISSING

if [ $HAVE_CRI = 1 ] && [ ${#RUN_CMD[@]} -gt 0 ]; then
  mkdir -p "$WORK/t-run"
  t0=$EPOCHREALTIME
  (cd "$WORK/t-run" && "${RUN_CMD[@]}")
  rc=$?
  cleanup_between_tests "$WORK/t-run"
  if [ $rc = 0 ] && [ ! -s "$WORK/t-run/.fail" ]; then
    echo "ok run ($(elapsed_since "$t0") s)"
    passed=$((passed + 1))
  else
    report_fail run "exit status $rc $(head -c 400 "$WORK/t-run/.fail" 2> /dev/null) ($(elapsed_since "$t0") s)"
  fi
elif [ $HAVE_CRI = 1 ]; then
  run_test_functions "$here/run.sh" "$CRI_TEST_TIMEOUT" cleanup_between_tests "$@"
fi

if [ -d "$WORK/sanitizer" ]; then
  reports=$(ls "$WORK/sanitizer" 2> /dev/null)
  if [ -n "$reports" ]; then
    report_fail no_sanitizer_reports "$(echo "$reports" | wc -l) report(s)"
    for r in $reports; do head -30 "$WORK/sanitizer/$r" | sed 's/^/    /'; done
  else
    echo "ok no_sanitizer_reports"
    passed=$((passed + 1))
  fi
fi
# containerd and the holder of its namespaces are the suite's too: they
# go before the last check, which then finds what they left (shims, the
# runtimes' processes).
stop_containerd
stop_namespaces
check_nothing_left "$WORK"
[ $skipped = 0 ] || echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
