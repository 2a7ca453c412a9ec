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

# The read-only pin (the policy filter's, for what git executes in an
# engine container: policy/container_git.h): rro, rnosuid, rnodev and
# rnoexec on the whole clone, a regular file pinned as well as a
# directory, a writable pin below a read-only one made read-only with it.
test_mount_pin_read_only_file_and_directory() {
  skip_on_runc "haven's x-haven mount options"
  mkdir -p "$B/rootfs/w/.git/hooks/sub"
  echo '[core]' > "$B/rootfs/w/.git/config"
  printf '#!/bin/sh\necho ran\n' > "$B/rootfs/w/.git/hooks/pre-commit"
  chmod +x "$B/rootfs/w/.git/hooks/pre-commit"
  local ro='["bind", "x-haven.nofollow", "x-haven.pin", "rro", "rnosuid", "rnodev", "rnoexec"]'
  cfg "$B" '.root.readonly = false | .mounts += [
      {destination: "/w/.git", type: "bind", source: "/w/.git", options: ["bind", "x-haven.nofollow", "x-haven.pin"]},
      {destination: "/w/.git/hooks/sub", type: "bind", source: "/w/.git/hooks/sub", options: ["bind", "x-haven.nofollow", "x-haven.pin"]},
      {destination: "/w/.git/hooks", type: "bind", source: "/w/.git/hooks", options: $ro},
      {destination: "/w/.git/config", type: "bind", source: "/w/.git/config", options: $ro}]' --argjson ro "$ro"
  args "$B" sh -c 'echo x >> /w/.git/config 2>&1; touch /w/.git/hooks/new 2>&1; touch /w/.git/hooks/sub/new 2>&1;
    /w/.git/hooks/pre-commit 2>&1; mv /w/.git/config /w/.git/c2 2>&1; mv /w/.git /w/g2 2>&1;
    touch /w/.git/HEAD && echo gitdir-writable;
    grep -E " /w/.git/(hooks|config) " /proc/self/mountinfo | grep -c " ro,.*nosuid.*nodev.*noexec"'
  run_ctr "$B"
  assert_eq 0 "$RC" "run ($OUT)"
  assert_eq 3 "$(echo "$OUT" | grep -c 'Read-only file system')" "config, hooks and the pin below hooks are read-only ($OUT)"
  assert_contains "$OUT" "Permission denied" "a hook cannot run from a noexec pin"
  assert_not_contains "$OUT" "ran"
  assert_eq 2 "$(echo "$OUT" | grep -c 'resource busy')" "neither the config nor .git can be renamed ($OUT)"
  assert_contains "$OUT" "gitdir-writable"
  assert_eq 1 "$(echo "$OUT" | grep -xc 2)" "both read-only pins carry ro, nosuid, nodev, noexec ($OUT)"
}

test_mount_pin_refuses_other_options_and_kinds() {
  skip_on_runc "haven's x-haven mount options"
  mkdir -p "$B/rootfs/d"
  mkfifo "$B/rootfs/fifo"
  cfg "$B" '.mounts += [{destination: "/d", type: "bind", source: "/d", options: ["bind", "x-haven.nofollow", "x-haven.pin", "ro"]}]'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "a pin with a non-recursive ro ran: $OUT"
  assert_contains "$OUT" "x-haven.pin takes no other option"
  cfg "$B" '.mounts = [.mounts[] | select(.destination != "/d")]'
  cfg "$B" '.mounts += [{destination: "/d", type: "bind", source: "/d", options: ["bind", "x-haven.nofollow", "x-haven.pin", "rrw"]}]'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "a pin that gives rights back ran: $OUT"
  assert_contains "$OUT" "x-haven.pin takes no other option"
  cfg "$B" '.mounts = [.mounts[] | select(.destination != "/d")]'
  pin_bundle /fifo
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "a pin of a fifo ran: $OUT"
  assert_contains "$OUT" "destination /fifo is not a directory or a regular file"
}
