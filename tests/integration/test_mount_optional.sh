# x-haven.optional on a tmpfs (how haven run hides other users' homes,
# policy_compile.c gen_hidden_homes): a mount point that is gone when the
# runtime lays the tmpfs is skipped, not an error (tests/load's soak saw
# `haven run` fail when a test suite beside it removed a user's home
# between the compile and the mount).  Only "gone" is skipped: a mount
# point that is there is hidden, a link is refused, and without the option
# a missing mount point stops the start.

OPTIONAL_TMPFS_OPTS='["nosuid", "nodev", "noexec", "mode=755", "size=1m", "x-haven.nofollow", "x-haven.optional"]'

# optional_tmpfs_bundle DEST OPTIONS-JSON: $B read-only with a tmpfs on DEST.
optional_tmpfs_bundle() {
  cfg "$B" '.root.readonly = true | .mounts += [{destination: $d, type: "tmpfs", source: "tmpfs", options: $o}]' \
    --arg d "$1" --argjson o "$2"
}

test_mount_optional_tmpfs_gone_is_skipped() {
  skip_on_runc "haven's x-haven mount options"
  optional_tmpfs_bundle /home/gone "$OPTIONAL_TMPFS_OPTS"
  args "$B" sh -c 'ls -d /home/gone 2>&1; echo done'
  run_ctr "$B"
  assert_eq 0 "$RC" "run ($OUT)"
  assert_contains "$OUT" "No such file"
  assert_contains "$OUT" "done"
}

test_mount_optional_tmpfs_still_hides() {
  skip_on_runc "haven's x-haven mount options"
  mkdir -p "$B/rootfs/home/other/.ssh"
  echo their-key > "$B/rootfs/home/other/.ssh/id_ed25519"
  optional_tmpfs_bundle /home/other "$OPTIONAL_TMPFS_OPTS"
  args "$B" sh -c 'cat /home/other/.ssh/id_ed25519 2>&1; ls -A /home/other | wc -l'
  run_ctr "$B"
  assert_eq 0 "$RC" "run ($OUT)"
  assert_not_contains "$OUT" "their-key" "a home hidden by an optional tmpfs"
  assert_contains "$OUT" "No such file"
}

test_mount_optional_tmpfs_link_refused() {
  skip_on_runc "haven's x-haven mount options"
  mkdir -p "$B/rootfs/home" "$B/rootfs/elsewhere"
  ln -s ../elsewhere "$B/rootfs/home/other"
  optional_tmpfs_bundle /home/other "$OPTIONAL_TMPFS_OPTS"
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "a tmpfs onto a link ran: $OUT"
  assert_contains "$OUT" "mount tmpfs on /home/other: destination /home/other: not a directory"
}

test_mount_optional_tmpfs_gone_without_option_fails() {
  skip_on_runc "haven's x-haven mount options"
  optional_tmpfs_bundle /home/gone '["nosuid", "nodev", "noexec", "mode=755", "size=1m", "x-haven.nofollow"]'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "a missing mount point without x-haven.optional ran: $OUT"
  assert_contains "$OUT" "destination /home/gone does not exist"
}
