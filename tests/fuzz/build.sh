#!/bin/sh
# Build the libFuzzer targets with clang (not part of the normal build,
# which needs no clang):
#   tests/fuzz/build.sh [OUTDIR]        (default tests/fuzz/build)
#   tests/fuzz/build/fuzz_dns_message -max_total_time=600 \
#       tests/fuzz/corpus/dns_message   (new inputs land in the corpus dir:
#                                        commit only the few that matter)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/fuzz/build}
CC=${CC:-clang}
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "build.sh: $CC not found: the fuzz targets need clang with libFuzzer" >&2
  exit 77
fi
mkdir -p "$out/include"
# The sources include config.h for _GNU_SOURCE; a configured tree is not
# needed for these few files.
: > "$out/include/config.h"
$CC -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$out/include" -I"$top/oci" -I"$top/runtime" \
  "$top/tests/fuzz/fuzz_dns_message.c" "$top/runtime/dns_message.c" "$top/oci/error.c" \
  -o "$out/fuzz_dns_message"
echo "$out/fuzz_dns_message"
