#!/usr/bin/env bash
# haven mcp's tests: the official MCP TypeScript SDK's client (from npm,
# installed into a cache before the tests' clocks: need_mcp_sdk) drives
# `haven mcp` on stdio; malformed messages come from a raw client
# (raw_client.py).  Each test's haven mcp starts its own private service,
# or uses one the test started on a socket of its own.
#   [RUNTIME=/path/to/haven-runc] tests/mcp/run.sh [PATTERN...]
# Prints "ok NAME", "not ok NAME: reason" or "skip NAME: reason" per test
# and ends with "N passed, N failed"; exits non-zero if any failed, 77
# when not root.  Needs curl, jq, python3, util-linux (setpriv); node and
# npm (the SDK's tests skip without them).  HAVEN_MCP_SDK: where the SDK
# is installed (default /var/cache/haven-tests/mcp-sdk; npm's registry is
# needed only the first time); MCP_TEST_TIMEOUT: each test's limit (180 s).
set -u
here=$(cd "$(dirname "$0")" && pwd)
MCP_TEST_TIMEOUT=${MCP_TEST_TIMEOUT:-180}

if [ "${1:-}" = --one ]; then
  # Internal: one test in its own process, bounded by the harness.
  source "$here/lib.sh"
  for f in "$here"/test_*.sh; do source "$f"; done
  source "$here/../lib/harness.sh"
  run_one_test "$2" "$3"
fi

if [ "$(id -u)" != 0 ]; then
  echo "mcp tests need root: skipped"
  exit 77
fi
for tool in curl jq timeout setpriv python3; do
  command -v "$tool" > /dev/null || { echo "missing $tool"; exit 1; }
done
source "$here/lib.sh"
for f in "$here"/test_*.sh; do source "$f"; done
[ -x "$HAVEN" ] || { echo "haven $HAVEN is not an executable"; exit 1; }

final_cleanup() {
  local p
  # A haven mcp or service a test left running (it was killed): its
  # sandboxes end with it.
  for p in $(suite_processes "$WORK" | awk '{print $1}'); do kill -KILL "$p" 2> /dev/null; done
  rm -rf "$WORK"
}
trap final_cleanup EXIT
trap 'exit 130' INT TERM

source "$here/../lib/harness.sh"
run_test_functions "$here/run.sh" "$MCP_TEST_TIMEOUT" between_tests "$@"
check_nothing_left "$WORK"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
