#!/bin/sh
# Build the fuzz targets (build.sh; exit 77 without clang) and run each
# for a short time on a scratch copy of its committed corpus (the
# committed corpus is not changed):
#   tests/fuzz/smoke.sh [SECONDS [TARGET...]]   (default 20 per target; all targets, or those
#                                                named, e.g. mcp_proto)
# Fails when a target crashes, leaks, trips a sanitizer or its own
# checks; the failing input is left in the scratch dir, which is named.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-20}
[ $# -gt 0 ] && shift
out=${FUZZ_BUILD:-$here/build}
"$here/build.sh" "$out" >/dev/null || exit $?
scratch=$(mktemp -d "${TMPDIR:-/tmp}/haven-fuzz-smoke.XXXXXX")
failed=""
for bin in "$out"/fuzz_*; do
  [ -x "$bin" ] || continue
  t=${bin##*/fuzz_}
  if [ $# -gt 0 ]; then
    case " $* " in *" $t "*) ;; *) continue ;; esac
  fi
  mkdir -p "$scratch/$t/corpus" "$scratch/$t/crash"
  cp "$here/corpus/$t"/* "$scratch/$t/corpus/"
  if ASAN_OPTIONS=detect_leaks=1:${ASAN_OPTIONS:-} UBSAN_OPTIONS=print_stacktrace=1:${UBSAN_OPTIONS:-} \
     "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$scratch/$t/crash/" "$scratch/$t/corpus" >"$scratch/$t/log" 2>&1; then
    printf '%-16s ok   %s\n' "$t" "$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$scratch/$t/log" | grep -o '[0-9]*$') runs"
  else
    printf '%-16s FAIL (log and input: %s/%s)\n' "$t" "$scratch" "$t"
    tail -40 "$scratch/$t/log"
    failed="$failed $t"
  fi
done
if [ -n "$failed" ]; then
  echo "smoke: failed:$failed (kept $scratch)"
  exit 1
fi
rm -rf "$scratch"
