# Shared by the benchmark scripts that run `haven run` in a project of
# their own (sourced).

# bench_forget_project PROJECT: removes the per-project state haven keeps
# for PROJECT under the caller's state home (the copy-on-write layers, the
# trial mount's verdict): a benchmark's project is a temporary directory,
# so its state would only pile up.  The name is haven's (policy/home_allow.c
# hv_state_tag): the last component, '-', and the FNV-1a hash of the real
# path.
bench_forget_project() {
  local real name hash root
  real=$(realpath "$1" 2>/dev/null) || return 0
  name=$(basename "$real" | LC_ALL=C sed 's/^\./_/; s/[^A-Za-z0-9._-]/_/g' | LC_ALL=C cut -c1-63)
  hash=$(python3 -c 'import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print("%016x" % h)' "$real") || return 0
  root=${XDG_STATE_HOME:-$HOME/.local/state}
  [ -d "$root/haven/projects/$name-$hash" ] && rm -rf -- "$root/haven/projects/$name-$hash"
  return 0
}
