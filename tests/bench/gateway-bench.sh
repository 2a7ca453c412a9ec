#!/usr/bin/env bash
# Benchmark (not a test): the model API gateway's added latency and its
# memory.  A stand-in for api.anthropic.com over HTTPS (the integration
# tests' gateway_standin.py, a test CA made here, a random 127.x.y.z:443,
# haven-runc under `unshare -m` with a private /etc/hosts and
# SSL_CERT_FILE) and a container with run.haven.gateway; curl (C and
# OpenSSL, as the gateway) sends N requests, each on a new connection,
# and says how long each took:
#   direct   from the host to the stand-in over TLS (--resolve);
#   gateway  from inside the container's network namespace (nsenter -n,
#            the host's curl) to http://127.0.0.1:8961, which the monitor
#            forwards over its own TLS connection.
# Each for a plain answer (total time) and a streamed one (time to the
# first byte, and to the end).  Prints the medians and the added latency
# (gateway - direct: the target is under 1 ms), then the monitor's RSS.
# At most 9 requests a second, both ways (the gateway refuses more than
# 10 a second): 4N requests take about 0.45 N seconds.
#
#   sudo tests/bench/gateway-bench.sh [N]      (default N=60: about 30 s)
#
# RUNTIME=path/to/haven-runc picks the binary (default: this checkout's).
set -euo pipefail
n=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
runtime=${RUNTIME:-$here/../../haven-runc}
standin=$here/../integration/gateway_standin.py
[ "$(id -u)" = 0 ] || { echo "gateway-bench: needs root" >&2; exit 1; }
[ -x "$runtime" ] || { echo "gateway-bench: $runtime missing (build first)" >&2; exit 1; }

work=$(mktemp -d /tmp/haven-gateway-bench.XXXXXX)
id=hv-gwbench-$$
standin_pid=
cleanup() {
  "$runtime" --root "$work/state" delete --force "$id" > /dev/null 2>&1 || true
  [ -n "$standin_pid" ] && kill "$standin_pid" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 1 -subj /CN=haven-bench-ca \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2> /dev/null
openssl req "${ec[@]}" -keyout srv.key -out srv.csr -subj /CN=api.anthropic.com 2> /dev/null
printf 'subjectAltName=DNS:api.anthropic.com\n' > srv.ext
openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 1 -extfile srv.ext \
  2> /dev/null
addr=127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
python3 "$standin" "$addr" srv.pem srv.key "$work/standin.log" "$work/ready" - > standin.err 2>&1 &
standin_pid=$!
for _ in $(seq 100); do [ -e ready ] && break; sleep 0.05; done
[ -e ready ] || { echo "gateway-bench: the stand-in did not start: $(cat standin.err)" >&2; exit 1; }
printf '127.0.0.1 localhost\n%s api.anthropic.com\n' "$addr" > hosts
printf 'sk-ant-bench-%s\n' "$RANDOM$RANDOM" > key
chmod 600 key

"$here/../make-bundle.sh" "$work/b" "$runtime" > /dev/null
jq --arg k "$work/key" '.annotations["run.haven.gateway"] = ({apis: [{provider: "anthropic", port: 8961,
      auth: "x-api-key", key_file: $k}]} | tostring) | .process.args = ["sleep", "600"]' b/config.json > b/c
mv b/c b/config.json
# with_hosts CMD...: CMD with the private /etc/hosts.
with_hosts() { unshare -m --propagation private sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$work/hosts" "$@"; }
with_hosts env SSL_CERT_FILE="$work/ca.pem" "$runtime" --root "$work/state" create --bundle "$work/b" "$id"
"$runtime" --root "$work/state" start "$id"
pid=$("$runtime" --root "$work/state" state "$id" | jq -r .pid)
monitor=$(cut -d' ' -f1 "$work/state/$id/monitor.pid")

# bench URL BODY OUT [CURL OPTIONS...]: N/2 requests from one curl (its
# TLS context and CA store made once, as the gateway's), each on a new
# connection, at most 9 a second; "TOTAL FIRST" (ms) a line in OUT for
# each answered 200 (the count is checked below).
bench() {
  local url=$1 body=$2 out=$3 i urls=()
  shift 3
  for i in $(seq $((n / 2))); do urls+=("$url"); done
  curl -sS --rate 9/s -H 'Connection: close' -H 'content-type: application/json' \
    -H 'x-api-key: haven-gateway-placeholder' --data "$body" -w '\n=%{time_total} %{time_starttransfer} %{http_code}\n' \
    "$@" "${urls[@]}" | awk '/^=/ && $3 == 200 {printf "%.3f %.3f\n", substr($1, 2) * 1000, $2 * 1000}' >> "$out"
}
plain='{"model":"m"}'
stream='{"model":"m","stream":true}'
direct=(--cacert ca.pem --resolve "api.anthropic.com:443:$addr")
url=https://api.anthropic.com/v1/messages
# In turn, so that drift of the machine's speed hits both alike.
for _ in 1 2; do
  bench "$url" "$plain" direct.plain "${direct[@]}"
  nsenter -t "$pid" -n bash -c "$(declare -f bench); n=$n; bench http://127.0.0.1:8961/v1/messages '$plain' gw.plain"
  bench "$url" "$stream" direct.stream "${direct[@]}"
  nsenter -t "$pid" -n bash -c "$(declare -f bench); n=$n; bench http://127.0.0.1:8961/v1/messages '$stream' gw.stream"
done
for f in direct.plain gw.plain direct.stream gw.stream; do
  [ "$(wc -l < "$f")" = "$n" ] || { echo "gateway-bench: $f has $(wc -l < "$f") of $n answers" >&2; exit 1; }
done

# median FILE COLUMN
median() { cut -d' ' -f"$2" "$1" | sort -n | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f", m}'; }
report() {
  local what=$1 col=$2 d g
  d=$(median "direct.$3" "$col")
  g=$(median "gw.$3" "$col")
  printf '%-32s direct %8s ms   gateway %8s ms   added %8s ms\n' "$what" "$d" "$g" \
    "$(awk -v a="$g" -v b="$d" 'BEGIN {printf "%.3f", a - b}')"
}
echo "gateway-bench: N=$n requests each (medians), stand-in on $addr"
report "plain request, total" 1 plain
report "streamed response, first byte" 2 stream
report "streamed response, total" 1 stream
echo "monitor RSS: $(awk '/^VmRSS/ {print $2, $3}' "/proc/$monitor/status"), HWM $(awk '/^VmHWM/ {print $2, $3}' "/proc/$monitor/status")"
