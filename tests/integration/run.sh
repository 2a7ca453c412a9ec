#!/usr/bin/env bash
# Integration tests: real containers through the runtime's OCI CLI.
#   [RUNTIME=/path/to/runtime] tests/integration/run.sh [PATTERN...]
# RUNTIME defaults to the built ../../haven-runc; RUNTIME=$(command -v runc)
# runs the same suite against runc.  PATTERNs select tests whose name
# contains one of them.  Prints "ok NAME", "not ok NAME: reason" or
# "skip NAME: reason" per test and ends with "N passed, N failed"; exits
# non-zero if any failed.  Needs root, busybox-static, jq, python3, iproute2.
set -u
here=$(cd "$(dirname "$0")" && pwd)
TEST_TIMEOUT=${TEST_TIMEOUT:-90}

if [ "${1:-}" = --one ]; then
  # Internal: one test in its own process, so that a failing assertion can
  # end it, its cleanups run from a trap, and the harness can bound it.
  t=$2 tdir=$3
  source "$here/lib.sh"
  for f in "$here"/test_*.sh; do source "$f"; done
  FAIL_FILE=$tdir/.fail
  SKIP_FILE=$tdir/.skip
  trap 'run_deferred' EXIT
  trap 'exit 143' TERM INT
  cd "$tdir" || exit 1
  B=$tdir/bundle
  make_bundle "$B" > /dev/null || fail "make_bundle failed"
  "$t"
  exit $?
fi

if [ "$(id -u)" != 0 ]; then
  echo "integration tests need root: skipped"
  exit 77
fi
for tool in busybox jq python3 ip timeout; do
  command -v "$tool" >/dev/null || { echo "missing $tool"; exit 1; }
done
source "$here/lib.sh"
for f in "$here"/test_*.sh; do source "$f"; done
[ -x "$RUNTIME" ] || { echo "RUNTIME $RUNTIME is not an executable"; exit 1; }

final_cleanup() {
  cleanup_containers
  local ns m
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$CTR_PREFIX-"); do
    ip netns del "$ns"
  done
  # Nothing under $WORK may stay mounted before it is removed.
  for m in $(awk -v w="$WORK" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "$m"
  done
  rm -rf "$WORK"
  # Policed containers leave their audit trails (they outlive delete).
  rm -f /var/log/haven/containers/"$CTR_PREFIX"-*.jsonl
}
trap final_cleanup EXIT
trap 'exit 130' INT TERM
build_rootfs_cache

source "$here/../lib/harness.sh"
run_test_functions "$here/run.sh" "$TEST_TIMEOUT" cleanup_containers "$@"
cleanup_containers
check_nothing_left "$WORK"
[ $skipped = 0 ] || echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
