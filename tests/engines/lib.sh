# Shared helpers for the engine tests (sourced by run.sh, in the harness
# and again in each test's own process).  The harness starts a private
# dockerd and a private Podman store; tests reach them only through dk()
# and pm(), which are bounded.

here_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# fail, skip, defer and the assertions.
source "$here_lib/../lib/assert.sh"
# The private dockerd (and wait_for).
source "$here_lib/../lib/private_dockerd.sh"
: "${RUNTIME:=$(cd "$here_lib/../.." && pwd)/haven-runc}"
: "${WORK:=$(mktemp -d /tmp/hvt-eng.XXXXXX)}"
chmod 755 "$WORK"
# This run of the suite, in the environment of everything it starts: the
# last check (nothing_left, tests/lib/harness.sh) finds what is left by it.
: "${HAVEN_TEST_SUITE:=$$.$EPOCHREALTIME}"
export HAVEN_TEST_SUITE
: "${IMAGE:=havenbox:test}"
: "${CTR_PREFIX:=hve-$$}"
# Each docker/podman call may take this long (parallel starts on 2 CPUs
# under ASan are the slowest).
: "${CALL_TIMEOUT:=60}"
export RUNTIME WORK IMAGE CTR_PREFIX CALL_TIMEOUT

DOCKER_SOCK=$WORK/docker/docker.sock
# The CLI of the docker.io package when there is one (another docker in
# PATH may be a different version than the daemon under test).
if [ -z "${DOCKER_CLI:-}" ]; then
  if [ -x /usr/bin/docker ]; then DOCKER_CLI=/usr/bin/docker; else DOCKER_CLI=$(command -v docker || true); fi
fi
export DOCKER_CLI DOCKER_SOCK
export DOCKER_HOST=unix://$DOCKER_SOCK
# docker-compose 1.29 reads DOCKER_HOST too; keep its output plain.
export COMPOSE_INTERACTIVE_NO_CLI=1 DOCKER_BUILDKIT=0

PODMAN_DIR=$WORK/podman
export CONTAINERS_CONF=$PODMAN_DIR/containers.conf
PODMAN_GLOBAL=(--root "$PODMAN_DIR/root" --runroot "$PODMAN_DIR/run" --tmpdir "$PODMAN_DIR/tmp")

# `haven` is the same binary under another name.
haven() { (exec -a haven "$RUNTIME" "$@"); }

dk() { timeout -k 5 "$CALL_TIMEOUT" "$DOCKER_CLI" "$@"; }
pm() { timeout -k 5 "$CALL_TIMEOUT" podman "${PODMAN_GLOBAL[@]}" "$@"; }

# dk_uninstall_runtime DAEMON_JSON NAME: take runtime NAME out of
# DAEMON_JSON and have dockerd reload, after removing every container it
# runs with NAME.  Order matters: a reload without NAME deletes the
# wrapper Docker made for it (DATA-ROOT/runtimes/NAME), and a container
# still running then can never be stopped: its shim cannot execute
# `kill` or `delete` (fork/exec ...: no such file or directory), `docker
# rm -f` fails with "cannot delete running task" after its 10 s, and the
# shim stays (measured with an allowlist container left running, and
# with one of policy default alike).
dk_uninstall_runtime() {
  local ids
  ids=$(dk ps -aq --no-trunc | xargs -r "$DOCKER_CLI" inspect -f '{{.Id}} {{.HostConfig.Runtime}}' 2>/dev/null \
    | awk -v n="$2" '$2 == n {print $1}')
  [ -z "$ids" ] || dk rm -f $ids > /dev/null 2>&1
  haven uninstall docker --daemon-json "$1" --name "$2" > /dev/null
  kill -HUP "$(cat "$WORK/docker/dockerd.pid")"
}

# The runtime every test container gets: haven, or (ENGINE_RUNTIME=runc)
# the engine's own runc, to tell a haven bug from an engine behaviour.
: "${ENGINE_RUNTIME:=haven}"
export ENGINE_RUNTIME
DR=(--runtime "$ENGINE_RUNTIME")
PR=(--runtime "$ENGINE_RUNTIME")

new_name() { echo "$CTR_PREFIX-$1-$RANDOM"; }

# docker/podman update run `haven-runc update`, which is being written
# separately: until the runtime has it, those tests are skipped (and run
# for real as soon as it does).
need_runtime_update() {
  [ "$ENGINE_RUNTIME" = haven ] || return 0
  if "$RUNTIME" update 2>&1 | grep -q 'unknown command'; then
    skip "haven-runc has no update command yet (it is another piece of work)"
  fi
}

need_docker() {
  [ "${HAVE_DOCKER:-0}" = 1 ] || skip "${DOCKER_MISSING:-docker is not available}"
}
need_podman() {
  [ "${HAVE_PODMAN:-0}" = 1 ] || skip "${PODMAN_MISSING:-podman is not available}"
}

# docker inspect -f FORMAT NAME
dk_state() { dk inspect -f "$2" "$1" 2>&1; }
pm_state() { pm inspect -f "$2" "$1" 2>&1; }

# Run a command with a pseudo-terminal on its stdin/stdout (docker -it
# refuses a pipe), feeding it INPUT after a pause.  Output in $OUT.
with_pty() { # INPUT COMMAND-STRING
  (sleep 2; printf '%s' "$1"; sleep 1) | timeout -k 5 "$CALL_TIMEOUT" script -qec "$2" /dev/null > pty.out 2>&1
  RC=${PIPESTATUS[1]}
  OUT=$(tr -d '\r' < pty.out)
}

# The runtime's own containers for the engines under test: none may be
# left once the engine has removed its containers.
runtime_state_count() { # ROOT
  local n=0 d
  for d in "$1"/*/; do [ -d "$d" ] && n=$((n + 1)); done
  echo $n
}

# Rootless Podman as an ordinary user (plain useradd, its subuid/subgid
# range, its own XDG_RUNTIME_DIR and vfs storage), with haven-runc
# registered as "haven" by `haven install podman --conf`.  Sets RL_USER,
# RL_UID, RL_DIR (a directory the user can reach: the runtime's copy is
# $RL_DIR/bin/haven-runc, the checkout may be 0700) and RL_XDG; as_rootless
# and upm run as that user.  Everything goes when the test ends.
rootless_podman_setup() {
  need_podman
  command -v newuidmap >/dev/null || skip "newuidmap (package uidmap) is not installed"
  RL_USER=hvrl$$
  RL_DIR=$(mktemp -d "$WORK/rootless.XXXXXX")
  chmod 755 "$RL_DIR"
  useradd -m -s /bin/sh "$RL_USER" || fail "useradd $RL_USER"
  defer "rootless_podman_teardown"
  RL_UID=$(id -u "$RL_USER")
  # Debian's useradd gives the user a subordinate range; add one where it did not.
  grep -q "^$RL_USER:" /etc/subuid \
    || usermod --add-subuids 300000-365535 --add-subgids 300000-365535 "$RL_USER" \
    || fail "no subuid range for $RL_USER"
  RL_XDG=$RL_DIR/xdg
  mkdir -m 700 "$RL_XDG" && chown "$RL_USER:" "$RL_XDG"
  mkdir -m 755 "$RL_DIR/bin"
  cp "$RUNTIME" "$RL_DIR/bin/haven-runc" && chmod 755 "$RL_DIR/bin/haven-runc"
  # Its policies where the copy looks (policies/ next to the binary):
  # without `make install` the user finds no shipped policy by name.
  if [ -d "$(dirname "$RUNTIME")/policies" ]; then
    cp -r "$(dirname "$RUNTIME")/policies" "$RL_DIR/bin/policies" && chmod -R a+rX "$RL_DIR/bin/policies" \
      || fail "copy of the policies for $RL_USER"
  fi
  haven install podman --conf "$RL_DIR/haven.conf" --runtime "$RL_DIR/bin/haven-runc" >/dev/null \
    || fail "haven install podman"
  # No cgroup manager but cgroupfs (no systemd user session) and limits
  # the user may set.
  {
    printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\nlog_driver = "k8s-file"\n\n'
    sed 's/^\[engine\]$/[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"/' "$RL_DIR/haven.conf"
  } > "$RL_DIR/containers.conf"
  # vfs: no fuse-overlayfs needed; in a file rather than
  # --storage-driver because clients that run podman themselves (the
  # devcontainer CLI) pass no such option.
  printf '[storage]\ndriver = "vfs"\n' > "$RL_DIR/storage.conf"
  chmod 644 "$RL_DIR/containers.conf" "$RL_DIR/storage.conf"
}

# The user's containers, its Podman pause process (which holds the user
# namespace; by its pid file) and the user with its home (and storage).
# userdel refuses a user that still has a process: the pause process is
# waited for (bounded), else the user is removed anyway.
rootless_podman_teardown() {
  as_rootless timeout 60 podman rm -a -f -t 0 >/dev/null 2>&1
  local pid
  pid=$(cat "$RL_XDG/libpod/tmp/pause.pid" 2>/dev/null)
  if [ -n "$pid" ]; then
    kill -KILL "$pid" 2>/dev/null
    wait_for 10 rootless_process_gone "$pid"
  fi
  userdel -r "$RL_USER" 2>/dev/null || userdel -f -r "$RL_USER"
}

# The process PID is gone or a zombie.
rootless_process_gone() {
  [ ! -e "/proc/$1" ] || [ "$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null)" = Z ]
}

# as_rootless COMMAND...: COMMAND as $RL_USER in its home, with only the
# environment rootless Podman needs.
as_rootless() {
  setpriv --reuid="$RL_UID" --regid="$RL_UID" --init-groups env -i HOME="/home/$RL_USER" USER="$RL_USER" \
    LOGNAME="$RL_USER" PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR="$RL_XDG" \
    CONTAINERS_CONF="$RL_DIR/containers.conf" CONTAINERS_STORAGE_CONF="$RL_DIR/storage.conf" \
    sh -c 'cd "$HOME" && exec "$@"' sh "$@"
}

# upm ARGS...: podman as $RL_USER, bounded.
upm() { as_rootless timeout -k 5 "$CALL_TIMEOUT" podman "$@"; }
