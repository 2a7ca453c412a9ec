# Escapes through what a policy does not say:
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
  cat > "$P.pol/seed.yaml" <<EOP
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
  PATH=$SYSTEM_PATH haven_in "$P" run --policy "$P.pol/seed.yaml" -- python3 -c '
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
    PATH=$SYSTEM_PATH haven_in "$P" run --policy "$P.pol/seed.yaml" -- gcc -o /tmp/hello hello.c
    assert_eq 0 "$RC" "gcc compiles and links under the seed policy ($OUT)"
  fi
  # Layering still works, and `extends: none` opts out explicitly.
  printf 'extends: none\nfilesystem: {read_only: [/project]}\n' > "$P.pol/bare.yaml"
  haven_in "$P" policy explain "$P.pol/bare.yaml"
  assert_not_contains "$OUT" "Your home directory is hidden" "extends: none"
  haven_in "$P" policy explain "$P.pol/seed.yaml"
  assert_contains "$OUT" "Your home directory is hidden" "seed policy builds on default"
}

# fake_passwd HOME-OF-ROOT [EXTRA-LINE]: a copy of /etc/passwd in which
# root's home is HOME-OF-ROOT, path in $PASSWD.  Used through
# with_passwd, which bind-mounts it in a private mount namespace: the
# host's /etc/passwd is never touched.
fake_passwd() {
  PASSWD=$(mktemp -u "$WORK/passwd-XXXXXX")
  awk -F: -v OFS=: -v h="$1" '$1 == "root" {$6 = h} {print}' /etc/passwd > "$PASSWD"
  [ -n "${2:-}" ] && echo "$2" >> "$PASSWD"
  grep -q "^root:.*:$1:" "$PASSWD" || fail "fake passwd has no root entry with home $1"
}

# with_passwd DIR CMD...: run CMD in DIR with $PASSWD as /etc/passwd;
# output in $OUT, status in $RC.
with_passwd() {
  local dir=$1
  shift
  OUT=$(cd "$dir" && timeout 30 unshare -m --propagation private sh -c \
        'mount --bind "$0" /etc/passwd && exec "$@"' "$PASSWD" "$@" 2>&1 </dev/null)
  RC=$?
}

# HOME unset or pointing elsewhere: the home in the password database
# keeps its secrets hidden all the same.
test_escape_home_from_password_database() {
  need_haven
  make_project
  # The real home where homes live: under /tmp the default's private /tmp
  # would hide it anyway.
  local home=/home/hvt-home-$RANDOM elsewhere=$(mktemp -u "$WORK/elsewhere-XXXXXX")
  mkdir -p "$home/.ssh" "$home/.aws" "$elsewhere"
  defer "rm -rf '$home'"
  echo private-key > "$home/.ssh/id_ed25519"
  echo aws-creds > "$home/.aws/credentials"
  echo rc-file > "$home/.bashrc"
  fake_passwd "$home"
  with_passwd "$P" sh -c 'getent passwd root | cut -d: -f6'
  assert_eq "$home" "$OUT" "the fake password database is in effect"
  local read_secrets="cat $home/.ssh/id_ed25519 $home/.aws/credentials $home/.bashrc; ls -A $home"
  with_passwd "$P" env -u HOME PATH=$SYSTEM_PATH "$HAVEN" run -- sh -c "$read_secrets"
  assert_not_contains "$OUT" "private-key" "HOME unset: ~/.ssh"
  assert_not_contains "$OUT" "aws-creds" "HOME unset: ~/.aws"
  assert_not_contains "$OUT" "rc-file" "HOME unset: the home"
  assert_eq 3 "$(echo "$OUT" | grep -c "No such file")" "HOME unset: three files absent ($OUT)"
  with_passwd "$P" env HOME="$elsewhere" PATH=$SYSTEM_PATH "$HAVEN" run -- sh -c "$read_secrets"
  assert_not_contains "$OUT" "private-key" "HOME elsewhere: ~/.ssh"
  assert_not_contains "$OUT" "aws-creds" "HOME elsewhere: ~/.aws"
  assert_eq 3 "$(echo "$OUT" | grep -c "No such file")" "HOME elsewhere: three files absent ($OUT)"
  # home_allow applies to both homes.
  mkdir -p "$home/.cache" && echo cached > "$home/.cache/x"
  with_passwd "$P" env HOME="$elsewhere" PATH=$SYSTEM_PATH "$HAVEN" run -- cat "$home/.cache/x"
  assert_eq cached "$OUT" "home_allow in the password database's home"
}

# A project that is the home, or contains it, would put ~/.bashrc back
# under the sandbox's pen: refused, whichever home it is.
test_escape_project_is_home_refused() {
  need_haven
  make_project
  echo rc-file > "$P/.bashrc"
  local home=$(mktemp -u "$WORK/realhome-XXXXXX")
  mkdir -p "$home"
  fake_passwd "$home"
  with_passwd "$P" env HOME="$P" PATH=$SYSTEM_PATH "$HAVEN" run -- sh -c 'echo evil >> ~/.bashrc'
  [ "$RC" != 0 ] || fail "a project that is \$HOME ran"
  assert_contains "$OUT" "the project $P is your home directory $P"
  mkdir -p "$P/sub"
  with_passwd "$P" env HOME="$P/sub" PATH=$SYSTEM_PATH "$HAVEN" run -- true
  [ "$RC" != 0 ] || fail "a project that contains \$HOME ran"
  assert_contains "$OUT" "the project $P contains your home directory $P/sub"
  # The password database's home, with HOME elsewhere.
  fake_passwd "$P"
  with_passwd "$P" env HOME="$home" PATH=$SYSTEM_PATH "$HAVEN" run -- sh -c 'echo evil >> '"$P/.bashrc"
  [ "$RC" != 0 ] || fail "a project that is the password database's home ran"
  assert_contains "$OUT" "is your home directory $P"
  assert_eq rc-file "$(cat "$P/.bashrc")" "~/.bashrc on the host"
  haven_in / run --project / -- true
  assert_contains "$OUT" "the project cannot be /"
}

# As root, other users' homes are readable: they are hidden, and a
# project inside one still works.
test_escape_other_users_homes_hidden_as_root() {
  need_haven
  make_project
  local other=/home/hvt-other-$RANDOM
  mkdir -p "$other/.ssh" "$other/proj"
  defer "rm -rf '$other'"
  echo their-key > "$other/.ssh/id_ed25519"
  echo their-code > "$other/proj/main.c"
  echo tmp-secret > "$other/x"
  # Also a user the /home listing would not show: a home one level down.
  mkdir -p "$other/nested/user/.aws"
  echo nested-creds > "$other/nested/user/.aws/credentials"
  fake_passwd /root "hvtother$RANDOM:x:54321:54321::$other/nested/user:/bin/sh"
  with_passwd "$P" env PATH=$SYSTEM_PATH "$HAVEN" run -- sh -c \
    "cat $other/.ssh/id_ed25519 $other/x $other/nested/user/.aws/credentials; ls -A $other | wc -l"
  assert_not_contains "$OUT" "their-key" "another user's ~/.ssh"
  assert_not_contains "$OUT" "nested-creds" "a nested home"
  assert_eq 3 "$(echo "$OUT" | grep -c "No such file")" "other homes absent ($OUT)"
  with_passwd "$other/proj" env PATH=$SYSTEM_PATH "$HAVEN" run -- sh -c "cat main.c; cat ../.ssh/id_ed25519"
  assert_contains "$OUT" "their-code" "a project inside another user's home"
  assert_not_contains "$OUT" "their-key" "the rest of that home"
}

# As root, the engines' data roots once held every other container's
# files (overlay layers, volumes, runc's state with their environment),
# readable from the sandbox.  They are hidden like other users' homes.
test_escape_engine_data_roots_hidden_as_root() {
  need_haven
  make_project
  local d tag=hvt-$RANDOM
  for d in /var/lib/docker /var/lib/containerd /run/containerd /var/lib/containers /run/containers; do
    # A root made here is removed after (deferred commands run last
    # first: its contents go before it).
    if [ ! -e "$d" ]; then
      mkdir -p "$d"
      defer "rmdir '$d'"
    fi
    mkdir -p "$d/$tag/volume"
    echo "other-container-secret" > "$d/$tag/volume/secret"
    defer "rm -rf '$d/$tag'"
  done
  haven_in "$P" run -- sh -c "for d in /var/lib/docker /var/lib/containerd /run/containerd /var/lib/containers /run/containers; do cat \$d/$tag/volume/secret; ls -A \$d | wc -l; done"
  assert_not_contains "$OUT" "other-container-secret" "another container's files"
  assert_eq 5 "$(echo "$OUT" | grep -c "secret: No such file")" "engine roots hidden ($OUT)"
  # Whatever hide_home says: they are no one's home.
  printf 'extends: default\nfilesystem:\n  hide_home: false\n' > "$P.pol/shown.yaml"
  haven_in "$P" run --policy "$P.pol/shown.yaml" -- cat /var/lib/docker/$tag/volume/secret
  assert_not_contains "$OUT" "other-container-secret" "with hide_home: false"
  assert_contains "$OUT" "No such file"
}

# unix_server PATH: a host daemon listening on the Unix socket PATH (in
# the background for at most 60 s), answering "host-daemon".
unix_server() {
  timeout 60 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
while True:
    c, _ = s.accept()
    c.sendall(b"host-daemon\n")
    c.close()
' "$1" &
  defer "kill $! 2>/dev/null"
  wait_socket "$1"
}

# connect_from_sandbox PATH...: one line per path, "connected ..." or
# "refused ..." as seen from `haven run` under the default policy.
connect_from_sandbox() {
  PATH=$SYSTEM_PATH haven_in "$P" run -- python3 -c '
import socket, sys
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        print("connected", path, s.recv(64).decode().strip())
    except OSError as e:
        print("refused", path, e.strerror)
' "$@"
}

# A host daemon's socket outside /run (LXD keeps /var/lib/lxd/unix.socket)
# stays connectable on a read-only mount: masked, and /var/tmp private.
test_escape_unix_sockets_outside_run() {
  need_haven
  make_project
  local lib=/var/lib/hvt-daemon-$RANDOM vartmp=/var/tmp/hvt-daemon-$RANDOM
  mkdir -p "$lib" "$vartmp"
  defer "rm -rf '$lib' '$vartmp'"
  unix_server "$lib/unix.socket"
  unix_server "$vartmp/daemon.sock"
  # The servers answer on the host.
  assert_eq host-daemon "$(python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(64).decode().strip())' "$lib/unix.socket")"
  connect_from_sandbox "$lib/unix.socket" "$vartmp/daemon.sock"
  assert_eq 0 "$RC" "python3 in the sandbox ($OUT)"
  assert_not_contains "$OUT" "connected" "a host daemon's socket outside /run"
  assert_contains "$OUT" "refused $lib/unix.socket"
  assert_contains "$OUT" "refused $vartmp/daemon.sock"
  # The explanation says what is and is not covered.
  haven_in "$P" policy explain default
  assert_contains "$OUT" "Unix sockets bound on the host when the run starts"
}

# Secrets under other names than .env: every dotenv variant but the
# committed templates, .envrc, credential files and private keys, at any
# depth in the project, and other projects' under /srv and /var/www.
test_escape_secret_file_families_hidden() {
  need_haven
  make_project
  local f secret=(.env.local .env.production .envrc src/deep/.env.staging .netrc .npmrc .pypirc .git-credentials
                  id_rsa keys/id_ed25519 config/server.key config/tls.pem certs/client.p12 certs/client.pfx)
  local visible=(.env.example .env.sample .env.template .env.dist .env.defaults src/deep/.env.example
                 .venv/lib/site-packages/certifi/cacert.pem keys/id_ed25519.pub config/app.yaml)
  for f in "${secret[@]}" "${visible[@]}"; do
    mkdir -p "$(dirname "$P/$f")"
    echo "CONTENT-$f" > "$P/$f"
  done
  # Another project on the machine, outside any home.
  [ -d /srv ] || { mkdir /srv && defer "rmdir /srv"; }
  [ -d /var/www ] || { mkdir -p /var/www && defer "rmdir /var/www"; }
  local srv=/srv/hvt-app-$RANDOM www=/var/www/hvt-site-$RANDOM
  mkdir -p "$srv/deploy" "$www"
  defer "rm -rf '$srv' '$www'"
  echo "CONTENT-srv" > "$srv/deploy/.env.production"
  echo "CONTENT-www" > "$www/.env"
  echo "CONTENT-srv-example" > "$srv/.env.example"
  PATH=$SYSTEM_PATH haven_in "$P" run -- python3 -c '
import sys
for path in sys.argv[1:]:
    try:
        data = open(path).read().strip()
    except OSError as e:
        data = ""
    print(path, data or "HIDDEN")
' "${secret[@]}" "${visible[@]}" "$srv/deploy/.env.production" "$www/.env" "$srv/.env.example"
  assert_eq 0 "$RC" "python3 in the sandbox ($OUT)"
  for f in "${secret[@]}"; do
    assert_contains "$OUT" "$f HIDDEN" "secret $f"
  done
  for f in "${visible[@]}"; do
    assert_contains "$OUT" "$f CONTENT-$f" "template or public file $f"
  done
  assert_contains "$OUT" "$srv/deploy/.env.production HIDDEN" "a project's .env under /srv"
  assert_contains "$OUT" "$www/.env HIDDEN" "a site's .env under /var/www"
  assert_contains "$OUT" "$srv/.env.example CONTENT-srv-example" "a template under /srv"
  # A policy extending default can hide a template again (the last
  # matching entry decides) and explain lists the exceptions.
  printf 'extends: default\nfilesystem: {block: ["{project}/**/.env.sample"]}\n' > "$P.pol/tight.yaml"
  PATH=$SYSTEM_PATH haven_in "$P" run --policy "$P.pol/tight.yaml" -- cat .env.sample .env.example
  assert_eq "CONTENT-.env.example" "$OUT" "a template hidden again by a later entry"
  haven_in "$P" policy explain default
  assert_contains "$OUT" "Not hidden, as exceptions to the above"
  assert_contains "$OUT" "at any depth under {project}: .env.example"
  printf 'filesystem: {read_only: ["!/x"]}\n' > "$P.pol/bad.yaml"
  haven_in "$P" policy check "$P.pol/bad.yaml"
  assert_contains "$OUT" "only filesystem.block takes \"!\" exceptions"
}
