# haven_state_name PATH: the name haven gives PATH's state (a project's
# state directory, a copy-on-write entry's layers): policy/home_allow.c
# hv_state_tag, its last component (a leading '.' and every byte outside
# [A-Za-z0-9._-] made '_', at most 63 bytes), '-', and the FNV-1a hash of
# the whole path in 16 hex digits.  Sourced by tests and benchmarks.
haven_state_name() {
  local name hash
  name=$(basename "$1" | LC_ALL=C sed 's/^\./_/; s/[^A-Za-z0-9._-]/_/g' | LC_ALL=C cut -c1-63)
  hash=$(python3 -c 'import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print("%016x" % h)' "$1") || return 1
  echo "$name-$hash"
}
