# haven's model API gateway (docs/gateway.md) as the sandbox sees it,
# without an agent: a policy serving the three providers, each key only
# in haven's environment, and the HTTPS stand-in of agent_lib.sh as every
# provider's host.  test_agent_claude.sh, test_agent_codex.sh and
# test_agent_gemini.sh run the real agents through it.

source "$(dirname "${BASH_SOURCE[0]}")/agent_lib.sh"

GW_PROBE_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../agents" && pwd)/gateway_probe.py
GW_ALL_HOSTS="api.anthropic.com api.openai.com generativelanguage.googleapis.com"

# gateway_all_policy FILE: default's sandbox (no network but its own
# loopback) with the three providers served, keys from haven's
# environment.
gateway_all_policy() {
  cat > "$1" <<'YAML'
name: gateway-all
extends: default
credentials:
  api:
    - {host: api.anthropic.com, header: x-api-key, token_env: ANTHROPIC_API_KEY}
    - {host: api.openai.com, header: authorization, token_env: OPENAI_API_KEY}
    - {host: generativelanguage.googleapis.com, header: x-goog-api-key, token_env: GEMINI_API_KEY}
YAML
}

# What passes reaches the provider with the real key in its header and
# nothing of the sandbox's own credential; what the allow-list refuses is
# answered 403 and never reaches the provider; no request reaches
# another host; streams are relayed as they come; the sandbox has the
# placeholder, never a key, in its environment and files, cannot reach
# the stand-in itself, and was never given haven's SSL_CERT_FILE.
test_agent_gateway_probes() {
  need_haven
  gateway_netns
  echo '[]' > script.json
  gateway_stand_in "$GW_ALL_HOSTS" "$PWD/script.json" "$EH"
  agent_project
  gateway_all_policy "$P.pol/gw.yaml"
  gateway_probes
}

# The same with haven run by an ordinary user: the listeners are made in
# the sandbox's network namespace through its user namespace.
test_agent_gateway_probes_as_unprivileged_user() {
  need_haven
  command -v setpriv > /dev/null || skip "setpriv missing (util-linux)"
  gateway_netns
  echo '[]' > script.json
  gateway_stand_in "$GW_ALL_HOSTS" "$PWD/script.json" "$EH"
  agent_project
  gateway_all_policy "$P.pol/gw.yaml"
  chmod 755 "$WORK" "$PWD" "$PWD/tls" "$P.pol"
  chmod 644 "$GW_CA" "$P.pol/gw.yaml" "$GW_HOSTS"
  chown -R 65534:65534 "$P" "$AGENT_HOME"
  GW_AS_USER=65534
  GW_HAVEN=$(world_readable_copy "$HAVEN")
  gateway_probes
}

# gateway_probes: gateway_probe.py and the leak scan in a sandbox of
# P.pol/gw.yaml (gateway_all_policy), a key of each provider's in haven's
# environment, and the checks of what the sandbox and the stand-in saw.
gateway_probes() {
  local ka ko kg out
  ka=$(gateway_key sk-ant-api03-)
  ko=$(gateway_key sk-proj-)
  kg=$(gateway_key AIzaSy)
  AGENT_ENV="ANTHROPIC_API_KEY=$ka OPENAI_API_KEY=$ko GEMINI_API_KEY=$kg"
  gateway_run "$P.pol/gw.yaml" -- sh -c 'python3 -c "$1" "$2"; '"$(leak_scan_step "$ka" "$ko" "$kg")" \
    sh "$(cat "$GW_PROBE_PY")" "$GW_ADDR"
  out=$AGENT_OUT
  assert_eq 0 "$AGENT_RC" "the probe's run ($(tail -5 agent.err))"
  # The leak scan in the sandbox (the three keys, its own environment,
  # every process's, the trees).
  assert_contains "$out" $'\nclean' "the leak scan in the sandbox"
  assert_not_contains "$out" "LEAK" "the leak scan in the sandbox"
  local line
  for line in "a-ok 200" "a-stream 200 streamed" "o-ok 200" "o-stream 200 streamed" "g-ok 200" \
      "g-stream 200 streamed" "g-count 200" "a-path-files 403" "a-path-dotdot 403" "a-path-escape 403" \
      "a-path-batches 403" "o-path-files 403" "o-path-keys 403" "g-path-key-query 403" "g-path-files 403" \
      "direct not-connected" "env ANTHROPIC_BASE_URL=http://127.0.0.1:8961" \
      "env ANTHROPIC_API_KEY=$GW_PLACEHOLDER" "env OPENAI_BASE_URL=http://127.0.0.1:8962/v1" \
      "env OPENAI_API_KEY=$GW_PLACEHOLDER" "env GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8963" \
      "env GEMINI_API_KEY=$GW_PLACEHOLDER" "env SSL_CERT_FILE unset"; do
    assert_contains "$out" "$line" "the sandbox's probe"
  done
  # Another host: a Host header or an absolute target naming it is
  # refused or sent to the provider's own host; CONNECT is refused.
  [[ $out =~ a-host\ (200|400|403) ]] || fail "a Host of another name: $(grep a-host <<< "$out")"
  [[ $out =~ a-absolute\ (400|403) ]] || fail "an absolute target to another host: $(grep a-absolute <<< "$out")"
  [[ $out =~ connect\ (400|403|405|501) ]] || fail "CONNECT: $(grep connect <<< "$out")"
  [ ! -s "$EVILLOG" ] || fail "the gateway connected to evil.example: $(cat "$EVILLOG")"
  jq -se 'all(.[]; .event != "request" or (.headers.host | test("evil") | not))' "$MOCKLOG" > /dev/null \
    || fail "the stand-in got a request for another host: $(grep evil "$MOCKLOG" | head -c 300)"
  # The stand-in: only the allowed requests, each with its provider's
  # real key and nothing of the sandbox's own credential or the
  # placeholder.
  assert_eq "/v1/messages /v1/responses /v1beta/models/gemini-test:countTokens \
/v1beta/models/gemini-test:generateContent /v1beta/models/hvt-slow-stream:streamGenerateContent" \
    "$(jq -r 'select(.event == "request") | .path' "$MOCKLOG" | sort -u | tr '\n' ' ' | sed 's/ $//')" \
    "what reached the stand-in"
  jq -se --arg a "$ka" --arg o "Bearer $ko" --arg g "$kg" 'all(.[]; .event != "request"
        or (.path | startswith("/v1/messages")) and .headers["x-api-key"] == $a and .headers.authorization == null
        or (.path | startswith("/v1/responses")) and .headers.authorization == $o and .headers["x-api-key"] == null
        or (.path | startswith("/v1beta/")) and .headers["x-goog-api-key"] == $g and .headers.authorization == null)' \
    "$MOCKLOG" > /dev/null \
    || fail "a request without its provider's real key: $(jq -c 'select(.event == "request") | {path,
         h: (.headers | with_entries(select(.key | test("key|auth"))) | map_values(.[:14]))}' "$MOCKLOG")"
  ! grep -qF -e sk-sandbox-own-credential -e "$GW_PLACEHOLDER" "$MOCKLOG" \
    || fail "the sandbox's own credential or the placeholder reached the stand-in"
  local k
  for k in "$ka" "$ko" "$kg"; do check_no_key_on_host "$k" "the probe's run"; done
}

# The gateway killed while the sandbox runs fails closed: requests that
# passed before are refused after (the monitor held the listener alone:
# its death closes the port, nothing accepts and hangs), with nothing
# reaching the provider (the sandbox has no other path to it: no network
# but its loopback, no key).
test_agent_gateway_killed() {
  need_haven
  gateway_netns
  echo '[]' > script.json
  gateway_stand_in api.anthropic.com "$PWD/script.json" "$EH"
  agent_project
  printf 'name: gw-killed\nextends: default\ncredentials:\n  api:\n    - {host: api.anthropic.com, header: x-api-key, token_env: ANTHROPIC_API_KEY}\n' \
    > "$P.pol/gw.yaml"
  local key m i
  key=$(gateway_key sk-ant-api03-)
  AGENT_ENV="ANTHROPIC_API_KEY=$key"
  cat > probe.py <<'PY'
import errno, os, socket, time
def ask():
    try:
        s = socket.create_connection(("127.0.0.1", 8961), 5)
        s.sendall(b'POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n'
                  b'Content-Length: 2\r\nConnection: close\r\n\r\n{}')
        data = s.recv(100)
        return data.split(b" ")[1].decode() if data.startswith(b"HTTP/1.") else "closed"
    except OSError as e:
        return "failed:" + errno.errorcode.get(e.errno, type(e).__name__)
print("before", ask(), flush=True)
open("ready", "w").close()
for i in range(300):
    if os.path.exists("go"):
        break
    time.sleep(0.1)
print("after", ask(), ask(), flush=True)
PY
  gateway_run "$P.pol/gw.yaml" -- python3 -c "$(cat probe.py)" &
  local bg=$!
  defer "kill $bg 2> /dev/null"
  for i in $(seq 300); do [ -e "$P/ready" ] && break; sleep 0.1; done
  [ -e "$P/ready" ] || fail "the sandbox never got ready: $(cat agent.out agent.err)"
  m=$(gateway_monitor)
  local before
  before=$(jq -s '[.[] | select(.event == "request")] | length' "$MOCKLOG")
  kill -KILL "$m"
  for i in $(seq 50); do [ -e "/proc/$m" ] || break; sleep 0.1; done
  [ ! -e "/proc/$m" ] || fail "monitor $m survived SIGKILL"
  touch "$P/go"
  wait "$bg"
  gateway_result
  assert_contains "$AGENT_OUT" "before 200" "the request before the kill ($(tail -3 agent.err))"
  [[ $AGENT_OUT =~ after\ failed:ECONNREFUSED\ failed:ECONNREFUSED ]] \
    || fail "requests after the kill: $AGENT_OUT"
  assert_eq 1 "$before" "requests at the stand-in before the kill"
  assert_eq 1 "$(jq -s '[.[] | select(.event == "request")] | length' "$MOCKLOG")" \
    "requests at the stand-in after the kill"
  check_no_key_on_host "$key" "the run whose gateway was killed"
}
