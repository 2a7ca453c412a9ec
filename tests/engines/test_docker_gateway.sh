# The model API gateway in Docker containers: a runtime registered with
# `haven install docker --api-key anthropic=FILE` and a policy with
# credentials.api runs a container that reaches the API through
# http://127.0.0.1:8961 while no key, neither the file's nor one given
# with `docker run -e` or `docker exec -e`, is anywhere in the container's
# environment.  Two tests: busybox wget as the agent, and the real Claude
# Code in the Claude Code image (test_images.sh's tarball).
#
# The API's host is the stand-in of tests/agents/mock_model_api.py over
# HTTPS (tests/engines/gateway/standin.py), with a certificate of a CA
# made now, on a random 127.x.y.z port 443.  The gateway runs in the
# per-container monitor, which the runtime forks in containerd's
# namespaces, and resolves and verifies the host there: so these tests
# start a dockerd and containerd of their own, both in one mount
# namespace of their own whose /etc/hosts (bound over, privately) maps
# api.anthropic.com to the stand-in, with SSL_CERT_FILE (the test CA) in
# containerd's environment, which it hands to its shims and they to the
# runtime (dockerd's alone does not reach them when containerd is a
# daemon of its own: the request is then answered 502); and in a network
# namespace of their own, where the stand-in listens.  The machine's
# /etc/hosts, its dockerd and the suite's are never touched.

GW_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Importing the Claude Code image (700 MB) into a dockerd of its own, or
# building its tarball first, is longer than the suite's per-test limit.
TEST_TIMEOUT_images_claude_code_gateway_docker=900

# gw_certs DIR: a CA and a certificate for api.anthropic.com it signed.
gw_certs() {
  local d=$1
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=haven-gateway-test-ca -keyout "$d/ca.key" \
    -out "$d/ca.pem" > /dev/null 2>&1 || fail "openssl: test CA"
  openssl req -newkey rsa:2048 -nodes -subj /CN=api.anthropic.com -keyout "$d/server.key" -out "$d/server.csr" \
    > /dev/null 2>&1 || fail "openssl: server key"
  printf 'subjectAltName=DNS:api.anthropic.com\n' > "$d/san.ext"
  openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
    -extfile "$d/san.ext" -out "$d/server.pem" > /dev/null 2>&1 || fail "openssl: server certificate"
}

# gw_dockerd DIR NETNS: containerd and dockerd of the test's own (GW_SOCK,
# gdk), in NETNS and in one new mount namespace with DIR/hosts as
# /etc/hosts and SSL_CERT_FILE=DIR/ca.pem.
gw_dockerd() {
  local d=$1 ns=$2 c=$1/c
  mkdir -p "$c" "$d/data" "$d/exec"
  cat > "$c/containerd.toml" <<EOT
version = 2
root = "$d/data/containerd"
state = "$c/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$c/containerd.sock"
[debug]
  address = "$c/debug.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/data/opt"
EOT
  GW_SOCK=$d/docker.sock
  # dockerd mounts each container's root where containerd's shims look:
  # both in the one namespace.
  nsenter --net="/run/netns/$ns" unshare --mount --propagation slave sh -c '
    d=$1
    mount --bind "$d/hosts" /etc/hosts || exit 1
    export SSL_CERT_FILE=$d/ca.pem  # for containerd (its shims, the runtime, the monitor)
    containerd --config "$d/c/containerd.toml" > "$d/containerd.log" 2>&1 &
    echo $! > "$d/containerd.pid"
    i=0
    while [ ! -S "$d/c/containerd.sock" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    exec dockerd --data-root "$d/data/docker" --exec-root "$d/exec" --pidfile "$d/dockerd.pid" \
      -H "unix://$d/docker.sock" --config-file "$d/daemon.json" --containerd "$d/c/containerd.sock" \
      --containerd-namespace haven-gw-test --containerd-plugins-namespace haven-gw-test-plugins' sh "$d" \
    > "$d/dockerd.log" 2>&1 < /dev/null &
  defer "gw_dockerd_stop '$d'"
  wait_for 60 gdk version || fail "the test's dockerd did not start: $(tail -3 "$d/dockerd.log" "$d/containerd.log")"
}

gdk() { DOCKER_HOST=unix://$GW_SOCK dk "$@"; }

gw_dockerd_stop() {
  local d=$1 p i
  local ids
  ids=$(gdk ps -aq 2>/dev/null)
  [ -z "$ids" ] || gdk rm -f $ids > /dev/null 2>&1
  for p in "$(cat "$d/dockerd.pid" 2>/dev/null)" "$(cat "$d/containerd.pid" 2>/dev/null)"; do
    [ -n "$p" ] || continue
    kill -TERM "$p" 2>/dev/null
    for i in $(seq 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  done
  # Shims of our containerd that outlived it (by its socket).
  for p in $(pgrep containerd-shim); do
    tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$d/c/containerd.sock" && kill -KILL "$p"
  done
}

# gw_world POLICY SCRIPT-JSON: in the test's directory, the CA, the key
# file (GW_KEY, root's alone as `haven install --api-key` requires), the
# stand-in answering SCRIPT-JSON (its log GW_LOG), the runtime haven-gw
# registered with --policy POLICY --api-key anthropic=FILE, and the
# test's dockerd.
gw_world() {
  local policy=$1 script=$2 d
  command -v python3 > /dev/null || skip "python3 (the stand-in API) is not installed"
  command -v openssl > /dev/null || skip "openssl (the test CA) is not installed"
  d=$(pwd)
  GW_DIR=$d
  gw_certs "$d"
  GW_KEY="sk-ant-from-file-$RANDOM$RANDOM"
  (umask 077 && printf '%s\n' "$GW_KEY" > "$d/anthropic.key")
  local addr="127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 2))"
  printf '127.0.0.1 localhost\n%s api.anthropic.com\n' "$addr" > "$d/hosts"
  local ns=hvt-gw-$$-$RANDOM
  ip netns add "$ns" || fail "ip netns add $ns"
  defer "ip netns delete '$ns'"
  ip -n "$ns" link set lo up || fail "lo up in $ns"
  printf '%s\n' "$script" > "$d/script.json"
  GW_LOG=$d/api.jsonl
  : > "$GW_LOG"
  MOCK_DUMP=1 nsenter --net="/run/netns/$ns" python3 "$GW_HERE/gateway/standin.py" \
    "$GW_HERE/../agents/mock_model_api.py" "$d/script.json" "$GW_LOG" "$d/api.ready" "$addr" 443 \
    "$d/server.pem" "$d/server.key" > "$d/standin.log" 2>&1 < /dev/null &
  defer "kill $!"
  wait_for 20 test -e "$d/api.ready" || fail "the stand-in API did not start: $(cat "$d/standin.log")"
  cat > "$d/daemon.json" <<EOF2
{"iptables": false, "ip6tables": false, "ip-masq": false, "bridge": "none",
 "exec-opts": ["native.cgroupdriver=cgroupfs"], "features": {"buildkit": false}, "log-driver": "json-file"}
EOF2
  haven install docker --daemon-json "$d/daemon.json" --runtime "$RUNTIME" --name haven-gw --policy "$policy" \
    --api-key "anthropic=$d/anthropic.key" > install.out 2>&1 || fail "haven install: $(cat install.out)"
  assert_not_contains "$(cat "$d/daemon.json")" "$GW_KEY" "daemon.json"
  gw_dockerd "$d" "$ns"
}

# The credentials the stand-in got, one "x-api-key authorization" a line
# (MOCK_DUMP's records).
gw_credentials_seen() {
  jq -r 'select(.event == "dump") | "\(.headers["x-api-key"] // .headers["X-Api-Key"] // "-") \(.headers.authorization // .headers.Authorization // "-")"' "$GW_LOG"
}

# No key in container C: not in init's environment or any process's (an
# exec given -e ANTHROPIC_API_KEY=... among them), not in docker exec
# env; init has the gateway's URL and the placeholder.  KEYS: what must
# not be there.
gw_no_key_inside() {
  local c=$1 out k
  shift
  out=$(gdk exec "$c" sh -c 'tr "\0" "\n" < /proc/1/environ' 2>&1)
  assert_contains "$out" "ANTHROPIC_API_KEY=haven-gateway-placeholder" "init's environ"
  assert_contains "$out" "ANTHROPIC_BASE_URL=http://127.0.0.1:8961" "init's environ"
  local xkey="sk-ant-from-docker-exec-$RANDOM$RANDOM"
  out=$(gdk exec -e "ANTHROPIC_API_KEY=$xkey" "$c" sh -c 'cat /proc/[0-9]*/environ | tr "\0" "\n"' 2>&1)
  assert_contains "$out" "ANTHROPIC_API_KEY=haven-gateway-placeholder" "/proc/*/environ"
  for k in "$@" "$xkey" sk-ant; do
    assert_not_contains "$out" "$k" "/proc/*/environ in the container"
    assert_not_contains "$(gdk exec "$c" env 2>&1)" "$k" "docker exec env"
  done
  # The annotation names the file; the file's key is in no file of the
  # runtime's state or of the bundle (Docker's own config.json there holds
  # what -e gave: host-side, root's, never the container's).
  local id root=$GW_DIR/exec/runtime-runc/haven-gw-test
  id=$(gdk inspect -f '{{.Id}}' "$c")
  assert_contains "$("$RUNTIME" --root "$root" state "$id" | jq -r '.annotations["run.haven.gateway"]')" \
    "\"key_file\":\"$GW_DIR/anthropic.key\"" "the gateway annotation"
  local files
  files=$(find "$root/$id" "$GW_DIR/c/state" -maxdepth 4 -type f -size -1M 2>/dev/null)
  [ -n "$files" ] || fail "no state or bundle files for $c"
  for k in "$1"; do
    ! echo "$files" | xargs grep -lF -- "$k" > /dev/null || fail "$k in $(echo "$files" | xargs grep -lF -- "$k")"
  done
}

# The request an agent makes, from inside the container (bounded by
# dk; busybox 1.35's wget crashes when -T comes with --post-data).
gw_request() { # CONTAINER PATH
  gdk exec "$1" wget -O - --header 'content-type: application/json' \
    --header 'anthropic-version: 2023-06-01' --header 'x-api-key: placeholder-from-the-container' \
    --post-data '{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}' \
    "http://127.0.0.1:8961$2" 2>&1
}

test_docker_gateway_api_key() {
  need_docker
  local d
  d=$(pwd)
  # As the shipped claude-code policy: the key's variable is passed, so
  # only the gateway keeps the key given with -e out.
  cat > "$d/gw.yaml" <<EOF2
name: gw-test
extends: default
env:
  pass: [ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL]
credentials:
  api:
    - {host: api.anthropic.com, header: x-api-key, token_env: ANTHROPIC_API_KEY}
EOF2
  gw_world "$d/gw.yaml" '[{"text": "unused"}]'
  gdk import "$WORK/image.tar" "$IMAGE" > /dev/null 2>&1 || fail "docker import"
  local c ekey="sk-ant-from-docker-e-$RANDOM$RANDOM"
  c=$(new_name gw)
  gdk run -d --runtime haven-gw --network none --name "$c" -e "ANTHROPIC_API_KEY=$ekey" "$IMAGE" sleep 300 \
    > run.out 2>&1 || fail "docker run: $(cat run.out)"

  # The request reaches the API with the file's key, and only the file's.
  local out
  out=$(gw_request "$c" /v1/messages)
  assert_contains "$out" "Scripted session" "the answer through the gateway"
  assert_eq "$GW_KEY -" "$(gw_credentials_seen)" "the credentials the API got"
  # Another path: refused by the gateway, never sent.
  out=$(gw_request "$c" /v1/files)
  assert_contains "$out" "403" "a path off the list"
  assert_eq 1 "$(grep -c '"event": "request"' "$GW_LOG")" "requests the stand-in saw"
  # The trail has both, and never a key.
  local trail
  trail=/var/log/haven/containers/$(gdk inspect -f '{{.Id}}' "$c").jsonl
  assert_contains "$(grep '"event":"api"' "$trail")" '"path":"/v1/messages","status":200' "the trail"
  assert_contains "$(grep '"event":"api"' "$trail")" '"path":"/v1/files","status":403' "the trail"
  assert_not_contains "$(cat "$trail")" "$GW_KEY" "the trail"
  gw_no_key_inside "$c" "$GW_KEY" "$ekey"

  # On a user-defined network (a bridge of this dockerd's, in its own
  # network namespace) the container has an interface and an egress
  # table besides loopback: the gateway still listens on its loopback and
  # still serves only the file's key.
  gdk network create --internal --subnet 10.123.0.0/24 "gwnet-$$" > net.out 2>&1 || fail "network create: $(cat net.out)"
  local cn
  cn=$(new_name gwnet)
  gdk run -d --runtime haven-gw --network "gwnet-$$" --name "$cn" -e "ANTHROPIC_API_KEY=$ekey" "$IMAGE" sleep 300 \
    > run.out 2>&1 || fail "docker run on a user-defined network: $(cat run.out)"
  out=$(gw_request "$cn" /v1/messages)
  assert_contains "$out" "Scripted session" "the answer through the gateway on a user-defined network"
  assert_eq "$GW_KEY -"$'\n'"$GW_KEY -" "$(gw_credentials_seen)" "the credentials the API got"
  gw_no_key_inside "$cn" "$GW_KEY" "$ekey"
  gdk rm -f "$cn" > /dev/null 2>&1
  gdk network rm "gwnet-$$" > /dev/null 2>&1 || fail "network rm gwnet-$$"
}

# The real Claude Code in the Claude Code image, under the shipped
# claude-code policy and a runtime registered with --api-key: given its
# key with -e as a person would, it completes a session (one answer,
# streamed) through the gateway, the API sees only the file's key, and the
# container holds neither.
test_images_claude_code_gateway_docker() {
  need_docker
  [ "$ENGINE_RUNTIME" = haven ] || skip "the gateway is haven's"
  images_want claude-code
  images_tarball claude-code
  gw_world claude-code '[{"text": "gateway-session-done"}]'
  IMAGE_TAG=haven-test/claude-code-gw:$$
  images_import env "DOCKER_HOST=unix://$GW_SOCK" "$DOCKER_CLI"
  # Its ~/.claude with settings that turn Claude Code's own traffic off.
  local state=$PWD/claude-state c ekey="sk-ant-from-docker-e-$RANDOM$RANDOM" rc
  mkdir -p "$state"
  printf '{"env": {"DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}}\n' \
    > "$state/settings.json"
  chown -R 1000:1000 "$state"
  chmod 700 "$state"
  c=$(new_name claude)
  # init is a shell that runs the session and stays: the container's
  # environment can then be read while it runs.
  gdk run -d --runtime haven-gw --network none --name "$c" -v "$state:/home/agent/.claude" \
    -e "ANTHROPIC_API_KEY=$ekey" "$IMAGE_TAG" \
    sh -c 'claude -p "Say you are done" --dangerously-skip-permissions > /tmp/claude.out 2>&1; echo $? > /tmp/claude.rc; sleep 600' \
    > run.out 2>&1 || fail "docker run: $(cat run.out)"
  wait_for 240 gdk exec "$c" test -e /tmp/claude.rc \
    || fail "claude did not end within 240 s: $(gdk exec "$c" cat /tmp/claude.out 2>&1 | tail -5)"
  rc=$(gdk exec "$c" cat /tmp/claude.rc)
  local out
  out=$(gdk exec "$c" cat /tmp/claude.out)
  echo "# claude: rc=$rc: $out"
  assert_eq 0 "$rc" "claude's exit status ($out)"
  assert_contains "$out" "gateway-session-done" "claude's final answer"
  grep -q '"stream": true' "$GW_LOG" || fail "no streamed request reached the stand-in: $(head -3 "$GW_LOG")"
  local seen
  seen=$(gw_credentials_seen | sort -u)
  assert_eq "$GW_KEY -" "$seen" "the credentials the API got"
  gw_no_key_inside "$c" "$GW_KEY" "$ekey"
}
