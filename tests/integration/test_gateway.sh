# The model API gateway (docs/gateway.md): haven-runc with the
# run.haven.gateway annotation and a key_file, against a stand-in for
# api.anthropic.com over HTTPS (gateway_standin.py) with a test CA made
# here.  The stand-in listens on a random 127.x.y.z:443; the runtime runs
# under `unshare -m` with a private /etc/hosts bound over the real one
# (mapping the host name to that address) and SSL_CERT_FILE naming the
# test CA, so only haven's side trusts it.  Nothing of the host's
# /etc/hosts changes.

GW_STANDIN=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/gateway_standin.py

# gw_wait FILE: until FILE exists (10 s at most).
gw_wait() {
  local i
  for i in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done
  fail "$1 never appeared"
}

# gw_world: the CA, the stand-in, the hosts file, a key file and a share
# bound into containers.  Sets GW_KEY (the key's text, random),
# GW_KEY_RE (a pattern matching it but not itself, for greps inside the
# container), GW_LOG (the stand-in's log), GW_SHARE.
gw_world() {
  command -v openssl > /dev/null || skip "no openssl"
  command -v unshare > /dev/null || skip "no unshare"
  make_test_ca . DNS:api.anthropic.com || fail "openssl: test CA and server certificate"
  local addr
  addr=127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
  GW_LOG=$PWD/standin.log
  GW_SHARE=$PWD/share
  mkdir -p "$GW_SHARE"
  chmod 777 "$GW_SHARE"
  : > "$GW_LOG"
  python3 "$GW_STANDIN" "$addr" srv.pem srv.key "$GW_LOG" "$PWD/standin.ready" "$GW_SHARE" > standin.err 2>&1 &
  defer "kill $!"
  gw_wait "$PWD/standin.ready"
  printf '127.0.0.1 localhost\n%s api.anthropic.com\n' "$addr" > hosts
  local rnd
  rnd=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  GW_KEY=sk-ant-test-$rnd
  GW_KEY_RE="sk-ant-t[e]st-$rnd"
  printf '%s\n' "$GW_KEY" > key
  chmod 600 key
}

# gw_bundle SCRIPT: $B runs sh -c SCRIPT with the gateway (anthropic on
# 8961, x-api-key, the key file), a trail, and the share on /share.
gw_bundle() {
  cfg "$B" '.annotations["run.haven.gateway"] = ({apis: [{provider: "anthropic", port: 8961, auth: "x-api-key",
                                                          key_file: $k}]} | tostring)
            | .annotations["run.haven.audit"] = $t
            | .mounts += [{destination: "/share", type: "bind", source: $s, options: ["rbind", "rw"]}]' \
    --arg k "$PWD/key" --arg t "$PWD/trail.jsonl" --arg s "$GW_SHARE"
  args "$B" sh -c "$1"
}

# gw_rt ARGS...: the runtime with the test's /etc/hosts and CA.
gw_rt() {
  timeout -k 5 40 unshare -m --propagation private \
    sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$PWD/hosts" \
    env SSL_CERT_FILE="$PWD/ca.pem" "$RUNTIME" --root "$STATE_ROOT" "$@"
}

# What the sandbox sends: the agent's placeholder key in the header.
GW_POST='wget -q -O - --header "x-api-key: haven-gateway-placeholder" --header "content-type: application/json"'

test_gateway_forwards_streams_and_refuses() {
  skip_on_runc "haven's model API gateway"
  gw_world
  gw_bundle "
    $GW_POST --post-data '{\"model\":\"m\"}' http://127.0.0.1:8961/v1/messages; echo \" plain=\$?\"
    $GW_POST --post-data '{\"stream\": true}' http://127.0.0.1:8961/v1/messages | while read -r l; do
      echo \"\$l\" >> /share/stream.out
      case \"\$l\" in *one*) touch /share/got-one ;; esac
    done
    wget -S -O /dev/null --post-data x http://127.0.0.1:8961/v1/files 2>&1 | grep -o 'HTTP/1.1 [0-9]*'
    echo \"env=\$(env | grep -c '$GW_KEY_RE')\"
    echo \"proc=\$(cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | grep -c '$GW_KEY_RE')\"
    find / \( -path /proc -o -path /sys \) -prune -o -type f -exec grep -sl '$GW_KEY_RE' {} + | sed 's/^/file=/'
    echo \"files=\$(find / \( -path /proc -o -path /sys \) -prune -o -type f -print | wc -l)\"
    echo done"
  local id
  id=$(new_id gw)
  OUT=$(gw_rt run --bundle "$B" "$id" 2>&1 < /dev/null)
  assert_eq 0 "$?" "run ($OUT)"
  assert_contains "$OUT" 'hello from the stand-in"}]} plain=0' "the answer reached the sandbox"
  # The stand-in got the real key, and nothing of the placeholder.
  local first
  first=$(head -1 "$GW_LOG")
  assert_eq "$GW_KEY" "$(jq -r '.headers["x-api-key"]' <<< "$first")" "the real key upstream"
  assert_not_contains "$(cat "$GW_LOG")" "haven-gateway-placeholder" "the placeholder upstream"
  assert_eq api.anthropic.com "$(jq -r .headers.host <<< "$first")" "Host upstream"
  # The stream came piece by piece: event one reached the sandbox before
  # the stand-in sent event two.
  assert_contains "$(cat "$GW_LOG")" '{"stream": "piecewise"}' "streamed"
  assert_contains "$(cat "$GW_SHARE/stream.out")" "event: one" "event one"
  assert_contains "$(cat "$GW_SHARE/stream.out")" "event: two" "event two"
  # /v1/files is not on the list: 403, and the stand-in never saw it.
  assert_contains "$OUT" "HTTP/1.1 403" "files refused"
  assert_not_contains "$(cat "$GW_LOG")" "/v1/files" "files never forwarded"
  # The key is nowhere the sandbox can read.
  assert_contains "$OUT" "env=0" "environment"
  assert_contains "$OUT" "proc=0" "processes' environ and cmdline"
  assert_not_contains "$OUT" "file=" "files"
  assert_contains "$OUT" "done" "the scan ran"
  [ "$(grep -o 'files=[0-9]*' <<< "$OUT" | cut -d= -f2)" -ge 3 ] || fail "the scan saw too few files ($OUT)"
  assert_not_contains "$(cat "$B/config.json" "$STATE_ROOT"/*/* 2> /dev/null)" "$GW_KEY" "config and state"
  # The trail: one record per exchange, never the key.
  local trail
  trail=$(cat trail.jsonl)
  assert_not_contains "$trail" "$GW_KEY" "key in the trail"
  # (The run id and the chain's members aside: audit_trail.h.)
  assert_eq 2 "$(sed 's/"run":"[0-9a-f]*",//' <<< "$trail" | grep -c '"event":"api","policy":"","container":"'"$id"'","provider":"anthropic","method":"POST","path":"/v1/messages","status":200')" \
    "records of the exchanges ($trail)"
  assert_contains "$trail" '"path":"/v1/files","status":403' "the refusal's record"
  assert_contains "$trail" '"reason":"gateway anthropic: path not on the list' "its reason"
  assert_contains "$trail" '"duration_ms":' "duration"
}

test_gateway_rate_limit() {
  skip_on_runc "haven's model API gateway"
  gw_world
  gw_bundle "i=0; while [ \$i -lt 80 ]; do
      wget -q -O /dev/null --post-data '{}' http://127.0.0.1:8961/v1/messages 2>&1 | grep -o ' 429 ' ; i=\$((i+1))
    done | wc -l | sed 's/^/limited=/'"
  OUT=$(gw_rt run --bundle "$B" "$(new_id gw)" 2>&1 < /dev/null)
  assert_eq 0 "$?" "run ($OUT)"
  local limited forwarded
  limited=$(grep -o 'limited=[0-9]*' <<< "$OUT" | cut -d= -f2)
  forwarded=$(grep -c '"path": "/v1/messages"' "$GW_LOG")
  # 60 at once and 10 a second after: 80 in quick succession cannot all pass.
  [ "${limited:-0}" -ge 1 ] || fail "no request was refused 429 ($OUT)"
  assert_eq 80 "$((limited + forwarded))" "every request either forwarded or refused"
  # One record of the refusal, the repeats summarised by the limiter.
  local trail
  trail=$(cat trail.jsonl)
  assert_eq 1 "$(grep -c '"status":429' <<< "$trail")" "one record of the refusal ($trail)"
  assert_contains "$trail" '"reason":"over the request rate limit"' "its reason"
  if [ "$limited" -gt 1 ]; then
    assert_contains "$(grep '"event":"denials-suppressed"' <<< "$trail")" "\"kind\":\"api\",\"count\":$((limited - 1)),\"repeats\":$((limited - 1))" \
      "the summary of the repeats"
  fi
}

test_gateway_fails_closed_when_monitor_dies() {
  skip_on_runc "haven's model API gateway"
  gw_world
  gw_bundle "
    $GW_POST --post-data '{}' http://127.0.0.1:8961/v1/messages > /share/first.out 2>&1; echo \$? >> /share/first.out
    touch /share/first
    i=0; while [ ! -e /share/killed ] && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i+1)); done
    $GW_POST --post-data '{}' http://127.0.0.1:8961/v1/messages > /share/second.out 2>&1; echo rc=\$? >> /share/second.out
    touch /share/second"
  local id
  id=$(new_id gw)
  gw_rt create --bundle "$B" "$id" > create.out 2>&1 || fail "create: $(cat create.out)"
  defer "rt delete --force $id > /dev/null 2>&1"
  rt start "$id" || fail "start"
  gw_wait "$GW_SHARE/first"
  assert_contains "$(cat "$GW_SHARE/first.out")" "hello from the stand-in" "served while the monitor lives"
  local pid
  pid=$(cut -d' ' -f1 "$STATE_ROOT/$id/monitor.pid")
  [ -n "$pid" ] && kill -9 "$pid" || fail "no monitor pid"
  local i
  for i in $(seq 100); do [ -d "/proc/$pid" ] || break; sleep 0.05; done
  touch "$GW_SHARE/killed"
  gw_wait "$GW_SHARE/second"
  assert_contains "$(cat "$GW_SHARE/second.out")" "Connection refused" "connect refused after the monitor died"
  assert_not_contains "$(cat "$GW_SHARE/second.out")" "rc=0" "no answer"
  assert_eq 1 "$(grep -c '"path": "/v1/messages"' "$GW_LOG")" "nothing more reached the stand-in"
}

test_gateway_create_refusals() {
  skip_on_runc "haven's model API gateway"
  gw_world
  gw_bundle true
  # No key: a key_file that is not there.
  cfg "$B" '.annotations["run.haven.gateway"] = ({apis: [{provider: "anthropic", port: 8961, auth: "x-api-key",
                                                          key_file: $k}]} | tostring)' --arg k "$PWD/nokey"
  OUT=$(gw_rt create --bundle "$B" "$(new_id gw)" 2>&1)
  assert_eq 1 "$?" "missing key file ($OUT)"
  assert_contains "$OUT" "config.json: .annotations[\"run.haven.gateway\"]: .apis[0].key_file: key file $PWD/nokey: no such file or directory"
  # No key at all: neither a key_file nor a secret from the caller.
  cfg "$B" '.annotations["run.haven.gateway"] = "{\"apis\":[{\"provider\":\"openai\",\"port\":8962,\"auth\":\"bearer\"}]}"'
  OUT=$(gw_rt create --bundle "$B" "$(new_id gw)" 2>&1)
  assert_eq 1 "$?" "no key ($OUT)"
  assert_contains "$OUT" ".apis[0]: no key for openai (neither a key_file nor the caller's secret api:openai)"
  # A key file others may write.
  chmod 666 key
  cfg "$B" '.annotations["run.haven.gateway"] = ({apis: [{provider: "anthropic", port: 8961, auth: "x-api-key",
                                                          key_file: $k}]} | tostring)' --arg k "$PWD/key"
  OUT=$(gw_rt create --bundle "$B" "$(new_id gw)" 2>&1)
  assert_eq 1 "$?" "writable key file ($OUT)"
  assert_contains "$OUT" "writable by group or others"
  chmod 600 key
  # An annotation that is not understood.
  cfg "$B" '.annotations["run.haven.gateway"] = "{\"apis\":[{\"provider\":\"anthropic\",\"port\":8961,\"auth\":\"goog-api-key\"}]}"'
  OUT=$(gw_rt create --bundle "$B" "$(new_id gw)" 2>&1)
  assert_eq 1 "$?" "bad auth ($OUT)"
  assert_contains "$OUT" 'config.json: .annotations["run.haven.gateway"].apis[0].auth: anthropic does not take its key as goog-api-key'
  # No network namespace of its own: the listener would be the host's.
  cfg "$B" '.annotations["run.haven.gateway"] = ({apis: [{provider: "anthropic", port: 8961, auth: "x-api-key",
                                                          key_file: $k}]} | tostring)
            | .linux.namespaces = [.linux.namespaces[] | select(.type != "network")]' --arg k "$PWD/key"
  OUT=$(gw_rt create --bundle "$B" "$(new_id gw)" 2>&1)
  assert_eq 1 "$?" "no network namespace ($OUT)"
  assert_contains "$OUT" "the model API gateway needs a network namespace of the sandbox's own"
  assert_eq "" "$(rt list -q)" "nothing left"
}

# Under an egress allowlist that allows nothing, the sandbox still reaches
# the gateway on its own loopback (the table accepts loopback).
test_gateway_under_egress() {
  skip_on_runc "haven's model API gateway"
  command -v nft > /dev/null || skip "nft missing (Debian package nftables)"
  gw_world
  local ns=$CTR_PREFIX-gwsb-$RANDOM id
  ip netns add "$ns" || fail "ip netns add $ns"
  defer "ip netns del $ns"
  gw_bundle "$GW_POST --post-data '{}' http://127.0.0.1:8961/v1/messages > /share/out 2>&1; echo \" rc=\$?\" >> /share/out
    touch /share/done; sleep 20"
  cfg "$B" '.annotations["run.haven.egress"] = $e
            | .linux.namespaces = [.linux.namespaces[] | select(.type != "network")] + [{type: "network", path: $p}]' \
    --arg e '{"policy":"t","connect":"engine","allow":[],"deny":[]}' --arg p "/run/netns/$ns"
  id=$(new_id gw)
  gw_rt create --bundle "$B" "$id" > create.out 2>&1 || fail "create: $(cat create.out)"
  defer "rt delete --force $id > /dev/null 2>&1"
  rt start "$id" || fail "start"
  gw_wait "$GW_SHARE/done"
  # The table was there while the request went through.
  assert_contains "$(ip netns exec "$ns" nft list tables)" "inet haven" "the egress table"
  assert_contains "$(cat "$GW_SHARE/out")" 'hello from the stand-in"}]} rc=0' "the gateway answered"
  assert_eq "$GW_KEY" "$(head -1 "$GW_LOG" | jq -r '.headers["x-api-key"]')" "the real key upstream"
}

# A rootless runtime (uid 65534, the container's user namespace mapping
# only it) makes the listener in the namespace its user namespace owns,
# through the same helper as the egress resolver's, and reads a key file
# of its own.
test_gateway_rootless() {
  skip_on_runc "haven's model API gateway"
  command -v setpriv > /dev/null || skip "no setpriv"
  gw_world
  local rb=$PWD/rl state=$PWD/rl-state
  mkdir -p "$rb" "$state"
  "$(dirname "${BASH_SOURCE[0]}")/../make-rootfs.sh" "$rb/rootfs"
  (cd "$rb" && "$RUNTIME" spec --rootless) || fail "spec --rootless"
  cp key "$rb/key"
  jq --arg k "$rb/key" '.annotations["run.haven.gateway"] = ({apis: [{provider: "anthropic", port: 8961,
        auth: "x-api-key", key_file: $k}]} | tostring)
      | .process.terminal = false
      | .process.args = ["sh", "-c", "wget -q -O - --post-data {} http://127.0.0.1:8961/v1/messages; echo \" rc=$?\""]
      | .linux.namespaces += [{type: "network"}]
      | .linux.uidMappings = [{containerID: 0, hostID: 65534, size: 1}]
      | .linux.gidMappings = [{containerID: 0, hostID: 65534, size: 1}]' "$rb/config.json" > "$rb/c" \
    && mv "$rb/c" "$rb/config.json" || fail "config"
  chown -R 65534:65534 "$rb" "$state"
  chmod 600 "$rb/key"
  OUT=$(timeout -k 5 40 unshare -m --propagation private \
    sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$PWD/hosts" \
    setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$rb" XDG_RUNTIME_DIR= SSL_CERT_FILE="$PWD/ca.pem" \
    "$RUNTIME" --root "$state" run --bundle "$rb" "$(new_id gwrl)" 2>&1 < /dev/null)
  assert_eq 0 "$?" "rootless run ($OUT)"
  assert_contains "$OUT" 'hello from the stand-in"}]} rc=0' "the gateway answered"
  assert_eq "$GW_KEY" "$(head -1 "$GW_LOG" | jq -r '.headers["x-api-key"]')" "the real key upstream"
}
