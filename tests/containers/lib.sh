# Helpers of the container tests (sourced by run.sh, in the harness and
# again in each test's own process): `haven run` and `haven doctor` run
# INSIDE containers (a private dockerd's, a rootless Podman's, the
# devcontainer CLI's), where agents already live.  The containers' image
# is the host's own /usr (bound read-only) over a minimal root; haven is
# the build's `make install`, bound read-only at /usr/local; the checks
# themselves are probe.sh, bound read-only at /opt/h-ctests.

here_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# fail, skip, defer and the assertions.
source "$here_lib/../lib/assert.sh"
# The private dockerd (and wait_for).
source "$here_lib/../lib/private_dockerd.sh"
: "${RUNTIME:=$(cd "$here_lib/../.." && pwd)/haven-runc}"
: "${WORK:=$(mktemp -d /tmp/h-ctests.XXXXXX)}"
chmod 755 "$WORK"
# This run of the suite, in the environment of everything it starts: the
# last check (nothing_left, tests/lib/harness.sh) finds what is left by it.
: "${HAVEN_TEST_SUITE:=ctests.$$.$EPOCHREALTIME}"
export HAVEN_TEST_SUITE
: "${IMAGE:=h-ctests-usr:test}"
: "${CTR_PREFIX:=h-ctests-$$}"
: "${CALL_TIMEOUT:=90}"
# The build installed with `make install DESTDIR=$INST` (run.sh): its
# prefix is what the containers see at /usr/local.
: "${INST:=$WORK/inst}"
export RUNTIME WORK IMAGE CTR_PREFIX CALL_TIMEOUT INST
# The directory the summary lines go to (one per environment and user,
# printed by run.sh before the tally).
SUMMARY=$WORK/summary
export SUMMARY

DOCKER_SOCK=$WORK/docker/docker.sock
if [ -z "${DOCKER_CLI:-}" ]; then
  if [ -x /usr/bin/docker ]; then DOCKER_CLI=/usr/bin/docker; else DOCKER_CLI=$(command -v docker || true); fi
fi
export DOCKER_CLI DOCKER_SOCK
export DOCKER_HOST=unix://$DOCKER_SOCK DOCKER_BUILDKIT=0
DOCKER_NETNS_PREFIX=h-ctests
export DOCKER_NETNS_PREFIX

dk() { timeout -k 5 "$CALL_TIMEOUT" "$DOCKER_CLI" "$@"; }
log() { echo "# $*"; }

need_docker() {
  [ "${HAVE_DOCKER:-0}" = 1 ] || skip "${DOCKER_MISSING:-docker is not available}"
}

# The uid and gid of the image's ordinary user (dev, home /home/dev).
CT_USER_ID=1000

# The mounts every container gets: the host's /usr (the image has none of
# its own), the installed haven over its /usr/local, and the probe (a
# copy under $WORK: a rootless engine's user may not reach the checkout).
ct_mounts() { # FLAG: -v (docker, podman)
  echo "$1 /usr:/usr:ro $1 $INST/usr/local:/usr/local:ro $1 $WORK/probe:/opt/h-ctests:ro"
}

# ct_record ENV USER: probe.sh's result lines (in probe.out) for the
# summary and the verdict: every "FAIL" line fails the test, all of them
# named; a probe that said nothing (it did not run) fails too.
ct_record() {
  local env=$1 user=$2
  sed 's/^/    /' probe.out
  grep -q '^RESULT ' probe.out || fail "$env as $user: probe.sh printed no result: $(tail -5 probe.out | tr '\n' ' ')"
  {
    echo "$env as $user:"
    grep '^RESULT ' probe.out | sed 's/^RESULT /  /'
  } >> "$SUMMARY"
  # Each distinct reason once (the first three), then the checks by name.
  local names reasons n
  n=$(grep -c '^RESULT .* FAIL' probe.out)
  names=$(grep '^RESULT .* FAIL' probe.out | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $3}')
  reasons=$(grep '^RESULT .* FAIL' probe.out | sed 's/^RESULT [^ ]* [^ ]* FAIL: //' | sed 's/haven-run-[0-9]*/haven-run-N/g' \
    | sort | uniq -c | sort -rn | head -3 | sed 's/^ *\([0-9]*\) /\1x /' | cut -c1-250 | tr '\n' '|')
  [ -z "$names" ] || fail "$env as $user: $n check(s) FAIL: $reasons checks: $names"
}

# dk_probe NAME ENV USER DOCKER-RUN-OPTION...: a container of the image
# with the options, the probe run in it as USER (root or the image's
# user), its results recorded (ct_record).
dk_probe() {
  local n=$1 env=$2 user=$3
  shift 3
  need_docker
  local u=()
  [ "$user" = root ] || u=(--user "$CT_USER_ID:$CT_USER_ID")
  defer "dk rm -f $n"
  # shellcheck disable=SC2046 # the mounts are words
  if ! dk run -d --name "$n" "$@" $(ct_mounts -v) "${u[@]}" "$IMAGE" /usr/bin/sleep infinity > run.out 2>&1; then
    # --privileged asks for every capability: where this machine's own
    # bounding set lacks one (CAP_SYS_RESOURCE on some CI machines),
    # runc cannot apply them.  Then the closest container there is:
    # every capability the machine has, no seccomp filter, no AppArmor,
    # /proc and /sys unmasked, /dev/net/tun; said in the summary.
    [ "$1" = --privileged ] && grep -q 'unable to apply caps' run.out \
      || fail "docker run $*: $(tail -2 run.out | tr '\n' ' ')"
    local drop
    drop=$(ct_missing_caps)
    echo "$env as $user: --privileged cannot start here (runc: unable to apply caps: this machine lacks $drop): as --cap-add ALL --cap-drop $drop, seccomp, AppArmor and systempaths unconfined, /dev/net/tun" >> "$SUMMARY"
    dk rm -f "$n" > /dev/null 2>&1
    shift
    # shellcheck disable=SC2046
    dk run -d --name "$n" --cap-add ALL $(for c in $drop; do echo --cap-drop "$c"; done) \
      --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined \
      --device /dev/net/tun "$@" $(ct_mounts -v) "${u[@]}" "$IMAGE" /usr/bin/sleep infinity > run.out 2>&1 \
      || fail "docker run (privileged less $drop) $*: $(tail -2 run.out | tr '\n' ' ')"
  fi
  dk exec "${u[@]}" "$n" /usr/bin/bash /opt/h-ctests/probe.sh > probe.out 2>&1
  ct_record "$env" "$user"
}

# The capabilities this process's bounding set lacks (names, as Docker's
# --cap-drop takes them).
ct_missing_caps() {
  local bnd last i
  bnd=$((16#$(awk '/^CapBnd:/ {print $2}' /proc/self/status)))
  last=$(cat /proc/sys/kernel/cap_last_cap)
  for i in $(seq 0 "$last"); do
    (( (bnd >> i) & 1 )) || capsh --decode="$(printf '%x' $((1 << i)))" | sed 's/.*=cap_//' | tr 'a-z' 'A-Z'
  done
}
