#!/usr/bin/env bash
# Container tests: `haven run` and `haven doctor` INSIDE containers, where
# agents already live (a CI job's container, a devcontainer, a pod).
#   [RUNTIME=/path/to/haven-runc] tests/containers/run.sh [PATTERN...]
# Installs the build (`make install DESTDIR=$WORK/inst`), builds an image
# from nothing but a minimal /etc (the containers bind the host's /usr
# read-only: Debian's merged /usr holds every program and library), starts
# a private dockerd (tests/lib/private_dockerd.sh: own socket, data root,
# exec root, containerd and network namespace), and runs probe.sh in:
# Docker containers with the default profile, with --cap-add SYS_ADMIN
# and --privileged; a rootless Podman container (an ordinary user of its
# own, --network=none); a devcontainer the devcontainer CLI brings up on
# the private dockerd; each as root and as an ordinary user.  Each check
# must be enforced or refused by name; a rule silently dropped, or a
# refusal that does not name the rule, fails.  Prints "ok NAME" / "not ok
# NAME: reason" / "skip NAME: reason", what each environment enforced and
# refused, and ends with "N passed, N failed"; exits 77 when not root or
# without docker.io.  Needs python3, jq, tar; podman and uidmap for the
# Podman tests, node and npm for the devcontainer CLI (installed into
# /var/cache/haven-tests/devcontainer-cli before the test's clock).
set -u
here=$(cd "$(dirname "$0")" && pwd)
CONTAINER_TEST_TIMEOUT=${CONTAINER_TEST_TIMEOUT:-240}

if [ "${1:-}" = --one ]; then
  # Internal: one test in its own process, bounded by the harness.
  source "$here/lib.sh"
  for f in "$here"/test_*.sh; do source "$f"; done
  source "$here/../lib/harness.sh"
  run_one_test "$2" "$3"
fi

if [ "$(id -u)" != 0 ]; then
  echo "container tests need root: skipped"
  exit 77
fi
if ! command -v dockerd >/dev/null; then
  echo "docker (docker.io) is not installed: skipped"
  exit 77
fi
for tool in jq python3 tar timeout; do
  command -v "$tool" >/dev/null || { echo "missing $tool"; exit 1; }
done
source "$here/lib.sh"
for f in "$here"/test_*.sh; do source "$f"; done
[ -x "$RUNTIME" ] || { echo "RUNTIME $RUNTIME is not an executable"; exit 1; }

DOCKERD_PID=
CONTAINERD_PID=

# The build, installed as a user would (`make install`), to be bound
# read-only at the containers' /usr/local (its prefix): haven finds its
# policies there as an installed haven does.
install_haven() {
  local top
  top=$(dirname "$RUNTIME")
  [ -f "$top/Makefile" ] || { echo "no Makefile next to $RUNTIME: cannot make install"; return 1; }
  make -C "$top" install DESTDIR="$INST" > "$WORK/install.log" 2>&1 \
    || { tail -5 "$WORK/install.log"; return 1; }
  [ -x "$INST/usr/local/bin/haven" ] || { echo "make install put no haven in $INST/usr/local/bin"; return 1; }
  chmod -R a+rX "$INST"
}

# The image: symlinks into /usr (the host's, bound at run time), a
# minimal /etc (root and the user dev, uid 1000, with a home), an
# /etc/shadow the user can read (0644, with a marker): the only thing
# hiding it from a command is then haven.
build_image() {
  local r=$WORK/rootfs
  mkdir -p "$r"/{usr,etc,tmp,var/tmp,root,home/dev,proc,sys,dev,run,opt/h-ctests,workspaces}
  ln -s usr/bin "$r/bin"
  ln -s usr/lib "$r/lib"
  ln -s usr/lib64 "$r/lib64"
  ln -s usr/sbin "$r/sbin"
  chmod 1777 "$r/tmp" "$r/var/tmp"
  chmod 700 "$r/root"
  printf 'root:x:0:0:root:/root:/bin/bash\ndev:x:%s:%s::/home/dev:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' \
    "$CT_USER_ID" "$CT_USER_ID" > "$r/etc/passwd"
  printf 'root:x:0:\ndev:x:%s:\nnogroup:x:65534:\n' "$CT_USER_ID" > "$r/etc/group"
  printf 'root:H-CTESTS-SHADOW:19000:0:99999:7:::\ndev:*:19000:0:99999:7:::\n' > "$r/etc/shadow"
  chmod 644 "$r/etc/shadow"
  printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' > "$r/etc/nsswitch.conf"
  cp /etc/ld.so.cache "$r/etc/ld.so.cache"
  # Debian's alternatives (awk, editor...) are links through /etc.
  cp -a /etc/alternatives "$r/etc/alternatives"
  printf 'PRETTY_NAME="haven container test image (the host'"'"'s /usr)"\nID=debian\nVERSION_ID="12"\n' > "$r/etc/os-release"
  chown "$CT_USER_ID:$CT_USER_ID" "$r/home/dev"
  tar -C "$r" -cf "$WORK/image.tar" .
  chmod 644 "$WORK/image.tar"
  mkdir -p "$WORK/probe"
  cp "$here/probe.sh" "$here/fake-haven.sh" "$WORK/probe/"
  chmod -R a+rX "$WORK/probe"
}

start_docker() {
  if [ -z "$DOCKER_CLI" ] || ! command -v containerd >/dev/null; then
    DOCKER_MISSING="docker.io (dockerd, docker, containerd) is not installed"
    return 1
  fi
  local d=$WORK/docker out
  mkdir -p "$d/data" "$d/exec"
  start_docker_netns || { DOCKER_MISSING="no network namespace for dockerd: $DOCKER_MISSING"; return 1; }
  private_dockerd_config "$d/daemon.json"
  private_dockerd_launch "$d/daemon.json" || return 1
  if ! out=$(dk import "$WORK/image.tar" "$IMAGE" 2>&1); then
    DOCKER_MISSING="docker import failed: $out"
    return 1
  fi
  log "dockerd $(dk version -f '{{.Server.Version}}' 2>/dev/null) on $DOCKER_SOCK"
}

cleanup_between_tests() {
  if [ "${HAVE_DOCKER:-0}" = 1 ]; then
    local ids
    ids=$(dk ps -aq --filter "name=$CTR_PREFIX" 2>/dev/null)
    # shellcheck disable=SC2086
    [ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1
  fi
}

final_cleanup() {
  private_dockerd_stop
  local m
  for m in $(awk -v w="$WORK" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null
  done
  [ -n "${HAVEN_TEST_KEEP:-}" ] && echo "# kept $WORK" || rm -rf "$WORK"
}
source "$here/../lib/harness.sh"
trap final_cleanup EXIT
trap 'exit 130' INT TERM

if ! out=$(install_haven); then
  echo "not ok containers_install: make install DESTDIR=$INST failed: $out"
  echo "0 passed, 1 failed"
  exit 1
fi
build_image
HAVE_DOCKER=0
DOCKER_MISSING=
if start_docker; then HAVE_DOCKER=1; else
  report_fail docker_daemon_started "$DOCKER_MISSING"
  tail -20 "$WORK/docker/dockerd.log" 2>/dev/null | sed 's/^/    /'
fi
export HAVE_DOCKER DOCKER_MISSING

run_test_functions "$here/run.sh" "$CONTAINER_TEST_TIMEOUT" cleanup_between_tests "$@"

# What each environment enforced and refused (and what failed), for the
# reader: the lines probe.sh printed.
if [ -s "$SUMMARY" ]; then
  echo "# what haven did inside each container:"
  sed 's/^/#   /' "$SUMMARY"
fi
private_dockerd_stop
check_nothing_left "$WORK"
[ $skipped = 0 ] || echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
