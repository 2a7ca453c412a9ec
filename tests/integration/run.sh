#!/usr/bin/env bash
# Integration tests: real containers through the runtime's CLI.
#   sudo [RUNTIME=/path/to/runtime] tests/integration/run.sh [PATTERN...]
# Prints "ok NAME" / "not ok NAME: reason" per test and ends with
# "N passed, N failed".  Needs root and busybox-static, jq, python3.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
  echo "integration tests need root: skipped"
  exit 77
fi
for tool in busybox jq python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool"; exit 1; }
done
source "$here/lib.sh"
for f in "$here"/test_*.sh; do
  source "$f"
done
trap 'cleanup_containers; rm -rf "$WORK"' EXIT
build_rootfs_cache

passed=0
failed=0
for t in $(declare -F | awk '{print $3}' | grep '^test_' | sort); do
  name=${t#test_}
  if [ $# -gt 0 ]; then
    match=0
    for p in "$@"; do [[ "$name" == *"$p"* ]] && match=1; done
    [ $match = 1 ] || continue
  fi
  tdir=$WORK/$name
  mkdir -p "$tdir"
  # Each test runs in a subshell with its own bundle directory $B.
  (
    set -u
    cd "$tdir"
    B=$tdir/bundle
    make_bundle "$B"
    "$t"
  ) > "$tdir/log" 2>&1
  rc=$?
  cleanup_containers
  if [ $rc = 0 ]; then
    echo "ok $name"
    passed=$((passed + 1))
  else
    echo "not ok $name: $(tail -1 "$tdir/log")"
    tail -15 "$tdir/log" | sed 's/^/    /'
    failed=$((failed + 1))
  fi
  rm -rf "$tdir"
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
