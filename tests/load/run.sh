#!/usr/bin/env bash
# The load tests (README.md here): parallel lifecycles, the sequential
# soak and the monitor's fds under load, one after the other.
#
#   sudo tests/load/run.sh --quick     20 at once, 100 + 100 in a row,
#                                      50 execs and 500 DNS queries
#   sudo tests/load/run.sh [--full]    200 at once, 10000 + 10000 in a row,
#                                      2000 execs and 20000 DNS queries
#   PARTS=parallel,soak,fds            which parts (default: all three)
#   PAR= SOAK= EXECS= QUERIES=         other sizes than the mode's
#   HAVEN=... RUNTIME=...              other binaries (for figures: a build
#                                      without --enable-sanitizers)
#
# A sanitizer build's reports from any process of the runs (the monitors
# too, whose stderr nobody reads) are written under a directory of this
# run; any report is a failure.  Exit status 0 when every part passed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=full
case ${1:-} in
  --quick) mode=quick ;;
  --full | "") mode=full ;;
  *) echo "usage: run.sh [--quick|--full]" >&2; exit 2 ;;
esac
if [ $mode = quick ]; then
  par=20 soak=100 execs=50 queries=500
else
  par=200 soak=10000 execs=2000 queries=20000
fi
par=${PAR:-$par} soak=${SOAK:-$soak} execs=${EXECS:-$execs} queries=${QUERIES:-$queries}
parts=${PARTS:-parallel,soak,fds}

[ "$(id -u)" = 0 ] || { echo "load: needs root" >&2; exit 77; }
for tool in jq nft nsenter python3 busybox; do
  command -v $tool > /dev/null || { echo "load: $tool missing" >&2; exit 77; }
done
[ -x /usr/bin/pasta ] || [ -x /usr/local/bin/pasta ] || { echo "load: pasta missing (Debian package passt)" >&2; exit 77; }

san=$(mktemp -d /tmp/hv-load-san.XXXXXX)
chmod 755 "$san"
trap 'rm -rf "$san"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$san/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$san/ubsan"

status=0
t0=$SECONDS
run_part() {
  echo "== $*"
  "$@" || status=1
}
[[ ,$parts, == *,parallel,* ]] && run_part "$here/parallel.sh" "$par"
[[ ,$parts, == *,soak,* ]] && run_part "$here/soak.sh" "$soak"
[[ ,$parts, == *,fds,* ]] && run_part "$here/fds.sh" "$execs" "$queries"
if [ -n "$(ls -A "$san")" ]; then
  echo "FAIL: sanitizer reports:" >&2
  head -c 4000 "$san"/* >&2
  status=1
fi
echo "load ($mode): $((SECONDS - t0)) s, $([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
