# Escapes through what a policy does not say (issue 7, items 7, 8, 10, 12):
# a policy in the LLM-safe-haven seed format, a home that $HOME does not
# name, secrets under other names than .env, and host daemons' Unix
# sockets outside /run.

# The seed format's own example (LLM-safe-haven), with the project named
# The system PATH: a PATH with version-manager shims first (pyenv) would
# make allow_exec name the shim, not the program the runtime runs.
SYSTEM_PATH=/usr/sbin:/usr/bin:/sbin:/bin

# /project as in its containers: silent about .git/hooks, /tmp and PATH,
# it must still be as strict there as the default policy.
test_escape_seed_format_as_strict_as_default() {
  need_haven
  make_project
  mkdir -p "$P/data"
  printf 'int main (void) { return 0; }\n' > "$P/hello.c"
  cat > "$P/seed.yaml" <<EOP
filesystem: {read_only: ['/project', '/data'], block: ['/etc/passwd', '/home/*/.ssh']}
network: {allow: ['api.github.com'], block_all: true}
process: {allow_exec: ['python3', 'gcc'], block_shell: true}
EOP
  # What the host's /tmp holds: a file, and a tmux server's socket.
  local marker=/tmp/haven-seed-marker-$RANDOM sockdir=/tmp/tmux-haven-$RANDOM
  echo host > "$marker"
  mkdir -p "$sockdir"
  python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$sockdir/default"
  defer "rm -rf '$marker' '$sockdir'"
  [ -S "$sockdir/default" ] || fail "no socket made on the host"
  PATH=$SYSTEM_PATH haven_in "$P" run --policy "$P/seed.yaml" -- python3 -c '
import os, sys
def writable(p):
    try:
        open(p, "w").close(); return "writable"
    except OSError: return "ro"
print("hooks", writable(".git/hooks/pre-commit"))
print("project", writable("new-file"))
print("marker", os.path.exists(sys.argv[1]))
print("tmux", os.path.exists(sys.argv[2]))
' "$marker" "$sockdir/default"
  assert_contains "$OUT" "hooks ro" "seed policy: .git/hooks"
  assert_contains "$OUT" "project ro" "seed policy: read_only ['/project']"
  assert_contains "$OUT" "marker False" "seed policy: the host's /tmp"
  assert_contains "$OUT" "tmux False" "seed policy: a tmux socket in the host's /tmp"
  [ ! -e "$P/.git/hooks/pre-commit" ] && [ ! -e "$P/new-file" ] || fail "the seed policy wrote to the project"
  if command -v gcc >/dev/null; then
    PATH=$SYSTEM_PATH haven_in "$P" run --policy "$P/seed.yaml" -- gcc -o /tmp/hello hello.c
    assert_eq 0 "$RC" "gcc compiles and links under the seed policy ($OUT)"
  fi
  # Layering still works, and `extends: none` opts out explicitly.
  printf 'extends: none\nfilesystem: {read_only: [/project]}\n' > "$P/bare.yaml"
  haven_in "$P" policy explain "$P/bare.yaml"
  assert_not_contains "$OUT" "Your home directory is hidden" "extends: none"
  haven_in "$P" policy explain "$P/seed.yaml"
  assert_contains "$OUT" "Your home directory is hidden" "seed policy builds on default"
}
