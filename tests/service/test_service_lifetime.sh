# What ends sandboxes and runs: a client leaving, idle time, caps, the
# service killed; who may connect; the pool.

# The pids of sandbox ID whose command line has WORD.
pids_of() {
  local p
  for p in $(sandbox_pids "$1"); do
    tr '\0' ' ' < "/proc/$p/cmdline" 2> /dev/null | grep -q -- "$2" && echo "$p"
  done
}

test_service_client_leaves_mid_run() {
  start_service
  create offline '"pool":false'
  curl -sS --unix-socket "$SOCK" -X POST -H 'Content-Type: application/json' -m 1 \
    --data-binary '{"argv":["sh","-c","sleep 4711 & sleep 4712"]}' \
    "http://haven/v1/sandboxes/$ID/run" > /dev/null 2>&1
  local i left
  for i in $(seq 50); do
    left=$(pids_of "$ID" "sleep 471")
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ] || fail "the run's processes are still there after its client left: $left"
  # The sandbox itself goes on.
  run_in "$ID" '{"argv":["echo","still here"]}'
  assert_eq "still here" "$OUT"
}

test_service_destroy_on_disconnect() {
  start_service
  # One connection creates, stays open while the test looks, then closes
  # (when its stdin, the fifo, ends).
  mkfifo go
  timeout 30 python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
body = json.dumps({"policy": "offline", "pool": False, "destroy_on_disconnect": True}).encode()
s.sendall(b"POST /v1/sandboxes HTTP/1.1\r\nHost: haven\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
data = b""
while b"\r\n\r\n" not in data:
    data += s.recv(65536)
head, rest = data.split(b"\r\n\r\n", 1)
n = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
while len(rest) < n:
    rest += s.recv(65536)
print(json.loads(rest)["id"], flush=True)
sys.stdin.read()
s.close()' "$SOCK" < go > created &
  local client=$! i id=
  exec 3> go
  for i in $(seq 100); do
    id=$(cat created)
    [ -n "$id" ] && break
    sleep 0.1
  done
  [ -n "$id" ] || fail "no sandbox created over the connection"
  note_sandbox "$id"
  api GET "/v1/sandboxes/$id"
  assert_eq 200 "$CODE" "the sandbox while its connection is open"
  exec 3>&-
  wait "$client"
  for i in $(seq 50); do
    api GET "/v1/sandboxes/$id"
    [ "$CODE" = 404 ] && break
    sleep 0.1
  done
  assert_eq 404 "$CODE" "the sandbox after its connection closed"
  sandbox_gone "$id"
}

test_service_idle_timeout() {
  start_service --idle-timeout 1
  create offline '"pool":false'
  local keep=$ID
  create offline '"pool":false,"idle_timeout_s":30'
  local long=$ID
  sleep 3
  api GET "/v1/sandboxes/$keep"
  assert_eq 404 "$CODE" "an idle sandbox past --idle-timeout"
  sandbox_gone "$keep"
  api GET "/v1/sandboxes/$long"
  assert_eq 200 "$CODE" "a sandbox with its own longer idle_timeout_s"
}

test_service_keeper_killed() {
  start_service
  create offline '"pool":false'
  local pid
  pid=$(jq -r .pid "/run/haven/$ID/state.json")
  [ -n "$(sandbox_pids "$ID")" ] || fail "no process of $ID"
  # Its init, the keeper (the pid namespace ends with it).
  kill -KILL "$pid" || fail "kill $pid"
  local i
  for i in $(seq 50); do
    run_in "$ID" '{"argv":["true"]}'
    [ "$CODE" = 404 ] && break
    sleep 0.1
  done
  assert_eq 404 "$CODE" "a sandbox whose keeper was killed"
  assert_contains "$BODY" "ended"
  sandbox_gone "$ID"
}

# create_many N: N sandboxes asked for at once; ids: theirs.
create_many() {
  local i pids=()
  ids=()
  for i in $(seq "$1"); do
    curl -sS --unix-socket "$SOCK" -X POST -H 'Content-Type: application/json' \
      --data-binary '{"policy":"offline","pool":false}' -o "c$i" "http://haven/v1/sandboxes" &
    pids+=($!)
  done
  # (a bare wait would wait for the service too)
  wait "${pids[@]}"
  for i in $(seq "$1"); do
    ids+=("$(jq -r .id < "c$i")")
    note_sandbox "${ids[-1]}"
  done
}

test_service_hundred_sandboxes() {
  start_service
  local i jobs_=()
  create_many 100
  api GET /v1/sandboxes
  assert_eq 100 "$(jq '.sandboxes | length' <<< "$BODY")" "100 sandboxes at once"
  # The cap: one more is refused.
  stop_service
  start_service --max-sandboxes 2
  create offline '"pool":false'
  create offline '"pool":false'
  api POST /v1/sandboxes '{"policy":"offline","pool":false}'
  assert_eq 429 "$CODE" "past --max-sandboxes"
  # The first service's SIGTERM destroyed its 100.
  for i in "${ids[@]}"; do sandbox_gone "$i"; done
}

test_service_hundred_deleted() {
  start_service
  local i jobs_=()
  create_many 100
  for i in "${ids[@]}"; do
    curl -sS --unix-socket "$SOCK" -X DELETE -o "d-$i" -w '%{http_code}\n' "http://haven/v1/sandboxes/$i" >> deletes &
    jobs_+=($!)
  done
  wait "${jobs_[@]}"
  assert_eq 100 "$(grep -c '^200$' deletes)" "deletes answered 200"
  api GET /v1/sandboxes
  assert_eq 0 "$(jq '.sandboxes | length' <<< "$BODY")" "all deleted"
  for i in "${ids[@]}"; do sandbox_gone "$i"; done
}

test_service_killed_then_restarted() {
  start_service
  create offline '"pool":false'
  local a=$ID
  create default '"pool":false'
  local b=$ID
  kill -KILL "$SVC_PID"
  wait "$SVC_PID" 2> /dev/null
  SVC_PID=
  # The old socket is stale: the next start replaces it and cleans up.
  start_service
  sandbox_gone "$a"
  sandbox_gone "$b"
  # A live service is not replaced.
  "$HAVEN" serve --socket "$SOCK" --pool-size 0 2> second.log
  local rc=$?
  [ $rc != 0 ] || fail "a second service on a live socket started"
  assert_contains "$(cat second.log)" "already answers"
}

test_service_other_users_refused() {
  start_service
  # The directory opened for this test only: the socket's own mode (0600)
  # and the peer check both stand between nobody and the service.
  chmod 0711 "$SVC_DIR"
  local code
  code=$(setpriv --reuid=nobody --regid=nogroup --clear-groups curl -s -o /dev/null -w '%{http_code}' \
    --unix-socket "$SOCK" http://haven/v1/version 2>&1)
  [ "$code" != 200 ] || fail "nobody used the service through a 0600 socket"
  chmod 0666 "$SOCK"
  local answer
  answer=$(setpriv --reuid=nobody --regid=nogroup --clear-groups curl -s -w '\n%{http_code}' \
    --unix-socket "$SOCK" http://haven/v1/version)
  assert_eq 403 "$(tail -1 <<< "$answer")" "another user: $answer"
  assert_eq forbidden "$(head -1 <<< "$answer" | jq -r .error.code)"
  api GET /v1/version
  assert_eq 200 "$CODE" "the owner still served"
}

test_service_root_refused_by_users_service() {
  local user=nobody home
  home=$PWD/nobody-run
  mkdir -p "$home"
  chown nobody "$home"
  SOCK=$home/haven/haven.sock
  setpriv --reuid=nobody --regid=nogroup --clear-groups env XDG_RUNTIME_DIR="$home" HOME="$home" \
    "$HAVEN" serve --socket "$SOCK" --pool-size 0 2> serve.log &
  SVC_PID=$!
  defer "stop_service"
  local i
  for i in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
  [ -S "$SOCK" ] || skip "haven serve does not start as nobody here: $(tail -1 serve.log)"
  api GET /v1/version
  assert_eq 403 "$CODE" "root at nobody's service"
}

test_service_pool() {
  start_service --pool-size 2
  create offline
  assert_eq false "$(jq -r .pooled <<< "$BODY")" "the first create of a policy is made fresh"
  # The pool fills in the background.
  local i ids=() pooled=0
  sleep 1
  for i in 1 2 3 4; do
    local t0=$EPOCHREALTIME
    create offline
    ids+=("$ID")
    [ "$(jq -r .pooled <<< "$BODY")" = true ] && pooled=$((pooled + 1))
    run_in "$ID" '{"argv":["sh","-c","ls -A; touch mine"]}'
    assert_eq "" "$OUT" "a claimed sandbox is pristine"
    sleep 1.5
  done
  [ $pooled -ge 2 ] || fail "only $pooled of 4 creates came from the pool: $(grep -c pool serve.log)"
  # Never handed out twice.
  assert_eq 4 "$(printf '%s\n' "${ids[@]}" | sort -u | wc -l)" "distinct sandboxes"
  # The pool's pristine ones are not listed as the user's.
  api GET /v1/sandboxes
  assert_eq 5 "$(jq '.sandboxes | length' <<< "$BODY")" "the user's sandboxes"
  # pool=false is always fresh.
  create offline '"pool":false'
  assert_eq false "$(jq -r .pooled <<< "$BODY")"
}

test_service_pool_policy_changed() {
  start_service --pool-size 1
  printf 'name: svc-pool-test\nextends: offline\n' > "$PWD/pol.yaml"
  create "$PWD/pol.yaml"
  local i
  for i in $(seq 100); do
    sleep 0.1
    grep -q "made for the pool\|pool of" serve.log && [ "$i" -gt 10 ] && break
  done
  create "$PWD/pol.yaml"
  assert_eq true "$(jq -r .pooled <<< "$BODY")" "a claim from the pool"
  sleep 2
  # A change to the policy's file: the pool made from it is dropped.
  printf 'name: svc-pool-test\nextends: offline\n# changed\n' > "$PWD/pol.yaml"
  create "$PWD/pol.yaml"
  assert_eq false "$(jq -r .pooled <<< "$BODY")" "a claim after the policy changed"
  assert_contains "$(cat serve.log)" "changed"
}

test_service_socket_checks() {
  start_service
  assert_eq 700 "$(stat -c %a "$SVC_DIR")" "the socket's directory"
  assert_eq 600 "$(stat -c %a "$SOCK")" "the socket"
  stop_service
  [ ! -e "$SOCK" ] || fail "the socket is left after SIGTERM"
  # Not a socket: never replaced.
  echo keep > "$SOCK"
  "$HAVEN" serve --socket "$SOCK" --pool-size 0 2> refused.log && fail "started over a regular file"
  assert_contains "$(cat refused.log)" "not a socket"
  assert_eq keep "$(cat "$SOCK")" "the file"
  # A directory others may write to.
  mkdir -m 0777 open
  chmod 0777 open
  "$HAVEN" serve --socket "$PWD/open/haven.sock" --pool-size 0 2> refused.log && fail "started in a 0777 directory"
  assert_contains "$(cat refused.log)" "written by others"
}

# wait_log TEXT N: up to 10 s for N lines of the service's log to have TEXT.
wait_log() {
  local i
  for i in $(seq 100); do
    [ "$(grep -c -- "$1" serve.log)" -ge "$2" ] && return 0
    sleep 0.1
  done
  fail "the service's log has not $2 line(s) with \"$1\": $(tail -3 serve.log)"
}

test_service_pool_max_age() {
  start_service --pool-size 1 --pool-max-age 2 --verbose
  create offline
  wait_log "made for the pool" 1
  # Older than --pool-max-age: destroyed and made again, never claimed.
  wait_log "older than --pool-max-age" 1
  wait_log "made for the pool" 2
  create offline
  assert_eq true "$(jq -r .pooled <<< "$BODY")" "a claim from the remade pool"
  grep -q "sandbox $ID (offline) made for the pool" serve.log || fail "$ID was not made for the pool"
  ! grep -q "sandbox $ID (offline) destroyed: older than" serve.log || fail "$ID was handed out after it aged out"
}

# The systemd user unit make install ships: generated with the installed
# haven's absolute path, and a unit systemd reads without a complaint
# (systemd-analyze verify, with the build's haven standing in at that
# path; this machine has no user manager to start it, so only its text is
# checked here).
test_service_systemd_unit() {
  command -v systemd-analyze > /dev/null || skip "systemd-analyze missing (Debian package systemd)"
  local top bin
  top=$(cd "$(dirname "$RUNTIME")" && pwd)
  bin=$PWD/prefix/bin
  mkdir -p "$bin" "$PWD/unit"
  ln -s "$HAVEN" "$bin/haven"
  make -s -C "$top" deploy/systemd/haven.service > /dev/null
  grep -q "^ExecStart=.*/bin/haven serve$" "$top/deploy/systemd/haven.service" ||
    fail "the unit's ExecStart: $(grep ExecStart "$top/deploy/systemd/haven.service")"
  sed "s|^ExecStart=.*/bin/haven serve$|ExecStart=$bin/haven serve|" "$top/deploy/systemd/haven.service" \
    > "$PWD/unit/haven.service"
  local out
  out=$(systemd-analyze verify --man=no "$PWD/unit/haven.service" 2>&1)
  assert_eq 0 "$?" "systemd-analyze verify: $out"
  assert_eq "" "$out" "systemd-analyze's complaints"
}

# A sandbox's init (its keeper) keeps a copy of the memory of the process
# that made it, for its whole life.  The service executes a fresh maker
# for each sandbox, so a keeper holds nothing of the service's: not the
# model API key in the service's environment (the claude-code policy
# keeps it on haven's side, for the gateway), not what another sandbox's
# requests carried through the service.  Read from the host (root).
test_service_keepers_hold_nothing_of_others() {
  local key marker
  key="sk-ant-svctest-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  marker="request-marker-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  ANTHROPIC_API_KEY=$key start_service
  create offline
  local first=$ID
  api POST "/v1/sandboxes/$first/run" "{\"argv\":[\"sh\",\"-c\",\"cat > got\"],\"stdin\":\"$marker\",\"env\":{\"GIT_AUTHOR_NAME\":\"$marker\"}}"
  assert_eq 200 "$CODE" "run in the first sandbox: $BODY"
  api PUT "/v1/sandboxes/$first/files/put.txt" "$marker"
  assert_eq 200 "$CODE" "file: $BODY"
  create claude-code '"pool":false'
  local second=$ID san=() id keeper found
  ldd "$HAVEN" 2> /dev/null | grep -q libasan && san=(--sanitizer-env ANTHROPIC_API_KEY)
  for id in "$first" "$second"; do
    keeper=$(jq -r .pid "/run/haven/$id/state.json")
    [ -n "$keeper" ] && [ -d "/proc/$keeper" ] || fail "$id: no keeper ($keeper)"
    assert_contains "$(tr -d '\0' < "/proc/$keeper/cmdline")" "haven-keeper"
    found=$(python3 "$here/../lib/memory_holds.py" "${san[@]}" "$keeper" "$key")
    assert_eq 0 "$found" "$id: copies of the service's API key in its keeper"
  done
  # The first sandbox's keeper read its own command's request; the
  # second's must hold nothing of it.
  found=$(python3 "$here/../lib/memory_holds.py" "$keeper" "$marker")
  assert_eq 0 "$found" "copies of the first sandbox's request in the second's keeper"
  # What the test looks for is there to be found: the service holds both.
  found=$(python3 "$here/../lib/memory_holds.py" "$SVC_PID" "$key")
  [ "$found" -gt 0 ] || fail "the service's memory holds no API key: the test proves nothing"
  api DELETE "/v1/sandboxes/$first"
  api DELETE "/v1/sandboxes/$second"
}

# The policy's trail: a sandbox's start (when it is made, for a pooled one
# before any client has it), the claim of a pooled one, one record per
# command with its argv and status, and its end.
test_service_trail() {
  start_service --pool-size 1 --verbose
  printf 'name: svc-trail-test\nextends: offline\naudit:\n  log: %s\n' "$PWD/trail.jsonl" > "$PWD/pol.yaml"
  create "$PWD/pol.yaml"
  local fresh=$ID i
  for i in $(seq 50); do
    grep -q "made for the pool" serve.log && break
    sleep 0.1
  done
  create "$PWD/pol.yaml"
  assert_eq true "$(jq -r .pooled <<< "$BODY")" "the second came from the pool"
  local pooled=$ID
  run_in "$pooled" '{"argv":["sh","-c","exit 4"]}'
  assert_eq 4 "$EXIT"
  api DELETE "/v1/sandboxes/$pooled"
  api DELETE "/v1/sandboxes/$fresh"
  jq -e . "$PWD/trail.jsonl" > /dev/null || fail "the trail is not JSON lines"
  assert_eq 1 "$(jq -c "select(.event == \"claimed\" and .sandbox == \"$pooled\")" "$PWD/trail.jsonl" | wc -l)" \
    "the claim's record: $(cat "$PWD/trail.jsonl")"
  assert_eq '["sh","-c","exit 4"] 4' \
    "$(jq -r "select(.event == \"command\" and .sandbox == \"$pooled\") | \"\(.argv | tojson) \(.status)\"" "$PWD/trail.jsonl")" \
    "the command's record"
  assert_eq 0 "$(jq -c "select(.event == \"claimed\" and .sandbox == \"$fresh\")" "$PWD/trail.jsonl" | wc -l)" \
    "a sandbox made for its client is not claimed"
  # One run id per sandbox, on every record of it, whoever wrote it (the
  # maker its start, the service its claim and commands, destroy its exit).
  local s
  for s in "$pooled" "$fresh"; do
    [[ "$(jq -r "select(.sandbox == \"$s\") | .run" "$PWD/trail.jsonl" | sort -u)" =~ ^[0-9a-f]{16}$ ]] \
      || fail "run ids of $s: $(cat "$PWD/trail.jsonl")"
  done
  [ "$(jq -r "select(.sandbox == \"$pooled\") | .run" "$PWD/trail.jsonl" | head -1)" \
    != "$(jq -r "select(.sandbox == \"$fresh\") | .run" "$PWD/trail.jsonl" | head -1)" ] || fail "two sandboxes, one run id"
}

# A maker killed after the sandbox's init was cloned, before that init
# serves (it waits for start, or is being started): the create still
# ends, with the maker's death as its reason, within a bound (the client
# of such a create waited forever while that init held the maker's end
# of the record's socket), and nothing of the sandbox is left: no process
# (the service's children: init and the monitor are reparented to it),
# no state directory, no bundle, no scratch workspace.  The service goes
# on serving.
test_service_maker_killed_early() {
  local point policy
  # With a trail, the audit listener (forked by the maker, outliving it)
  # is another copy of the maker to check.
  printf 'name: svc-killed-test\nextends: offline\naudit:\n  log: %s\n' "$PWD/trail.jsonl" > "$PWD/trail.yaml"
  for point in create.init-cloned create.init-ready create.state-saved start.config-loaded start.init-released \
    trail:create.init-ready trail:start.config-loaded; do
    policy=offline
    case $point in trail:*) point=${point#trail:} policy=$PWD/trail.yaml ;; esac
    HAVEN_TEST_KILL_AT=$point start_service
    check_create_maker_killed "$point" "$policy"
  done
  # Without the fault, the same service's create works.
  start_service
  create offline
  run_in "$ID" '{"argv":["true"]}'
  assert_eq 0 "$EXIT" "a command after: $BODY"
  api DELETE "/v1/sandboxes/$ID"
  sandbox_gone "$ID"
}
