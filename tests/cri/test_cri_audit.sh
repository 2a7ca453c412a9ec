# The audit trail of a pod under a policy handler: each container's
# monitor writes /var/log/haven/containers/<container id>.jsonl (one
# JSON object a line, what a node's log collector tails), every record
# naming the pod ("pod": namespace, name, uid, and the container's name
# but for the sandbox's), and `haven audit --container NAMESPACE/POD[/CONTAINER]`
# finds them.  The trails outlive the pod; run.sh's final_cleanup removes
# those of the ids the tests made.

test_cri_audit_names_the_pod() {
  run_pod audited haven-default
  # init makes a call the default policy's seccomp profile denies, as the
  # engine tests' audit checks do.
  create_container box sh -c 'chroot / true 2> /tmp/init.err; echo $? > /tmp/init.rc; trap "exit 0" TERM;
    while :; do sleep 1; done'
  start_container "$CID"
  wait_for 20 container_is "$CID" CONTAINER_RUNNING || fail "the container is $(container_state "$CID"), not running"
  wait_for 20 cri_exec "$CID" test -s /tmp/init.rc || fail "init did not run its denied call"
  assert_eq "1 chroot: can't change root directory to '/': Operation not permitted" \
    "$(cri_exec "$CID" cat /tmp/init.rc) $(cri_exec "$CID" cat /tmp/init.err)" "init's chroot"
  # kubectl exec's denied call: recorded too, as the exec's.
  OUT=$(cri_exec "$CID" sh -c 'unshare -m true 2>&1; echo rc=$?' 2>&1)
  assert_contains "$OUT" "Operation not permitted" "ExecSync's unshare"

  local trail=/var/log/haven/containers/$CID.jsonl sandbox=/var/log/haven/containers/$POD_ID.jsonl
  wait_for 10 jq -se 'map(select(.event == "denied" and .syscall == "unshare")) | length == 1' "$trail" \
    || fail "no unshare record in the container's trail: $(cat "$trail" 2>&1)"
  # Every record of the container's trail names the pod and the container.
  jq -se --arg id "$CID" --arg pod "$POD_NAME" --arg uid "$POD_UID" '
    length >= 3
    and all(.container == $id and .pod == {namespace: "hvt", name: $pod, uid: $uid, container: "box"})
    and (map(select(.event == "denied" and .syscall == "chroot" and .process == "init")) | length == 1)
    and (map(select(.event == "denied" and .syscall == "unshare" and .process == "exec")) | length == 1)' \
    "$trail" > /dev/null || fail "the container's trail: $(cat "$trail" 2>&1)"
  # The sandbox's trail names the pod, no container.
  jq -se --arg id "$POD_ID" --arg pod "$POD_NAME" --arg uid "$POD_UID" '
    length >= 1 and .[0].event == "start"
    and all(.container == $id and .pod == {namespace: "hvt", name: $pod, uid: $uid})' \
    "$sandbox" > /dev/null || fail "the sandbox's trail: $(cat "$sandbox" 2>&1)"

  # haven audit by pod and container: the container's records and only them.
  OUT=$(haven audit --container "hvt/$POD_NAME/box" --json 2> audit.err) || fail "haven audit: $(cat audit.err)"
  jq -se --arg id "$CID" 'length >= 3 and all(.container == $id)
    and (map(select(.event == "denied" and .syscall == "chroot")) | length == 1)' <<< "$OUT" > /dev/null \
    || fail "haven audit --container hvt/$POD_NAME/box --json: $OUT"
  # ... for people: the pod after the container's short id.
  OUT=$(haven audit --container "hvt/$POD_NAME/box" --event chroot 2>&1) || fail "haven audit: $OUT"
  assert_contains "$OUT" "${CID:0:12} hvt/$POD_NAME/box (default)  denied  chroot" "haven audit's line"
  # By pod: the sandbox's records too.
  OUT=$(haven audit --container "hvt/$POD_NAME" --json 2> audit.err) || fail "haven audit: $(cat audit.err)"
  jq -se --arg c "$CID" --arg s "$POD_ID" 'any(.container == $c) and any(.container == $s)
    and all(.container == $c or .container == $s)' <<< "$OUT" > /dev/null \
    || fail "haven audit --container hvt/$POD_NAME --json: $OUT"
  # Another container name, or a prefix of the pod's name: nothing.
  OUT=$(haven audit --container "hvt/$POD_NAME/other" --container "hvt/${POD_NAME%?}" --json 2> /dev/null)
  assert_eq "" "$OUT" "haven audit for another container and a prefix of the pod's name"
  # The id prefix, as before.
  OUT=$(haven audit --container "${CID:0:12}" --json 2> /dev/null)
  jq -se --arg id "$CID" 'length >= 3 and all(.container == $id)' <<< "$OUT" > /dev/null \
    || fail "haven audit --container ${CID:0:12}: $OUT"
}
