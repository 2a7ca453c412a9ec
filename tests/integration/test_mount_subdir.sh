# x-haven.subdir (how haven run shows a home's copy-on-write directories,
# policy_compile.c overlay): mounts of one filesystem instance (same type,
# source and options) share it, each showing only its sub-directory of
# it, resolved beneath the instance's root through no link.

# subdir_overlay_bundle: $B with an overlay of $B/lower (a/, b/ and a link
# c -> /) whose sub-directories are named by the JSON list of
# [destination, subdir] pairs in $1.
subdir_overlay_bundle() {
  mkdir -p "$B/lower/a" "$B/lower/b" "$B/upper" "$B/work"
  echo in-a > "$B/lower/a/file"
  echo top-secret > "$B/lower/top-file"
  ln -sfn / "$B/lower/c"
  cfg "$B" '.mounts += [$pairs[] | {destination: .[0], type: "overlay", source: "overlay",
      options: ["lowerdir=\($b)/lower", "upperdir=\($b)/upper", "workdir=\($b)/work", "nosuid", "nodev",
                "x-haven.subdir=\(.[1])"]}]' --arg b "$B" --argjson pairs "$1"
}

test_mount_subdir_shares_one_instance() {
  skip_on_runc "haven's x-haven mount options"
  subdir_overlay_bundle '[["/mnt/a", "a"], ["/mnt/b", "b"]]'
  args "$B" sh -c 'grep " overlay " /proc/self/mountinfo | while read -r id parent dev root point rest; do echo "$dev $root $point"; done
    cat /mnt/a/file; echo written > /mnt/b/new; ls -A /mnt/a/.. | tr "\n" " "; echo; cat /mnt/a/../top-file 2>&1; true'
  run_ctr "$B"
  assert_eq 0 "$RC" "run ($OUT)"
  local da db
  da=$(awk '$2 == "/a" && $3 == "/mnt/a" { print $1 }' <<< "$OUT")
  db=$(awk '$2 == "/b" && $3 == "/mnt/b" { print $1 }' <<< "$OUT")
  [ -n "$da" ] && [ -n "$db" ] || fail "no sub-directory mounts: $OUT"
  assert_eq "$da" "$db" "one overlay instance for both"
  assert_contains "$OUT" in-a
  assert_not_contains "$OUT" top-secret "the instance's root, through /mnt/a/.."
  assert_eq written "$(cat "$B/upper/b/new")" "the write, in the shared upper layer"
}

test_mount_subdir_link_refused() {
  skip_on_runc "haven's x-haven mount options"
  subdir_overlay_bundle '[["/mnt/c", "c"]]'
  args "$B" sh -c 'ls /mnt/c/etc/passwd && echo SHOWN'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "a sub-directory through a link was mounted: $OUT"
  assert_not_contains "$OUT" SHOWN
  assert_contains "$OUT" "mount overlay on /mnt/c: c in the overlay"
}

test_mount_subdir_bad_option_refused() {
  skip_on_runc "haven's x-haven mount options"
  subdir_overlay_bundle '[["/mnt/a", "/a"]]'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "an absolute x-haven.subdir was accepted: $OUT"
  assert_contains "$OUT" 'mount option "x-haven.subdir=/a": one relative path'
  rm -f "$B/config.json"
  make_bundle "$B" > /dev/null || fail "make_bundle failed"
  cfg "$B" '.mounts += [{destination: "/mnt/a", type: "bind", source: "/tmp", options: ["rbind", "x-haven.subdir=a"]}]'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "x-haven.subdir on a bind mount was accepted: $OUT"
  assert_contains "$OUT" "x-haven.subdir is only supported on new filesystems"
}
