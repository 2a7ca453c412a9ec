# haven inside a rootless Podman container: `podman run` as an ordinary
# user of the suite's own (its subuid range, its XDG_RUNTIME_DIR, vfs
# storage, cgroupfs), as root inside (the user's own uid, mapped) and as
# the image's user.  --network=none: rootless Podman's networks need
# slirp4netns or pasta, and pasta needs /dev/net/tun, which is 0600 root
# on such hosts (as here); the probe's listener is then on loopback only.

# pm_user_setup: the user (PM_USER, PM_UID), its directories under
# $WORK/podman (PM_DIR) and the image imported into its store; removed
# with its containers when the test ends.
pm_user_setup() {
  command -v podman > /dev/null || skip "podman is not installed"
  command -v newuidmap > /dev/null || skip "newuidmap (package uidmap) is not installed"
  PM_USER=hct$$
  PM_DIR=$WORK/podman-$PM_USER
  mkdir -p "$PM_DIR" && chmod 755 "$PM_DIR"
  useradd -m -s /bin/sh "$PM_USER" || fail "useradd $PM_USER"
  defer pm_user_teardown
  PM_UID=$(id -u "$PM_USER")
  grep -q "^$PM_USER:" /etc/subuid \
    || usermod --add-subuids 400000-465535 --add-subgids 400000-465535 "$PM_USER" \
    || fail "no subuid range for $PM_USER"
  mkdir -m 700 "$PM_DIR/xdg" && chown "$PM_USER:" "$PM_DIR/xdg"
  # No systemd user session: cgroupfs and file events; vfs storage (no
  # fuse-overlayfs needed).  No default_ulimits: rootless Podman then
  # gives the container the user's own limits, as it does for any user.
  printf '[containers]\nlog_driver = "k8s-file"\n\n[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' \
    > "$PM_DIR/containers.conf"
  printf '[storage]\ndriver = "vfs"\n' > "$PM_DIR/storage.conf"
  chmod 644 "$PM_DIR/containers.conf" "$PM_DIR/storage.conf"
  upm import "$WORK/image.tar" "$IMAGE" > import.out 2>&1 || fail "podman import as $PM_USER: $(tail -2 import.out)"
}

pm_user_teardown() {
  upm rm -a -f -t 0 > /dev/null 2>&1
  local pid
  pid=$(cat "$PM_DIR/xdg/libpod/tmp/pause.pid" 2>/dev/null)
  if [ -n "$pid" ]; then
    kill -KILL "$pid" 2>/dev/null
    wait_for 10 sh -c "[ ! -e /proc/$pid ] || grep -q '^State:.*Z' /proc/$pid/status"
  fi
  userdel -r "$PM_USER" 2>/dev/null || userdel -f -r "$PM_USER"
  rm -rf "$PM_DIR"
}

# upm ARGS...: podman as $PM_USER, with only the environment rootless
# Podman needs, bounded.
upm() {
  setpriv --reuid="$PM_UID" --regid="$PM_UID" --init-groups env -i HOME="/home/$PM_USER" USER="$PM_USER" \
    LOGNAME="$PM_USER" PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR="$PM_DIR/xdg" \
    CONTAINERS_CONF="$PM_DIR/containers.conf" CONTAINERS_STORAGE_CONF="$PM_DIR/storage.conf" \
    sh -c 'cd "$HOME" && exec timeout -k 5 "$0" podman "$@"' "$CALL_TIMEOUT" "$@"
}

pm_probe() { # USER
  local user=$1 n=$CTR_PREFIX-podman-$1 u=()
  pm_user_setup
  [ "$user" = root ] || u=(--user "$CT_USER_ID:$CT_USER_ID")
  # shellcheck disable=SC2046
  upm run -d --name "$n" --network=none $(ct_mounts -v) "${u[@]}" "$IMAGE" /usr/bin/sleep infinity > run.out 2>&1 \
    || fail "podman run as $PM_USER: $(tail -2 run.out | tr '\n' ' ')"
  upm exec "${u[@]}" "$n" /usr/bin/bash /opt/h-ctests/probe.sh > probe.out 2>&1
  ct_record podman_rootless "$user"
}

test_podman_rootless_root() {
  pm_probe root
}
test_podman_rootless_user() {
  pm_probe user
}
