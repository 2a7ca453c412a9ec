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
  [ -z "${HAVEN_DEVCONTAINER_CLI_MISSING:-}" ] || fail "$HAVEN_DEVCONTAINER_CLI_MISSING"
  : "${DEVCONTAINER:=$(command -v devcontainer || true)}"
  [ -n "$DEVCONTAINER" ] && [ -x "$DEVCONTAINER" ] \
    || skip "the devcontainer CLI is not installed (npm install -g @devcontainers/cli)"
  command -v node >/dev/null || skip "node is not installed"
}

# Why `devcontainer up` failed: docker's error in its log (the runtime's
# message), else the message of its JSON result, else the end of the log
# without the JavaScript stack.
devc_error() { # LOG JSON
  local msg
  msg=$(grep -a -m1 -o 'docker: Error.*' "$1" | cut -c1-300)
  [ -n "$msg" ] || msg=$(tail -1 "$2" 2>/dev/null | jq -r '.message // empty' 2>/dev/null | tail -c 300)
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
  tar -C "$r" -cf "$WORK/devc-base.tar" . || fail "tar of the dev container root filesystem failed"
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
  defer "haven uninstall docker --daemon-json '$dj' --name '$1'; kill -HUP $pid"
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
# (issue 9: HOME was /bin/bash for a passwd line with an empty comment
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
