# Shared helpers for the engine tests (sourced by run.sh, in the harness
# and again in each test's own process).  The harness starts a private
# dockerd and a private Podman store; tests reach them only through dk()
# and pm(), which are bounded.

here_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# fail, skip, defer and the assertions.
source "$here_lib/../lib/assert.sh"
: "${RUNTIME:=$(cd "$here_lib/../.." && pwd)/haven-runc}"
: "${WORK:=$(mktemp -d /tmp/hvt-eng.XXXXXX)}"
chmod 755 "$WORK"
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

# The runtime every test container gets: haven, or (ENGINE_RUNTIME=runc)
# the engine's own runc, to tell a haven bug from an engine behaviour.
: "${ENGINE_RUNTIME:=haven}"
export ENGINE_RUNTIME
DR=(--runtime "$ENGINE_RUNTIME")
PR=(--runtime "$ENGINE_RUNTIME")

new_name() { echo "$CTR_PREFIX-$1-$RANDOM"; }

# wait_for SECONDS COMMAND...: until COMMAND succeeds (bounded).
wait_for() {
  local limit=$1 i
  shift
  for i in $(seq $((limit * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

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
