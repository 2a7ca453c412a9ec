# haven inside a devcontainer: the devcontainer CLI (@devcontainers/cli,
# the client VS Code's Dev Containers use) brings up an ordinary
# devcontainer.json (the image, the mounts this suite's image needs, a
# name; every other setting the default) on the private dockerd, and
# `devcontainer exec` runs the probe, the workspace folder as the
# project: as root (the default) and as remoteUser dev.  The CLI is
# installed from npm into $DEVC_CLI_DIR by the prepare step, before the
# test's clock starts.

DEVC_CLI_SPEC=@devcontainers/cli@0.83.0
DEVC_CLI_DIR=${HAVEN_DEVCONTAINER_CLI:-/var/cache/haven-tests/devcontainer-cli}
DEVC_CLI=$DEVC_CLI_DIR/node_modules/.bin/devcontainer
TEST_PREPARE_devcontainer_root=ct_devcontainer_cli
TEST_PREPARE_devcontainer_user=ct_devcontainer_cli

# ct_devcontainer_cli: the prepare step: the pinned CLI in its cache (0.83.0
# is the last release that runs on Debian 12's Node 18).
ct_devcontainer_cli() {
  command -v node > /dev/null || skip "node is not installed (Debian package nodejs)"
  command -v npm > /dev/null || skip "npm is not installed (Debian package npm)"
  if [ "$(jq -r .version "$DEVC_CLI_DIR/node_modules/@devcontainers/cli/package.json" 2>/dev/null)" != "${DEVC_CLI_SPEC##*@}" ]; then
    mkdir -p "$DEVC_CLI_DIR"
    timeout 600 npm install --prefix "$DEVC_CLI_DIR" --no-fund --no-audit --loglevel=error "$DEVC_CLI_SPEC" \
      > npm.log 2>&1 || fail "npm install $DEVC_CLI_SPEC: $(tail -3 npm.log)"
  fi
  "$DEVC_CLI" --version > version.out 2>&1 || fail "$DEVC_CLI --version: $(tail -3 version.out)"
}

# ct_devc VERB WORKSPACE [ARGS...]: the CLI on the private dockerd (it
# runs $DOCKER_CLI, which reads DOCKER_HOST), its state in the test's
# directory, bounded.
ct_devc() {
  local verb=$1 ws=$2
  shift 2
  mkdir -p "$PWD/cli-tmp" "$PWD/cli-data"
  TMPDIR=$PWD/cli-tmp timeout -k 5 150 "$DEVC_CLI" "$verb" --docker-path "$DOCKER_CLI" \
    --user-data-folder "$PWD/cli-data" --workspace-folder "$ws" "$@"
}

ct_devcontainer_probe() { # USER
  local user=$1 ws=$PWD/ws-$1 remote=
  need_docker
  [ -x "$DEVC_CLI" ] || fail "the devcontainer CLI is not in $DEVC_CLI_DIR"
  mkdir -p "$ws/.devcontainer"
  # As the user: remoteUser, and no updateRemoteUserUID (the CLI would
  # rebuild the image to give dev the caller's uid, 0 here, with a RUN
  # that needs a /usr of the image's own; this image has the host's,
  # bound at run time only).
  if [ "$user" != root ]; then
    remote='"remoteUser": "dev", "updateRemoteUserUID": false,'
    chown "$CT_USER_ID:$CT_USER_ID" "$ws"
  fi
  cat > "$ws/.devcontainer/devcontainer.json" <<JSON
{
  "name": "h-ctests",
  "image": "$IMAGE",
  $remote
  "runArgs": ["--name", "$CTR_PREFIX-devc-$user"],
  "mounts": [
    "source=/usr,target=/usr,type=bind,readonly",
    "source=$INST/usr/local,target=/usr/local,type=bind,readonly",
    "source=$WORK/probe,target=/opt/h-ctests,type=bind,readonly"
  ]
}
JSON
  defer "dk rm -f $CTR_PREFIX-devc-$user"
  ct_devc up "$ws" > up.json 2> up.log \
    || fail "devcontainer up: $(tail -1 up.json | jq -r '.message // empty' 2>/dev/null) $(grep -a -m1 'Error' up.log | cut -c1-300)"
  [ "$(tail -1 up.json | jq -r .outcome)" = success ] || fail "devcontainer up: $(tail -1 up.json)"
  ct_devc exec "$ws" /usr/bin/bash /opt/h-ctests/probe.sh "/workspaces/ws-$user" > probe.out 2>&1
  ct_record devcontainer "$user"
}

test_devcontainer_root() {
  ct_devcontainer_probe root
}
test_devcontainer_user() {
  ct_devcontainer_probe user
}
