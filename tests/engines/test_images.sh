# Agent images (images/): built the way a machine without a registry
# builds them (images/build-rootfs.sh: mmdebstrap, then the Dockerfile's
# RUN steps and configuration), imported into the harness's engines, and
# run under haven with the policy their run.haven.policy label names:
# Docker through a runtime registered with that policy (dockerd 20.10
# passes no annotations), Podman through the run.haven.policy annotation.
#
# The root filesystem tarball is cached in $HAVEN_IMAGE_CACHE (default
# /var/cache/haven-images), keyed by the image's files: only a first run,
# or one after images/ changed, downloads (Debian's archive and npm's
# registry; Claude Code: 39 MB of Debian packages and 178 MB from
# npm, 40-190 s here).  With the tarball cached the four Claude Code
# tests take about 60 s (imports of 700 MB: 7-14 s each).  Without
# mmdebstrap, or with neither the tarball nor a route to Debian's archive
# and npm's registry, the tests are skipped, saying which.
#
# Claude Code is always tested; HAVEN_TEST_IMAGES="codex gemini-cli" (or
# "all") adds the others (aider needs PyPI: images/README.md).

IMAGES_DIR=$(cd "$here_lib/../../images" && pwd)
# A first build is longer than the suite's per-test limit.
TEST_TIMEOUT_images_claude_code_docker=900
TEST_TIMEOUT_images_claude_code_podman=900
TEST_TIMEOUT_images_codex_docker=900
TEST_TIMEOUT_images_gemini_cli_docker=900
TEST_TIMEOUT_images_claude_code_compose=900
TEST_TIMEOUT_images_claude_code_devcontainer=900

# images_tarball AGENT: TARBALL, built unless cached.
images_tarball() {
  local agent=$1 mirror host
  TARBALL=$("$IMAGES_DIR/build-rootfs.sh" --path "$agent") || fail "build-rootfs.sh --path $agent"
  if [ ! -f "$TARBALL" ]; then
    command -v mmdebstrap >/dev/null || skip "no cached $TARBALL and mmdebstrap is not installed (apt-get install mmdebstrap)"
    mirror=${HAVEN_IMAGE_MIRROR:-http://deb.debian.org/debian}
    host=${mirror#*://}
    host=${host%%/*}
    timeout 10 bash -c "exec 3<>/dev/tcp/$host/80" 2>/dev/null \
      || skip "no cached $TARBALL and Debian's archive ($host) cannot be reached"
    timeout 10 bash -c 'exec 3<>/dev/tcp/registry.npmjs.org/443' 2>/dev/null \
      || skip "no cached $TARBALL and npm's registry cannot be reached"
    local start=$SECONDS
    "$IMAGES_DIR/build-rootfs.sh" "$agent" > build.out 2> build.err \
      || fail "images/build-rootfs.sh $agent: $(grep -E '^(E:|build-rootfs:|npm (ERR|error))' build.err | tail -5)"
    echo "# built $TARBALL in $((SECONDS - start)) s"
  fi
  mapfile -t IMAGE_CHANGES < <("$IMAGES_DIR/build-rootfs.sh" --changes "$agent")
  [ ${#IMAGE_CHANGES[@]} -gt 0 ] || fail "no configuration in images/$agent/Dockerfile"
}

# images_import ENGINE-CLI... : the tarball with the Dockerfile's
# configuration, as images/build-rootfs.sh --import does it.
images_import() {
  local args=() c start=$SECONDS
  for c in "${IMAGE_CHANGES[@]}"; do args+=(--change "$c"); done
  timeout -k 5 600 "$@" import "${args[@]}" "$TARBALL" "$IMAGE_TAG" > import.out 2>&1 \
    || fail "import $TARBALL: $(tail -3 import.out)"
  echo "# imported in $((SECONDS - start)) s"
}

# The agent's command and what its --version prints.
images_version_cmd() {
  case $1 in
    claude-code) echo 'claude --version' ;;
    codex) echo 'codex --version' ;;
    gemini-cli) echo 'gemini --version' ;;
  esac
}
images_version_re() {
  case $1 in
    claude-code) echo '^[0-9][0-9.]* \(Claude Code\)$' ;;
    codex) echo '^codex-cli [0-9][0-9.]*$' ;;
    gemini-cli) echo '^[0-9]+\.[0-9]+\.[0-9]+$' ;;
  esac
}

images_want() { # AGENT
  [ "$1" = claude-code ] && return 0
  case " ${HAVEN_TEST_IMAGES:-} " in *" $1 "* | *" all "*) return 0 ;; esac
  skip "set HAVEN_TEST_IMAGES=\"$1\" (or all) to build and test it"
}

# A project with a secret the policy masks.
images_workspace() {
  WS=$PWD/ws
  mkdir -p "$WS"
  echo "SECRET=1" > "$WS/.env"
  chown -R 1000:1000 "$WS"
}

# What the container reports: the agent's version, who it runs as, its
# home and what the policy did to it.
IMAGES_PROBE=$(cat <<'EOF'
set -u
VERSION_CMD
echo "user=$(id -un) uid=$(id -u) gid=$(id -g)"
echo "passwd=$(getent passwd "$(id -un)")"
echo "HOME=$HOME cwd=$(pwd)"
echo "image_home_files=$(ls -A "$HOME" | grep -cx '.bashrc\|.profile\|.bash_logout')"
touch "$HOME/.state" && echo home_writable
echo "root_mount=$(awk '$2 == "/" {split($4, o, ","); print o[1]}' /proc/self/mounts | tail -1)"
echo "env_file=[$(cat /workspace/.env)]"
echo "api_key=[${ANTHROPIC_API_KEY:-}${OPENAI_API_KEY:-}${GEMINI_API_KEY:-}] other=[${AWS_SECRET_ACCESS_KEY:-}]"
echo landed > /workspace/from-agent
EOF
)

# images_check AGENT: the probe's output in OUT, the container's trail.
images_check() {
  local agent=$1 trail=$2 re line
  re=$(images_version_re "$agent")
  line=$(printf '%s\n' "$OUT" | sed -n 1p)
  printf '%s\n' "$line" | grep -Eq "$re" || fail "$agent's version: '$line' (all: $OUT)"
  assert_contains "$OUT" "user=agent uid=1000 gid=1000" "the image's user"
  assert_contains "$OUT" "passwd=agent:x:1000:1000:haven agent:/home/agent:/bin/bash" "its passwd entry"
  assert_contains "$OUT" "HOME=/home/agent cwd=/workspace" "its home and working directory"
  # The policy's work: the home is an empty tmpfs the user owns (the
  # image's .bashrc and .profile hidden), the root filesystem read-only
  # (the engines mount it writable; uid 1000 could not write /etc
  # either way, so the mount is what tells), .env masked.
  assert_contains "$OUT" "image_home_files=0" "the hidden home (hide_home)"
  assert_contains "$OUT" "home_writable" "the home tmpfs owned by agent"
  assert_contains "$OUT" "root_mount=ro" "the read-only root"
  assert_contains "$OUT" "env_file=[]" "the masked .env"
  # The engine is given every agent's key and another secret: the policy
  # passes its agent's key (env.pass) and nothing else.
  assert_contains "$OUT" "api_key=[test-key] other=[]" "the agent's API key, and only it"
  assert_eq "landed 1000" "$(cat "$WS/from-agent" 2>&1) $(stat -c %u "$WS/from-agent" 2>&1)" "the project's file on the host"
  # The trail names the policy the label asked for.
  [ -s "$trail" ] || fail "no audit trail $trail"
  assert_eq "$POLICY" "$(head -1 "$trail" | jq -r 'select(.event == "start") | .policy')" "the trail's policy"
}

# images_docker_prepare AGENT: the image imported as IMAGE_TAG, POLICY
# from its label, RT the Docker runtime registered with that policy.
images_docker_prepare() {
  local agent=$1
  need_docker
  [ "$ENGINE_RUNTIME" = haven ] || skip "the image's policy is haven's"
  images_want "$agent"
  images_tarball "$agent"
  IMAGE_TAG=haven-test/$agent:$$
  images_import "$DOCKER_CLI"
  defer "dk rmi -f '$IMAGE_TAG' >/dev/null 2>&1"
  POLICY=$(dk inspect -f '{{index .Config.Labels "run.haven.policy"}}' "$IMAGE_TAG")
  assert_eq "$agent" "$POLICY" "the image's run.haven.policy label"
  # The runtime for that policy, registered as a person would (haven
  # install docker --policy), and dockerd reloaded to see it.
  RT=haven-$POLICY
  if ! dk info -f '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' | grep -qw -- "$RT"; then
    haven install docker --daemon-json "$WORK/docker/daemon.json" --runtime "$RUNTIME" --name "$RT" \
      --policy "$POLICY" > install.out 2>&1 || fail "haven install docker --policy $POLICY: $(cat install.out)"
    kill -HUP "$(cat "$WORK/docker/dockerd.pid")" || fail "no dockerd to reload"
    wait_for 30 sh -c "'$DOCKER_CLI' info -f '{{range \$k, \$v := .Runtimes}}{{\$k}} {{end}}' | grep -qw -- '$RT'" \
      || fail "dockerd did not pick up runtime $RT"
  fi
  images_workspace
}

# What the engine is asked to pass (see images_check).
IMAGES_KEYS=(-e ANTHROPIC_API_KEY=test-key -e OPENAI_API_KEY=test-key -e GEMINI_API_KEY=test-key
  -e AWS_SECRET_ACCESS_KEY=leak)

# The probe's script for AGENT.
images_probe() { echo "${IMAGES_PROBE/VERSION_CMD/$(images_version_cmd "$1")}"; }

# images_docker AGENT: docker run under the label's policy.
images_docker() {
  local agent=$1 n id trail
  images_docker_prepare "$agent"
  n=$(new_name "$agent")
  OUT=$(dk run --name "$n" --runtime "$RT" --network none -v "$WS:/workspace" "${IMAGES_KEYS[@]}" "$IMAGE_TAG" \
    sh -c "$(images_probe "$agent")" 2> run.err)
  RC=$?
  id=$(dk_state "$n" '{{.Id}}')
  trail=/var/log/haven/containers/$id.jsonl
  defer "rm -f '$trail'"
  [ "$RC" = 0 ] || fail "docker run $agent: exit $RC: $OUT $(cat run.err)"
  images_check "$agent" "$trail"
  # Docker shows the runtime's note on what it dropped.
  assert_contains "$(cat run.err)" "haven-runc: note: policy $POLICY: env: not passed into the container" "the note"
  assert_contains "$(cat run.err)" "AWS_SECRET_ACCESS_KEY" "the note's names"
}

images_podman() {
  local agent=$1 n id trail
  need_podman
  [ "$ENGINE_RUNTIME" = haven ] || skip "the image's policy is haven's"
  images_want "$agent"
  images_tarball "$agent"
  IMAGE_TAG=localhost/haven-test/$agent:$$
  images_import podman "${PODMAN_GLOBAL[@]}"
  defer "pm rmi -f '$IMAGE_TAG' >/dev/null 2>&1"
  POLICY=$(pm image inspect -f '{{index .Labels "run.haven.policy"}}' "$IMAGE_TAG")
  assert_eq "$agent" "$POLICY" "the image's run.haven.policy label"
  images_workspace
  n=$(new_name "$agent")
  OUT=$(pm run --name "$n" "${PR[@]}" --network none --annotation "run.haven.policy=$POLICY" \
    -v "$WS:/workspace" "${IMAGES_KEYS[@]}" "$IMAGE_TAG" sh -c "$(images_probe "$agent")" 2>&1)
  RC=$?
  id=$(pm_state "$n" '{{.Id}}')
  trail=/var/log/haven/containers/$id.jsonl
  defer "rm -f '$trail'"
  [ "$RC" = 0 ] || fail "podman run $agent: exit $RC: $OUT"
  images_check "$agent" "$trail"
}

test_images_claude_code_docker() { images_docker claude-code; }
test_images_claude_code_podman() { images_podman claude-code; }
test_images_codex_docker() { images_docker codex; }

# images_compose_run PROJECT NAME SCRIPT: the service's container NAME
# detached, then waited for; RC and its standard output in OUT.
# (docker-compose 1.29's attached `run` starts the container before it
# attaches and loses what a quick command prints first.)
images_compose_run() {
  timeout -k 5 120 docker-compose -p "$1" -f "$IMAGES_DIR/compose.yml" run -d --name "$2" claude \
    sh -c "$3" > run.out 2> run.err || fail "docker-compose run $2: $(tail -3 run.err)"
  RC=$(dk wait "$2") || fail "docker wait $2: $RC"
  OUT=$(dk logs "$2" 2> logs.err)
}

# images/compose.yml as shipped, with the test's image and project, and
# its state volume: docker-compose run, then the same volume in a second
# run (the agent's ~/.claude outlives the container).
test_images_claude_code_compose() {
  command -v docker-compose >/dev/null || skip "docker-compose is not installed"
  images_docker_prepare claude-code
  local p=hvimg$$ id
  export PROJECT=$WS HAVEN_CLAUDE_IMAGE=$IMAGE_TAG ANTHROPIC_API_KEY=test-key
  defer "timeout 60 docker-compose -p $p -f '$IMAGES_DIR/compose.yml' down -v >/dev/null 2>&1"
  assert_eq "$RT" "$(sed -n 's/^ *runtime: ${HAVEN_RUNTIME:-\(.*\)}$/\1/p' "$IMAGES_DIR/compose.yml")" \
    "compose.yml's runtime"
  images_compose_run "$p" "$p-run1" "$(images_probe claude-code); echo kept > ~/.claude/state"
  id=$(dk_state "$p-run1" '{{.Id}}')
  defer "rm -f '/var/log/haven/containers/$id.jsonl'"
  [ "$RC" = 0 ] || fail "docker-compose run: exit $RC: $OUT $(tail -3 run.err)"
  images_check claude-code "/var/log/haven/containers/$id.jsonl"
  images_compose_run "$p" "$p-run2" 'cat ~/.claude/state; ls -A ~ | grep -vx .claude | wc -l'
  assert_eq "kept
0" "$OUT" "~/.claude from the volume, nothing else in the home"
}
test_images_gemini_cli_docker() { images_docker gemini-cli; }

# images/devcontainer/devcontainer.json as shipped, with the test's image,
# --network=none (nothing of the network is needed) and a volume name
# of its own: devcontainer up, then the probe through devcontainer exec
# (as remoteUser, under the same policy).
test_images_claude_code_devcontainer() {
  need_devcontainer_cli_installed
  images_docker_prepare claude-code
  local f=$IMAGES_DIR/devcontainer/devcontainer.json c vol=hvimg-state-$$
  assert_eq "--runtime=$RT" "$(jq -r '.runArgs[0]' "$f")" "devcontainer.json's runtime"
  mkdir -p "$WS/.devcontainer"
  jq --arg img "$IMAGE_TAG" --arg vol "$vol" \
    '.image = $img | .runArgs += ["--network=none"] | .mounts = [.mounts[] | sub("haven-claude-state"; $vol)]' \
    "$f" > "$WS/.devcontainer/devcontainer.json" || fail "jq $f"
  defer "dk volume rm -f '$vol' >/dev/null 2>&1"
  devc up "$WS" > up.json 2> up.log || fail "devcontainer up: $(devc_error up.log up.json)"
  assert_eq success "$(tail -1 up.json | jq -r .outcome)" "devcontainer up outcome"
  c=$(tail -1 up.json | jq -r .containerId)
  defer "rm -f '/var/log/haven/containers/$c.jsonl'"
  OUT=$(ANTHROPIC_API_KEY=test-key devc exec "$WS" sh -c "$(images_probe claude-code); touch ~/.claude/ok && echo state_writable" 2> exec.err)
  [ $? = 0 ] || fail "devcontainer exec: $(tail -3 exec.err) $OUT"
  images_check claude-code "/var/log/haven/containers/$c.jsonl"
  assert_contains "$OUT" state_writable "~/.claude, the state volume"
}
