#!/usr/bin/env bash
# make check's load test: run.sh --quick (20 lifecycles of each kind at
# once, 100 + 100 runs in a row, 50 execs and 500 DNS queries against one
# monitor), with the build's own binaries; counted as one test.
# Exit 77 (skip) where run.sh cannot run: not root, a tool missing.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export HAVEN=${HAVEN:-$top/haven} RUNTIME=${RUNTIME:-$top/haven-runc}
"$here/run.sh" --quick
rc=$?
case $rc in
  0) echo "1 passed, 0 failed" ;;
  77) exit 77 ;;
  *) echo "0 passed, 1 failed"; exit 1 ;;
esac
