# The devcontainer CLI (@devcontainers/cli, the client VS Code's Dev
# Containers use) against the harness's dockerd: `devcontainer up` of the
# shipped example (compose/devcontainer/) and of a Dockerfile-based dev
# container with a postCreateCommand, then `devcontainer exec`, each under
# a haven runtime registered with a policy.  The CLI is `devcontainer` in
# PATH or $DEVCONTAINER (.ci/run installs it with npm).

DEVC_FIXTURES=$(cd "$(dirname "${BASH_SOURCE[0]}")/devcontainer" && pwd)
DEVC_SHIPPED=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../compose/devcontainer" && pwd)
# Images the dev containers start from (see devc_images).
DEVC_BASE=havendev-base:test
DEVC_IMAGE=havendev:test

# .ci/run sets HAVEN_DEVCONTAINER_CLI_MISSING when it could not install
# the CLI: there a missing CLI is a failure, not a skip.
need_devcontainer_cli() {
  need_docker
  need_devcontainer_cli_installed
}
need_devcontainer_cli_installed() {
  [ -z "${HAVEN_DEVCONTAINER_CLI_MISSING:-}" ] || fail "$HAVEN_DEVCONTAINER_CLI_MISSING"
  : "${DEVCONTAINER:=$(command -v devcontainer || true)}"
  [ -n "$DEVCONTAINER" ] && [ -x "$DEVCONTAINER" ] \
    || skip "the devcontainer CLI is not installed (npm install -g @devcontainers/cli)"
  command -v node >/dev/null || skip "node is not installed"
}

# Why `devcontainer up` failed: docker's or podman's error in its log (the
# runtime's message), else the message of its JSON result, else the end of
# the log without the JavaScript stack.
devc_error() { # LOG JSON
  local msg
  msg=$(grep -a -m1 -o 'docker: Error.*' "$1" | cut -c1-300)
  # Podman's (its lines in the log start with the time in brackets).
  [ -n "$msg" ] || msg=$(grep -a -m1 -o '^\[[^]]*\] Error: .*' "$1" | sed 's/^\[[^]]*\] //' | cut -c1-300)
  [ -n "$msg" ] || msg=$(tail -1 "$2" 2>/dev/null | jq -r '.message // empty' 2>/dev/null | tail -c 300)
  [ -n "$msg" ] || msg=$(grep -a -m1 -o -i "haven[^\"]*error.*\|Error: .*haven.*" "$1" | cut -c1-400)
  [ -n "$msg" ] || msg=$(grep -av '^[[:space:]]*at ' "$1" | grep -a . | tail -3)
  echo "$msg"
}

# devc VERB WORKSPACE [ARGS...]: the CLI on the harness's dockerd (it
# runs $DOCKER_CLI, which reads DOCKER_HOST), its state and temporary
# files (generated Dockerfiles) in the test's directory, bounded.
devc() {
  local verb=$1 ws=$2
  shift 2
  mkdir -p "$PWD/cli-tmp" "$PWD/cli-data"
  TMPDIR=$PWD/cli-tmp timeout -k 5 150 "$DEVCONTAINER" "$verb" --docker-path "$DOCKER_CLI" \
    --user-data-folder "$PWD/cli-data" --workspace-folder "$ws" "$@"
}

# Copy a file and the shared libraries it needs into the root filesystem R
# at the same paths.
devc_copy_with_libs() { # R FILE...
  local r=$1 f lib
  shift
  for f in "$@"; do
    mkdir -p "$r$(dirname "$f")"
    rm -f "$r$f"
    cp -L "$f" "$r$f"
    for lib in $(ldd "$f" | awk '/=>/ {print $3} /^[[:space:]]*\/[^ ]*ld-linux/ {print $1}'); do
      [ -e "$r$lib" ] && continue
      mkdir -p "$r$(dirname "$lib")"
      cp -L "$lib" "$r$lib"
    done
  done
}

# $WORK/devc-base.tar: the root filesystem of $DEVC_BASE (see
# devc_images), made once per harness run; no engine needed.
devc_base_tar() {
  [ -s "$WORK/devc-base.tar" ] && return 0
  local r=$WORK/devc-rootfs
  rm -rf "$r"
  "$DEVC_FIXTURES/../../make-rootfs.sh" "$r" || fail "make-rootfs.sh failed"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$r/etc/group"
  printf 'root:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n' > "$r/etc/shadow"
  printf 'root:*::\nnogroup:*::\n' > "$r/etc/gshadow"
  chmod 640 "$r/etc/shadow" "$r/etc/gshadow"
  rmdir "$r/home/user"
  devc_copy_with_libs "$r" /bin/bash /usr/bin/git /usr/sbin/useradd
  cp /etc/login.defs "$r/etc/login.defs"
  printf 'PRETTY_NAME="haven devcontainer test image"\nID=debian\nVERSION_ID="12"\n' > "$r/etc/os-release"
  tar -C "$r" -cf "$WORK/devc-base.tar.part" . || fail "tar of the dev container root filesystem failed"
  mv "$WORK/devc-base.tar.part" "$WORK/devc-base.tar"
}

# The images, built once per harness run (the tests run one after the
# other):
#  * $DEVC_BASE: the busybox root filesystem plus the machine's bash, git
#    and useradd with their libraries and /etc/login.defs, and only root
#    and nobody in /etc/passwd.  Built from files, not with mmdebstrap:
#    seconds instead of minutes, and no mirror needed.
#  * $DEVC_IMAGE: $DEVC_BASE with the user vscode made by useradd
#    (user.Dockerfile), the stand-in for the registry image the shipped
#    example names.
devc_images() {
  dk image inspect "$DEVC_IMAGE" >/dev/null 2>&1 && return 0
  devc_base_tar
  dk import "$WORK/devc-base.tar" "$DEVC_BASE" >/dev/null 2>import.err || fail "docker import: $(cat import.err)"
  dk build -q -t "$DEVC_IMAGE" --build-arg "BASE_IMAGE=$DEVC_BASE" -f "$DEVC_FIXTURES/user.Dockerfile" \
    "$DEVC_FIXTURES" >build.log 2>&1 || fail "docker build of $DEVC_IMAGE: $(tail -3 build.log)"
}

# Register RUNTIME-NAME as haven-runc with --policy POLICY (what
# compose/devcontainer/README.md tells users to do) and have dockerd
# reload its runtimes; removed when the test ends.
devc_register() { # NAME POLICY
  local dj=$WORK/docker/daemon.json pid
  pid=$(cat "$WORK/docker/dockerd.pid")
  haven install docker --daemon-json "$dj" --runtime "$RUNTIME" --name "$1" --policy "$2" >install.log 2>&1 \
    || fail "haven install docker --name $1 --policy $2: $(cat install.log)"
  defer "dk_uninstall_runtime '$dj' '$1'"
  kill -HUP "$pid"
  wait_for 20 sh -c "'$DOCKER_CLI' info -f '{{range \$k, \$v := .Runtimes}}{{\$k}} {{end}}' | grep -qw '$1'" \
    || fail "dockerd did not pick up the runtime $1"
}

# The container `devcontainer up` made for WORKSPACE (its id label).
devc_container() { # WORKSPACE
  dk ps -q --filter "label=devcontainer.local_folder=$1"
}

# What every dev container here must show from `devcontainer exec` (a
# `docker exec -u vscode` with the environment the CLI probed through a
# login shell): the remote user with the home from its passwd line
# (HOME was once /bin/bash for a passwd line with an empty comment
# field), a home the CLI could write its lifecycle markers into (where it
# cannot, `up` still says success but skips postCreateCommand and the
# other hooks without a word: under a policy, a remote user that is not
# the container's user has its home on the read-only root), and no_new_privs and the bounding set
# CAPBND in the exec'd process.  CapEff alone proves nothing for uid 1000
# (a non-root exec has none anyway): the bounding set is what a policy
# empties and Docker fills (a80425fb by default, less with --cap-drop).
devc_check_exec() { # WORKSPACE CAPBND
  local ws=$1 capbnd=$2
  OUT=$(devc exec "$ws" sh -c 'echo "user=$(id -un) uid=$(id -u) home=$HOME pwd=$(pwd)";
    ls -a "$HOME/.devcontainer"; grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status' 2>exec.err) \
    || fail "devcontainer exec: $(tail -3 exec.err)"
  assert_contains "$OUT" "user=vscode uid=1000 home=/home/vscode pwd=/workspaces/$(basename "$ws")" \
    "devcontainer exec: user, home and working directory"
  assert_contains "$OUT" ".postCreateCommandMarker" "the CLI's markers in the home"
  assert_contains "$OUT" "CapEff:	0000000000000000" "devcontainer exec: effective capabilities"
  assert_contains "$OUT" "CapBnd:	$capbnd" "devcontainer exec: bounding set"
  assert_contains "$OUT" "NoNewPrivs:	1" "devcontainer exec: no_new_privs"
  # The exit status comes back through the CLI.
  devc exec "$ws" sh -c 'exit 3' >/dev/null 2>&1
  assert_eq 3 $? "exit status of devcontainer exec"
}

# The shipped example (its runArgs, remoteUser) as shipped, with
# --runtime=haven, then under the registration its README describes
# (haven-devcontainer, --policy devcontainer).  Two substitutions, both
# because the tests have no registry and nothing may leave the machine:
# the image (mcr.microsoft.com/devcontainers/base:debian) becomes
# $DEVC_IMAGE, and --network=none is added.
test_devcontainer_shipped_example() {
  need_devcontainer_cli
  devc_images
  devc_register haven-devcontainer devcontainer
  local f=$DEVC_SHIPPED/devcontainer.json
  assert_eq "mcr.microsoft.com/devcontainers/base:debian" "$(jq -r .image "$f")" \
    "the shipped example's image (this test substitutes a local one for it)"
  assert_eq "--runtime=haven" "$(jq -r '.runArgs[0]' "$f")" "the shipped example's first runArg"
  assert_eq vscode "$(jq -r .remoteUser "$f")" "the shipped example's remoteUser"
  # Like most dev containers it sets only remoteUser: init runs as the
  # image's user (root) and the CLI execs as vscode, whose home the
  # policy hides too (see the example's README).
  assert_eq null "$(jq -r .containerUser "$f")" "the shipped example's containerUser"
  local runtime ws c capbnd
  for runtime in haven haven-devcontainer; do
    ws=$PWD/shipped-$runtime
    mkdir -p "$ws/.devcontainer"
    cp "$DEVC_SHIPPED/README.md" "$ws/.devcontainer/"
    jq --arg img "$DEVC_IMAGE" --arg rt "--runtime=$runtime" \
      '.image = $img | .runArgs = [$rt] + .runArgs[1:] + ["--network=none"]' "$f" > "$ws/.devcontainer/devcontainer.json"
    devc up "$ws" > up.json 2>up.log || fail "devcontainer up of the shipped example, $runtime: $(devc_error up.log up.json)"
    assert_eq success "$(tail -1 up.json | jq -r .outcome)" "devcontainer up outcome, $runtime"
    c=$(devc_container "$ws")
    [ -n "$c" ] || fail "no container labelled with the workspace $ws"
    # Gone before its runtime is unregistered (defers run last first).
    defer "dk rm -f $c"
    assert_eq "$runtime running" "$(dk_state "$c" '{{.HostConfig.Runtime}} {{.State.Status}}')"
    assert_eq "vscode:x:1000:1000::/home/vscode:/bin/bash" "$(dk exec "$c" grep '^vscode:' /etc/passwd)" \
      "the remote user's passwd line (as useradd writes it)"
    # The example's runArgs leave CHOWN DAC_OVERRIDE FOWNER SETGID SETUID
    # (cb); the policy leaves none.
    capbnd=00000000000000cb
    [ "$runtime" = haven ] || capbnd=0000000000000000
    devc_check_exec "$ws" "$capbnd"
    # The example's own runArgs apply with or without the policy.
    OUT=$(dk exec "$c" sh -c 'cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max')
    assert_eq 512 "$OUT" "--pids-limit=512 from the example's runArgs, $runtime"
  done
}

# A Dockerfile-based dev container (tests/engines/devcontainer/project)
# under haven-default (--policy default): the CLI builds the image, starts
# it, runs postCreateCommand as the remote user (git config --global
# writes into the home, the policy's tmpfs owned by vscode, although
# init runs as root), and `devcontainer exec` runs as that user.
test_devcontainer_dockerfile_post_create() {
  need_devcontainer_cli
  devc_images
  local ws=$PWD/project
  cp -r "$DEVC_FIXTURES/project" "$ws"
  echo "workspace file" > "$ws/hello.txt"
  devc up "$ws" > up.json 2>up.log || fail "devcontainer up: $(devc_error up.log up.json)"
  assert_eq success "$(tail -1 up.json | jq -r .outcome)" "devcontainer up outcome"
  local c
  c=$(devc_container "$ws")
  [ -n "$c" ] || fail "no container labelled with the workspace $ws"
  assert_eq "haven-default running" "$(dk_state "$c" '{{.HostConfig.Runtime}} {{.State.Status}}')"
  assert_eq "vscode:x:1000:1000::/home/vscode:/bin/bash" "$(dk exec "$c" grep '^vscode:' /etc/passwd)" \
    "the remote user's passwd line (as useradd writes it)"
  devc_check_exec "$ws" 0000000000000000
  # postCreateCommand ran as vscode with its home: what git config
  # --global wrote is there for the next command.
  OUT=$(devc exec "$ws" sh -c 'cat "$HOME/post-create.out"; git config --global user.name; git config --global user.email; cat hello.txt' 2>exec.err) \
    || fail "devcontainer exec: $(tail -3 exec.err)"
  assert_eq "created
Haven Test
test@haven.invalid
workspace file" "$OUT" "postCreateCommand's results and the workspace"
  # The workspace is the host directory, writable by the remote user
  # only as far as the host's permissions go: vscode (1000) writes
  # where it may.
  chmod 777 "$ws"
  devc exec "$ws" sh -c 'echo from-container > from-container.txt' >/dev/null 2>exec.err \
    || fail "writing into the workspace: $(tail -3 exec.err)"
  assert_eq from-container "$(cat "$ws/from-container.txt")" "a file written in the workspace, seen on the host"
  # A second up finds the container and does not run postCreateCommand
  # again (its marker is in the home).
  devc exec "$ws" sh -c 'rm "$HOME/post-create.out"' >/dev/null 2>&1
  devc up "$ws" > up2.json 2>up2.log || fail "second devcontainer up: $(devc_error up2.log up2.json)"
  assert_eq "$c" "$(devc_container "$ws")" "the container after a second up"
  OUT=$(devc exec "$ws" sh -c 'test -e "$HOME/post-create.out" && echo ran-again || echo not-again' 2>&1)
  assert_eq not-again "$OUT" "postCreateCommand after a second up"
  # The hidden home is a fresh tmpfs at each start: after a stop, up
  # starts the container again and, its markers gone, runs
  # postCreateCommand again (what compose/devcontainer/README.md says).
  dk stop -t 1 "$c" >/dev/null || fail "docker stop $c"
  devc up "$ws" > up3.json 2>up3.log || fail "devcontainer up after a stop: $(devc_error up3.log up3.json)"
  assert_eq "$c running" "$(dk_state "$c" '{{.ID}} {{.State.Status}}' | sed 's/^\(.\{12\}\)[^ ]*/\1/')" \
    "the container after up following a stop"
  OUT=$(devc exec "$ws" sh -c 'cat "$HOME/post-create.out"; git config --global user.name' 2>&1)
  assert_eq "created
Haven Test" "$OUT" "postCreateCommand after a stop and up"
}

# The devcontainer CLI with rootless Podman (`--docker-path podman` as an
# ordinary user): for a remoteUser other than root the CLI adds
# --userns=keep-id to `podman run`, which only rootless Podman accepts,
# and first builds an image that gives the remote user the host user's
# uid (updateRemoteUserUID), so vscode in the container is the user on
# the host.  The Dockerfile-based fixture with haven as Podman's runtime
# and the default, then the devcontainer policy by annotation (Podman
# passes a runtime no arguments of its own): postCreateCommand runs as
# vscode in a home the policy hides behind a tmpfs vscode owns, and
# `devcontainer exec` runs as vscode under the policy.
test_devcontainer_podman_rootless() {
  need_devcontainer_cli_installed
  rootless_podman_setup
  devc_base_tar
  # The CLI is a self-contained package (one JavaScript file and its
  # scripts): the user gets a copy, wherever it is installed (npm's
  # /usr/local in CI; a checkout's directory may be 0700).
  local pkg=$RL_DIR/devcontainers-cli
  cp -r "$(dirname "$(readlink -f "$DEVCONTAINER")")" "$pkg" || fail "copy of the devcontainer CLI"
  chmod -R a+rX "$pkg"
  # node by its path (root's PATH may have it where the user's has not).
  local node
  node=$(command -v node)
  as_rootless "$node" --version >/dev/null 2>&1 || fail "$RL_USER cannot run node ($node)"
  # The CLI's builds (the Dockerfile, then the image that gives vscode
  # the user's uid) get no network either: rootless Podman would give
  # their RUN steps slirp4netns (which needs /dev/net/tun), and nothing
  # may leave the machine.  Podman 4.3 reads no default for that from
  # containers.conf, so the CLI's podman is podman with one option added
  # to build; every other call goes through as it is.
  cat > "$RL_DIR/bin/podman-build-no-network" <<'SH'
#!/bin/sh
[ "$1" = build ] && { shift; exec podman build --network=none "$@"; }
exec podman "$@"
SH
  chmod 755 "$RL_DIR/bin/podman-build-no-network"
  mkdir -p "$RL_DIR/cli-tmp" "$RL_DIR/cli-data"
  chown -R "$RL_USER:" "$RL_DIR/cli-tmp" "$RL_DIR/cli-data"
  cp "$WORK/devc-base.tar" "$RL_DIR/devc-base.tar" && chmod 644 "$RL_DIR/devc-base.tar"
  OUT=$(upm import "$RL_DIR/devc-base.tar" "$DEVC_BASE" 2>&1) || fail "podman import as $RL_USER: $OUT"
  # The policy the test asks for by name, then the one the example's
  # README names for dev containers (devcontainer), an allowlist: its
  # egress table and resolver are made by a helper that joins the
  # container's user and network namespaces.
  devc_podman_rootless_policy default
  devc_podman_rootless_policy devcontainer
}

# One workspace under POLICY (test_devcontainer_podman_rootless's locals
# and rootless user).
devc_podman_rootless_policy() { # POLICY
  local policy=$1 ws=$RL_DIR/project-$1
  cp -r "$DEVC_FIXTURES/project" "$ws"
  echo "workspace file" > "$ws/hello.txt"
  jq --arg a "--annotation=run.haven.policy=$policy" '.runArgs = ["--runtime=haven", $a, "--network=none"]' \
    "$DEVC_FIXTURES/project/.devcontainer/devcontainer.json" > "$ws/.devcontainer/devcontainer.json"
  chown -R "$RL_USER:" "$ws"
  # (devc_podman sees this function's locals.)
  devc_podman() { # VERB ARGS...
    local verb=$1
    shift
    as_rootless env TMPDIR="$RL_DIR/cli-tmp" timeout -k 5 240 "$node" "$pkg/devcontainer.js" "$verb" \
      --docker-path "$RL_DIR/bin/podman-build-no-network" --user-data-folder "$RL_DIR/cli-data" --workspace-folder "$ws" "$@"
  }
  devc_podman up > up.json 2>up.log </dev/null \
    || fail "devcontainer up with rootless podman, policy $policy: $(devc_error up.log up.json)"
  assert_eq success "$(tail -1 up.json | jq -r .outcome)" "devcontainer up outcome, policy $policy"
  local c
  c=$(upm ps -q --filter "label=devcontainer.local_folder=$ws" 2>&1)
  [ -n "$c" ] || fail "no container labelled with the workspace $ws"
  assert_eq "haven running" "$(upm inspect -f '{{.OCIRuntime}} {{.State.Status}}' "$c" 2>&1)"
  OUT=$(devc_podman exec sh -c 'echo "user=$(id -un) uid=$(id -u) home=$HOME pwd=$(pwd)";
    ls -a "$HOME/.devcontainer"; cat "$HOME/post-create.out"; git config --global user.name; cat hello.txt;
    grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status;
    touch /etc/probe 2>/dev/null && echo etc-writable || echo etc-read-only;
    awk "\$2 == \"/home/vscode\" || \$2 == \"/root\" {print \"hidden\", \$2, \$3}" /proc/mounts;
    stat -c "home-owner=%U" "$HOME"' 2>exec.err </dev/null) \
    || fail "devcontainer exec: $(tail -3 exec.err)"
  assert_contains "$OUT" "user=vscode uid=$RL_UID home=/home/vscode pwd=/workspaces/project-$policy" \
    "devcontainer exec: user (the host user's uid, updateRemoteUserUID), home and working directory"
  assert_contains "$OUT" ".postCreateCommandMarker" "the CLI's markers in the home"
  assert_contains "$OUT" "created
Haven Test
workspace file" "postCreateCommand's results (git config --global) and the workspace"
  assert_contains "$OUT" "CapEff:	0000000000000000" "devcontainer exec: effective capabilities"
  assert_contains "$OUT" "CapBnd:	0000000000000000" "devcontainer exec: bounding set (the policy empties it)"
  assert_contains "$OUT" "NoNewPrivs:	1" "devcontainer exec: no_new_privs"
  assert_contains "$OUT" "etc-read-only" "devcontainer exec: /etc"
  # Both homes of the image's passwd are the policy's tmpfs, each its
  # user's, though vscode is the host user and root a subordinate uid.
  assert_contains "$OUT" "hidden /root tmpfs
hidden /home/vscode tmpfs" "homes hidden under --userns=keep-id"
  assert_contains "$OUT" "home-owner=vscode" "owner of the hidden home"
  # The audit trail is the user's (root of its user namespace cannot
  # write the host's /var/log/haven).
  local id trail
  id=$(upm inspect -f '{{.Id}}' "$c" 2>&1)
  trail=/home/$RL_USER/.local/state/haven/containers/$id.jsonl
  [ -f "$trail" ] || fail "no audit trail at $trail"
  [ -e "/var/log/haven/containers/$id.jsonl" ] && fail "a rootless container's trail in /var/log/haven"
  assert_eq "$RL_UID" "$(stat -c %u "$trail")" "owner of the audit trail"
  assert_eq "start $policy" "$(head -1 "$trail" | jq -r '.event + " " + .policy')" "the trail's first record"
  # vscode is the host user: what it writes in the workspace is the
  # user's on the host.
  devc_podman exec sh -c 'echo from-container > from-container.txt' >/dev/null 2>exec.err </dev/null \
    || fail "writing into the workspace: $(tail -3 exec.err)"
  assert_eq "from-container $RL_UID" "$(cat "$ws/from-container.txt") $(stat -c %u "$ws/from-container.txt")" \
    "a file written in the workspace, seen on the host, and its owner"
  devc_podman exec sh -c 'exit 3' >/dev/null 2>&1 </dev/null
  assert_eq 3 $? "exit status of devcontainer exec"
  # Under an allowlist the container's netns has haven's table, which
  # the container cannot read or change (no CAP_NET_ADMIN), and an
  # unlisted name is refused by haven's resolver at once.
  if [ "$policy" != default ]; then
    local pid
    pid=$(upm inspect -f '{{.State.Pid}}' "$c" 2>&1)
    OUT=$(nsenter -t "$pid" -n nft list tables 2>&1)
    assert_contains "$OUT" "table inet haven" "the egress table in the rootless container's netns"
    OUT=$(devc_podman exec sh -c 'nslookup unlisted.example 2>&1; echo rc=$?' 2>&1 </dev/null)
    assert_contains "$OUT" "NXDOMAIN" "an unlisted name under policy $policy"
  fi
}

# What a devcontainer.json sets reaches the shell the user works in
# (under --policy devcontainer, containerEnv was once dropped at
# create, noted only in `devcontainer up`'s log, and `devcontainer exec`
# had the variable empty).  The devcontainer policy passes containerEnv,
# remoteEnv and the image's ENV; a name that looks like a credential
# stays out, and create's note (in the up log) names it.  On 2e9dd27
# APP_MODE was empty.
test_devcontainer_container_env_reaches_shell() {
  need_devcontainer_cli
  devc_images
  devc_register haven-devcontainer devcontainer
  local ws=$PWD/env-ws c
  mkdir -p "$ws/.devcontainer"
  jq -n --arg img "$DEVC_IMAGE" '{image: $img, runArgs: ["--runtime=haven-devcontainer", "--network=none"],
    remoteUser: "vscode", containerEnv: {APP_MODE: "dev", DEPLOY_TOKEN: "tok-not-for-the-agent"},
    remoteEnv: {REMOTE_FLAG: "on"}}' > "$ws/.devcontainer/devcontainer.json"
  devc up "$ws" > up.json 2>up.log || fail "devcontainer up: $(devc_error up.log up.json)"
  assert_eq success "$(tail -1 up.json | jq -r .outcome)" "devcontainer up outcome"
  c=$(devc_container "$ws")
  [ -n "$c" ] || fail "no container labelled with the workspace $ws"
  defer "dk rm -f $c"
  OUT=$(devc exec "$ws" sh -c 'echo "APP_MODE=[$APP_MODE] DEPLOY_TOKEN=[$DEPLOY_TOKEN] REMOTE_FLAG=[$REMOTE_FLAG]"' 2>exec.err) \
    || fail "devcontainer exec: $(tail -3 exec.err)"
  assert_eq "APP_MODE=[dev] DEPLOY_TOKEN=[] REMOTE_FLAG=[on]" "$OUT" "the environment devcontainer exec gives"
  OUT=$(dk exec "$c" sh -c 'echo "init: APP_MODE=[$APP_MODE]"; tr "\0" "\n" < /proc/1/environ | grep -c "^DEPLOY_TOKEN=" || true')
  assert_eq "init: APP_MODE=[dev]
0" "$OUT" "docker exec and init's environment"
  assert_contains "$(cat up.log)" "DEPLOY_TOKEN" "create's note naming the dropped credential"
}
