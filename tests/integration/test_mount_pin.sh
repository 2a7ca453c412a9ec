# x-haven.pin (runtime/mounts.h): a directory of the container's own tree
# bound onto itself, as haven run does with every directory on the way to
# a hidden path (policy_compile.c gen_pins), so that nothing in the
# container can rename or remove it (a mount point of its own namespace:
# EBUSY) while the other containers of the project start.  The pin keeps
# what the container shows there: its flags and the mounts below it.

# pin_bundle DEST [SOURCE]: $B with a pin of DEST (source SOURCE, DEST by default).
pin_bundle() {
  cfg "$B" '.mounts += [{destination: $d, type: "bind", source: $s, options: ["bind", "x-haven.nofollow", "x-haven.pin"]}]' \
    --arg d "$1" --arg s "${2:-$1}"
}

test_mount_pin_refuses_rename_keeps_flags_and_mounts() {
  skip_on_runc "haven's x-haven mount options"
  mkdir -p "$B/rootfs/w/a/b"
  echo kept > "$B/rootfs/w/a/b/file"
  # A writable tmpfs holding a/b/ro, a read-only tmpfs laid before the pin.
  cfg "$B" '.root.readonly = true
    | .mounts += [{destination: "/w", type: "tmpfs", source: "tmpfs", options: ["mode=755", "noexec"]},
                  {destination: "/w/a/b/ro", type: "tmpfs", source: "tmpfs", options: ["ro"]}]'
  pin_bundle /w/a
  args "$B" sh -c 'mkdir -p /w/a/c; mv /w/a /w/moved 2>&1; rmdir /w/a/c && echo rmdir-unpinned;
    touch /w/a/new && echo writable; touch /w/a/b/ro/x 2>&1; grep " /w/a " /proc/self/mountinfo | grep -c noexec;
    mv /w/a/b /w/a/b2 && mv /w/a/b2 /w/a/b && echo below-movable'
  run_ctr "$B"
  assert_eq 0 "$RC" "run ($OUT)"
  assert_contains "$OUT" "resource busy" "the pinned directory cannot be renamed"
  assert_contains "$OUT" "rmdir-unpinned"
  assert_contains "$OUT" "writable"
  assert_contains "$OUT" "Read-only file system" "the read-only mount below the pin stays"
  assert_contains "$OUT" "below-movable"
  assert_eq 1 "$(echo "$OUT" | grep -xc 1)" "the pin keeps noexec ($OUT)"
}

test_mount_pin_gone_stops_the_start() {
  skip_on_runc "haven's x-haven mount options"
  pin_bundle /gone
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "a pin of a missing directory ran: $OUT"
  assert_contains "$OUT" "destination /gone does not exist"
}

test_mount_pin_link_refused() {
  skip_on_runc "haven's x-haven mount options"
  mkdir -p "$B/rootfs/elsewhere/d"
  ln -s elsewhere "$B/rootfs/lnk"
  pin_bundle /lnk/d
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "a pin through a link ran: $OUT"
  assert_contains "$OUT" "destination /lnk/d crosses a symbolic link"
}

test_mount_pin_needs_its_destination_as_source() {
  skip_on_runc "haven's x-haven mount options"
  mkdir -p "$B/rootfs/a" "$B/rootfs/b"
  pin_bundle /a /b
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "a pin with another source ran: $OUT"
  assert_contains "$OUT" "x-haven.pin needs the destination as its source"
}
