# Load: CRI_LOAD_PODS pods (default 50) at once, most under policy
# handlers and every tenth under runc for contrast, each with a
# container; all reach running, an ExecSync in each answers (the
# policy's seccomp profile refusing ptrace in haven's, not in runc's),
# then all are stopped and removed, and nothing of any is left.  The
# calls go through `cri.js batch` (one client process per step, at most
# CRI_LOAD_JOBS calls in flight): a node start per call would cost more
# than the pods.

: "${CRI_LOAD_PODS:=50}"
: "${CRI_LOAD_JOBS:=8}"
# Pod starts on two busy CPUs: a few minutes at most.
# shellcheck disable=SC2034 # read by the harness (run_test_functions)
TEST_TIMEOUT_cri_load_50_pods=420

# The policy handlers the load's pods take in turn (every tenth pod is
# runc's): default, a policy that adds limits, one without network.
CRI_LOAD_HANDLERS=(haven-default haven-ci haven-offline haven-strict)

# load_batch STEP < CALLS: the calls through cri.js batch, their results
# in load-STEP.out; status 0 when every call succeeded.
# load_batch_failed STEP: fails the test, naming the first failed calls.
load_batch() {
  BATCH_TIMEOUT=300 cri_batch --jobs "$CRI_LOAD_JOBS" > "load-$1.out" 2> "load-$1.err"
  local rc=$?
  echo $rc > "load-$1.rc"
  return $rc
}
load_batch_failed() {
  fail "$1: cri.js batch exit status $(cat "load-$1.rc"): $(jq -c 'select(.ok | not) | [.tag, .error]' \
    "load-$1.out" 2> /dev/null | head -3 | tr '\n' ' ') $(head -c 300 "load-$1.err")"
}

# load_remove_all quiet|checked: StopPodSandbox and RemovePodSandbox of every
# pod the load started (those RunPodSandbox answered in load-run.out), in
# two batches; a failed call fails the test unless quiet (the deferred
# removal of a test that failed already: the harness removes what is
# left and says so).
load_remove_all() {
  [ -s load-run.out ] || return 0
  jq -r 'select(.ok) | .response.pod_sandbox_id' load-run.out > load-ids
  jq -Rc '{tag: ., method: "StopPodSandbox", request: {pod_sandbox_id: .}}' load-ids > load-stop
  jq -Rc '{tag: ., method: "RemovePodSandbox", request: {pod_sandbox_id: .}}' load-ids > load-remove
  rm -f load-run.out
  if [ "$1" = quiet ]; then
    BATCH_TIMEOUT=300 cri_batch --jobs "$CRI_LOAD_JOBS" < load-stop > /dev/null 2>&1
    BATCH_TIMEOUT=300 cri_batch --jobs "$CRI_LOAD_JOBS" < load-remove > /dev/null 2>&1
  else
    load_batch stop < load-stop || load_batch_failed stop
    load_batch remove < load-remove || load_batch_failed remove
  fi
}

test_cri_load_50_pods() {
  local n=$CRI_LOAD_PODS i name handler t0 left
  t0=$SECONDS
  : > load-run
  # The pods' configs, as pod_config writes them, and their RunPodSandbox
  # calls, tagged with the pod's name.
  for i in $(seq "$n"); do
    name=load-$i
    if [ $((i % 10)) = 0 ]; then
      handler=runc
    else
      handler=${CRI_LOAD_HANDLERS[$((i % ${#CRI_LOAD_HANDLERS[@]}))]}
    fi
    pod_config "$name"
    echo "$name $POD_CGROUP $handler" >> load-names
    jq -c --arg name "$name" --arg h "$handler" '{tag: $name, method: "RunPodSandbox",
      request: {config: ., runtime_handler: $h}}' "pod-$name.json" >> load-run
  done
  # Removed whatever happens to the test (in two batches: kubelet's
  # order, the containers go with their pod).
  defer "load_remove_all quiet"
  local ok=0
  load_batch run < load-run || ok=1
  # Every pod that started, recorded for the harness's check after the
  # test (the removal above reads load-run.out), whether or not all did.
  jq -r 'select(.ok) | "\(.tag) \(.response.pod_sandbox_id)"' load-run.out | while read -r name id; do
    echo "$id $(awk -v n="$name" '$1 == n {print $2}' load-names)" >> "$WORK/pods"
  done
  [ $ok = 0 ] || load_batch_failed run
  assert_eq "$n" "$(jq -r 'select(.ok) | .response.pod_sandbox_id' load-run.out | grep -c .)" "pods started"
  echo "# $n pods running after $((SECONDS - t0)) s"

  # A container in each, a program that is no shell (strict runs it too).
  jq -r '"\(.tag) \(.response.pod_sandbox_id)"' load-run.out | while read -r name id; do
    jq -c --arg id "$id" --arg name "$name" --arg image "$IMAGE" '{tag: $name, method: "CreateContainer",
      request: {pod_sandbox_id: $id, sandbox_config: .,
                config: {metadata: {name: "box", attempt: 0}, image: {image: $image},
                         command: ["/usr/bin/syscall_probe", "sleep"], log_path: "box.log",
                         labels: {"io.kubernetes.container.name": "box"}}}}' "pod-$name.json"
  done > load-create
  load_batch create < load-create || load_batch_failed create
  jq -r '.response.container_id' load-create.out >> "$WORK/containers"
  jq -c '{tag: .tag, method: "StartContainer", request: {container_id: .response.container_id}}' load-create.out \
    > load-start
  load_batch start < load-start || load_batch_failed start
  # All running, seen by ContainerStatus (and its pid for the checks below).
  jq -c '{tag: .tag, method: "ContainerStatus", request: {container_id: .response.container_id, verbose: true}}' \
    load-create.out > load-status
  load_batch status < load-status || load_batch_failed status
  assert_eq "$n" "$(jq -r 'select(.response.status.state == "CONTAINER_RUNNING") | .tag' load-status.out | wc -l)" \
    "containers running ($(jq -r '.response.status.state' load-status.out | sort | uniq -c | tr '\n' ' '))"
  echo "# $n containers running after $((SECONDS - t0)) s"

  # Each container was made by its handler's runtime, and its pod is in
  # its own network namespace, not shared with another pod.
  local cid pid want got
  jq -r '"\(.tag) \(.response.status.id) \(.response.info.info | fromjson | .pid)"' load-status.out > load-pids
  while read -r name cid pid; do
    handler=$(awk -v n="$name" '$1 == n {print $3}' load-names)
    [ "$handler" = runc ] && want=runc || want=haven
    got=$(runtime_of "$cid")
    [ "$got" = "$want" ] || fail "$name (handler $handler): its container was made by '$got'"
    readlink "/proc/$pid/ns/net" >> load-netns
  done < load-pids
  assert_eq "$n" "$(sort -u load-netns | wc -l)" "network namespaces of the $n pods"

  # kubectl exec in each: the policy's seccomp profile refuses ptrace in
  # every haven pod, runc's unconfined pods may.
  jq -c '{tag: .tag, method: "ExecSync", request: {container_id: .response.container_id,
    cmd: ["/usr/bin/syscall_probe", "ptrace"], timeout: 60}}' load-create.out > load-exec
  load_batch exec < load-exec || load_batch_failed exec
  while read -r name handler; do
    got=$(jq -r --arg n "$name" 'select(.tag == $n) | "\(.response.exit_code) \(.response.stdout)"' load-exec.out)
    [ "$handler" = runc ] && want="0 ptrace: ok" || want="0 ptrace: Operation not permitted"
    [ "$got" = "$want" ] || fail "ExecSync in $name (handler $handler): '$got', expected '$want'"
  done < <(awk '{print $1, $3}' load-names)
  echo "# $n ExecSync answered after $((SECONDS - t0)) s"

  load_remove_all checked
  echo "# $n pods removed after $((SECONDS - t0)) s"
  # shellcheck disable=SC2046 # container ids, one word each
  left=$(pods_leftovers "$WORK/pods" $(cat "$WORK/containers")) \
    || fail "left after removing the $n pods: $(head -20 <<< "$left" | tr '\n' ';')"
}
