# x-haven.file=NAME:TEXT (how an engine container's hidden home starts
# with the image user's git identity, policy/image_git_identity.h): the
# file is made in the new tmpfs's root before it is attached, owned like
# that root, 0644; refused anywhere else and for names with a slash.

test_mount_file_in_new_tmpfs() {
  skip_on_runc "haven's x-haven mount options"
  cfg "$B" '.mounts += [{destination: "/mnt/home", type: "tmpfs", source: "tmpfs",
      options: ["nosuid", "nodev", "mode=0700", "uid=1001", "gid=1002", "x-haven.file=.gitconfig:[user]\n\tname = \"A, B\"\n"]}]
      | .process.user = {uid: 1001, gid: 1002}'
  args "$B" sh -c 'stat -c "%u %g %a %n" /mnt/home/.gitconfig; cat /mnt/home/.gitconfig; echo more >> /mnt/home/.gitconfig && echo appended'
  run_ctr "$B"
  assert_eq 0 "$RC" "run ($OUT)"
  assert_eq '1001 1002 644 /mnt/home/.gitconfig
[user]
	name = "A, B"
appended' "$OUT"
}

test_mount_file_refused_elsewhere() {
  skip_on_runc "haven's x-haven mount options"
  cfg "$B" '.mounts += [{destination: "/mnt/a", type: "bind", source: "/tmp", options: ["rbind", "x-haven.file=x:y"]}]'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "x-haven.file on a bind mount was accepted: $OUT"
  assert_contains "$OUT" "x-haven.file is only supported on a new tmpfs"
  rm -f "$B/config.json"
  make_bundle "$B" > /dev/null || fail "make_bundle failed"
  cfg "$B" '.mounts += [{destination: "/mnt/a", type: "tmpfs", source: "tmpfs", options: ["x-haven.file=../x:y"]}]'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "x-haven.file with a slash in its name was accepted: $OUT"
  assert_contains "$OUT" "mount option x-haven.file: one NAME:TEXT per mount, NAME one path component"
}
