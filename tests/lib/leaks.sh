#!/bin/bash
# leaks.sh: what a container (or a `haven run`) left on the machine.
#
# Run it (`tests/lib/leaks.sh CMD ...`) or source it and call leaks_CMD.
#
#   list [--id ID]... [--root STATE_ROOT] [--path PATH]... [--haven-run PID]
#        [--bundle-parent DIR] [--cgroup TESTCG] [--pid PID:START]...
#       One line per leftover, "KIND: what", on stdout; exit status 1 if
#       there is any, 0 if none.  Everything is filtered by what the test
#       names, so containers of tests running beside it do not count:
#       * mount:   /proc/self/mountinfo lines (the host's mount namespace)
#                  with an ID as a path component, or a PATH / state dir
#                  below them (bind mounts, nsfs mounts of /run/netns/ID);
#       * cgroup:  directories named ID (or *-ID.scope, systemd's) in every
#                  mounted hierarchy: each v1 controller, the hybrid
#                  /sys/fs/cgroup/unified, or a pure v2 /sys/fs/cgroup;
#                  and a non-empty TESTCG (see cgroup-new);
#       * netns:   /run/netns entries named ID;
#       * nft:     a table named "haven" (HV_EGRESS_TABLE_NAME) in the
#                  host's network namespace: haven makes its egress table in
#                  the container's, never in the host's;
#       * process: a live process whose command line has an ID as a word,
#                  whose cgroup path has an ID component or is in TESTCG,
#                  or a --pid PID:START still alive with that start time
#                  (monitor, resolver, pasta, guard, listener, init ...);
#       * state:   STATE_ROOT/ID;  bundle: each PATH that exists.
#       --haven-run PID: the ids, state and bundles of the `haven run` whose
#       process was PID: id haven-run-PID, state in STATE_ROOT (default
#       /run/haven as root), bundles BUNDLE_PARENT/haven-run-PID.* (default
#       /run as root; session/run_leftovers.c).
#
#   cgroup-new NAME      Make a test cgroup (prints its path): a test moves
#                        the shell that starts the runtime there
#                        (`echo $BASHPID > CG/cgroup.procs` in a subshell);
#                        every process the runtime forks stays in it unless
#                        the runtime moves it to the container's cgroup, so
#                        a non-empty TESTCG after cleanup is a leaked
#                        process however it was reparented.  On a hybrid
#                        host: in the v2 /sys/fs/cgroup/unified; pure v2:
#                        /sys/fs/cgroup; v1 only: the pids controller.
#   cgroup-remove CG     Kill what is left in it and remove it.
#   pid-of PID           Print "PID:START" (for --pid) of a live process.
#
#   snapshot FILE        Whole machine, for loads whose ids are unknown:
#   diff FILE [PREFIX]   record mounts, cgroup directories, netns, nft tables,
#                        processes (pid and start time: haven's, pasta, any in
#                        another pid namespace or a haven cgroup) and the
#                        dirs of /run/haven and /run/haven-run-*; diff prints
#                        (and fails on) what exists now and did not then,
#                        only the lines containing PREFIX if given.  It sees
#                        everything: run it where nothing else starts
#                        containers, or give the load's id PREFIX.

_leaks_re_escape() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'; }

_leaks_start_time() {
  local stat
  stat=$(cat "/proc/$1/stat" 2> /dev/null) || return 1
  stat=${stat##*) }
  # Field 22 of stat, the 20th after "(comm) ".
  set -- $stat
  printf '%s' "${20}"
}

leaks_pid_of() { printf '%s:%s\n' "$1" "$(_leaks_start_time "$1")"; }

# The cgroup v2 root to make test cgroups in, or a v1 pids hierarchy.
_leaks_cgroup_base() {
  if [ -f /sys/fs/cgroup/cgroup.procs ] && [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
    echo /sys/fs/cgroup
  elif [ -d /sys/fs/cgroup/unified ] && [ "$(stat -fc %T /sys/fs/cgroup/unified)" = cgroup2fs ]; then
    echo /sys/fs/cgroup/unified
  elif [ -d /sys/fs/cgroup/pids ]; then
    echo /sys/fs/cgroup/pids
  else
    return 1
  fi
}

leaks_cgroup_new() {
  local base
  base=$(_leaks_cgroup_base) || {
    echo "leaks.sh: no cgroup hierarchy for a test cgroup" >&2
    return 1
  }
  mkdir "$base/hvleaks-$1" || return 1
  echo "$base/hvleaks-$1"
}

leaks_cgroup_remove() {
  local cg=$1 i p
  [ -d "$cg" ] || return 0
  for i in 1 2 3 4 5 6 7 8 9 10; do
    # Children first (a runtime could have made some), then the procs.
    find "$cg" -mindepth 1 -depth -type d -exec rmdir {} + 2> /dev/null
    for p in $(cat "$cg/cgroup.procs" 2> /dev/null); do kill -9 "$p" 2> /dev/null; done
    rmdir "$cg" 2> /dev/null && return 0
    sleep 0.2
  done
  echo "leaks.sh: cannot remove $cg" >&2
  return 1
}

# Mount points of every cgroup hierarchy.
_leaks_cgroup_mounts() {
  awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup" || $(i + 1) == "cgroup2") print $5 }' /proc/self/mountinfo
}

# The pids not to report: this scanner, its ancestors (the test shell
# whose own command line may name the id) and its own pipelines.
_leaks_self_pids() {
  local p=$BASHPID
  while [ -n "$p" ] && [ "$p" != 0 ]; do
    echo "$p"
    p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2> /dev/null)
  done
}

# Live processes (not zombies) matching RE in their command line or their
# cgroup paths, in the test cgroup CGRE, or listed as PID:START; not the
# scanner itself and its ancestors (SELF: the test shell naming the id).
# One python3 pass: a shell loop over /proc takes seconds on a busy host.
_leaks_processes() {
  python3 - "$@" << 'PY'
import os, re, sys
name_re, cg_re, self_pids = sys.argv[1], sys.argv[2], set(sys.argv[3].split())
tracked = dict(a.split(':', 1) for a in sys.argv[4:])
name_m = re.compile(name_re) if name_re else None
cg_m = re.compile(cg_re + '(/.*)?$') if cg_re else None
me, parent = str(os.getpid()), str(os.getppid())
def read(pid, f):
    with open('/proc/%s/%s' % (pid, f), 'rb') as h:
        return h.read().decode('utf-8', 'replace')
for pid in os.listdir('/proc'):
    if not pid.isdigit() or pid in self_pids or pid in (me, parent):
        continue
    try:
        stat = read(pid, 'stat')
        fields = stat[stat.rindex(')') + 2:].split()
        state, ppid, start = fields[0], fields[1], fields[19]
        if state == 'Z' or ppid == me:
            continue
        cmd = read(pid, 'cmdline').replace('\0', ' ').strip()
        cgs = [l.split(':', 2)[2] for l in read(pid, 'cgroup').splitlines()]
        comm = read(pid, 'comm').strip()
    except (OSError, ValueError, IndexError):
        continue
    why = None
    if name_m and (name_m.search(' ' + cmd + ' ') or any(name_m.search(c) for c in cgs)):
        why = 'named'
    elif cg_m and any(cg_m.match(c) for c in cgs):
        why = 'in the test cgroup'
    elif tracked.get(pid) == start:
        why = 'tracked'
    if why:
        print('%s (%s) %s: %s' % (pid, comm, why, cmd))
PY
}

leaks_list() {
  local ids=() paths=() pids=() root="" cg="" run_pid="" parent="" found=0
  while [ $# -gt 0 ]; do
    # An empty value would match nothing and hide every leak.
    if [ -z "${2:-}" ]; then
      echo "leaks.sh list: $1 needs a value" >&2
      return 2
    fi
    case $1 in
      --id) ids+=("$2"); shift 2 ;;
      --path) paths+=("$2"); shift 2 ;;
      --root) root=$2; shift 2 ;;
      --cgroup) cg=$2; shift 2 ;;
      --pid) pids+=("$2"); shift 2 ;;
      --haven-run) run_pid=$2; shift 2 ;;
      --bundle-parent) parent=$2; shift 2 ;;
      *) echo "leaks.sh list: unknown argument $1" >&2; return 2 ;;
    esac
  done
  if [ -n "$run_pid" ]; then
    ids+=("haven-run-$run_pid")
    [ -n "$root" ] || root=/run/haven
    [ -n "$parent" ] || parent=/run
    local b
    for b in "$parent"/haven-run-"$run_pid".*; do
      [ -e "$b" ] && paths+=("$b")
    done
    # Also the pattern itself: a bind mount below a bundle removed since.
    paths+=("$parent/haven-run-$run_pid.")
  fi
  local id
  [ -n "$root" ] && for id in "${ids[@]}"; do paths+=("$root/$id"); done

  # An id as a path component or a word; a path as a prefix.
  local alts=() p
  for id in "${ids[@]}"; do alts+=("(^|[/ ])$(_leaks_re_escape "$id")(\$|[/ .])"); done
  for p in "${paths[@]}"; do alts+=("$(_leaks_re_escape "$p")"); done
  local re
  re=$(IFS='|'; echo "${alts[*]}")
  if [ -z "$re" ] && [ -z "$cg" ] && [ ${#pids[@]} -eq 0 ]; then
    echo "leaks.sh list: name an --id, --path, --haven-run, --cgroup or --pid" >&2
    return 2
  fi
  _leaks_out() { echo "$1"; found=1; }

  local line
  if [ -n "$re" ]; then
    while IFS= read -r line; do
      # Fields 4 (root in its filesystem) and 5 (mount point); the source after " - ".
      _leaks_out "mount: $line"
    done < <(awk '{ print $4, $5, $(NF - 1) }' /proc/self/mountinfo | grep -E -- "$re")
  fi

  local mp d
  for mp in $(_leaks_cgroup_mounts); do
    for id in "${ids[@]}"; do
      while IFS= read -r d; do
        _leaks_out "cgroup: $d"
      done < <(find "$mp" -maxdepth 8 -type d \( -name "$id" -o -name "*-$id.scope" \) 2> /dev/null)
    done
  done
  if [ -n "$cg" ] && [ -d "$cg" ]; then
    while IFS= read -r d; do
      _leaks_out "cgroup: $d (in the test cgroup)"
    done < <(find "$cg" -mindepth 1 -type d 2> /dev/null)
  fi

  for id in "${ids[@]}"; do
    [ -e "/run/netns/$id" ] && _leaks_out "netns: /run/netns/$id"
  done
  if command -v nft > /dev/null; then
    nft list tables 2> /dev/null | grep -qx 'table inet haven' && _leaks_out "nft: table inet haven in the host's network namespace"
  fi

  local cgre="" line
  # A test cgroup is made at the top of its hierarchy (cgroup-new).
  [ -n "$cg" ] && cgre=$(_leaks_re_escape "/${cg##*/}")
  while IFS= read -r line; do
    _leaks_out "process: $line"
  done < <(_leaks_processes "$re" "$cgre" "$(_leaks_self_pids | tr '\n' ' ')" "${pids[@]}")

  for p in "${paths[@]}"; do
    [ -e "$p" ] || continue
    if [ -n "$root" ] && [[ $p == "$root"/* ]]; then
      _leaks_out "state: $p"
    else
      _leaks_out "bundle: $p"
    fi
  done
  unset -f _leaks_out
  return $found
}

# Whole-machine inventory, one sorted line per thing.
_leaks_inventory() {
  awk '{ for (i = 7; $i != "-"; i++) ; print "mount:", $5, $(i + 1), $4 }' /proc/self/mountinfo
  local mp
  for mp in $(_leaks_cgroup_mounts); do
    find "$mp" -mindepth 1 -maxdepth 8 -type d 2> /dev/null | sed 's/^/cgroup: /'
  done
  ls -1 /run/netns 2> /dev/null | sed 's/^/netns: /'
  command -v nft > /dev/null && nft list tables 2> /dev/null | sed 's/^/nft: /'
  python3 - << 'PY'
import os
# haven's own processes (haven, haven-runc, haven-monitor), pasta, and any
# process in another pid namespace (a container's, with or without a
# cgroup) or in a cgroup haven made.
own = os.readlink('/proc/self/ns/pid')
for pid in os.listdir('/proc'):
    if not pid.isdigit():
        continue
    try:
        with open('/proc/%s/stat' % pid) as f:
            stat = f.read()
        with open('/proc/%s/comm' % pid) as f:
            comm = f.read().strip()
        with open('/proc/%s/cgroup' % pid) as f:
            cgs = f.read()
        with open('/proc/%s/cmdline' % pid, 'rb') as f:
            cmd = f.read().replace(b'\0', b' ').decode('utf-8', 'replace').strip()
        ns = os.readlink('/proc/%s/ns/pid' % pid)
    except OSError:
        continue
    fields = stat[stat.rindex(')') + 2:].split()
    if fields[0] == 'Z':
        continue
    if comm.startswith(('haven', 'pasta', 'passt')) or ns != own or '/haven/' in cgs or 'haven-' in cgs:
        print('process: %s:%s %s %s' % (pid, fields[19], comm, cmd))
PY
  ls -1d /run/haven/* /run/haven-run-* 2> /dev/null | sed 's/^/dir: /'
}

leaks_snapshot() { _leaks_inventory | sort > "$1"; }

leaks_diff() {
  local now
  now=$(_leaks_inventory | sort | comm -13 "$1" - | grep -F -- "${2:-}")
  [ -z "$now" ] && return 0
  echo "$now"
  return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  cmd=${1:-}
  shift || true
  case $cmd in
    list | cgroup-new | cgroup-remove | snapshot | diff | pid-of) "leaks_${cmd//-/_}" "$@" ;;
    *)
      sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
      exit 2
      ;;
  esac
fi
