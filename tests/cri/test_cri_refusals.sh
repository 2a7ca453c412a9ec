# Pods a policy cannot hold in are refused at create, with the reason in
# the CRI error (what kubelet shows as the pod's event), and nothing of
# them is left: a pod in the node's network namespace (hostNetwork), in
# its pid namespace (hostPID), a privileged container.  The same pods
# under the plain `haven` handler (no policy) run: the refusal is the
# policy's.

# refusal_pod NAME HANDLER JQ: RunPodSandbox of pod NAME whose config is
# passed through the jq filter JQ; status of the call, its output in OUT.
# A pod that starts is removed when the test ends.
refusal_pod() {
  POD_NAME=$1
  POD_ID=
  pod_config "$1"
  jq "$3" "pod-$1.json" > "pod-$1.tmp" && mv "pod-$1.tmp" "pod-$1.json"
  OUT=$(cri RunPodSandbox "$(jq -n --slurpfile c "pod-$1.json" --arg h "$2" '{config: $c[0], runtime_handler: $h}')" 2>&1)
  local rc=$?
  if [ $rc = 0 ]; then
    POD_ID=$(json .pod_sandbox_id)
    echo "$POD_ID $POD_CGROUP" >> "$WORK/pods"
    defer "pod_remove $POD_ID"
  fi
  return $rc
}

# Nothing of a refused pod: no pod in CRI, and nothing pod_leftovers
# finds (the runtime's state, CNI's namespace and address, cgroups).
refusal_nothing_left() {
  local n
  OUT=$(cri ListPodSandbox '{}' 2>&1) || fail "ListPodSandbox: $OUT"
  n=$(json '[.items[] | select(.metadata.name == "'"$1"'")] | length')
  assert_eq 0 "$n" "pods named $1 after the refusal"
  assert_pod_gone refused-none "$POD_CGROUP"
}

# The pod's config as kubelet sends it for hostNetwork: true (CRI's
# NamespaceMode NODE; a host-network pod has the node's hostname).
HOSTNET_JQ='.linux.security_context.namespace_options.network = "NODE" | del(.hostname)'

test_cri_refusals_host_network() {
  refusal_pod hostnet haven-default "$HOSTNET_JQ" && fail "a hostNetwork pod started under haven-default"
  assert_contains "$OUT" "hostNetwork" "the CRI error"
  assert_contains "$OUT" "shares the node's network namespace" "the CRI error"
  assert_contains "$OUT" "policy default" "the CRI error names the policy"
  refusal_nothing_left hostnet
  # An allowlist's handler too.
  refusal_pod hostnet2 haven-claude-code "$HOSTNET_JQ" && fail "a hostNetwork pod started under haven-claude-code"
  assert_contains "$OUT" "hostNetwork" "the CRI error (claude-code)"
  refusal_nothing_left hostnet2
  # Without a policy the same pod runs (the refusal is the policy's).
  refusal_pod hostnet3 haven "$HOSTNET_JQ" || fail "a hostNetwork pod under the plain haven handler: $OUT"
}

test_cri_refusals_host_pid() {
  refusal_pod hostpid haven-default '.linux.security_context.namespace_options.pid = "NODE"' \
    && fail "a hostPID pod started under haven-default"
  assert_contains "$OUT" "hostPID" "the CRI error"
  assert_contains "$OUT" "shares the node's pid namespace" "the CRI error"
  refusal_nothing_left hostpid
  refusal_pod hostpid2 haven '.linux.security_context.namespace_options.pid = "NODE"' \
    || fail "a hostPID pod under the plain haven handler: $OUT"
}

# A privileged container (its pod may have privileged containers; the
# sandbox itself is not privileged in containerd 1.6): CreateContainer
# only records it, StartContainer (the runtime's create) is refused.
test_cri_refusals_privileged() {
  refusal_pod privpod haven-default '.linux.security_context.privileged = true' \
    || fail "RunPodSandbox of a pod that may have privileged containers: $OUT"
  CTR_EXTRA='{"linux": {"security_context": {"privileged": true}}}' create_container priv sleep 600
  OUT=$(cri StartContainer "{\"container_id\": \"$CID\"}" 2>&1) && fail "a privileged container started under haven-default"
  assert_contains "$OUT" "privileged" "the CRI error"
  assert_contains "$OUT" "container priv of pod hvt/privpod is privileged" "the CRI error"
  [ "$(container_state "$CID")" != CONTAINER_RUNNING ] || fail "the refused container runs"
  # The pod's other containers are not: one that is not privileged runs.
  local priv=$CID
  CTR_EXTRA='' create_container plain sleep 600
  start_container "$CID"
  pod_remove "$POD_ID" || fail "StopPodSandbox/RemovePodSandbox"
  assert_pod_gone "$POD_ID" "$POD_CGROUP" "$priv" "$CID"
}
