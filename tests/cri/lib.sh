# Shared helpers for the CRI tests (sourced by run.sh, in the harness and
# again in each test's own process).  The harness starts a private
# containerd with its CRI plugin; tests reach it only through cri(),
# cri_exec() and ctrd(), which are bounded, and look at what it made from
# the host (in_ns: its mount namespace; in_netns: its network namespace).

here_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# fail, skip, defer and the assertions.
source "$here_lib/../lib/assert.sh"
: "${RUNTIME:=$(cd "$here_lib/../.." && pwd)/haven-runc}"
: "${WORK:=$(mktemp -d /tmp/hvt-cri.XXXXXX)}"
chmod 755 "$WORK"
# This run of the suite, in the environment of everything it starts
# (containerd, its shims, the runtimes' processes): the last check
# (nothing_left, tests/lib/harness.sh) finds what is left by it.
: "${HAVEN_TEST_SUITE:=$$.$EPOCHREALTIME}"
export HAVEN_TEST_SUITE
# The suite's own pid: names its cgroups and namespaces in every test.
: "${CRI_SUITE_ID:=$$}"
# Each CRI call may take this long (a pod start on 2 busy CPUs under ASan).
: "${CALL_TIMEOUT:=60}"
export RUNTIME WORK CRI_SUITE_ID CALL_TIMEOUT

CRI_JS=$here_lib/cri.js
# The gRPC packages, installed from npm once (run.sh, need_cri_client).
: "${CRI_CLIENT_CACHE:=${HAVEN_CRI_CLIENT_CACHE:-/var/cache/haven-tests/cri-client}}"
export CRI_NODE_MODULES=$CRI_CLIENT_CACHE/node_modules
CRI_GRPC_PACKAGES=(@grpc/grpc-js@1.14.7 @grpc/proto-loader@0.8.1)

# containerd's places.  Its socket and root are in WORK; /run/containerd
# (where 1.6 puts its shims' sockets whatever its state directory) is a
# directory of WORK bound there in containerd's own mount namespace.
CTRD_DIR=$WORK/containerd
CRI_SOCK=$CTRD_DIR/containerd.sock
CTRD_ROOT=$CTRD_DIR/root
CTRD_STATE=$CTRD_DIR/state
CTRD_RUN=$WORK/run-containerd
# The runtimes' state root as the shim passes it (--root), inside the
# namespace, for a runtime's own `state` and for leaks.sh.
RUNC_ROOT=/run/containerd/runc/k8s.io
# The CNI network namespaces containerd makes (netns_mounts_under_state_dir).
CRI_NETNS_DIR=$CTRD_STATE/io.containerd.grpc.v1.cri/netns
CNI_NET=hvt-cri
CNI_IPAM_DIR=$WORK/cni/ipam
# The pods' network: CNI's bridge in containerd's network namespace,
# which has no route anywhere.
CNI_SUBNET=10.89.0.0/24
CNI_GATEWAY=10.89.0.1
# The images (tests/cri/make-image.sh), as CRI names them.
IMAGE=docker.io/library/havenbox:test
PAUSE_IMAGE=docker.io/library/havenpause:test
# The holder of containerd's namespaces (run.sh, start_namespaces).
NS_PID_FILE=$WORK/ns.pid
# Pods' cgroups go below this parent in every hierarchy (the part
# kubelet would make: /kubepods/...).
CGROUP_PARENT=/hvt-cri-$CRI_SUITE_ID
# The runtime handlers bound to a policy (run.sh, install_policy_handlers):
# haven-POLICY for each of these shipped policies, and a locked one.
: "${CRI_POLICIES:=default strict ci offline claude-code codex gemini-cli aider devcontainer}"
CRI_LOCKED_HANDLER=haven-strict-locked
CRI_HANDLER_DIR=$WORK/handlers
CRI_POLICY_DIR=$(cd "$here_lib/../../policies" && pwd)
# Policies only the tests use (tests/cri/policies), after the shipped ones.
CRI_TEST_POLICY_DIR=$(cd "$here_lib/policies" && pwd)
export CTRD_DIR CRI_SOCK IMAGE PAUSE_IMAGE CRI_POLICIES CRI_HANDLER_DIR

# The sanitizers' reports (ASan build) go to files: the runtime's stderr
# is the shim's pipe during create.  containerd passes its environment to
# its shims, which pass it to the runtime.
sanitizer_env() {
  if ldd "$RUNTIME" 2> /dev/null | grep -q 'libasan\|libubsan'; then
    mkdir -p "$WORK/sanitizer"
    echo "ASAN_OPTIONS=detect_leaks=0:log_path=$WORK/sanitizer/asan UBSAN_OPTIONS=print_stacktrace=1:log_path=$WORK/sanitizer/ubsan"
  fi
}

# The handlers find the policies of this checkout, then the tests' own:
# HAVEN_POLICY_PATH in containerd's environment, which its shims and the
# runtime inherit (run.sh's start, and a test's restart of containerd).
cri_policy_path_env() { echo "HAVEN_POLICY_PATH=$CRI_POLICY_DIR:$CRI_TEST_POLICY_DIR"; }

# `haven` is the same binary under another name.
haven() { (exec -a haven "$RUNTIME" "$@"); }

# cri METHOD [REQUEST]: one CRI call (cri.js), its response on stdout.
cri() {
  CRI_TIMEOUT=$CALL_TIMEOUT timeout -k 5 $((CALL_TIMEOUT + 10)) node "$CRI_JS" "$CRI_SOCK" "$@"
}
# cri_exec CONTAINER_ID CMD...: ExecSync; the command's output and status.
cri_exec() {
  local id=$1
  shift
  CRI_TIMEOUT=$CALL_TIMEOUT timeout -k 5 $((CALL_TIMEOUT + 10)) node "$CRI_JS" "$CRI_SOCK" exec "$id" \
    --timeout "$CALL_TIMEOUT" -- "$@"
}
# cri_batch [--jobs N] < CALLS: many calls in one client process (cri.js
# batch: one {"tag", "method", "request"} a line in, one result a line
# out); bounded as a whole by BATCH_TIMEOUT seconds (default 300).
cri_batch() {
  CRI_TIMEOUT=$CALL_TIMEOUT timeout -k 5 "${BATCH_TIMEOUT:-300}" node "$CRI_JS" "$CRI_SOCK" batch "$@"
}
# ctrd ARGS...: containerd's own client on the private containerd, in the
# namespace the CRI plugin uses.
ctrd() { timeout -k 5 "$CALL_TIMEOUT" ctr -a "$CRI_SOCK" -n k8s.io "$@"; }

# in_ns COMMAND...: COMMAND in containerd's mount namespace (where the
# containers' root filesystems, the pods' network namespaces and
# /run/containerd are mounted).  in_netns: in its network namespace.
in_ns() { nsenter -t "$(cat "$NS_PID_FILE")" -m "$@"; }
in_netns() { nsenter -t "$(cat "$NS_PID_FILE")" -n "$@"; }

# wait_for SECONDS COMMAND...: until COMMAND succeeds, for SECONDS of
# wall time (a CRI call through node takes a good part of a second: a
# count of tries would not bound the time).
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  while :; do
    "$@" > /dev/null 2>&1 && return 0
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.1
  done
}

# json FILTER: jq -r on $OUT (the last call's response).
json() { jq -r "$1" <<< "$OUT"; }

# pod_config NAME: a PodSandboxConfig as kubelet would send it for a pod
# NAME in namespace hvt (its own uid, log directory and cgroup parent);
# sets POD_UID, POD_LOGS and POD_CGROUP, writes it to pod-NAME.json.
# Extra fields (JSON, merged in: the pod's annotations) in POD_EXTRA.
pod_config() {
  local name=$1 extra=${POD_EXTRA:-}
  [ -n "$extra" ] || extra='{}'
  POD_UID=$(cat /proc/sys/kernel/random/uuid)
  POD_LOGS=$WORK/logs/hvt_${name}_$POD_UID
  POD_CGROUP=$CGROUP_PARENT/pod$POD_UID
  mkdir -p "$POD_LOGS"
  jq -n --arg name "$name" --arg uid "$POD_UID" --arg logs "$POD_LOGS" --arg cg "$POD_CGROUP" --argjson extra "$extra" '{
    metadata: {name: $name, uid: $uid, namespace: "hvt", attempt: 0},
    hostname: $name,
    log_directory: $logs,
    labels: {"io.kubernetes.pod.name": $name, "io.kubernetes.pod.namespace": "hvt", "io.kubernetes.pod.uid": $uid},
    linux: {cgroup_parent: $cg,
            security_context: {namespace_options: {network: "POD", pid: "CONTAINER", ipc: "POD"}}}
  } * $extra' > "pod-$name.json"
}

# run_pod NAME HANDLER: RunPodSandbox with the runtime handler HANDLER
# (containerd's runtime of that name); sets POD_ID and POD_NAME.  The pod
# is stopped and removed when the test ends (pod_remove), and what it
# left is checked then by the harness (cleanup_between_tests).
run_pod() {
  POD_NAME=$1
  pod_config "$1"
  OUT=$(cri RunPodSandbox "$(jq -n --slurpfile c "pod-$1.json" --arg h "$2" '{config: $c[0], runtime_handler: $h}')" 2>&1) \
    || fail "RunPodSandbox $1 (handler $2): $OUT"
  POD_ID=$(json .pod_sandbox_id)
  [ -n "$POD_ID" ] || fail "RunPodSandbox $1: no id in $OUT"
  echo "$POD_ID $POD_CGROUP" >> "$WORK/pods"
  defer "pod_remove $POD_ID"
}

# pod_remove ID: StopPodSandbox (which stops its containers) and
# RemovePodSandbox (which removes them), as kubelet does.
pod_remove() {
  cri StopPodSandbox "{\"pod_sandbox_id\": \"$1\"}" > /dev/null && cri RemovePodSandbox "{\"pod_sandbox_id\": \"$1\"}" > /dev/null
}

# create_container NAME CMD...: CreateContainer in pod POD_ID from IMAGE,
# with CMD as its command, its log at POD_LOGS/NAME.log; sets CID.  Extra
# fields of the ContainerConfig (JSON, merged in) in CTR_EXTRA.
create_container() {
  local name=$1 req extra=${CTR_EXTRA:-} cmd='[]' a
  shift
  [ -n "$extra" ] || extra='{}'
  # One --arg per word: jq reads options even after --args (a "-c" of
  # the command became jq's own).
  for a in "$@"; do cmd=$(jq -c --arg a "$a" '. + [$a]' <<< "$cmd"); done
  req=$(jq -n --arg pod "$POD_ID" --slurpfile sc "pod-$POD_NAME.json" --arg name "$name" --arg image "$IMAGE" \
    --argjson extra "$extra" --argjson cmd "$cmd" '{
      pod_sandbox_id: $pod, sandbox_config: $sc[0],
      config: ({metadata: {name: $name, attempt: 0}, image: {image: $image}, command: $cmd,
                log_path: ($name + ".log"),
                labels: {"io.kubernetes.container.name": $name}} * $extra)
    }')
  OUT=$(cri CreateContainer "$req" 2>&1) || fail "CreateContainer $name in $POD_NAME: $OUT"
  CID=$(json .container_id)
  [ -n "$CID" ] || fail "CreateContainer $name: no id in $OUT"
  echo "$CID" >> "$WORK/containers"
}

start_container() {
  OUT=$(cri StartContainer "{\"container_id\": \"$1\"}" 2>&1) || fail "StartContainer $1: $OUT"
}

# container_state ID: CONTAINER_RUNNING, CONTAINER_EXITED, ...
container_state() {
  cri ContainerStatus "{\"container_id\": \"$1\"}" | jq -r .status.state
}

# container_is ID STATE: for wait_for.
container_is() { [ "$(container_state "$1")" = "$2" ]; }

# runtime_of ID: which runtime made container ID (the shim runs the
# handler's binary with --root RUNC_ROOT, where each keeps a state.json of
# its own format): "haven" (haven-runc's: startTime, cgroupPath), "runc"
# (runc's: init_process_pid) or "none".
runtime_of() {
  local f=$CTRD_RUN/runc/k8s.io/$1/state.json
  if [ ! -f "$f" ]; then
    echo none
  elif jq -e 'has("startTime") and has("cgroupPath")' "$f" > /dev/null 2>&1; then
    echo haven
  elif jq -e 'has("init_process_pid")' "$f" > /dev/null 2>&1; then
    echo runc
  else
    echo "unknown: $(head -c 200 "$f")"
  fi
}

# haven_state ID: haven-runc's own `state` of container ID, as the shim
# would call it (in containerd's mount namespace, its --root).
haven_state() { in_ns "$RUNTIME" --root "$RUNC_ROOT" state "$1"; }

# pod_leftovers POD_ID POD_CGROUP [CONTAINER_ID...]: what a removed pod
# and its containers left, one line each on stdout; status 1 if anything
# (pods_leftovers for one pod).
pod_leftovers() {
  local pods
  pods=$(mktemp "$WORK/pods.XXXXXX")
  echo "$1 $2" > "$pods"
  pods_leftovers "$pods" "${@:3}"
  local rc=$?
  rm -f "$pods"
  return $rc
}

# pods_leftovers PODS_FILE [CONTAINER_ID...]: what removed pods (PODS_FILE:
# "POD_ID POD_CGROUP" a line) and their containers left, one line each
# on stdout; status 1 if anything.  Everything kubelet's
# RemovePodSandbox is meant to take away: containerd's records (CRI's,
# its containers, snapshots), the shims, every process, mount and cgroup
# named by an id, the runtimes' state (leaks.sh, run in containerd's
# mount namespace, where those mounts are), bundles and CRI's
# directories, the pods' network namespaces and their mounts, veths,
# addresses (CNI DEL ran), and below each pod's cgroup parent (which
# kubelet, not the runtime, removes: removed here once it is empty).
# Each kind is looked for once for all the pods (a load test's fifty).
pods_leftovers() {
  local pods=$1 out="" id ids=() args=() h d pod cg
  ids=("${@:2}")
  while read -r pod cg; do [ -n "$pod" ] && ids+=("$pod"); done < "$pods"
  if OUT=$(cri ListPodSandbox 2>&1); then
    out+=$(json '.items[] | "\(.id) \(.state)"' | while read -r id st; do
      grep -q "^$id " "$pods" && echo "cri: pod $id is still listed: $st"; done)
    [ -z "$out" ] || out+=$'\n'
  else
    out+="cri: ListPodSandbox: $OUT"$'\n'
  fi
  if OUT=$(cri ListContainers 2>&1); then
    out+=$(json '.containers[] | "\(.pod_sandbox_id) \(.id)"' | while read -r pod id; do
      grep -q "^$pod " "$pods" && echo "cri: container $id of pod $pod is still listed"; done)
    [ -z "$out" ] || out+=$'\n'
  else
    out+="cri: ListContainers: $OUT"$'\n'
  fi
  local listed snaps
  listed=$(ctrd containers ls -q 2>&1)
  snaps=$(ctrd snapshots ls 2>&1 | awk 'NR > 1 {print $1}')
  for id in "${ids[@]}"; do
    grep -qx -- "$id" <<< "$listed" && out+="containerd: container $id"$'\n'
    grep -qx -- "$id" <<< "$snaps" && out+="containerd: snapshot $id"$'\n'
    args+=(--id "$id" --path "/run/containerd/io.containerd.runtime.v2.task/k8s.io/$id"
      --path "$CTRD_ROOT/io.containerd.grpc.v1.cri/sandboxes/$id" --path "$CTRD_STATE/io.containerd.grpc.v1.cri/sandboxes/$id"
      --path "$CTRD_ROOT/io.containerd.grpc.v1.cri/containers/$id" --path "$CTRD_STATE/io.containerd.grpc.v1.cri/containers/$id")
  done
  out+=$(in_ns bash "$here_lib/../lib/leaks.sh" list --root "$RUNC_ROOT" "${args[@]}")
  [ -z "$out" ] || out+=$'\n'
  # The pods' network namespaces: mounted (in containerd's namespace) on
  # files of CRI_NETNS_DIR, one per pod.
  out+=$(find "$CRI_NETNS_DIR" -mindepth 1 2> /dev/null | sed 's/^/netns: /')
  [ -z "$out" ] || out+=$'\n'
  out+=$(in_ns awk -v d="$CRI_NETNS_DIR" 'index($5, d) == 1 {print "netns mount: " $5}' /proc/self/mountinfo)
  [ -z "$out" ] || out+=$'\n'
  out+=$(in_netns ip -o link show type veth 2> /dev/null | sed 's/^/veth: /')
  [ -z "$out" ] || out+=$'\n'
  # host-local keeps one file per address in use, named by the address.
  out+=$(find "$CNI_IPAM_DIR/$CNI_NET" -name '[0-9]*.[0-9]*.[0-9]*.[0-9]*' 2> /dev/null | sed 's/^/address: /')
  [ -z "$out" ] || out+=$'\n'
  for h in $(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup" || $(i + 1) == "cgroup2") print $5 }' /proc/self/mountinfo); do
    while read -r pod cg; do
      [ -n "$cg" ] || continue
      d=$h$cg
      [ -d "$d" ] || continue
      if [ -n "$(find "$d" -mindepth 1 -type d 2> /dev/null)" ]; then
        out+="cgroup: below $d: $(find "$d" -mindepth 1 -type d | tr '\n' ' ')"$'\n'
      elif ! rmdir "$d" 2> /dev/null; then
        out+="cgroup: $d is not empty: $(tr '\n' ' ' < "$d/cgroup.procs" 2> /dev/null)"$'\n'
      fi
    done < "$pods"
  done
  out=$(sed '/^$/d' <<< "$out")
  [ -z "$out" ] && return 0
  echo "$out"
  return 1
}

# assert_pod_gone POD_ID POD_CGROUP [CONTAINER_ID...]: nothing left.
assert_pod_gone() {
  local left
  left=$(pod_leftovers "$@") || fail "left after RemovePodSandbox: $(tr '\n' ';' <<< "$left")"
}
