# Faults: the runtime SIGKILLed at every named fault point
# (base/fault_point.h, HAVEN_TEST_KILL_AT) of create, start, exec,
# delete, run and `haven run`'s session; then `delete --force` (or the
# next `haven run`) must leave nothing that tests/lib/leaks.sh finds:
# mounts, cgroups, netns, nft tables, processes, state or bundle dirs.
#
# FAULT_POINTS (names separated by spaces): sweep only these points;
# default every point the source names.  FAULT_POINTS=subset: the few
# below, one or two per kind of resource (for the slow VM).
FAULTS_SUBSET="create.monitor-started create.init-cloned create.cgroup-joined create.before-save create.id-maps-written create.hooks-run
  create.egress-table create.pasta-started create.resolver-started start.init-released delete.killed
  delete.cgroup-removed exec.forked run.started session.bundle-made session.config-written"

FAULTS_TREE=$(cd "$(dirname "$RUNTIME")" && pwd)
FAULTS_LEAKS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../lib" && pwd)/leaks.sh
FAULTS_HAVEN=$(dirname "$RUNTIME")/haven
source "$FAULTS_LEAKS"

# fault_points REGEX: the points the runtime's source names, matching REGEX,
# limited to $FAULT_POINTS when set.
fault_points() {
  local p want=${FAULT_POINTS:-}
  [ "$want" = subset ] && want=$(echo $FAULTS_SUBSET)
  for p in $(grep -ho 'hv_fault_point ("[^"]*")' "$FAULTS_TREE"/runtime/*.c "$FAULTS_TREE"/runtime/*/*.c "$FAULTS_TREE"/session/*.c \
               | sed 's/.*("\(.*\)")/\1/' | grep -E -- "$1" | sort -u); do
    [ -z "$want" ] || [[ " $want " == *" $p "* ]] && echo "$p"
  done
}

need_fault_points() {
  skip_on_runc "haven-runc's fault points"
  [ -d "$FAULTS_TREE/runtime" ] || skip "no source tree beside $RUNTIME to list the fault points"
}

# fault_sweep REGEX [grep -v args]: the points to sweep, or skip when
# FAULT_POINTS selects none of them.
fault_sweep() {
  local regex=$1
  shift
  if [ $# -gt 0 ]; then
    FSWEEP=$(fault_points "$regex" | grep -v "$@")
  else
    FSWEEP=$(fault_points "$regex")
  fi
  [ -n "$FSWEEP" ] || skip "FAULT_POINTS selects none of these points"
}

# killed_at POINT CMD...: run CMD with the hook; it must die of SIGKILL
# there (137): a point the test never reaches would prove nothing.
killed_at() {
  local point=$1 rc
  shift
  (export HAVEN_TEST_KILL_AT=$point; "$@") > /dev/null 2> "$PWD/killed.err" < /dev/null
  rc=$?
  [ "$rc" = 137 ] || fail "$point: not killed there (status $rc): $(tail -3 "$PWD/killed.err")"
}

# no_leaks WHAT LEAKS-ARGS...: nothing left, allowing 5 s for processes
# that end by themselves (init on its closed sync socket, the monitor on
# its closed control socket, the guard's kill).
no_leaks() {
  local what=$1 out end=$((SECONDS + 5))
  shift
  while :; do
    out=$(leaks_list "$@") && return 0
    [ "$SECONDS" -lt "$end" ] || break
    sleep 0.1
  done
  fail "$what left: $out"
}

# A monitored bundle (the audit monitor, a seccomp-notify listener): what
# a killed create can leave is a monitor process too.
faults_bundle() {
  cfg "$B" '.annotations["run.haven.audit"] = $t
            | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["chroot"], action: "SCMP_ACT_NOTIFY"}]}' \
    --arg t "$WORK/faults-trail-$$.jsonl"
  args "$B" "$@"
}

# A fresh test cgroup per kill: every process a killed runtime forked
# stays in it (unless moved to the container's cgroup, which is checked
# by name), however it was reparented.
faults_cg() {
  [ -n "${FCG:-}" ] && leaks_cgroup_remove "$FCG"
  FCG=$(leaks_cgroup_new "$CTR_PREFIX-$RANDOM") || fail "cannot make a test cgroup"
  defer "leaks_cgroup_remove $FCG"
}
in_cg() { (echo "$BASHPID" > "$FCG/cgroup.procs" && "$@"); }

test_faults_create() {
  need_fault_points
  faults_bundle sleep 60
  local p id
  fault_sweep '^create\.' -e egress -e pasta -e resolver -e id-maps -e hooks -e gateway
  for p in $FSWEEP; do
    id=$(new_id "f$RANDOM")
    faults_cg
    killed_at "$p" in_cg rt create --bundle "$B" "$id"
    rt delete --force "$id" > /dev/null 2>&1
    no_leaks "create killed at $p, then delete --force" --id "$id" --root "$STATE_ROOT" --cgroup "$FCG"
  done
}

# The points only a user namespace (id maps) or hooks reach: a bundle
# with both, and the rest of create again through it.  No audit monitor:
# init, a host uid of the mapping, cannot reach monitor.sock in the
# state directory (0700), so create refuses that combination.
test_faults_create_userns_hooks() {
  need_fault_points
  fault_sweep '^create\.(id-maps|hooks|init-cloned|cgroup-joined|init-ready|before-save)'
  chown -R 100000:100000 "$B/rootfs"
  args "$B" sleep 60
  cfg "$B" '.linux.namespaces += [{type: "user"}] | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
            | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
            | .mounts |= map(select(.type != "sysfs" and .type != "cgroup"))
            | .hooks = {prestart: [{path: "/bin/true"}], createRuntime: [{path: "/bin/true"}]}'
  local p id
  for p in $FSWEEP; do
    id=$(new_id "f$RANDOM")
    faults_cg
    killed_at "$p" in_cg rt create --bundle "$B" "$id"
    rt delete --force "$id" > /dev/null 2>&1
    no_leaks "create (user namespace, hooks) killed at $p, then delete --force" --id "$id" --root "$STATE_ROOT" \
      --cgroup "$FCG"
  done
}

# The model API gateway's point, and create's around it, with a bundle
# that has run.haven.gateway and a key file: the monitor then holds the
# listener and the key, and must end with create.
test_faults_create_gateway() {
  need_fault_points
  fault_sweep '^create\.(gateway|monitor-started|init-cloned|init-ready|state-saved)'
  faults_bundle sleep 60
  printf 'sk-ant-fault-point\n' > key
  chmod 600 key
  cfg "$B" '.annotations["run.haven.gateway"] = ({apis: [{provider: "anthropic", port: 8961, auth: "x-api-key",
                                                          key_file: $k}]} | tostring)' --arg k "$PWD/key"
  local p id
  for p in $FSWEEP; do
    id=$(new_id "f$RANDOM")
    faults_cg
    killed_at "$p" in_cg rt create --bundle "$B" "$id"
    rt delete --force "$id" > /dev/null 2>&1
    no_leaks "create (gateway) killed at $p, then delete --force" --id "$id" --root "$STATE_ROOT" --cgroup "$FCG"
  done
}

test_faults_start_delete() {
  need_fault_points
  faults_bundle sleep 60
  local p id
  fault_sweep '^(start|delete)\.'
  for p in $FSWEEP; do
    id=$(new_id "f$RANDOM")
    faults_cg
    in_cg rt create --bundle "$B" "$id" || fail "create"
    if [[ $p == start.* ]]; then
      killed_at "$p" in_cg rt start "$id"
    else
      rt start "$id" || fail "start"
      killed_at "$p" in_cg rt delete --force "$id"
    fi
    rt delete --force "$id" > /dev/null 2>&1 || fail "$p: delete --force after the kill: $(rt delete --force "$id" 2>&1)"
    no_leaks "killed at $p, then delete --force" --id "$id" --root "$STATE_ROOT" --cgroup "$FCG"
  done
}

test_faults_exec_run() {
  need_fault_points
  faults_bundle sleep 60
  local p id
  fault_sweep '^(exec|run)\.'
  for p in $(echo "$FSWEEP" | grep '^exec\.'); do
    id=$(new_id "f$RANDOM")
    faults_cg
    in_cg rt run -d --bundle "$B" "$id" || fail "run -d"
    killed_at "$p" in_cg rt exec "$id" true
    rt delete --force "$id" || fail "$p: delete --force after the kill"
    no_leaks "exec killed at $p, then delete --force" --id "$id" --root "$STATE_ROOT" --cgroup "$FCG"
  done
  args "$B" true
  for p in $(echo "$FSWEEP" | grep '^run\.'); do
    id=$(new_id "f$RANDOM")
    faults_cg
    killed_at "$p" in_cg rt run --bundle "$B" "$id"
    rt delete --force "$id" > /dev/null 2>&1
    no_leaks "run killed at $p, then delete --force" --id "$id" --root "$STATE_ROOT" --cgroup "$FCG"
  done
}

# faults_haven_run POINT [haven run args...]: haven run (in $P, in the test
# cgroup, in $FNETNS when set) killed at POINT; sets FPID to its pid.
faults_haven_run() {
  local point=$1 rc pidfile
  shift
  # Writable by the unprivileged user of the rootless sweep.
  pidfile=$(mktemp /tmp/hvf-pid.XXXXXX) && chmod 666 "$pidfile" || fail "mktemp"
  (cd "$P" && in_cg ${FNETNS:+ip netns exec "$FNETNS"} ${FAULTS_HAVEN_AS:-} timeout -k 2 60 \
     bash -c 'echo $$ > "$0"; exec "$@"' "$pidfile" env HAVEN_TEST_KILL_AT="$point" "${FAULTS_HAVEN_BIN:-$FAULTS_HAVEN}" \
     run "$@") > /dev/null 2> "$PWD/killed.err" < /dev/null
  rc=$?
  FPID=$(cat "$pidfile")
  rm -f "$pidfile"
  [ -n "$FPID" ] || fail "haven run: $point: no pid"
  [ "$rc" = 137 ] || fail "haven run: $point: not killed there (status $rc): $(tail -3 "$PWD/killed.err")"
}

# The next haven run (it removes what killed runs left), then nothing of
# the killed one may be left.
faults_after_haven_run() {
  local what=$1 out
  shift
  out=$(cd "$P" && ${FNETNS:+ip netns exec "$FNETNS"} timeout -k 2 60 "$FAULTS_HAVEN" run "$@" -- true 2>&1 < /dev/null) \
    || fail "$what: the next haven run failed: $out"
  no_leaks "haven run killed at $what, then the next haven run" --haven-run "$FPID" --cgroup "$FCG"
}

# haven run under the default policy (no cgroup: no limits), in three
# parts so that each stays well inside TEST_TIMEOUT on a loaded host.
faults_haven_run_sweep() {
  need_fault_points
  fault_sweep "$1" -e egress -e pasta -e resolver -e id-maps -e hooks
  make_project
  local p
  for p in $FSWEEP; do
    faults_cg
    faults_haven_run "$p" -- true
    faults_after_haven_run "$p"
  done
}
test_faults_haven_run_create_a_i() { faults_haven_run_sweep '^create\.[a-i]'; }
test_faults_haven_run_create_j_z() { faults_haven_run_sweep '^create\.[j-z]'; }
test_faults_haven_run_session() { faults_haven_run_sweep '^(session|run)\.'; }

# haven run as an unprivileged user (a user namespace, state in
# /tmp/haven-UID, the bundle in /tmp): the points between its resources.
FAULTS_ROOTLESS="session.bundle-made session.config-written session.project-snapshot create.state-dir
  create.monitor-started create.init-cloned create.id-maps-written create.init-ready create.before-save
  create.state-saved run.created run.guard-started run.started run.exited session.sandbox-done session.guard-stopped"
test_faults_haven_run_rootless() {
  need_fault_points
  fault_sweep "^($(echo $FAULTS_ROOTLESS | sed 's/\./\\./g; s/ /|/g'))\$"
  make_project
  chown -R 65534:65534 "$P"
  local haven p
  haven=$(world_readable_copy "$FAULTS_HAVEN")
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_RUNTIME_DIR= "$@"; }
  for p in $FSWEEP; do
    faults_cg
    FAULTS_HAVEN_AS="as_nobody" FAULTS_HAVEN_BIN=$haven faults_haven_run "$p" -- true
    out=$(cd "$P" && as_nobody timeout -k 2 60 "$haven" run -- true 2>&1 < /dev/null) \
      || fail "$p: the next haven run failed: $out"
    no_leaks "rootless haven run killed at $p, then the next haven run" --haven-run "$FPID" --root /tmp/haven-65534 \
      --bundle-parent /tmp --cgroup "$FCG"
  done
}

# An egress allowlist: the table, the resolver (in the monitor) and pasta.
test_faults_haven_run_egress() {
  need_fault_points
  fault_sweep '^(create\.(egress|pasta|resolver|monitor|init-ready|state-saved)|session\.(pasta|sandbox)|run\.(started|exited))'
  policies_world api.example.com
  make_project
  printf 'extends: default\nnetwork: {allow: ["api.example.com:443"]}\naudit: {log: %s}\n' "$WORK/ftrail-$$.jsonl" \
    > "$P.pol/t.yaml"
  FNETNS=$EH
  local p
  for p in $FSWEEP; do
    faults_cg
    faults_haven_run "$p" --policy "$P.pol/t.yaml" -- python3 -c "$POLICIES_CLIENT" api.example.com:443
    faults_after_haven_run "$p" --policy "$P.pol/t.yaml"
  done
  FNETNS=
}

# The sandbox's side of test_faults_monitor_killed: a denied system call
# (ptrace(PTRACE_TRACEME), which would succeed unrestricted), a name's
# resolution and connections, before and after the test kills the monitor.
FAULTS_PROBE='
import ctypes, os, socket, time
libc = ctypes.CDLL(None, use_errno=True)
def ptrace():
    return "ALLOWED" if libc.syscall(101, 0, 0, 0, 0) == 0 else os.strerror(ctypes.get_errno())
def resolve(name):
    try:
        return socket.getaddrinfo(name, 443, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except OSError:
        return "no-address"
def connect(addr):
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect((addr, 443)); return "connected"
    except OSError as e:
        return "not-connected"
a = resolve("api.example.com")
print("before", ptrace(), a, connect(a), connect("203.0.113.200"), flush=True)
open("ready", "w").close()
for i in range(300):
    if os.path.exists("go"):
        break
    time.sleep(0.1)
print("after", ptrace(), resolve("b.example.com"), connect("203.0.113.200"), connect(a), flush=True)
'

# The monitor SIGKILLed while the sandbox runs: it fails closed.  The
# calls the monitor answered are refused by the kernel (ENOSYS), names
# no longer resolve (the resolver was the monitor), denied egress stays
# denied, exec into the container fails cleanly, and the end of the run
# (delete) leaves nothing.
test_faults_monitor_killed() {
  need_fault_points
  policies_world api.example.com b.example.com
  make_project
  printf 'extends: default\nnetwork: {allow: ["api.example.com:443", "b.example.com:443"]}\naudit: {log: %s}\n' \
    "$WORK/ftrail-$$.jsonl" > "$P.pol/t.yaml"
  faults_cg
  local pidfile=$PWD/haven.pid i out m
  (cd "$P" && in_cg ip netns exec "$EH" timeout -k 2 60 bash -c 'echo $$ > "$0"; exec "$@"' "$pidfile" \
     "$FAULTS_HAVEN" run --policy "$P.pol/t.yaml" -- python3 -c "$FAULTS_PROBE") > probe.out 2> probe.err < /dev/null &
  local bg=$!
  defer "kill $bg 2> /dev/null"
  for i in $(seq 300); do [ -e "$P/ready" ] && break; sleep 0.1; done
  [ -e "$P/ready" ] || fail "the sandbox never got ready: $(cat probe.out probe.err)"
  FPID=$(cat "$pidfile")
  local state=/run/haven/haven-run-$FPID
  m=$(cut -d' ' -f1 "$state/monitor.pid") || fail "no monitor.pid in $state"
  kill -KILL "$m"
  for i in $(seq 50); do [ -e "/proc/$m" ] || break; sleep 0.1; done
  [ ! -e "/proc/$m" ] || fail "monitor $m survived SIGKILL"
  out=$(timeout 20 "$RUNTIME" --root /run/haven exec "haven-run-$FPID" true 2>&1) && fail "exec started without the monitor"
  [ $? != 124 ] || fail "exec hung without the monitor"
  assert_contains "$out" "haven-runc: seccomp listener: connect to" "exec's error"
  # haven run's own audit listener (audit_monitor.c: a fork of haven, not
  # the monitor), the process that holds the sandbox's seccomp notify fd:
  # killed too.
  local c listener=""
  for c in $(pgrep -P "$FPID"); do
    ls -l "/proc/$c/fd" 2> /dev/null | grep -q 'anon_inode:seccomp notify' && listener+=" $c"
  done
  [ "$(echo $listener | wc -w)" = 1 ] || fail "haven's audit listener: found '$listener' among $(pgrep -P "$FPID" | tr '\n' ' ')"
  kill -KILL $listener
  touch "$P/go"
  wait "$bg"
  # ptrace: in haven run the seccomp notify fd goes to haven's own audit
  # listener, killed above: the kernel then answers ENOSYS, never runs
  # it; the monitor's own notify calls (haven-runc's run.haven.audit) get
  # ENOSYS too once it is gone (test_container_audit_dead_monitor_fails_closed).
  # Either way never allowed.  The address already resolved stays
  # reachable: its table entry was made before the kill.
  out=$(cat probe.out)
  assert_eq "before Operation not permitted 203.0.113.1 connected not-connected" "$(head -1 probe.out)" \
    "the probe before the kill ($(cat probe.err))"
  [[ $(sed -n 2p probe.out) =~ ^after\ (Operation\ not\ permitted|Function\ not\ implemented)\ no-address\ not-connected\ connected$ ]] \
    || fail "the probe after the kill: $out ($(cat probe.err))"
  no_leaks "the run whose monitor was killed" --haven-run "$FPID" --cgroup "$FCG"
}

# Every point the source names is swept by one of the tests above: a
# point added without a sweep that reaches it fails here.
test_faults_every_point_swept() {
  need_fault_points
  local p missing=""
  for p in $(FAULT_POINTS='' fault_points .); do
    case $p in
      create.egress* | create.pasta* | create.resolver*) ;;  # test_faults_haven_run_egress
      create.id-maps* | create.hooks*) ;;                     # test_faults_create_userns_hooks
      create.gateway*) ;;                                     # test_faults_create_gateway
      create.* | start.* | delete.* | exec.* | run.* | session.*) ;;
      *) missing+=" $p" ;;
    esac
  done
  [ -z "$missing" ] || fail "fault points no sweep reaches:$missing"
  # And the egress sweep's own selection names every egress point.
  for p in $(FAULT_POINTS='' fault_points '^create\.(egress|pasta|resolver)'); do
    FAULT_POINTS='' fault_points '^(create\.(egress|pasta|resolver|monitor|init-ready|state-saved)|session\.(pasta|sandbox)|run\.(started|exited))' \
      | grep -qx "$p" || fail "$p is not in the egress sweep"
  done
}
