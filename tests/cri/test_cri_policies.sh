# Each shipped policy as a Kubernetes runtime handler (haven-POLICY,
# registered by `haven install containerd`): a pod with a container that
# mounts a project and a home as kubelet mounts volumes (CRI Mounts of
# host directories holding canary secrets), checked from the host and
# through ExecSync (`kubectl exec`) for what the engine tests check under
# Docker (tests/engines/test_docker.sh, test_docker_policy_*): a
# read-only root, the block rules' secrets hidden, no capabilities,
# no_new_privs, the seccomp profile (calls refused, in the container and
# in an exec), exec rules (strict: no shell, a read-only project) and
# the policy's memory and pids limits in the container's cgroup; and the
# pod's run.haven.policy annotation (containerd's pod_annotations): a
# stricter policy applies, a weaker one, a file or any one under a locked
# handler does not.  Every policy in CRI_POLICIES fits a pod; those with
# an egress allowlist need the pod's shared egress table and resolver
# (the pod's sandbox container holds them).  What a pod's network does
# under a policy (none, an allowlist), refused hostNetwork/hostPID/
# privileged pods, the service-account token and the audit trail are
# tested in test_cri_network.sh, test_cri_refusals.sh, test_cri_secrets.sh
# and test_cri_audit.sh.

# The host's memory share every policy built on default gives an engine
# container (resources.containers.memory: 75%, whole MiB), as the engine
# tests compute it.
CRI_DEFAULT_MEMORY=$(( ($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024 / 100 * 75) & ~1048575 ))

# cri_policy_limits POLICY: "PIDS MEMORY", the limits POLICY gives a
# container (its resources.containers, else its resources, else
# default's: policy/policy_apply.c takes the smaller).
cri_policy_limits() {
  case $1 in
    strict) echo "256 2147483648" ;;
    ci) echo "512 4294967296" ;;
    *) echo "4096 $CRI_DEFAULT_MEMORY" ;;
  esac
}

# cri_workspace: a project and a home with canary secrets, as the engine
# tests make them (make_policy_workspace): the project's .env and a
# private key in it, a protected .git/hooks, a file that stays visible,
# an ssh key for the home.  Sets WS, SSHDIR and CRI_MOUNTS (the
# ContainerConfig fields mounting them, as kubelet's hostPath volumes).
cri_workspace() {
  WS=$(mktemp -d "$WORK/ws.XXXXXX")
  SSHDIR=$(mktemp -d "$WORK/ssh.XXXXXX")
  mkdir -p "$WS/.git/hooks" "$WS/sub"
  printf '[core]\n' > "$WS/.git/config"
  echo CANARY-ENV > "$WS/.env"
  echo CANARY-KEY > "$WS/sub/id_rsa"
  echo visible > "$WS/keep.txt"
  echo CANARY-SSH > "$SSHDIR/id_ed25519"
  chmod -R a+rwX "$WS"
  CRI_MOUNTS=$(jq -nc --arg ws "$WS" --arg ssh "$SSHDIR" '{working_dir: "/workspace",
    mounts: [{container_path: "/workspace", host_path: $ws}, {container_path: "/root/.ssh", host_path: $ssh}]}')
}

# proc_field PID NAME: NAME's value in /proc/PID/status.
proc_field() { awk -v n="$2:" '$1 == n {print $2}' "/proc/$1/status"; }

# cgroup_limit PID pids|memory: the limit of PID's cgroup, read from the
# host (cgroup v1's pids.max / memory.limit_in_bytes, or v2's pids.max /
# memory.max).
cgroup_limit() {
  local pid=$1 what=$2 path file
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    path=$(awk -F: '$1 == "0" {print $3}' "/proc/$pid/cgroup")
    [ "$what" = pids ] && file=pids.max || file=memory.max
    cat "/sys/fs/cgroup$path/$file"
  else
    path=$(awk -F: -v c="$what" '$2 == c {print $3}' "/proc/$pid/cgroup")
    [ "$what" = pids ] && file=pids.max || file=memory.limit_in_bytes
    cat "/sys/fs/cgroup/$what$path/$file"
  fi
}

# assert_policed_process PID WHAT: from the host, what every policy
# gives a process: no capabilities (effective, bounding), no_new_privs,
# a seccomp filter, a read-only root.
assert_policed_process() {
  local pid=$1 what=$2
  assert_eq 0000000000000000 "$(proc_field "$pid" CapEff)" "$what: effective capabilities"
  assert_eq 0000000000000000 "$(proc_field "$pid" CapBnd)" "$what: bounding set"
  assert_eq 1 "$(proc_field "$pid" NoNewPrivs)" "$what: NoNewPrivs"
  assert_eq 2 "$(proc_field "$pid" Seccomp)" "$what: seccomp mode (a filter)"
  local root
  root=$(awk '$5 == "/" {print $6}' "/proc/$pid/mountinfo" | tail -1)
  [[ ",$root," == *,ro,* ]] || fail "$what: its root is mounted '$root', not read-only"
}

# Asked from inside a container of a policy that allows a shell: the
# canaries, the read-only places, the process's own status and the
# calls default's seccomp profile refuses.
CRI_POLICY_PROBE='
echo "env:[$(cat /workspace/.env 2>&1)] key:[$(cat /workspace/sub/id_rsa 2>&1)] keep:[$(cat /workspace/keep.txt 2>&1)]"
echo "ssh:[$(cat /root/.ssh/id_ed25519 2>&1 | sed "s/.*: //")]"
for f in /x-probe /etc/x /workspace/.git/hooks/pre-commit /workspace/.git/config; do
  (echo x >> $f) 2>&1 | sed "s/.*: //" | sed "s|^|$f: |"
done
touch /workspace/new-$$ && rm /workspace/new-$$ && echo workspace-writable
grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status
syscall_probe ptrace io_uring userns
'
CRI_POLICY_WANT='env:[] key:[] keep:[visible]
ssh:[No such file or directory]
/x-probe: Read-only file system
/etc/x: Read-only file system
/workspace/.git/hooks/pre-commit: Read-only file system
/workspace/.git/config: Read-only file system
workspace-writable
CapEff:	0000000000000000
CapBnd:	0000000000000000
NoNewPrivs:	1
Seccomp:	2
ptrace: Operation not permitted
io_uring: Operation not permitted
userns: Operation not permitted'

# cri_policy_pod NAME HANDLER: a pod under HANDLER with one container
# (a program that is no shell, so that strict runs it too) mounting the
# canary workspace; waits until it runs.  Sets POD_ID, CID, PAUSE_PID
# (the sandbox container's process) and CPID (the container's).
cri_policy_pod() {
  cri_workspace
  run_pod "$1" "$2"
  OUT=$(cri PodSandboxStatus "{\"pod_sandbox_id\": \"$POD_ID\", \"verbose\": true}" 2>&1) || fail "PodSandboxStatus: $OUT"
  assert_eq SANDBOX_READY "$(json .status.state)" "the pod's state"
  PAUSE_PID=$(json '.info.info | fromjson | .pid')
  CTR_EXTRA=$CRI_MOUNTS create_container box /usr/bin/syscall_probe sleep
  start_container "$CID"
  wait_for 20 container_is "$CID" CONTAINER_RUNNING || fail "the container is $(container_state "$CID"), not running"
  OUT=$(cri ContainerStatus "{\"container_id\": \"$CID\", \"verbose\": true}" 2>&1) || fail "ContainerStatus: $OUT"
  CPID=$(json '.info.info | fromjson | .pid')
  [ "${CPID:-0}" -gt 1 ] 2> /dev/null || fail "no pid for the container: $(json .info.info | head -c 300)"
  assert_eq haven "$(runtime_of "$CID")" "the runtime of the container"
}

# assert_limits PID POLICY: the policy's pids and memory limits are the
# container's cgroup's.
assert_limits() {
  local want
  read -r -a want <<< "$(cri_policy_limits "$2")"
  assert_eq "${want[0]}" "$(cgroup_limit "$1" pids)" "the pids limit of the container's cgroup (policy $2)"
  assert_eq "${want[1]}" "$(cgroup_limit "$1" memory)" "the memory limit of the container's cgroup (policy $2)"
}

# assert_no_shell CID: strict's exec rules: an ExecSync of a shell is
# refused, a program that is no shell runs (and meets the seccomp
# profile), and the project is read-only to it.
assert_no_shell() {
  OUT=$(cri_exec "$1" sh -c 'echo shell ran' 2>&1) && fail "ExecSync of a shell ran under strict: $OUT"
  assert_not_contains "$OUT" "shell ran" "ExecSync of a shell under strict"
  OUT=$(cri_exec "$1" /usr/bin/syscall_probe ptrace io_uring userns write-workspace 2>&1)
  assert_eq "ptrace: Operation not permitted
io_uring: Operation not permitted
userns: Operation not permitted
write-workspace: Read-only file system" "$OUT" "ExecSync of a program under strict"
}

# cri_policy_test POLICY: the pod under haven-POLICY, checked.
cri_policy_test() {
  local policy=$1
  cri_policy_pod "policy-$policy" "haven-$policy"
  # From the host: the sandbox container and the container are policed,
  # the canaries are hidden in the container's view of the mounts (an
  # empty file where each was), and the limits are the cgroup's.
  assert_policed_process "$PAUSE_PID" "the pod's sandbox container"
  assert_policed_process "$CPID" "the container"
  assert_eq "" "$(cat "/proc/$CPID/root/workspace/.env" 2>&1)" "the project's .env, seen from the host in the container"
  assert_eq "" "$(cat "/proc/$CPID/root/workspace/sub/id_rsa" 2>&1)" "the project's id_rsa, seen from the host"
  assert_eq visible "$(cat "/proc/$CPID/root/workspace/keep.txt" 2>&1)" "a file the policy leaves, seen from the host"
  assert_limits "$CPID" "$policy"
  if [ "$policy" = strict ]; then
    assert_no_shell "$CID"
  else
    OUT=$(cri_exec "$CID" sh -c "$CRI_POLICY_PROBE" 2>&1) || fail "ExecSync of the probe: status $?: $OUT"
    assert_eq "$CRI_POLICY_WANT" "$OUT" "ExecSync of the probe under policy $policy"
  fi
  # The canaries are still there, unchanged, on the host.
  assert_eq CANARY-ENV "$(cat "$WS/.env")" "the project's .env on the host"
  assert_eq "" "$(cat "$WS/.git/hooks/pre-commit" 2> /dev/null)" "the hook, on the host"
}

# A test per policy the suite registers a handler for.
for p in $CRI_POLICIES; do
  eval "test_cri_policy_${p//-/_}() { cri_policy_test $p; }"
done
unset p

# A pod under haven-default asking for strict with run.haven.policy gets
# strict: its limits, no shell in an exec.
test_cri_policy_annotation_stricter() {
  POD_EXTRA='{"annotations": {"run.haven.policy": "strict"}}' cri_policy_pod stricter haven-default
  assert_policed_process "$CPID" "the container"
  assert_limits "$CPID" strict
  assert_no_shell "$CID"
}

# run_pod_refused NAME HANDLER WANT: RunPodSandbox fails with an error
# containing WANT (what kubelet shows in the pod's events), and leaves
# nothing (no network namespace, veth, address or cgroup of the pod).
run_pod_refused() {
  local req left
  pod_config "$1"
  req=$(jq -n --slurpfile c "pod-$1.json" --arg h "$2" '{config: $c[0], runtime_handler: $h}')
  if OUT=$(cri RunPodSandbox "$req" 2>&1); then
    echo "$(json .pod_sandbox_id) $POD_CGROUP" >> "$WORK/pods"
    defer "pod_remove $(json .pod_sandbox_id)"
    fail "RunPodSandbox $1 under $2 succeeded: $OUT"
  fi
  assert_contains "$OUT" "$3" "the CRI error of RunPodSandbox $1 under $2"
  # No pod id to name: the pod's cgroup and what is shared by all pods.
  left=$(pod_leftovers hvt-none "$POD_CGROUP") || fail "left after the refused pod $1: $(tr '\n' ';' <<< "$left")"
}

# Asking for a weaker policy than the handler's (one strict does not
# build on), or for a file: the pod is refused with the reason.  Under
# a locked handler containerd does not pass the annotation at all: the
# pod runs under the handler's policy.
test_cri_policy_annotation_weaker_refused() {
  POD_EXTRA='{"annotations": {"run.haven.policy": "default"}}' run_pod_refused weaker haven-strict \
    "policy \"default\" does not build on this runtime handler's policy \"strict\""
  POD_EXTRA='{"annotations": {"run.haven.policy": "ci"}}' run_pod_refused beside haven-strict \
    "does not build on this runtime handler's policy \"strict\""
  POD_EXTRA="{\"annotations\": {\"run.haven.policy\": \"$CRI_POLICY_DIR/strict.yaml\"}}" run_pod_refused file haven-default \
    "a pod names an installed policy (such as strict), never a file"
  POD_EXTRA='{"annotations": {"run.haven.policy": "no-such-policy"}}' run_pod_refused missing haven-default \
    "policy \"no-such-policy\" not found"
  POD_EXTRA='{"annotations": {"run.haven.policy": "default"}}' cri_policy_pod locked "$CRI_LOCKED_HANDLER"
  assert_limits "$CPID" strict
  assert_no_shell "$CID"
}
