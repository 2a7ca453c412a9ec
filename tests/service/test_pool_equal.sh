# The warm pool hands out what a fresh create would make: per shipped
# policy, a sandbox made with pool=false and one claimed from the pool run
# the same probe (pool_probe.py: credentials, capabilities, seccomp,
# limits, mounts, environment, cgroup limits, network, what is hidden or
# refused, the keeper) as their first command, and what they saw must be
# the same once the ids are normalised; and so must their cgroups' limits,
# read from the host.  Also: a pooled sandbox is handed
# out once, nothing ran in it before its claim, nothing of an earlier
# claimant is in it, and a changed policy file drops its pool.

# The pids of sandbox ID seen from the host: its init (the keeper, from
# the container's state) and every process in its pid namespace (a policy
# without resource limits has no cgroup of its own to look in).
pool_pids_of() {
  local init ns p
  init=$(jq -r .pid "/run/haven/$1/state.json" 2> /dev/null)
  [ -n "$init" ] && [ "$init" != null ] || fail "no init pid in /run/haven/$1/state.json"
  ns=$(readlink "/proc/$init/ns/pid") || fail "$1's init $init is gone"
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/pid" 2> /dev/null)" = "$ns" ] && echo "${p#/proc/}"
  done
}

# pool_cgroup_limits ID: the limits of sandbox ID's cgroups, read from
# the host (inside, the cgroup namespace and the host's sysfs show the
# root's), the id normalised; "none" for a policy that has no cgroup.
pool_cgroup_limits() {
  local init line ctrl path f dir
  init=$(jq -r .pid "/run/haven/$1/state.json")
  while IFS= read -r line; do
    ctrl=$(cut -d: -f2 <<< "$line")
    path=$(cut -d: -f3- <<< "$line")
    echo "$ctrl:${path//$1/<ID>}"
    case $ctrl in
      memory) dir=/sys/fs/cgroup/memory; f="memory.limit_in_bytes memory.memsw.limit_in_bytes memory.soft_limit_in_bytes" ;;
      pids) dir=/sys/fs/cgroup/pids; f=pids.max ;;
      cpu) dir=/sys/fs/cgroup/cpu; f="cpu.cfs_quota_us cpu.cfs_period_us cpu.shares" ;;
      cpuset) dir=/sys/fs/cgroup/cpuset; f="cpuset.cpus cpuset.mems" ;;
      "") dir=/sys/fs/cgroup/unified; [ -d "$dir" ] || dir=/sys/fs/cgroup
          f="memory.max memory.swap.max memory.high pids.max cpu.max cpu.weight" ;;
      *) continue ;;
    esac
    for f in $f; do
      [ -e "$dir$path/$f" ] && echo "  $f $(cat "$dir$path/$f")"
    done
  done < "/proc/$init/cgroup"
}

# pool_wait_made POLICY N: until the service has logged N sandboxes of
# POLICY made for the pool (it runs with --verbose), at most 60 s.
pool_wait_made() {
  local i n
  for i in $(seq 600); do
    n=$(grep -cF "($1) made for the pool" serve.log)
    [ "$n" -ge "$2" ] && return 0
    grep -qF "($1) not made" serve.log && fail "the pool of $1: $(grep -F "($1) not made" serve.log | tail -1)"
    sleep 0.1
  done
  fail "the pool of $1 has $n of $2 made after 60 s: $(tail -3 serve.log)"
}

# pool_probe ID WS FILE: the probe as the sandbox's first command, its
# output in FILE.  Its code is an argument (python3 -c): the files API
# writes only where the sandbox itself may, and strict's workspace is
# read-only.
pool_probe() {
  run_in "$1" "$(jq -cn --rawfile code "$here/pool_probe.py" --arg id "$1" --arg ws "$2" \
    '{argv: ["python3", "-c", $code, $id, $ws]}')"
  assert_eq 0 "$EXIT" "the probe in $1: $BODY"
  printf '%s\n' "$OUT" > "$3"
}

# check_pool_equal POLICY: a fresh and a pooled sandbox of POLICY see the
# same.
check_pool_equal() {
  local pol=$1
  command -v python3 > /dev/null || skip "python3 (the probe's interpreter) is not installed"
  start_service --pool-size 1 --verbose
  # A policy this host cannot make (a program it lacks) is skipped, saying why.
  api POST /v1/sandboxes "{\"policy\":\"$pol\",\"pool\":false}"
  [ "$CODE" = 201 ] || skip "$pol cannot be made here: $BODY"
  local fresh=$(jq -r .id <<< "$BODY") fresh_ws=$(jq -r .workspace <<< "$BODY")
  # The first create with pool=true is made fresh and starts the pool.
  create "$pol" '"pool":true'
  pool_wait_made "$pol" 1
  create "$pol" '"pool":true'
  assert_eq true "$(jq -r .pooled <<< "$BODY")" "a claim once the pool of $pol is full"
  local pooled=$ID pooled_ws=$WS d
  # Nothing ran in it: the keeper is its one process.
  local procs
  procs=$(pool_pids_of "$pooled")
  assert_eq 1 "$(wc -w <<< "$procs")" "processes of the claimed $pooled before its first run: $procs"
  assert_eq "$(jq -r .pid "/run/haven/$pooled/state.json")" "$procs" "its one process is its init, the keeper"
  pool_cgroup_limits "$fresh" > fresh-cgroup.txt
  pool_cgroup_limits "$pooled" > pooled-cgroup.txt
  d=$(diff -u fresh-cgroup.txt pooled-cgroup.txt) || fail "$pol: the pooled sandbox's cgroup limits differ:
$d"
  pool_probe "$fresh" "$fresh_ws" fresh.txt
  pool_probe "$pooled" "$pooled_ws" pooled.txt
  grep -q "^== mountinfo" fresh.txt || fail "the probe printed no mount table: $(head -5 fresh.txt)"
  d=$(diff -u fresh.txt pooled.txt) || fail "$pol: the pooled sandbox sees what the fresh one does not:
$d"
  # The keeper is a copy of the service: its memory holds the service's
  # environment (the caller's secrets when the SDK started it), which no
  # command may read.
  ! grep -q "^read /proc/1/\(environ\|mem\): ok" fresh.txt || fail "$pol: a command reads the keeper's memory: $(grep '^read /proc/1/' fresh.txt)"
  # A fresh create's probe is its first command: pid 2, beside the keeper.
  assert_eq "2" "$(sed -n '/^== my pid/{n;p}' pooled.txt)" "the probe's pid in the pooled sandbox"
}

# One test per shipped policy (policies/*.yaml), named after it.
for _pol_file in "$here"/../../policies/*.yaml; do
  _pol=$(basename "$_pol_file" .yaml)
  eval "test_pool_equal_${_pol//-/_}() { check_pool_equal '$_pol'; }"
done
unset _pol _pol_file

test_pool_claims_once_and_pristine() {
  start_service --pool-size 4 --verbose
  create offline '"pool":true'
  pool_wait_made offline 4
  # Claims at once: each gets its own sandbox.
  local i ids=() npooled=0 curls=()
  for i in 1 2 3 4 5 6; do
    curl -sS --unix-socket "$SOCK" -X POST -H 'Content-Type: application/json' \
      --data-binary '{"policy":"offline","pool":true}' -o "c$i" "http://haven/v1/sandboxes" &
    curls+=($!)
  done
  # Not a bare wait: the service is this shell's child too.
  wait "${curls[@]}"
  for i in 1 2 3 4 5 6; do
    ids+=("$(jq -r .id < "c$i")")
    [ "$(jq -r .pooled < "c$i")" = true ] && npooled=$((npooled + 1))
  done
  [ "$npooled" -ge 2 ] || fail "only $npooled of 6 claims at once came from a full pool of 4"
  assert_eq 6 "$(printf '%s\n' "${ids[@]}" | grep -c '^hvs-')" "six sandboxes: $(cat c*)"
  assert_eq 6 "$(printf '%s\n' "${ids[@]}" | sort -u | wc -l)" "claims at once got distinct sandboxes"
  # A claimant leaves files (through the API and from a command), then
  # goes; the next claims see none of it and run as pid 2.
  local prev=${ids[0]}
  api PUT "/v1/sandboxes/$prev/files/left-by-api" "x"
  run_in "$prev" '{"argv":["sh","-c","touch left-by-run /tmp/left-in-tmp; sleep 300 & echo $!"]}'
  assert_eq 0 "$EXIT" "the first claimant's run: $CODE $BODY"
  api DELETE "/v1/sandboxes/$prev"
  assert_eq 200 "$CODE"
  pool_wait_made offline $((4 + npooled))
  local seen=" ${ids[*]} "
  for i in 1 2 3; do
    create offline '"pool":true'
    assert_eq true "$(jq -r .pooled <<< "$BODY")" "claim $i after the refill"
    [[ "$seen" != *" $ID "* ]] || fail "$ID was handed out twice"
    seen+="$ID "
    # (/tmp is the sandbox's own tmpfs; it holds the path to the workspace.)
    run_in "$ID" '{"argv":["sh","-c","echo $$; ls -A; ls -A /tmp/left-in-tmp 2>&1 | grep -c \"No such\"; ls /proc | grep -c \"^[0-9]\""]}'
    assert_eq "2
1
4" "$OUT" "the first command of a claimed sandbox: pid 2, an empty workspace, no /tmp/left-in-tmp, four processes (keeper, sh, ls, grep)"
  done
}

test_pool_policy_file_edited() {
  start_service --pool-size 2 --verbose
  local dir
  dir=$(mktemp -d /tmp/h-poolbench-policy.XXXXXX)
  defer "rm -rf '$dir'"
  printf 'name: pool-edit\nextends: offline\nenv:\n  set:\n    POOL_EDIT: "one"\n' > "$dir/pool-edit.yaml"
  create "$dir/pool-edit.yaml" '"pool":true'
  pool_wait_made "$dir/pool-edit.yaml" 2
  create "$dir/pool-edit.yaml" '"pool":true'
  assert_eq true "$(jq -r .pooled <<< "$BODY")" "a claim of the first file's pool"
  run_in "$ID" '{"argv":["sh","-c","echo $POOL_EDIT"]}'
  assert_eq one "$OUT" "a claim made from the first file"
  # Edited in place (same inode, the size kept): mtime and ctime change.
  printf 'name: pool-edit\nextends: offline\nenv:\n  set:\n    POOL_EDIT: "two"\n' > "$dir/pool-edit.yaml"
  create "$dir/pool-edit.yaml" '"pool":true'
  local was_pooled
  was_pooled=$(jq -r .pooled <<< "$BODY")
  run_in "$ID" '{"argv":["sh","-c","echo $POOL_EDIT"]}'
  assert_eq two "$OUT" "the sandbox after the file changed follows the new file (pooled: $was_pooled)"
  assert_contains "$(cat serve.log)" "changed: its pool is dropped"
  # The pool made again comes from the new file.
  pool_wait_made "$dir/pool-edit.yaml" 4
  create "$dir/pool-edit.yaml" '"pool":true'
  assert_eq true "$(jq -r .pooled <<< "$BODY")" "a claim of the new file's pool"
  run_in "$ID" '{"argv":["sh","-c","echo $POOL_EDIT"]}'
  assert_eq two "$OUT" "a pooled sandbox after the change"
}
