# The loop both suites run: every test_* function in its own bounded
# process, one line of result each.  Sourced by tests/*/run.sh.
#
#   run_test_functions RUNNER TIMEOUT BETWEEN [PATTERN...]
# RUNNER is the suite's run.sh, called as `RUNNER --one FUNCTION DIR`;
# TIMEOUT bounds each test (seconds; TEST_TIMEOUT_<name> for one test);
# BETWEEN is a command run after each
# test (leftover containers), with the test's directory as its argument:
# what it writes to DIR/.fail fails the test (a test that left a process
# behind).  TEST_PREPARE_<name>=FUNCTION: a step run before the test's
# clock starts, as `RUNNER --one FUNCTION DIR` bounded by
# TEST_PREPARE_TIMEOUT (default 900 s): what a test needs from the network
# (an npm install into a cache) is fetched there, so a slow download
# never eats the test's own limit; its skip or failure is the test's,
# said as such.  PATTERNs select tests whose name contains
# one of them.  TEST_EXCLUDE (substrings, separated by spaces) leaves out
# tests whose name contains one of them.  (CI's VM step names the tests
# it runs instead: VM_TESTS in .ci/run.)  Counts into the globals passed,
# failed and skipped.  Every result line ends
# with the test's wall time, " (12.3 s)", so a slow machine (the VM under
# software emulation) shows where its time goes.

passed=0
failed=0
skipped=0

# stop_process PID [TENTHS]: SIGTERM, up to TENTHS tenths of a second
# (default 50) for it to end, then SIGKILL; reaped when it is the
# shell's child.  For the daemons and namespace holders a suite starts.
stop_process() {
  local i
  kill -TERM "$1" 2> /dev/null
  for i in $(seq "${2:-50}"); do kill -0 "$1" 2> /dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2> /dev/null
  wait "$1" 2> /dev/null
}

# run_one_test FUNCTION DIR: the body of `RUNNER --one` once the suite's
# helpers and tests are sourced: the test in DIR, its failures and skips
# in DIR/.fail and DIR/.skip, its deferred cleanups run however it ends.
run_one_test() {
  FAIL_FILE=$2/.fail
  SKIP_FILE=$2/.skip
  trap 'run_deferred' EXIT
  trap 'exit 143' TERM INT
  cd "$2" || exit 1
  "$1"
  exit $?
}

report_fail() { # NAME REASON
  echo "not ok $1: $2"
  failed=$((failed + 1))
}

# elapsed_since EPOCHREALTIME-VALUE: seconds since then, one decimal
# (the test and the cleanup after it).
elapsed_since() {
  local now=$EPOCHREALTIME
  local ds=$(( (${now/[.,]/} - ${1/[.,]/}) / 100000 ))
  echo "$((ds / 10)).$((ds % 10))"
}

# prepare_test RUNNER NAME DIR: the test's TEST_PREPARE_<name> step, if
# any, before its clock starts.  1 when the test is already decided (the
# step skipped or failed it: its line is printed).
prepare_test() {
  local runner=$1 name=$2 tdir=$3 prep rc t0 reason pdir
  prep=TEST_PREPARE_$name
  prep=${!prep:-}
  [ -n "$prep" ] || return 0
  # A directory of its own: the test's starts empty, as without the step.
  pdir=$tdir.prepare
  mkdir -p "$pdir"
  t0=$EPOCHREALTIME
  timeout -k 10 "${TEST_PREPARE_TIMEOUT:-900}" bash "$runner" --one "$prep" "$pdir" > "$pdir/log" 2>&1 < /dev/null
  rc=$?
  if [ $rc = 77 ] && [ -s "$pdir/.skip" ]; then
    echo "skip $name: $(head -1 "$pdir/.skip") (while preparing, $(elapsed_since "$t0") s)"
    skipped=$((skipped + 1))
  elif [ $rc != 0 ] || [ -s "$pdir/.fail" ]; then
    if [ -s "$pdir/.fail" ]; then
      reason=$(head -c 400 "$pdir/.fail" | awk 'NR > 1 {printf "\\n"} {printf "%s", $0}')
    elif [ $rc = 124 ] || [ $rc = 137 ]; then
      reason="timed out after ${TEST_PREPARE_TIMEOUT:-900} s"
    else
      reason="exit status $rc: $(grep -v '^[[:space:]]*$' "$pdir/log" | tail -1)"
    fi
    report_fail "$name" "preparing ($prep): $reason ($(elapsed_since "$t0") s)"
    tail -20 "$pdir/log" | sed 's/^/    /'
  else
    echo "# $name: prepared by $prep in $(elapsed_since "$t0") s"
    rm -rf "$pdir"
    return 0
  fi
  rm -rf "$pdir"
  return 1
}

# check_distinct_helpers DIR: a suite sources all its files into one
# shell, so a function two of them define is the last one's for every
# test: a helper of one file silently replaced by another's (a new file's
# probe() once broke 21 egress tests).  One failure naming each.
check_distinct_helpers() {
  local dup
  for dup in $(cat "$1"/lib.sh "$1"/test_*.sh 2> /dev/null | grep -oE '^[A-Za-z_][A-Za-z0-9_]*\(\) *\{' \
      | sed 's/(.*//' | sort | uniq -d); do
    report_fail "helpers_distinct" "$dup() is defined in more than one file: $(grep -lE "^$dup\(\) *\{" \
      "$1"/lib.sh "$1"/test_*.sh 2> /dev/null | xargs -n1 basename | tr '\n' ' ')"
  done
}

run_test_functions() {
  local runner=$1 limit=$2 between=$3
  shift 3
  check_distinct_helpers "$(dirname "$runner")"
  local t name match p tdir rc reason tlimit t0 took
  for t in $(declare -F | awk '{print $3}' | grep '^test_' | sort); do
    name=${t#test_}
    match=0
    for p in ${TEST_EXCLUDE:-}; do [[ "$name" == *"$p"* ]] && match=1; done
    [ $match = 0 ] || continue
    if [ $# -gt 0 ]; then
      match=0
      for p in "$@"; do [[ "$name" == *"$p"* ]] && match=1; done
      [ $match = 1 ] || continue
    fi
    tdir=$WORK/t-$name
    mkdir -p "$tdir"
    # A test that needs longer than the suite's limit (a first image
    # build) sets TEST_TIMEOUT_<name> when its file is sourced.
    tlimit=TEST_TIMEOUT_$name
    tlimit=${!tlimit:-$limit}
    if ! prepare_test "$runner" "$name" "$tdir"; then
      rm -rf "$tdir"
      continue
    fi
    t0=$EPOCHREALTIME
    timeout -k 10 "$tlimit" bash "$runner" --one "$t" "$tdir" > "$tdir/log" 2>&1 < /dev/null
    rc=$?
    $between "$tdir"
    took=$(elapsed_since "$t0")
    if [ $rc = 77 ] && [ -s "$tdir/.skip" ]; then
      echo "skip $name: $(head -1 "$tdir/.skip") ($took s)"
      skipped=$((skipped + 1))
    elif [ $rc = 0 ] && [ ! -s "$tdir/.fail" ]; then
      echo "ok $name ($took s)"
      passed=$((passed + 1))
    else
      if [ -s "$tdir/.fail" ]; then
        reason=$(head -c 400 "$tdir/.fail" | awk 'NR > 1 {printf "\\n"} {printf "%s", $0}')
      elif [ $rc = 124 ] || [ $rc = 137 ]; then
        reason="timed out after $tlimit s"
      else
        reason="exit status $rc: $(grep -v '^[[:space:]]*$' "$tdir/log" | tail -1)"
      fi
      report_fail "$name" "$reason ($took s)"
      # The test's log: the runtime's stderr and every assertion message.
      tail -20 "$tdir/log" | sed 's/^/    /'
    fi
    rm -rf "$tdir"
  done
}

# suite_owns PID WORK: the process belongs to this run of the suite: its
# environment holds the run's HAVEN_TEST_SUITE (set once in the suite's
# lib.sh and exported: what the suite starts inherits it: dockerd, its
# containerd, their shims, the runtime's monitors, conmon), or it is a
# containerd shim whose command line, working directory or bundle
# (config.json there: a system containerd's shim runs in its container's
# bundle, whose root is in the suite's dockerd data root) names WORK.
# Never by WORK alone in an environment: a WORK the user exported would
# name the user's own processes.
suite_owns() {
  local p=$1 work=$2 cwd comm
  [ -n "${HAVEN_TEST_SUITE:-}" ] && grep -qzx -- "HAVEN_TEST_SUITE=$HAVEN_TEST_SUITE" "/proc/$p/environ" 2>/dev/null \
    && return 0
  comm=$(cat "/proc/$p/comm" 2>/dev/null)
  [[ "$comm" == containerd-shim* ]] || return 1
  grep -qzF -- "$work/" "/proc/$p/cmdline" 2>/dev/null && return 0
  cwd=$(readlink "/proc/$p/cwd" 2>/dev/null) || return 1
  [[ "$cwd" == "$work"/* ]] && return 0
  [ -f "/proc/$p/cwd/config.json" ] && grep -qF -- "$work/" "/proc/$p/cwd/config.json" 2>/dev/null
}

# suite_processes WORK: "PID COMM ARGS" of each live process of the suite
# (suite_owns), other than this shell, its ancestors and its own children.
suite_processes() {
  local work=$1 p
  local -A ours=()
  for p in $(ps -eo pid=,ppid= | awk -v me=$$ '
      { parent[$1] = $2; pid[NR] = $1 }
      END {
        for (p = me; p in parent && p > 1; p = parent[p]) print p
        for (i in pid) for (q = pid[i]; q in parent && q > 1; q = parent[q]) if (q == me) { print pid[i]; break }
      }'); do
    ours[$p]=1
  done
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ -z "${ours[$p]:-}" ] || continue
    if suite_owns "$p" "$work"; then
      echo "$p $(cat "/proc/$p/comm" 2>/dev/null) $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-160)"
    fi
  done
}

# check_nothing_left WORK: one more result, "nothing_left": every process
# the suite started is gone once its engines are stopped (a few seconds
# allowed for exits under way).  Whatever is left is listed, fails the
# suite, and is then ended (by its pid) so that the machine is clean.
check_nothing_left() {
  local work=$1 left i p
  for i in $(seq 50); do
    left=$(suite_processes "$work")
    [ -n "$left" ] || break
    sleep 0.1
  done
  if [ -z "$left" ]; then
    echo "ok nothing_left"
    passed=$((passed + 1))
    return 0
  fi
  report_fail nothing_left "$(echo "$left" | wc -l) process(es) of the suite still running after it"
  echo "$left" | sed 's/^/    /'
  for p in $(echo "$left" | awk '{print $1}'); do kill -TERM "$p" 2>/dev/null; done
  for i in $(seq 30); do
    left=$(for p in $(echo "$left" | awk '{print $1}'); do [ -d "/proc/$p" ] && echo "$p"; done)
    [ -n "$left" ] || break
    sleep 0.1
  done
  for p in $left; do kill -KILL "$p" 2>/dev/null; done
  return 1
}
