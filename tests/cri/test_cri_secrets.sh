# Kubernetes' service-account token (policy/k8s_token.h): kubelet binds
# the pod's token from a host directory at
# /var/run/secrets/kubernetes.io/serviceaccount in every container.
# Under a policy handler (default.yaml: kubernetes.service_account_token:
# false) the container sees an empty read-only directory there, in
# either spelling (/run/secrets/...: most images link /var/run to /run),
# neither its own process nor ExecSync (kubectl exec) can read the token;
# under the plain haven handler (no policy) both can, as under runc.

SA_DIR=/var/run/secrets/kubernetes.io/serviceaccount
SA_DIR_RUN=/run/secrets/kubernetes.io/serviceaccount

# token_pod HANDLER: a pod under HANDLER whose container gets two token
# volumes as kubelet binds one (a host directory holding token, ca.crt
# and namespace, read-only), at SA_DIR and at SA_DIR_RUN, and prints
# what it reads of both to its log.  Sets CID, CPID, TOKEN and TOKEN_RUN
# (the fake tokens).
token_pod() {
  local handler=$1 d info
  for d in var run; do
    mkdir -p "$WORK/sa-$handler-$d"
    echo "hvt-fake-token-$d-$RANDOM$RANDOM" > "$WORK/sa-$handler-$d/token"
    echo hvt > "$WORK/sa-$handler-$d/namespace"
    echo "not a certificate" > "$WORK/sa-$handler-$d/ca.crt"
  done
  TOKEN=$(cat "$WORK/sa-$handler-var/token")
  TOKEN_RUN=$(cat "$WORK/sa-$handler-run/token")
  run_pod "token-$handler" "$handler"
  local CTR_EXTRA
  CTR_EXTRA=$(jq -nc --arg a "$WORK/sa-$handler-var" --arg b "$WORK/sa-$handler-run" --arg da "$SA_DIR" \
    --arg db "$SA_DIR_RUN" '{mounts: [{container_path: $da, host_path: $a, readonly: true},
                                      {container_path: $db, host_path: $b, readonly: true}]}')
  create_container box sh -c "echo init-var: \$(cat $SA_DIR/token 2>&1); echo init-run: \$(cat $SA_DIR_RUN/token 2>&1);
    echo init-done; trap 'exit 0' TERM; while :; do sleep 1; done"
  start_container "$CID"
  wait_for 20 container_is "$CID" CONTAINER_RUNNING || fail "the container is $(container_state "$CID"), not running"
  wait_for 20 grep -q 'init-done$' "$POD_LOGS/box.log" \
    || fail "the container did not read its token: $(head -c 500 "$POD_LOGS/box.log" 2>&1)"
  OUT=$(cri ContainerStatus "{\"container_id\": \"$CID\", \"verbose\": true}" 2>&1) || fail "ContainerStatus: $OUT"
  info=$(json .info.info)
  CPID=$(jq -r .pid <<< "$info")
  [ "${CPID:-0}" -gt 1 ] 2> /dev/null || fail "no pid in ContainerStatus' info: $(head -c 300 <<< "$info")"
}

# mount_line PID DIR: the container's mount at DIR (mountinfo, from the
# host): "TYPE OPTIONS", nothing if none.
mount_line() {
  awk -v d="$2" '$5 == d { for (i = 7; $i != "-"; i++) ; print $(i + 1), $6 }' "/proc/$1/mountinfo" | tail -1
}

test_cri_token_hidden_under_policy() {
  token_pod haven-default
  local log
  log=$(cat "$POD_LOGS/box.log")
  # The container's own process: neither spelling has a token.
  [[ $log == *"$TOKEN"* || $log == *"$TOKEN_RUN"* ]] && fail "the container read a token: $log"
  assert_contains "$log" "init-var: cat: can't open '$SA_DIR/token': No such file or directory" "the container's read of $SA_DIR"
  assert_contains "$log" "init-run: cat: can't open '$SA_DIR_RUN/token': No such file or directory" \
    "the container's read of $SA_DIR_RUN"
  # kubectl exec: the same.
  local dir
  for dir in "$SA_DIR" "$SA_DIR_RUN"; do
    OUT=$(cri_exec "$CID" cat "$dir/token" 2>&1) && fail "ExecSync read $dir/token: $OUT"
    [[ $OUT == *"$TOKEN"* || $OUT == *"$TOKEN_RUN"* ]] && fail "ExecSync's error shows a token: $OUT"
    # An empty directory, not one to put a token of its own in.
    OUT=$(cri_exec "$CID" ls -A "$dir" 2>&1) || fail "ExecSync ls -A $dir: $OUT"
    assert_eq "" "$OUT" "what ExecSync lists in $dir"
    OUT=$(cri_exec "$CID" sh -c "echo x > $dir/token" 2>&1) && fail "ExecSync wrote $dir/token"
    assert_contains "$OUT" "Read-only file system" "ExecSync writing $dir/token"
    # From the host: the container's mount there is an empty tmpfs, read-only.
    OUT=$(mount_line "$CPID" "$dir")
    [[ $OUT == "tmpfs ro,"* ]] || fail "the container's mount at $dir is '$OUT', not a read-only tmpfs"
  done
  # The pod's containers still run as ever: the token was the only change.
  OUT=$(cri_exec "$CID" cat /etc/passwd 2>&1) || fail "ExecSync cat /etc/passwd: $OUT"
  assert_contains "$OUT" "root:x:0:0"
}

# The plain haven handler has no policy: kubelet's mounts are the
# container's, as under runc.
test_cri_token_visible_without_policy() {
  token_pod haven
  local log
  log=$(cat "$POD_LOGS/box.log")
  assert_contains "$log" "init-var: $TOKEN" "the container's read of $SA_DIR"
  assert_contains "$log" "init-run: $TOKEN_RUN" "the container's read of $SA_DIR_RUN"
  OUT=$(cri_exec "$CID" cat "$SA_DIR/token" 2>&1) || fail "ExecSync cat $SA_DIR/token: $OUT"
  assert_eq "$TOKEN" "$OUT" "the token through ExecSync"
  OUT=$(cri_exec "$CID" cat "$SA_DIR_RUN/token" 2>&1) || fail "ExecSync cat $SA_DIR_RUN/token: $OUT"
  assert_eq "$TOKEN_RUN" "$OUT" "the token through ExecSync"
  OUT=$(mount_line "$CPID" "$SA_DIR")
  [[ $OUT != tmpfs* ]] || fail "the container's mount at $SA_DIR is a tmpfs without a policy: $OUT"
}
