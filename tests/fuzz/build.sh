#!/bin/sh
# Build the libFuzzer targets with clang (not part of the normal build,
# which needs no clang):
#   tests/fuzz/build.sh [OUTDIR]        (default tests/fuzz/build)
#   tests/fuzz/build/fuzz_dns_message -max_total_time=600 \
#       tests/fuzz/corpus/dns_message   (new inputs land in the corpus dir:
#                                        commit only the few that matter)
# The targets are listed in TARGETS below (README.md says what each
# checks).  The library layers they reach (oci/, runtime/, policy/,
# session/home_commands.c, the service's API parsing, haven mcp's protocol layer and cli/audit_view.c) are
# compiled once with the
# fuzzer's coverage and the sanitizers into OUTDIR/obj (an object is rebuilt when its source or any
# header is newer).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/fuzz/build}
CC=${CC:-clang}
TARGETS="fuzz_dns_message fuzz_oci_spec fuzz_state fuzz_policy fuzz_audit_records fuzz_netlink fuzz_landlock_audit
  fuzz_agent_config fuzz_home_commands fuzz_http_message fuzz_git_credential fuzz_ssh_agent fuzz_containerd_config fuzz_keeper_proto
  fuzz_service_api fuzz_mcp_proto fuzz_trail_chain"
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "build.sh: $CC not found: the fuzz targets need clang with libFuzzer" >&2
  exit 77
fi
mkdir -p "$out/include" "$out/obj"
# The sources include config.h for _GNU_SOURCE, version strings and the
# policy directory (the repository's); a configured tree is not needed.
cat > "$out/include/config.h.new" <<H
#define HAVEN_OCI_VERSION "1.2.1"
#define HAVEN_GIT_COMMIT "fuzz"
#define HAVEN_POLICY_DIR "$top/policies"
#define HAVEN_FUZZ_POLICIES "$top/policies"
H
cmp -s "$out/include/config.h.new" "$out/include/config.h" || mv "$out/include/config.h.new" "$out/include/config.h"
rm -f "$out/include/config.h.new"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# Every folder's headers, faces and internals alike: the targets test insides.
INCS=
for d in base oci runtime runtime/include runtime/audit runtime/audit/include runtime/cgroup runtime/cgroup/include \
         runtime/guard runtime/guard/include runtime/egress runtime/egress/include runtime/monitor runtime/monitor/include \
         runtime/gateway runtime/gateway/include policy session session/service session/mcp cli; do
  INCS="$INCS -I$top/$d"
done
CFLAGS="-g -O1 -D_GNU_SOURCE $SAN -I$out/include$INCS"
LIBS="-lyajl -lseccomp -lcap -lmnl -lnftnl -lyaml -lsystemd -lcrypto -lm"

# Objects, two compilers at a time.
newest_header=$(ls -t "$top"/base/*.h "$top"/oci/*.h "$top"/runtime/*.h "$top"/runtime/*/*.h "$top"/runtime/*/include/*.h "$top"/runtime/include/*.h "$top"/policy/*.h "$top"/session/home_commands.h "$top"/session/service/service_api*.h "$top"/session/mcp/mcp_*.h "$top"/cli/*.h "$out/include/config.h" | head -1)
: > "$out/obj/list"
for src in "$top"/base/*.c "$top"/oci/*.c "$top"/runtime/*.c "$top"/runtime/*/*.c "$top"/policy/*.c "$top/session/home_commands.c" "$top"/session/service/service_api_*.c "$top/session/mcp/mcp_proto.c" "$top/session/mcp/mcp_session.c" "$top/cli/audit_view.c" "$top/cli/cri_install.c" "$top/cli/toml_scan.c"; do
  obj=$out/obj/$(basename "$(dirname "$src")")_$(basename "$src" .c).o
  echo "$obj" >> "$out/obj/list"
  if [ ! "$obj" -nt "$src" ] || [ ! "$obj" -nt "$newest_header" ]; then
    printf '%s %s\n' "$src" "$obj"
  fi
done | xargs -r -n 2 -P "${JOBS:-2}" sh -c "$CC $CFLAGS -fsanitize=fuzzer-no-link -c \"\$0\" -o \"\$1\"" 
rm -f "$out/libhaven-fuzz.a"
ar rcs "$out/libhaven-fuzz.a" $(cat "$out/obj/list")

for t in $TARGETS; do
  $CC $CFLAGS -fsanitize=fuzzer "$top/tests/fuzz/$t.c" "$out/libhaven-fuzz.a" $LIBS -o "$out/$t"
  echo "$out/$t"
done
