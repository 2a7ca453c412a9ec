# The loop both suites run: every test_* function in its own bounded
# process, one line of result each.  Sourced by tests/*/run.sh.
#
#   run_test_functions RUNNER TIMEOUT BETWEEN [PATTERN...]
# RUNNER is the suite's run.sh, called as `RUNNER --one FUNCTION DIR`;
# TIMEOUT bounds each test (seconds; TEST_TIMEOUT_<name> for one test);
# BETWEEN is a command run after each
# test (leftover containers).  PATTERNs select tests whose name contains
# one of them.  TEST_EXCLUDE (substrings, separated by spaces) leaves out
# tests whose name contains one of them.  (CI's VM step names the tests
# it runs instead: VM_TESTS in .ci/run.)  Counts into the globals passed,
# failed and skipped.  Every result line ends
# with the test's wall time, " (12.3 s)", so a slow machine (the VM under
# software emulation) shows where its time goes.

passed=0
failed=0
skipped=0

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

run_test_functions() {
  local runner=$1 limit=$2 between=$3
  shift 3
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
    t0=$EPOCHREALTIME
    timeout -k 10 "$tlimit" bash "$runner" --one "$t" "$tdir" > "$tdir/log" 2>&1 < /dev/null
    rc=$?
    $between
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
