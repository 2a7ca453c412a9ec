# Pods through CRI, as kubelet runs them: the pod sandbox, a container in
# it, `kubectl exec` (ExecSync), its status, stop and removal, under each
# runtime handler; nothing may be left after.

# The capabilities containerd gives a container that asks for none (the
# OCI defaults: chown, dac_override, fowner, fsetid, kill, setgid, setuid,
# setpcap, net_bind_service, net_raw, sys_chroot, mknod, audit_write,
# setfcap), as /proc/PID/status prints them.
CRI_DEFAULT_CAPS=00000000a80425fb

# status_field TEXT NAME: the value of NAME: in a /proc/PID/status text.
status_field() { awk -v n="$2:" '$1 == n {print $2}' <<< "$1"; }

# cri_pod_lifecycle HANDLER: one busybox pod under runtime handler
# HANDLER, every step checked from the host as well as through CRI.
cri_pod_lifecycle() {
  local handler=$1 ip ppid cpid st info
  run_pod "busybox-$handler" "$handler"

  OUT=$(cri PodSandboxStatus "{\"pod_sandbox_id\": \"$POD_ID\", \"verbose\": true}" 2>&1) \
    || fail "PodSandboxStatus: $OUT"
  assert_eq SANDBOX_READY "$(json .status.state)" "the pod's state"
  assert_eq "$handler" "$(json .status.runtime_handler)" "the pod's runtime handler"
  ip=$(json .status.network.ip)
  [[ $ip == "${CNI_GATEWAY%.*}".* ]] && [ "$ip" != "$CNI_GATEWAY" ] || fail "pod IP '$ip' is not one of CNI's $CNI_SUBNET"
  ppid=$(json '.info.info | fromjson | .pid')
  [ "${ppid:-0}" -gt 1 ] 2> /dev/null || fail "no pid for the pod's sandbox container in: $(json .info.info | head -c 300)"
  # The pause container was made by the handler's runtime, not only
  # recorded as such.
  assert_eq "$handler" "$(runtime_of "$POD_ID")" "the runtime of the pod's sandbox container"

  create_container box sh -c 'echo started; trap "exit 3" TERM; while :; do sleep 1; done'
  assert_eq CONTAINER_CREATED "$(container_state "$CID")" "the container's state after CreateContainer"
  start_container "$CID"
  wait_for 20 container_is "$CID" CONTAINER_RUNNING || fail "the container is $(container_state "$CID"), not running"
  assert_eq "$handler" "$(runtime_of "$CID")" "the runtime of the container"
  if [ "$handler" = haven ]; then
    st=$(haven_state "$CID" 2>&1) || fail "haven-runc state $CID: $st"
    assert_eq running "$(jq -r .status <<< "$st")" "haven-runc's state of the container"
  fi

  OUT=$(cri ContainerStatus "{\"container_id\": \"$CID\", \"verbose\": true}" 2>&1) || fail "ContainerStatus: $OUT"
  assert_eq CONTAINER_RUNNING "$(json .status.state)" "ContainerStatus state"
  [ "$(json .status.started_at)" -gt 0 ] || fail "no start time in ContainerStatus: $(json .status)"
  assert_eq "$IMAGE" "$(json .status.image.image)" "the container's image"
  info=$(json .info.info)
  cpid=$(jq -r .pid <<< "$info")
  [ "${cpid:-0}" -gt 1 ] 2> /dev/null || fail "no pid in ContainerStatus' info: $(head -c 300 <<< "$info")"
  assert_eq "$POD_ID" "$(jq -r .sandboxID <<< "$info")" "the container's pod"

  # From the host: the container is in the pod's network namespace (CNI's,
  # neither the host's nor containerd's), in a pid namespace of its own,
  # and in a cgroup below the pod's cgroup parent.
  assert_eq "$(readlink "/proc/$ppid/ns/net")" "$(readlink "/proc/$cpid/ns/net")" "the container's network namespace (the pod's)"
  [ "$(readlink "/proc/$cpid/ns/net")" != "$(readlink /proc/self/ns/net)" ] || fail "the container is in the host's network namespace"
  [ "$(readlink "/proc/$cpid/ns/net")" != "$(readlink "/proc/$(cat "$NS_PID_FILE")/ns/net")" ] \
    || fail "the container is in containerd's network namespace"
  [ "$(readlink "/proc/$cpid/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] || fail "the container is in the host's pid namespace"
  assert_contains "$(cat "/proc/$cpid/cgroup")" "$POD_CGROUP/$CID" "the container's cgroups"

  # kubectl exec: ExecSync runs in the container, its output and status
  # come back.
  OUT=$(cri_exec "$CID" id 2>&1) || fail "ExecSync id: status $?: $OUT"
  assert_contains "$OUT" "uid=0(root) gid=0(root)" "ExecSync id"
  OUT=$(cri_exec "$CID" cat /proc/self/status 2>&1) || fail "ExecSync cat /proc/self/status: status $?: $OUT"
  assert_eq "$CRI_DEFAULT_CAPS" "$(status_field "$OUT" CapEff)" "the exec'd process's effective capabilities"
  assert_eq "$CRI_DEFAULT_CAPS" "$(status_field "$OUT" CapBnd)" "the exec'd process's bounding set"
  assert_eq 0 "$(status_field "$OUT" NoNewPrivs)" "NoNewPrivs of the exec'd process (the pod asks for none)"
  # The exec'd process is in the container's pid namespace: its pid there
  # is small, the container's init is 1.
  [ "$(status_field "$OUT" Pid)" -lt 100 ] || fail "the exec'd process has pid $(status_field "$OUT" Pid): not the container's pid namespace"
  OUT=$(cri_exec "$CID" ip -4 -o addr show eth0 2>&1) || fail "ExecSync ip addr: $OUT"
  assert_contains "$OUT" " $ip/" "the pod's address, seen in the container"
  local out err rc
  out=$(cri_exec "$CID" sh -c 'echo out; echo err >&2; exit 7' 2> exec.err)
  rc=$?
  err=$(cat exec.err)
  assert_eq 7 "$rc" "ExecSync's exit status"
  assert_eq out "$out" "ExecSync's stdout"
  assert_eq err "$err" "ExecSync's stderr"

  # The container's output reached its CRI log (the shim's pipes).
  wait_for 10 grep -q ' stdout F started$' "$POD_LOGS/box.log" \
    || fail "no 'started' in the container's log: $(head -c 300 "$POD_LOGS/box.log" 2>&1)"

  # StopContainer: SIGTERM through the runtime, the container's own exit
  # status back.
  OUT=$(cri StopContainer "{\"container_id\": \"$CID\", \"timeout\": 20}" 2>&1) || fail "StopContainer: $OUT"
  OUT=$(cri ContainerStatus "{\"container_id\": \"$CID\"}" 2>&1) || fail "ContainerStatus after stop: $OUT"
  assert_eq CONTAINER_EXITED "$(json .status.state)" "the state after StopContainer"
  assert_eq 3 "$(json .status.exit_code)" "the exit status after StopContainer (its TERM trap's)"
  [ -e "/proc/$cpid" ] && fail "the container's init $cpid still runs after StopContainer"
  OUT=$(cri RemoveContainer "{\"container_id\": \"$CID\"}" 2>&1) || fail "RemoveContainer: $OUT"
  assert_eq none "$(runtime_of "$CID")" "the runtime's state of the removed container"

  pod_remove "$POD_ID" || fail "StopPodSandbox/RemovePodSandbox $POD_ID"
  [ -e "/proc/$ppid" ] && fail "the pod's sandbox process $ppid still runs after RemovePodSandbox"
  assert_pod_gone "$POD_ID" "$POD_CGROUP" "$CID"
}

test_cri_pod_busybox_runc() { cri_pod_lifecycle runc; }
test_cri_pod_busybox_haven() { cri_pod_lifecycle haven; }
