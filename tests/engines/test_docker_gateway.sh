# The model API gateway in Docker containers: a runtime registered with
# `haven install docker --api-key anthropic=FILE` and a policy with
# credentials.api runs a container that reaches the API through
# http://127.0.0.1:8961 while no key, neither the file's nor one given
# with `docker run -e` or `docker exec -e`, is anywhere in the container's
# environment.
#
# The API's host is a stand-in (tests/engines/gateway/standin.py): HTTPS
# with a certificate of a CA made now, on a random 127.x.y.z port 443.
# The gateway runs in the per-container monitor, which the runtime forks
# in containerd's namespaces, and resolves and verifies the host there:
# so this test starts a dockerd and containerd of its own, both in one
# mount namespace of their own whose /etc/hosts (bound over, privately)
# maps api.anthropic.com to the stand-in, with SSL_CERT_FILE (the test
# CA) in containerd's environment, which it hands to its shims and they
# to the runtime (dockerd's alone does not reach them when containerd is
# a daemon of its own: the request is then answered 502); and in a
# network namespace of their own, where the
# stand-in listens.  The machine's /etc/hosts, its dockerd and the
# suite's are never touched.  The image is the suite's busybox (the
# Claude Code image is tests/engines/test_images_agent.sh's, too slow to
# build here): busybox wget plays the agent.

GW_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

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
  GW_DOCKERD=$!
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

# The request an agent makes, from inside the container (bounded by
# dk; busybox 1.35's wget crashes when -T comes with --post-data).
gw_request() { # CONTAINER PATH [docker exec options...]
  local c=$1 path=$2
  shift 2
  gdk exec "$@" "$c" wget -O - --header 'content-type: application/json' \
    --header 'anthropic-version: 2023-06-01' --header 'x-api-key: placeholder-from-the-container' \
    --post-data '{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}' \
    "http://127.0.0.1:8961$path" 2>&1
}

test_docker_gateway_api_key() {
  need_docker
  command -v python3 > /dev/null || skip "python3 (the stand-in API) is not installed"
  command -v openssl > /dev/null || skip "openssl (the test CA) is not installed"
  local d
  d=$(pwd)
  gw_certs "$d"
  # The key: root's alone, as `haven install --api-key` requires.
  local key="sk-ant-from-file-$RANDOM$RANDOM" ekey="sk-ant-from-docker-e-$RANDOM$RANDOM"
  local xkey="sk-ant-from-docker-exec-$RANDOM$RANDOM"
  (umask 077 && printf '%s\n' "$key" > "$d/anthropic.key")
  local addr="127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 2))"
  printf '127.0.0.1 localhost\n%s api.anthropic.com\n' "$addr" > "$d/hosts"
  local ns=hvt-gw-$$-$RANDOM
  ip netns add "$ns" || fail "ip netns add $ns"
  defer "ip netns delete '$ns'"
  ip -n "$ns" link set lo up || fail "lo up in $ns"
  nsenter --net="/run/netns/$ns" python3 "$GW_HERE/gateway/standin.py" "$addr" 443 "$d/server.pem" \
    "$d/server.key" "$d/api.log" > "$d/standin.log" 2>&1 < /dev/null &
  defer "kill $!"
  wait_for 20 test -e "$d/api.log.ready" || fail "the stand-in API did not start: $(cat "$d/standin.log")"
  cat > "$d/gw.yaml" <<EOF2
name: gw-test
extends: default
# As the shipped claude-code policy: the key's variable is passed, so only
# the gateway keeps the key given with -e out.
env:
  pass: [ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL]
credentials:
  api:
    - {host: api.anthropic.com, header: x-api-key, token_env: ANTHROPIC_API_KEY}
EOF2
  cat > "$d/daemon.json" <<EOF2
{"iptables": false, "ip6tables": false, "ip-masq": false, "bridge": "none",
 "exec-opts": ["native.cgroupdriver=cgroupfs"], "features": {"buildkit": false}, "log-driver": "json-file"}
EOF2
  haven install docker --daemon-json "$d/daemon.json" --runtime "$RUNTIME" --name haven-gw --policy "$d/gw.yaml" \
    --api-key "anthropic=$d/anthropic.key" > install.out 2>&1 || fail "haven install: $(cat install.out)"
  assert_not_contains "$(cat "$d/daemon.json")" "$key" "daemon.json"
  gw_dockerd "$d" "$ns"
  gdk import "$WORK/image.tar" "$IMAGE" > /dev/null 2>&1 || fail "docker import"

  local c
  c=$(new_name gw)
  gdk run -d --runtime haven-gw --network none --name "$c" -e "ANTHROPIC_API_KEY=$ekey" "$IMAGE" sleep 300 \
    > run.out 2>&1 || fail "docker run: $(cat run.out)"

  # The request reaches the API with the file's key, and only the file's.
  local out
  out=$(gw_request "$c" /v1/messages)
  assert_contains "$out" "stand-in answer" "the answer through the gateway"
  local log
  log=$(cat "$d/api.log")
  assert_contains "$log" "\"path\": \"/v1/messages\"" "the stand-in's log"
  assert_contains "$log" "\"x-api-key\": \"$key\"" "the key the API got"
  assert_not_contains "$log" "placeholder" "the stand-in's log"
  assert_not_contains "$log" "$ekey" "the stand-in's log"
  # Another path: refused by the gateway, never sent.
  out=$(gw_request "$c" /v1/files)
  assert_not_contains "$out" "stand-in answer" "a path off the list"
  assert_eq 1 "$(grep -c . "$d/api.log")" "requests the stand-in saw"

  # The trail has both, and never a key.
  local trail
  trail=/var/log/haven/containers/$(gdk inspect -f '{{.Id}}' "$c").jsonl
  assert_contains "$(grep '"event":"api"' "$trail")" '"path":"/v1/messages","status":200' "the trail"
  assert_contains "$(grep '"event":"api"' "$trail")" '"path":"/v1/files","status":403' "the trail"
  assert_not_contains "$(cat "$trail")" "$key" "the trail"

  # No key in the container: not in env, not in any process's environ,
  # not with docker exec -e.
  out=$(gdk exec "$c" env 2>&1)
  assert_contains "$out" "ANTHROPIC_API_KEY=haven-gateway-placeholder" "docker exec env"
  assert_contains "$out" "ANTHROPIC_BASE_URL=http://127.0.0.1:8961" "docker exec env"
  # init's own (the process docker run started), then everyone's.
  out=$(gdk exec "$c" sh -c 'tr "\0" "\n" < /proc/1/environ' 2>&1)
  assert_contains "$out" "ANTHROPIC_API_KEY=haven-gateway-placeholder" "init's environ"
  assert_contains "$out" "ANTHROPIC_BASE_URL=http://127.0.0.1:8961" "init's environ"
  out=$(gdk exec -e "ANTHROPIC_API_KEY=$xkey" "$c" sh -c 'cat /proc/[0-9]*/environ | tr "\0" "\n"' 2>&1)
  assert_contains "$out" "ANTHROPIC_API_KEY=haven-gateway-placeholder" "/proc/*/environ"
  local k
  for k in "$key" "$ekey" "$xkey" sk-ant; do
    assert_not_contains "$out" "$k" "/proc/*/environ in the container"
    assert_not_contains "$(gdk exec "$c" env 2>&1)" "$k" "docker exec env"
  done
  # The config the runtime got names the file, never the key.
  local cfg
  cfg=$(find "$d/exec" "$d/c/state" -name config.json 2>/dev/null | head -1)
  [ -n "$cfg" ] || fail "no bundle config.json under $d"
  assert_contains "$(jq -r '.annotations["run.haven.gateway"]' "$cfg")" "\"key_file\":\"$d/anthropic.key\"" \
    "the gateway annotation"
  assert_not_contains "$(cat "$cfg")" "$key" "config.json"
  assert_not_contains "$(cat "$cfg")" "$ekey" "config.json"
}
