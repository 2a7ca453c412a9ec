# Shared by the load scripts (tests/load/*.sh): binaries, the work
# directory and its cleanup, bounded runtime calls, the leak inventory
# and fd/RSS figures of long-lived processes.  Sourced, not run.
#
# Every script works in a directory of its own under /tmp (WORK), with a
# private state root for haven-runc (STATE_ROOT) and container ids that
# start with LOAD_PREFIX, so what it counts is its own even when other
# suites run on the machine at the same time.  `haven run` has no state
# root option: as root its state is /run/haven/haven-run-PID and its
# bundle /run/haven-run-PID.*; the scripts record the pid of every run
# and look for exactly those.  The leak inventory is tests/lib/leaks.sh.

set -uo pipefail

LOAD_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC_DIR=$(cd "$LOAD_DIR/../.." && pwd)
# HAVEN and RUNTIME pick the binaries (default: this checkout's); for
# figures, those of a build without --enable-sanitizers.
: "${RUNTIME:=$SRC_DIR/haven-runc}"
: "${HAVEN:=$SRC_DIR/haven}"

[ "$(id -u)" = 0 ] || { echo "load: needs root (containers, network namespaces)" >&2; exit 1; }
[ -x "$RUNTIME" ] || { echo "load: $RUNTIME missing (build first)" >&2; exit 1; }
[ -x "$HAVEN" ] || { echo "load: $HAVEN missing (build first)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/hv-load.XXXXXX)
chmod 755 "$WORK"
STATE_ROOT=$WORK/state
LOAD_PREFIX=hvl$$
# haven run's copy-on-write home state goes here, not into root's home.
export XDG_STATE_HOME=$WORK/xdg-state
mkdir -p "$STATE_ROOT" "$XDG_STATE_HOME"

LOAD_FAILURES=0
LOAD_NETNS=()
LOAD_BG=()

# load_fail MESSAGE: count a failure and say what it was; the script
# goes on (a load run reports all its failures) and exits 1 at the end.
load_fail() {
  echo "FAIL: $*" >&2
  LOAD_FAILURES=$((LOAD_FAILURES + 1))
}

# Every runtime call is bounded.
rt() { timeout -k 5 60 "$RUNTIME" --root "$STATE_ROOT" "$@"; }

load_cleanup() {
  local id p n
  for id in $(rt list -q 2>/dev/null); do rt delete --force "$id" >/dev/null 2>&1; done
  for p in "${LOAD_BG[@]}"; do kill "$p" 2>/dev/null; done
  for n in "${LOAD_NETNS[@]}"; do ip netns del "$n" 2>/dev/null; done
  [ -n "${LOAD_CG:-}" ] && leaks_cgroup_remove "$LOAD_CG"
  rm -rf "$WORK"
}
trap load_cleanup EXIT

# load_netns NAME: a network namespace removed at exit.
load_netns() {
  ip netns add "$1" || { echo "load: ip netns add $1 failed" >&2; exit 1; }
  LOAD_NETNS+=("$1")
  ip -n "$1" link set lo up
}

# load_world SANDBOX WORLD IF_SANDBOX IF_WORLD: two namespaces (load_netns)
# joined by a veth pair, 192.0.2.2 on the sandbox's side with its default
# route to 192.0.2.1 on the world's.
load_world() {
  load_netns "$1"
  load_netns "$2"
  ip link add "$3" netns "$1" type veth peer name "$4" netns "$2" || exit 1
  ip -n "$1" addr add 192.0.2.2/24 dev "$3"
  ip -n "$2" addr add 192.0.2.1/24 dev "$4"
  ip -n "$1" link set "$3" up
  ip -n "$2" link set "$4" up
  ip -n "$1" route add default via 192.0.2.1
}

# The busybox root filesystem every bundle shares (read-only: the
# containers cannot change it under each other).
load_rootfs() {
  [ -d "$WORK/rootfs" ] || "$SRC_DIR/tests/make-rootfs.sh" "$WORK/rootfs" || exit 1
}

# load_bundle DIR JQ-FILTER [jq args...]: a bundle at DIR over the shared
# rootfs, config from `haven-runc spec`, edited by JQ-FILTER.
load_bundle() {
  local b=$1 f=$2
  shift 2
  load_rootfs
  mkdir -p "$b"
  rt spec --bundle "$b" || exit 1
  jq --arg root "$WORK/rootfs" '.root = {path: $root, readonly: true} | .process.terminal = false | '"$f" \
    "$b/config.json" "$@" > "$b/config.json.new" && mv "$b/config.json.new" "$b/config.json" || exit 1
}

# wait_stopped ID [TENTHS]: until the container has stopped (bounded,
# default 30 s).
wait_stopped() {
  local i s
  for ((i = 0; i < ${2:-300}; i++)); do
    s=$(rt state "$1" 2>/dev/null | jq -r .status)
    [ "$s" = stopped ] && return 0
    sleep 0.1
  done
  return 1
}

# --- leaks ----------------------------------------------------------------

source "$SRC_DIR/tests/lib/leaks.sh"

# Every process the runs start is forked in LOAD_CG (leaks.sh cgroup-new:
# the scripts move the shell that starts a run there first) and stays
# there unless the runtime moves it into a container's cgroup: a process
# found there afterwards (a monitor, a resolver helper, pasta, a guard)
# is a leak however it was reparented.
LOAD_CG=$(leaks_cgroup_new "$LOAD_PREFIX") || exit 1
# in_load_cg: move the calling (sub)shell into LOAD_CG.
in_load_cg() { echo "$BASHPID" > "$LOAD_CG/cgroup.procs"; }

# load_leaks_check WHAT: nothing of this script's runs is left:
#  - the state root is empty (no container state);
#  - no process recorded as the runs went (LOAD_PIDS: monitors) is alive;
#  - no /run/haven-run-PID* bundle or /run/haven/haven-run-PID state of a
#    recorded `haven run` pid (HAVEN_PIDS file, one a line);
#  - LOAD_CG holds no process and no cgroup (leaks.sh list --cgroup);
#  - the machine's inventory (leaks.sh snapshot, taken by
#    load_inventory_snapshot once the script's own namespaces exist) has
#    nothing new of this script's: mounts, cgroup directories, network
#    namespaces, nftables tables in the host's namespace, haven and pasta
#    processes and /run/haven* directories, counted when they name an id
#    of this script (LOAD_PREFIX) or a recorded `haven run` pid.  Other
#    suites on the machine make such things at the same time: those that
#    name neither are not this script's and are left out.
LOAD_PIDS=()
HAVEN_PIDS=$WORK/haven-pids
: > "$HAVEN_PIDS"
load_leaks_check() {
  local what=$1 left p
  left=$(ls -A "$STATE_ROOT" 2>/dev/null)
  [ -z "$left" ] || load_fail "$what: state directories left in $STATE_ROOT: $left"
  for p in "${LOAD_PIDS[@]}"; do
    # A zombie not yet reaped by whoever inherited it has ended.
    if [ -e "/proc/$p" ] && [ "$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null)" != Z ]; then
      load_fail "$what: process $p ($(cat "/proc/$p/comm" 2>/dev/null)) of a finished run still alive"
    fi
  done
  load_haven_leftovers "$what"
  left=$(leaks_list --cgroup "$LOAD_CG") || load_fail "$what: left in the runs' cgroup: $left"
  left=$(leaks_diff "$WORK/inventory" | load_mine) 
  [ -z "$left" ] || load_fail "$what: left on the machine: $left"
}

# load_mine: the lines of stdin naming LOAD_PREFIX or haven-run-PID of a
# recorded pid.
load_mine() {
  # FILENAME, not NR == FNR: the pid file may be empty.
  awk -v pre="$LOAD_PREFIX" 'FILENAME == ARGV[1] { p[$1] = 1; next }
    index($0, pre) { print; next }
    { s = $0
      while (match(s, /haven-run-[0-9]+/)) {
        if (substr(s, RSTART + 10, RLENGTH - 10) in p) { print; break }
        s = substr(s, RSTART + RLENGTH)
      } }' "$HAVEN_PIDS" -
}

# load_haven_leftovers WHAT: no bundle or state directory of a recorded
# `haven run` pid.  One listing of /run, then a lookup per entry.
load_haven_leftovers() {
  local left
  left=$(ls -1d /run/haven-run-* /run/haven/haven-run-* 2>/dev/null | load_mine)
  [ -z "$left" ] || load_fail "$1: left by haven runs: $left"
}

load_inventory_snapshot() { leaks_snapshot "$WORK/inventory"; }

# haven_run NETNS ARGS...: `haven run ARGS...` in network namespace NETNS,
# bounded, from a shell in LOAD_CG, its pid recorded in HAVEN_PIDS (the
# shell writes its own pid and becomes haven: `timeout` forks, so $! would
# be the wrong process).
haven_run() {
  local ns=$1
  shift
  (
    in_load_cg
    exec timeout -k 5 120 nsenter --net="/run/netns/$ns" \
      sh -c 'echo $$ >> "$0"; exec "$@"' "$HAVEN_PIDS" "$HAVEN" run "$@"
  )
}

# --- long-lived processes ---------------------------------------------------

fd_count() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# load_finish: exit status of the script: 1 when anything failed.
load_finish() {
  if [ "$LOAD_FAILURES" -gt 0 ]; then
    echo "load: $LOAD_FAILURES failure(s)" >&2
    exit 1
  fi
  exit 0
}
