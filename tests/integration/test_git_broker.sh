# The git credential broker (docs/gateway.md, "The git credential
# broker"; policies/README.md, "Credentials"): credentials.git's tokens
# reach the sandbox's git only through the monitor's socket, never
# through a file or variable inside.  A git server over https on a random
# loopback address (git_https_server.py, a test CA made here) takes the
# token; haven run clones and pushes through it.  Uses cr_setup and the
# layout of test_credentials.sh.

# gb_server: a test CA and a certificate for $GB_ADDR (a random 127/8
# address, port 443), two bare repositories with one commit each
# (repo.git, other.git), and the server.  Sets GB_ADDR, GB_ROOT, GB_LOG,
# GB_TOKEN; the CA is $P/test-server-ca (the sandbox's git trusts it
# through GIT_SSL_CAINFO: a CA of the server's, no secret; not *.pem, which
# the default policy hides in a project).
gb_server() {
  command -v git > /dev/null || skip "git missing (Debian package git)"
  command -v openssl > /dev/null || skip "openssl missing"
  cr_setup
  GB_ADDR=127.$((RANDOM % 250 + 2)).$((RANDOM % 250 + 2)).$((RANDOM % 250 + 2))
  GB_TOKEN=ghp_broker_$RANDOM$RANDOM$RANDOM
  local d
  d=$(mktemp -d "$WORK/gb-XXXXXX")
  GB_ROOT=$d/repos
  GB_LOG=$d/server.log
  mkdir -p "$GB_ROOT"
  make_test_ca "$d" "IP:$GB_ADDR" || fail "openssl: test CA and server certificate"
  cp "$d/ca.pem" "$P/test-server-ca"
  local r
  for r in repo other; do
    git init -q --bare -b main "$GB_ROOT/$r.git" || fail "git init $r"
    git init -q -b main "$d/seed-$r" && echo "$r" > "$d/seed-$r/README" && git -C "$d/seed-$r" add README \
      && git -C "$d/seed-$r" -c user.name=t -c user.email=t@example.com commit -qm "first of $r" \
      && git -C "$d/seed-$r" push -q "$GB_ROOT/$r.git" main 2> /dev/null || fail "seed $r"
  done
  python3 "$(dirname "${BASH_SOURCE[0]}")/git_https_server.py" "$GB_ADDR" "$d/srv.pem" "$d/srv.key" "$GB_ROOT" \
    x-access-token "$GB_TOKEN" "$d/ready" 2> "$GB_LOG" &
  local pid=$!
  defer "kill $pid"
  local i
  for i in $(seq 100); do
    [ -e "$d/ready" ] && break
    kill -0 "$pid" 2> /dev/null || fail "the git server did not start: $(cat "$GB_LOG")"
    sleep 0.1
  done
  [ -e "$d/ready" ] || fail "the git server did not start in 10 s"
}

test_git_broker_clone_push_only_through_the_broker() {
  gb_server
  local trail=$WORK/gb-trail-$$.jsonl
  cat > "$POL/gb.yaml" <<EOP
network: {mode: open}
env:
  set: {GIT_SSL_CAINFO: $P/test-server-ca, GIT_TERMINAL_PROMPT: '0'}
credentials:
  git:
    - {host: $GB_ADDR, token_env: HAVEN_GB_TOKEN, path: repo.git}
audit: {log: $trail}
EOP
  # In the sandbox: clone and push repo.git; other.git (a path the policy
  # does not list) and another host get nothing; no file or variable
  # holds the token; then, once the host has killed the monitor, git gets
  # no credential any more.
  # (The token is given reversed: the trail records the command line.)
  local script='
    t=$(printf %s "$1" | rev) addr=$2 proj=$PWD
    cd /tmp || exit 9
    git clone -q "https://$addr/repo.git" c1 && echo clone=ok
    cd c1 && echo change > f && git add f && git -c user.name=a -c user.email=a@example.com commit -qm change \
      && git push -q origin HEAD:main && echo push=ok
    cd /tmp
    git clone -q "https://$addr/other.git" c2 2> /dev/null; echo other_path=$?
    printf "protocol=https\nhost=gitlab.example.com\n\n" | git credential fill > /dev/null 2>&1; echo other_host=$?
    printf "protocol=http\nhost=%s\npath=repo.git\n\n" "$addr" | git credential fill > /dev/null 2>&1; echo http=$?
    for d in /run/haven "$proj" "$HOME" /tmp; do grep -rlF -D skip -- "$t" "$d" 2> /dev/null; done
    grep -c -F -- "$t" /proc/self/environ
    ls -A /run/haven/git-credentials
    touch "$proj/.gb-ready"
    for i in $(seq 200); do [ -e "$proj/.gb-killed" ] && break; sleep 0.1; done
    cd /tmp/c1 && git fetch -q origin 2> /dev/null; echo fetch_after_kill=$?'
  local out=$WORK/gb-out-$$
  (cd "$P" && exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$H" HAVEN_GB_TOKEN="$GB_TOKEN" \
    "$HAVEN" run --policy "$POL/gb.yaml" -- sh -c "$script" sh "$(printf %s "$GB_TOKEN" | rev)" "$GB_ADDR") > "$out" 2>&1 < /dev/null &
  local hpid=$! i
  defer "kill -9 $hpid 2> /dev/null"
  for i in $(seq 600); do
    [ -e "$P/.gb-ready" ] && break
    kill -0 "$hpid" 2> /dev/null || break
    sleep 0.1
  done
  [ -e "$P/.gb-ready" ] || fail "the sandbox did not get to the monitor's end: $(cat "$out")"
  # The run's monitor (its pid file in the state directory haven run made).
  local mon
  mon=$(cut -d' ' -f1 "/run/haven/haven-run-$hpid/monitor.pid") || fail "no monitor pid file"
  [ "$(cat "/proc/$mon/comm")" = haven-monitor ] || fail "pid $mon is not the monitor"
  kill -9 "$mon"
  touch "$P/.gb-killed"
  wait "$hpid"
  local rc=$?
  assert_eq 0 "$rc" "run ($(cat "$out"))"
  assert_eq "clone=ok
push=ok
other_path=128
other_host=128
http=128
0
credential.sock
fetch_after_kill=128" "$(grep -v '^haven: note: the host has no route' "$out")" \
    "clone and push through the broker, nothing else, no token inside"
  # The push arrived; the server saw the token only for repo.git.
  assert_eq change "$(git --git-dir="$GB_ROOT/repo.git" log -1 --format=%s main)"
  grep -q ' /repo.git/git-receive-pack ok$' "$GB_LOG" || fail "no authenticated push: $(cat "$GB_LOG")"
  ! grep -q 'other.git.* ok$' "$GB_LOG" || fail "other.git got the token: $(cat "$GB_LOG")"
  # The trail: answers and refusals, never the token.
  ! grep -qF -- "$GB_TOKEN" "$trail" || fail "the token is in the trail"
  grep -q "\"event\":\"git-credential\".*\"decision\":\"answered\",\"protocol\":\"https\",\"host\":\"$GB_ADDR\",\"path\":\"repo.git\",\"source\":\"token\"" "$trail" \
    || fail "no answer recorded: $(cat "$trail")"
  grep -q "\"decision\":\"refused\",\"protocol\":\"https\",\"host\":\"$GB_ADDR\",\"path\":\"other.git\",\"reason\":\"path not under the listed prefix\"" "$trail" \
    || fail "the other path's refusal is not recorded: $(cat "$trail")"
  grep -q '"host":"gitlab.example.com","reason":"host not listed"' "$trail" \
    || fail "the other host's refusal is not recorded: $(cat "$trail")"
  rm -f "$trail"
}

# from: host: the host's own git credential fill answers, run by the
# monitor outside the sandbox (here a credential-store file in the
# caller's home, which the sandbox cannot read).
test_git_broker_from_host_fill() {
  gb_server
  printf 'https://x-access-token:%s@%s\n' "$GB_TOKEN" "$GB_ADDR" > "$H/.haven-test-git-credentials"
  chmod 600 "$H/.haven-test-git-credentials"
  git config --file "$H/.gitconfig" credential.helper "store --file=$H/.haven-test-git-credentials"
  cat > "$POL/host.yaml" <<EOP
network: {mode: open}
env:
  set: {GIT_SSL_CAINFO: $P/test-server-ca, GIT_TERMINAL_PROMPT: '0'}
credentials:
  git: [{host: $GB_ADDR, from: host}]
EOP
  cr_run -- run --policy "$POL/host.yaml" -- sh -c '
    cd /tmp && git clone -q "https://$1/other.git" c && echo clone=ok
    cat "$HOME/.haven-test-git-credentials" 2> /dev/null | grep -c x-access-token; true' sh "$GB_ADDR"
  assert_eq 0 "$RC" "run ($OUT)"
  assert_eq "clone=ok
0" "$OUT" "the host's helper answered; its file is not in the sandbox"
  grep -q ' /other.git/git-upload-pack ok$' "$GB_LOG" || fail "no authenticated fetch: $(cat "$GB_LOG")"
}

# Rootless: the run's directory, the socket and the monitor are the
# user's; the sandbox, in a user namespace, still reaches the broker.
test_git_broker_as_unprivileged_user() {
  gb_server
  command -v setpriv > /dev/null || skip "setpriv missing (util-linux)"
  chown -R 65534:65534 "$P"
  local haven
  haven=$(world_readable_copy "$HAVEN")
  cat > "$POL/user.yaml" <<EOP
network: {mode: open}
env:
  set: {GIT_SSL_CAINFO: $P/test-server-ca, GIT_TERMINAL_PROMPT: '0'}
credentials:
  git: [{host: $GB_ADDR, token_env: HAVEN_GB_TOKEN}]
EOP
  chmod -R a+rX "$POL"
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent \
        HAVEN_GB_TOKEN="$GB_TOKEN" timeout 60 "$haven" run --policy "$POL/user.yaml" -- \
        sh -c 'id -u; cd /tmp && git clone -q "https://$1/repo.git" c && echo clone=ok' sh "$GB_ADDR" 2>&1)
  assert_eq "65534
clone=ok" "$OUT"
}
