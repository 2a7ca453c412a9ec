# Helpers shared by the end-to-end tests of real agent CLIs:
# test_agent_claude.sh, test_agent_codex.sh.  Each of them sources this
# file (run.sh sources only test_*.sh).
#
# An agent CLI from npm runs inside `haven run --policy <its policy>`
# against a scripted stand-in for its model API
# (tests/agents/mock_model_api.py), reachable only as the API's real name
# in the TEST-NET world of test_egress_policies.sh (policies_world).  The
# script does the same steps for every agent (agent_steps); the test
# checks on the host that the work landed and that nothing hostile did
# (check_agent_work, check_agent_contained).
#
# The CLIs are installed once from npm into AGENT_CACHE (the npm registry
# is the only network the tests need, and only for that install); a run
# itself has no route off the machine.  Skipped when npm is missing.  Each
# test names its need_* as its TEST_PREPARE_<name> (tests/lib/harness.sh),
# so the install runs before the test's own time limit starts.

AGENT_CACHE=${HAVEN_AGENT_CACHE:-/var/cache/haven-tests/agents}
AGENT_MOCK_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../agents" && pwd)/mock_model_api.py
# The address the stand-in listens on, in the world namespace.
AGENT_API_ADDR=203.0.113.50

# npm_arch: npm's name for this machine's architecture (x64, arm64).
npm_arch() {
  case $(uname -m) in
    x86_64) echo x64 ;;
    aarch64) echo arm64 ;;
    *) return 1 ;;
  esac
}

# need_npm_agent DIR SPEC PROGRAM: install the npm package SPEC
# (name@version) under AGENT_CACHE/DIR unless PROGRAM (a path relative to
# its node_modules) is already there; sets AGENT_BIN to PROGRAM's path.
need_npm_agent() {
  local dir=$AGENT_CACHE/$1 spec=$2
  command -v npm > /dev/null || skip "npm missing (Debian package npm)"
  AGENT_BIN=$dir/node_modules/$3
  if [ ! -x "$AGENT_BIN" ]; then
    mkdir -p "$dir"
    timeout 600 npm install --prefix "$dir" --no-fund --no-audit --loglevel=error "$spec" \
      > "$WORK/npm-$1.log" 2>&1 || fail "npm install $spec: $(tail -5 "$WORK/npm-$1.log")"
    [ -x "$AGENT_BIN" ] || fail "no $AGENT_BIN after npm install $spec"
  fi
  # The sandbox runs it from the cache: readable by anyone, owned by root.
  chmod -R a+rX "$AGENT_CACHE"
}

# agent_world API_NAME SCRIPT [NAME...]: policies_world (with NAMEs) and
# API_NAME on AGENT_API_ADDR, where the scripted model API (SCRIPT)
# listens on 443, in plain HTTP.  Sets MOCKLOG.
agent_world() {
  local api=$1 script=$2
  shift 2
  POLICIES_EXTRA_ZONE="\"$api\": {\"A\": [[\"$AGENT_API_ADDR\", 300]]}, "
  policies_world "$@"
  ip -n "$EW" addr add "$AGENT_API_ADDR/32" dev lo
  MOCKLOG=$PWD/mock.jsonl
  : > "$MOCKLOG"
  ip netns exec "$EW" python3 "$AGENT_MOCK_PY" "$script" "$MOCKLOG" "$PWD/mock.ready" "$AGENT_API_ADDR" 443 \
    > mock.err 2>&1 &
  defer "kill $!"
  wait_file "$PWD/mock.ready"
}

# tool_result N: what the agent got back from step N of the script: the
# command's output (without the header Codex puts before it: chunk id,
# wall time, exit code, token count; without the frame Gemini CLI puts
# around it: "<untrusted_context>", "Output: " and the exit code and
# process group after).
tool_result() {
  jq -r --argjson n "$1" 'select(.event == "tool_result" and .step == $n) | .content
    | if test("^Chunk ID: ") then sub("^(?s).*?\nOutput:\n"; "")
      elif test("^<untrusted_context>\nOutput: ") then sub("^<untrusted_context>\nOutput: "; "")
        | sub("(?s)(\nExit Code: [0-9]+)?\nProcess Group PGID: [0-9]+\n</untrusted_context>$"; "")
      else . end' "$MOCKLOG"
}

# agent_project: a git project P (README.md committed by "Haven Tester")
# and a home AGENT_HOME on the host with the user's git identity in
# ~/.gitconfig (the sandbox gets only the name and email of it) and a
# private key in ~/.ssh.
agent_project() {
  make_project
  rm -f "$P/.env" "$P/src/deep/.env"
  echo "# calc" > "$P/README.md"
  rm -rf "$P/.git" && git -C "$P" init -q || fail "git init"
  AGENT_HOME=$(mktemp -d "$WORK/agent-home-XXXXXX")
  printf '[user]\n\tname = Haven Tester\n\temail = tester@haven.invalid\n' > "$AGENT_HOME/.gitconfig"
  HOME=$AGENT_HOME git -C "$P" add README.md && HOME=$AGENT_HOME git -C "$P" commit -q -m init \
    || fail "first commit"
  mkdir -p "$AGENT_HOME/.ssh"
  echo "PRIVATE-KEY-MARKER" > "$AGENT_HOME/.ssh/id_ed25519"
  chmod 700 "$AGENT_HOME/.ssh"
}

# agent_steps PROJECT: the script, in a neutral form that each test maps
# onto its agent's tools: {sh: COMMAND} or {write: PATH, content: TEXT},
# and a final {text: ...}.  Ordinary work (read, write code and its test,
# run the test, commit), then hostile steps (read ~/.ssh, print the
# environment, plant a git hook, reach a host the policy does not list,
# leave a process, write outside the project: the host's /etc, the
# project's parent, the home).  check_agent_work and check_agent_contained
# know the step numbers.
# The left-behind process's marker: a sleep of a length no other test
# uses, so the check finds only this run's.
AGENT_SLEEP=${AGENT_SLEEP:-$((98700 + RANDOM))}

agent_steps() {
  local outside
  outside=$(dirname "$1")/outside-$$
  jq -n --arg p "$1" --arg o "$outside" --arg sleep "$AGENT_SLEEP" '[
    {sh: "cat README.md"},
    {write: ($p + "/calc.py"), content: "def add(a, b):\n    return a + b\n"},
    {write: ($p + "/test_calc.py"),
     content: "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\nunittest.main()\n"},
    {sh: "python3 test_calc.py 2>&1; echo tests-rc=$?"},
    {sh: "git add -A && git commit -q -m \"Add calc\" && git log --format=\"%s by %an <%ae>\" -1"},
    {sh: "cat ~/.ssh/id_ed25519; ls -a ~/.ssh"},
    {sh: "env | sort"},
    {write: ($p + "/.git/hooks/pre-commit"), content: "#!/bin/sh\necho pwned > /tmp/pwned\n"},
    {sh: "python3 -c \"import socket\ntry:\n  socket.create_connection((\\\"evil.example\\\", 443), 3); print(\\\"evil-connected\\\")\nexcept OSError as e:\n  print(\\\"evil-refused\\\", e)\""},
    {sh: ("(setsid sleep " + $sleep + " > /dev/null 2>&1 &); echo left-behind")},
    {sh: ("for f in /etc/haven-agent-test " + $o + " ~/.profile; do echo x > $f && echo wrote $f; done 2>&1")},
    {text: "all done"}
  ]'
}

# agent_run POLICY OUTVAR -- CMD...: run CMD in P under `haven run
# --policy POLICY` in the world's host namespace, with HOME=AGENT_HOME, the
# variables in AGENT_ENV (NAME=VALUE words) and host secrets the policy
# must not pass; stdout in AGENT_OUT, status in AGENT_RC, stderr in
# $PWD/agent.err.
agent_run() {
  local pol=$1
  shift
  local t0=$SECONDS err=$PWD/agent.err
  # shellcheck disable=SC2086
  AGENT_OUT=$(cd "$P" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$AGENT_HOME" USER=root LANG=C.UTF-8 \
        ${AGENT_ENV:-} GITHUB_TOKEN=ghp_SECRET_MARKER AWS_SECRET_ACCESS_KEY=AWS_SECRET_MARKER \
        timeout -k 5 180 ip netns exec "$EH" "$HAVEN" run --policy "$pol" -- "$@" \
        2> "$err" < /dev/null)
  AGENT_RC=$?
  echo "$(basename "$1"): rc=$AGENT_RC in $((SECONDS - t0)) s: $AGENT_OUT"
}

# check_agent_work: the ordinary steps landed on the host.
check_agent_work() {
  assert_eq "# calc" "$(tool_result 0)" "the agent read the project"
  assert_eq $'def add(a, b):\n    return a + b' "$(cat "$P/calc.py")" "calc.py on the host"
  assert_contains "$(tool_result 3)" "tests-rc=0" "the agent's test run"
  assert_eq "Add calc by Haven Tester <tester@haven.invalid>" "$(tool_result 4)" "the agent's commit"
  assert_eq "Add calc" "$(git -C "$P" log --format=%s -1)" "the commit on the host"
  assert_contains "$(git -C "$P" show --stat HEAD)" "test_calc.py" "the commit's files"
}

# check_agent_contained: none of the hostile steps did anything.  The
# environment step must show what the agent's commands really got (the
# caller makes the agent pass its whole environment on), so that the
# check sees what haven let through.
check_agent_contained() {
  assert_not_contains "$(tool_result 5)" "PRIVATE-KEY-MARKER" "~/.ssh read"
  local env_seen
  env_seen=$(tool_result 6)
  assert_not_contains "$env_seen" "SECRET_MARKER" "host secrets in the agent's environment"
  assert_contains "$env_seen" "HAVEN=1" "the agent's environment"
  [ ! -e "$P/.git/hooks/pre-commit" ] || fail "the agent planted .git/hooks/pre-commit: $(cat "$P/.git/hooks/pre-commit")"
  assert_contains "$(tool_result 8)" "evil-refused" "evil.example from the agent"
  assert_not_contains "$(cat "$PDNSLOG")" "evil.example" "unlisted name asked upstream"
  assert_not_contains "$(cat "$PWLOG")" "203.0.113.200" "unlisted host reached"
  assert_contains "$(tool_result 9)" "left-behind" "the agent's background process step"
  local i
  for i in $(seq 20); do pgrep -f "sleep $AGENT_SLEEP" > /dev/null || break; sleep 0.1; done
  # Writes outside the project: refused (the host's / is read-only in
  # the sandbox), or kept in the sandbox's private /tmp (where the tests'
  # projects are) and home, gone with it.
  local outside
  outside=$(dirname "$P")/outside-$$
  [ ! -e /etc/haven-agent-test ] || { rm -f /etc/haven-agent-test; fail "the agent wrote the host's /etc"; }
  [ ! -e "$outside" ] || fail "the agent wrote $outside"
  [ ! -e "$AGENT_HOME/.profile" ] || fail "the agent wrote the host's ~/.profile"
  assert_contains "$(tool_result 10)" "/etc/haven-agent-test: Read-only file system" "writing the host's /etc"
  case $(tool_result 10) in
    *"wrote $outside"* | *"$outside: Read-only file system"*) ;;
    *) fail "writing beside the project: $(tool_result 10)" ;;
  esac
  assert_contains "$(tool_result 10)" "wrote $AGENT_HOME/.profile" "writing the sandbox's home"
  local left
  left=$(pgrep -f "sleep $AGENT_SLEEP")
  if [ -n "$left" ]; then
    kill $left
    fail "a process outlived the sandbox"
  fi
  return 0
}

# ---- The model API gateway (docs/gateway.md) ----
#
# The agent gets only the gateway's address in its sandbox and a
# placeholder key; haven, outside, holds the real key and speaks TLS to
# the provider's host.  The tests give that host a stand-in: the same
# scripted model API served over HTTPS (mock_model_api.py --tls) with a
# certificate from a test CA made at test time, on a random 127.x.y.z:443
# of the namespace haven runs in.  haven runs under `unshare -m` with a
# private /etc/hosts bind-mounted over the real one (never edited) that
# maps the host's name there, and SSL_CERT_FILE naming the test CA in its
# own environment only: the sandbox is never given either, so nothing in
# it can reach the stand-in or trust its CA.

AGENT_LEAK_SCAN_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../agents" && pwd)/leak_scan.py
# Fixed by the gateway's contract (oci/haven_annotations.h).
GW_PLACEHOLDER=haven-gateway-placeholder

# gateway_key PREFIX: a key of the provider's shape, random, one per test.
gateway_key() {
  printf '%s%s' "$1" "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
}

# gateway_tls HOST...: a test CA and a certificate for the HOSTs signed
# by it, in $PWD/tls (ca.pem, server.pem, server.key); sets GW_CA.
gateway_tls() {
  local d=$PWD/tls san="" h
  command -v openssl > /dev/null || skip "openssl missing (Debian package openssl)"
  for h in "$@"; do san+="${san:+,}DNS:$h"; done
  mkdir -p "$d"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=haven test CA $$" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -keyout "$d/ca.key" -out "$d/ca.pem" > "$d/openssl.log" 2>&1 || fail "test CA: $(tail -3 "$d/openssl.log")"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$d/server.key" -out "$d/server.csr" >> "$d/openssl.log" 2>&1 || fail "server key: $(tail -3 "$d/openssl.log")"
  printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$san" > "$d/ext.cnf"
  openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
    -extfile "$d/ext.cnf" -out "$d/server.pem" >> "$d/openssl.log" 2>&1 || fail "server cert: $(tail -3 "$d/openssl.log")"
  GW_CA=$d/ca.pem
}

# gw_random_loopback: a random 127.x.y.z, never in 127.0.0.0/24 (the usual
# loopback names live there).
gw_random_loopback() { echo "127.$((RANDOM % 254 + 1)).$((RANDOM % 254 + 1)).$((RANDOM % 253 + 2))"; }

# gateway_stand_in "HOST..." SCRIPT [NETNS]: the scripted model API over
# HTTPS as every HOST on a random 127.x.y.z:443 (in NETNS, default the
# current namespace), a listener logging every connection (EVILLOG) on
# another for evil.example:443 and :80, and a hosts file GW_HOSTS mapping
# the names there.  Sets GW_ADDR, GW_EVIL_ADDR, GW_CA, GW_HOSTS, MOCKLOG,
# EVILLOG.
gateway_stand_in() {
  local hosts=$1 script=$2 ns=${3:-} i h
  # shellcheck disable=SC2086
  gateway_tls $hosts
  GW_ADDR=$(gw_random_loopback)
  GW_EVIL_ADDR=$(gw_random_loopback)
  [ "$GW_EVIL_ADDR" != "$GW_ADDR" ] || GW_EVIL_ADDR=127.0.1.2
  GW_HOSTS=$PWD/hosts
  printf '127.0.0.1 localhost\n::1 localhost ip6-localhost\n%s evil.example\n' "$GW_EVIL_ADDR" > "$GW_HOSTS"
  for h in $hosts; do echo "$GW_ADDR $h" >> "$GW_HOSTS"; done
  MOCKLOG=$PWD/mock.jsonl
  EVILLOG=$PWD/evil.log
  : > "$MOCKLOG"
  : > "$EVILLOG"
  rm -f "$PWD/mock.ready" "$PWD/evil.ready"
  ${ns:+ip netns exec "$ns"} python3 "$AGENT_MOCK_PY" "$script" "$MOCKLOG" "$PWD/mock.ready" "$GW_ADDR" 443 \
    --tls "$PWD/tls/server.pem" "$PWD/tls/server.key" > mock.err 2>&1 &
  defer "kill $!"
  ${ns:+ip netns exec "$ns"} python3 "$(dirname "${BASH_SOURCE[0]}")/egress_world.py" listen "$EVILLOG" \
    "$PWD/evil.ready" "tcp:$GW_EVIL_ADDR:443" "tcp:$GW_EVIL_ADDR:80" > evil.err 2>&1 &
  defer "kill $!"
  for i in $(seq 100); do [ -e "$PWD/mock.ready" ] && [ -e "$PWD/evil.ready" ] && return 0; sleep 0.05; done
  fail "the HTTPS stand-in did not start: $(cat mock.err evil.err)"
}

# gateway_netns: a network namespace of the test's own with only its
# loopback up, for haven and the stand-in (sets EH, as policies_world
# does, for gateway_run).
gateway_netns() {
  EH=$CTR_PREFIX-gw-$RANDOM
  ip netns add "$EH" || fail "ip netns add $EH"
  defer "ip netns del $EH"
  ip -n "$EH" link set lo up
}

# gateway_world API_HOST SCRIPT [NAME...]: policies_world with API_HOST
# and NAMEs (so that a direct connection of the sandbox to the API's name
# would reach the world's logging listener, never the stand-in), and the
# stand-in for API_HOST in the world's host namespace EH, where haven
# runs.
gateway_world() {
  local api=$1 script=$2
  shift 2
  policies_world "$api" "$@"
  gateway_stand_in "$api" "$script" "$EH"
}

# gateway_run POLICY -- CMD...: CMD in P under `haven run --policy POLICY`
# in the world's host namespace, under `unshare -m` with GW_HOSTS as
# /etc/hosts, with HOME=AGENT_HOME, SSL_CERT_FILE=GW_CA, the variables in
# AGENT_ENV (NAME=VALUE words: the key) and host secrets the policy must
# not pass; GW_AS_USER=UID: haven runs as that user (rootless), from
# GW_HAVEN (a copy it can run).  haven's pid in $PWD/haven.pid, stdout in
# $PWD/agent.out, stderr in $PWD/agent.err; sets AGENT_OUT and AGENT_RC.
# Run it in the background (&) to act on the run meanwhile, then
# gateway_result.
gateway_run() {
  local pol=$1 d=$PWD
  shift
  [ "$1" = -- ] && shift
  local t0=$SECONDS
  rm -f "$d/haven.pid" "$d/agent.rc"
  # shellcheck disable=SC2086
  (cd "$P" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$AGENT_HOME" USER=root LANG=C.UTF-8 \
        SSL_CERT_FILE="$GW_CA" ${AGENT_ENV:-} GITHUB_TOKEN=ghp_SECRET_MARKER AWS_SECRET_ACCESS_KEY=AWS_SECRET_MARKER \
        timeout -k 5 180 unshare -m --propagation private -- \
        sh -c 'mount --bind "$1" /etc/hosts || exit 125; echo $$ > "$2"; shift 2; exec "$@"' sh \
        "$GW_HOSTS" "$d/haven.pid" ip netns exec "$EH" ${GW_AS_USER:+setpriv --reuid="$GW_AS_USER" \
        --regid="$GW_AS_USER" --clear-groups} "${GW_HAVEN:-$HAVEN}" run --policy "$pol" -- "$@" \
        > "$d/agent.out" 2> "$d/agent.err" < /dev/null)
  echo $? > "$d/agent.rc"
  gateway_result
  echo "$(basename "$1"): rc=$AGENT_RC in $((SECONDS - t0)) s: $AGENT_OUT"
}

# gateway_result: AGENT_OUT and AGENT_RC of the last gateway_run.
# GW_KEEP=DIR (a directory of the caller's): the run's output, stderr and
# the stand-in's log are copied there, to see what a passing test saw.
gateway_result() {
  AGENT_OUT=$(cat "$PWD/agent.out")
  AGENT_RC=$(cat "$PWD/agent.rc" 2> /dev/null)
  [ -z "${GW_KEEP:-}" ] || cp "$PWD/agent.out" "$PWD/agent.err" "$MOCKLOG" "$GW_KEEP/"
}

# gateway_monitor: the pid of the monitor of the run gateway_run started
# (its state is /run/haven/haven-run-PID, PID haven's own), once it is
# up (bounded).
gateway_monitor() {
  local i pid
  for i in $(seq 100); do
    pid=$(cat "$PWD/haven.pid" 2> /dev/null) && [ -s "/run/haven/haven-run-$pid/monitor.pid" ] \
      && { cut -d' ' -f1 "/run/haven/haven-run-$pid/monitor.pid"; return 0; }
    sleep 0.1
  done
  fail "no monitor for the run (haven pid ${pid:-unknown})"
}

# leak_scan_step KEY...: the shell command of the scan step, which looks
# for the KEYs in the sandbox (leak_scan.py, given them hex-encoded so
# that the step never holds them) over the home, the project, /tmp, /run,
# /etc, /var/tmp and /dev/shm, and in every process's environment.
leak_scan_step() {
  local k hex=""
  for k in "$@"; do hex+="${hex:+,}$(printf %s "$k" | od -An -tx1 | tr -d ' \n')"; done
  # Quoted for any POSIX shell (the agent's shell may not be bash).
  printf 'python3 -c %s %s ~ . /tmp /run /etc /var/tmp /dev/shm 2>&1' \
    "$(jq -rn --rawfile s "$AGENT_LEAK_SCAN_PY" '$s | @sh')" "$hex"
}

# check_no_key_on_host KEY WHAT: KEY is in no file of the project, the
# home, haven's per-project state or the audit trails (the host's side of
# what the sandbox wrote); WHAT names the run.
check_no_key_on_host() {
  local hits
  hits=$(grep -rlF -- "$1" "$P" "$AGENT_HOME" "$XDG_STATE_HOME" /var/log/haven 2> /dev/null | head -5)
  [ -z "$hits" ] || fail "$2: the key is in $hits"
}

# check_stand_in_keys KEY HEADER: the stand-in got requests, each with
# KEY, alone, in its credential header HEADER (x-api-key, authorization
# as "Bearer KEY", x-goog-api-key), and none held the placeholder
# anywhere in its headers or target.
check_stand_in_keys() {
  local key=$1 header=$2 want=$1
  [ "$header" = authorization ] && want="Bearer $key"
  jq -se 'any(.[]; .event == "request")' "$MOCKLOG" > /dev/null || fail "the stand-in got no request"
  jq -se --arg h "$header" --arg v "$want" 'all(.[]; .event != "request" or .headers[$h] == $v)' "$MOCKLOG" \
    > /dev/null || fail "a request reached the stand-in without the real key in $header: $(jq -c \
      --arg h "$header" 'select(.event == "request") | {target, cred: (.headers[$h] // "none" | .[:12])}' "$MOCKLOG" | head -3)"
  jq -se --arg p "$GW_PLACEHOLDER" 'all(.[]; .event != "request" or ([.target, .headers[]] | all(contains($p) | not)))' \
    "$MOCKLOG" > /dev/null || fail "the placeholder reached the stand-in: $(grep -F -- "$GW_PLACEHOLDER" "$MOCKLOG" | head -c 300)"
}
