#!/usr/bin/env bash
# haven serve's tests: a service on a private socket per test, driven
# with curl over its Unix socket.
#   [RUNTIME=/path/to/haven-runc] tests/service/run.sh [PATTERN...]
# Prints "ok NAME", "not ok NAME: reason" or "skip NAME: reason" per test
# and ends with "N passed, N failed"; exits non-zero if any failed, 77
# when not root.  Needs curl, jq, util-linux (setpriv).
set -u
here=$(cd "$(dirname "$0")" && pwd)
SERVICE_TEST_TIMEOUT=${SERVICE_TEST_TIMEOUT:-120}

if [ "${1:-}" = --one ]; then
  # Internal: one test in its own process, bounded by the harness.
  source "$here/lib.sh"
  for f in "$here"/test_*.sh; do source "$f"; done
  source "$here/../lib/harness.sh"
  run_one_test "$2" "$3"
fi

if [ "$(id -u)" != 0 ]; then
  echo "service tests need root: skipped"
  exit 77
fi
for tool in curl jq timeout setpriv; do
  command -v "$tool" > /dev/null || { echo "missing $tool"; exit 1; }
done
source "$here/lib.sh"
for f in "$here"/test_*.sh; do source "$f"; done
[ -x "$HAVEN" ] || { echo "haven $HAVEN is not an executable"; exit 1; }

final_cleanup() {
  local p
  # A service a test left running (it was killed): its sandboxes end with it.
  for p in $(suite_processes "$WORK" | awk '{print $1}'); do kill -KILL "$p" 2> /dev/null; done
  rm -rf "$WORK"
}
trap final_cleanup EXIT
trap 'exit 130' INT TERM

source "$here/../lib/harness.sh"
run_test_functions "$here/run.sh" "$SERVICE_TEST_TIMEOUT" between_tests "$@"
check_nothing_left "$WORK"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
