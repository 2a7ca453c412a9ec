# haven run under a policy without network (session/run_offline.h): a
# name lookup fails at once as "not known", package managers do not retry
# it for a minute, and under a terminal haven says that the network is off
# and which key turns it on.

# A lookup of a name that is not in /etc/hosts: EAI_NONAME (-2) within
# 2 s; on 2e9dd27 it was EAI_AGAIN (-3, "temporary failure"), which
# clients retry.  localhost still resolves from /etc/hosts.
test_offline_lookup_fails_fast() {
  need_haven
  make_project
  haven_in "$P" run -- python3 -c '
import socket, time
t = time.monotonic()
try:
    socket.getaddrinfo("example.com", 443)
    print("resolved")
except socket.gaierror as e:
    print("gaierror", e.errno)
print("took %.1f" % (time.monotonic() - t))
print("localhost", socket.getaddrinfo("localhost", 80)[0][4][0])'
  assert_eq 0 "$RC" "exit code ($OUT)"
  assert_contains "$OUT" "gaierror $(python3 -c 'import socket; print(socket.EAI_NONAME)')"
  assert_contains "$OUT" "localhost 127.0.0.1"
  local took
  took=$(echo "$OUT" | sed -n 's/^took //p')
  [ "${took%.*}" -lt 2 ] || fail "the lookup took $took s"
  # The host's own name service config is untouched.
  assert_not_contains "$(cat /etc/nsswitch.conf)" "haven"
}

# npm retried a failed lookup for about 70 s (fetch-retries 2, 10 s and
# 60 s apart); under network none it is told not to retry, and a run
# that names its own value keeps it.  On 2e9dd27 this took 71 s.
test_offline_npm_fails_fast() {
  need_haven
  command -v npm > /dev/null || skip "npm missing"
  make_project
  local t0=$SECONDS
  haven_in "$P" run -- sh -c 'npm view left-pad version; echo "npm=$?"'
  local took=$((SECONDS - t0))
  assert_contains "$OUT" "ENOTFOUND"
  [ "$took" -lt 20 ] || fail "npm took $took s to fail: $OUT"
  haven_in "$P" run -- sh -c 'echo "retries=$npm_config_fetch_retries pip=$PIP_RETRIES cargo=$CARGO_NET_RETRY"'
  assert_contains "$OUT" "retries=0 pip=0 cargo=0"
  # An allowlist or open policy gets none of this.
  cat > "$P.pol/open.yaml" <<'POL'
name: open-test
extends: default
network: {mode: open}
POL
  haven_in "$P" run --policy "$P.pol/open.yaml" -- sh -c 'echo "retries=[$npm_config_fetch_retries]"; echo "nsswitch=$(grep -c "^# haven" /etc/nsswitch.conf)"'
  assert_contains "$OUT" "retries=[]"
  assert_contains "$OUT" "nsswitch=0"
}

# Under a terminal, one line at the start names the policy and the key;
# without one (scripts, CI), nothing.
test_offline_note_under_terminal() {
  need_haven
  command -v script > /dev/null || skip "script missing (util-linux)"
  make_project
  local out
  out=$(cd "$P" && timeout 30 script -qec "$HAVEN run -- true" /dev/null 2>&1 </dev/null)
  assert_contains "$out" "haven: no network under policy \"default\" (network.mode: none)"
  assert_contains "$out" "network.allow"
  haven_in "$P" run -- true
  assert_eq 0 "$RC" "exit code ($OUT)"
  assert_not_contains "$OUT" "no network under policy"
}
