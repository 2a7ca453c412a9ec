# Sandboxes through the API: create, run, files, list, delete.

# check_lifecycle POLICY: a sandbox's whole life under POLICY.
check_lifecycle() {
  start_service
  create "$1" '"pool":false'
  assert_eq false "$(jq -r .pooled <<< "$BODY")" "pooled"
  [ -d "$WS" ] || fail "workspace $WS missing"
  run_in "$ID" '{"argv":["sh","-c","echo hello; echo oops >&2; pwd"]}'
  assert_eq 200 "$CODE" "run: $BODY"
  assert_eq 0 "$EXIT" "exit code"
  assert_eq "hello
$WS" "$OUT" "stdout"
  assert_eq "oops" "$ERR" "stderr"
  # A file written through the API is the command's, and the reverse.
  api PUT "/v1/sandboxes/$ID/files/dir/in.txt" 'from the host'
  assert_eq 200 "$CODE" "put: $BODY"
  assert_eq 13 "$(jq -r .size <<< "$BODY")" "size"
  run_in "$ID" '{"argv":["sh","-c","cat dir/in.txt; echo made > out.txt"]}'
  assert_eq "from the host" "$OUT" "the command read the file"
  api GET "/v1/sandboxes/$ID/files/out.txt"
  assert_eq 200 "$CODE"
  assert_eq made "$BODY" "the host read the command's file"
  api GET "/v1/sandboxes/$ID/list"
  assert_eq 200 "$CODE"
  assert_eq "dir:dir out.txt:file" "$(jq -r '[.entries[] | "\(.name):\(.type)"] | join(" ")' <<< "$BODY")" "list"
  # A name the sandbox chose that is not UTF-8: the answer stays JSON
  # (U+FFFD for the byte), for the list and for the path a request gave.
  run_in "$ID" '{"argv":["sh","-c","mkdir odd && touch \"odd/a$(printf \"\\\\377\")b\""]}'
  assert_eq 0 "$EXIT" "a file with a name of bytes ($BODY)"
  api GET "/v1/sandboxes/$ID/list?path=odd"
  assert_eq 200 "$CODE"
  strict_json "$PWD/answer" || fail "the list is not JSON (valid UTF-8): $BODY"
  assert_eq "$(printf 'a\357\277\275b')" "$(jq -r '.entries[0].name' <<< "$BODY")" "a name of bytes, listed"
  api GET "/v1/sandboxes/$ID/files/odd/a%FFb"
  assert_eq 200 "$CODE" "a file named by bytes"
  api PUT "/v1/sandboxes/$ID/files/odd/c%FEd" 'x'
  assert_eq 200 "$CODE" "a file put by a name of bytes"
  strict_json "$PWD/answer" || fail "the answer is not JSON (valid UTF-8): $BODY"
  assert_eq "$(printf 'odd/c\357\277\275d')" "$(jq -r .path <<< "$BODY")" "its path in the answer"
  api GET "/v1/sandboxes/$ID/files/missing"
  assert_eq 404 "$CODE" "a missing file"
  # A link the sandbox made is not written through, nor replaced: the
  # request is refused (a 400 naming it, not a failure of the service).
  echo 'the host file' > "$PWD/host-file"
  run_in "$ID" "{\"argv\":[\"ln\",\"-s\",\"$PWD/host-file\",\"link\"]}"
  api PUT "/v1/sandboxes/$ID/files/link" 'through the link'
  assert_eq 400 "$CODE" "a put onto a link: $BODY"
  jq -e '.error.message | test("^link: a symbolic link, not replaced")' <<< "$BODY" > /dev/null \
    || fail "the refusal names the link: $BODY"
  assert_eq 'the host file' "$(cat "$PWD/host-file")" "the link's target"
  api GET "/v1/sandboxes/$ID/files/..%2Fetc%2Fpasswd"
  [ "$CODE" = 400 ] || [ "$CODE" = 404 ] || fail "a path out of the workspace: $CODE $BODY"
  api GET /v1/sandboxes
  assert_eq "$ID" "$(jq -r '.sandboxes[].id' <<< "$BODY")" "list of sandboxes"
  api GET "/v1/sandboxes/$ID"
  assert_eq 200 "$CODE"
  assert_eq "$1" "$(jq -r .policy <<< "$BODY")"
  api DELETE "/v1/sandboxes/$ID"
  assert_eq 200 "$CODE" "delete: $BODY"
  assert_eq true "$(jq -r .destroyed <<< "$BODY")"
  sandbox_gone "$ID"
  api GET "/v1/sandboxes/$ID"
  assert_eq 404 "$CODE" "a deleted sandbox"
  api GET /v1/sandboxes
  assert_eq 0 "$(jq '.sandboxes | length' <<< "$BODY")" "no sandbox listed"
}

test_service_lifecycle_offline() { check_lifecycle offline; }
test_service_lifecycle_default() { check_lifecycle default; }

test_service_run_details() {
  start_service
  create offline '"pool":false'
  # stdin
  run_in "$ID" '{"argv":["sh","-c","tr a-z A-Z"],"stdin":"shout\n"}'
  assert_eq SHOUT "$OUT" "stdin"
  # No stdin: EOF at once.
  run_in "$ID" '{"argv":["cat"]}'
  assert_eq 0 "$EXIT" "cat without stdin"
  # cwd: relative (beneath the workspace) and absolute
  api PUT "/v1/sandboxes/$ID/files/sub/x" 'x'
  run_in "$ID" '{"argv":["pwd"],"cwd":"sub"}'
  assert_eq "$WS/sub" "$OUT" "a relative cwd"
  run_in "$ID" '{"argv":["pwd"],"cwd":"/tmp"}'
  assert_eq /tmp "$OUT" "an absolute cwd"
  # exit codes, signals as a shell, a missing program
  run_in "$ID" '{"argv":["sh","-c","exit 7"]}'
  assert_eq 7 "$EXIT" "exit 7"
  run_in "$ID" '{"argv":["sh","-c","kill -9 $$"]}'
  assert_eq 137 "$EXIT" "killed by SIGKILL"
  run_in "$ID" '{"argv":["no-such-program-here"]}'
  assert_eq 127 "$EXIT" "a missing program"
  assert_contains "$ERR" "no-such-program-here"
  # output kept up to max_output, the rest dropped
  run_in "$ID" '{"argv":["sh","-c","yes | head -c 100000"],"max_output":1000}'
  assert_eq 1000 "$(jq '.stdout | length' <<< "$BODY")" "truncated stdout"
  assert_eq true "$(jq -r .stdout_truncated <<< "$BODY")" "stdout_truncated"
  assert_eq 0 "$EXIT" "a truncated run's exit"
  # the time limit: its group killed, 124
  local t0=$SECONDS
  run_in "$ID" '{"argv":["sh","-c","sleep 100 & sleep 100"],"timeout_s":1}'
  assert_eq 124 "$EXIT" "past the time limit"
  assert_eq true "$(jq -r .timed_out <<< "$BODY")" "timed_out"
  [ $((SECONDS - t0)) -lt 10 ] || fail "the time limit took $((SECONDS - t0)) s"
  # a background process keeping stdout open does not hold the answer
  t0=$SECONDS
  run_in "$ID" '{"argv":["sh","-c","sleep 30 & echo done"]}'
  assert_eq done "$OUT"
  [ $((SECONDS - t0)) -lt 10 ] || fail "a background process held the answer $((SECONDS - t0)) s"
}

test_service_env() {
  start_service
  create default '"pool":false'
  run_in "$ID" '{"argv":["sh","-c","echo $GIT_AUTHOR_NAME"],"env":{"GIT_AUTHOR_NAME":"forty-two"}}'
  assert_eq 200 "$CODE" "an allowed variable: $BODY"
  assert_eq forty-two "$OUT" "the variable"
  # A variable the policy would not pass into haven run is refused.
  run_in "$ID" '{"argv":["true"],"env":{"FOO_NOT_PASSED":"x"}}'
  assert_eq 403 "$CODE" "a refused variable: $BODY"
  assert_contains "$BODY" FOO_NOT_PASSED
}

test_service_stream() {
  start_service
  create offline '"pool":false'
  curl -sS -N --unix-socket "$SOCK" -X POST -H 'Content-Type: application/json' \
    --data-binary '{"argv":["sh","-c","echo one; sleep 0.3; echo two >&2; exit 3"],"stream":true}' \
    -D headers -o stream "http://haven/v1/sandboxes/$ID/run" || fail "curl: stream"
  assert_contains "$(cat headers)" "application/x-ndjson"
  assert_contains "$(tr -d '\r' < headers)" "Transfer-Encoding: chunked"
  assert_eq "stdout:one
stderr:two" "$(jq -r 'select(.stream) | "\(.stream):\(.data)"' < stream | sed 's/\n$//' | tr -s '\n')" "streamed lines"
  assert_eq 3 "$(tail -1 stream | jq -r .exit_code)" "the last line is the result"
  # A character split between two writes comes whole in one line, never
  # as two halves in base64; a start of one that never completes comes
  # at the end, as the bytes it is.
  curl -sS -N --unix-socket "$SOCK" -X POST -H 'Content-Type: application/json' \
    --data-binary '{"argv":["sh","-c","printf \"caf\\303\"; sleep 0.3; printf \"\\251!\"; sleep 0.3; printf \"\\342\\202\""],"stream":true}' \
    -o stream2 "http://haven/v1/sandboxes/$ID/run" || fail "curl: stream of split characters"
  assert_eq "$(printf 'caf\303\251!')" "$(jq -j 'select(.stream and (.data_b64 | not)) | .data' < stream2)" "the text"
  assert_eq "4oI=" "$(jq -r 'select(.data_b64) | .data_b64' < stream2)" "the unfinished character's bytes"
}

test_service_bad_requests() {
  start_service
  # Malformed HTTP: 400, and the service goes on.
  local answer
  answer=$(printf 'GET /v1/version HTTP/1.1\nHost: x\n\n' | timeout 5 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read())
print(s.recv(4096).decode(errors="replace").split("\r\n")[0])' "$SOCK")
  assert_contains "$answer" "400" "a bare LF"
  answer=$(printf 'GET /v1/version HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n' \
    | timeout 5 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read())
print(s.recv(4096).decode(errors="replace").split("\r\n")[0])' "$SOCK")
  assert_contains "$answer" "400" "two framings"
  api POST /v1/sandboxes '{"policy":'
  assert_eq 400 "$CODE" "bad JSON"
  assert_eq bad_request "$(jq -r .error.code <<< "$BODY")"
  api POST /v1/sandboxes '{"policy":"no-such-policy-anywhere","pool":false}'
  assert_eq 422 "$CODE" "a policy that does not load: $BODY"
  # A project haven run refuses (the filesystem's root) is refused by the
  # maker: the request's fault, not the service's.
  api POST /v1/sandboxes '{"policy":"offline","project":"/"}'
  assert_eq 422 "$CODE" "a project haven run refuses: $BODY"
  assert_eq policy_error "$(jq -r .error.code <<< "$BODY")"
  api GET /v1/nothing
  assert_eq 404 "$CODE"
  api POST /v1/sandboxes/hvs-00000000/run '{"argv":["true"]}'
  assert_eq 404 "$CODE" "an unknown sandbox"
  api GET /v1/version
  assert_eq 200 "$CODE" "the service survived"
  kill -0 "$SVC_PID" || fail "the service died"
}

test_service_max_runs() {
  start_service --max-runs 1
  create offline '"pool":false'
  curl -sS --unix-socket "$SOCK" -X POST -H 'Content-Type: application/json' -o long \
    --data-binary '{"argv":["sleep","3"]}' "http://haven/v1/sandboxes/$ID/run" &
  local long=$! i
  for i in $(seq 50); do
    api GET "/v1/sandboxes/$ID"
    [ "$(jq -r .runs <<< "$BODY")" = 1 ] && break
    sleep 0.1
  done
  run_in "$ID" '{"argv":["true"]}'
  assert_eq 429 "$CODE" "a second run past --max-runs 1: $BODY"
  assert_eq limit "$(jq -r .error.code <<< "$BODY")"
  wait "$long"
  assert_eq 0 "$(jq -r .exit_code < long)" "the first run"
  run_in "$ID" '{"argv":["true"]}'
  assert_eq 0 "$EXIT" "a run once the first ended"
}

test_service_project_sandbox() {
  start_service
  mkdir -p "$PWD/proj"
  echo mine > "$PWD/proj/kept.txt"
  create default "\"project\":\"$PWD/proj\""
  assert_eq true "$(jq -r .project <<< "$BODY")" "project"
  assert_eq false "$(jq -r .pooled <<< "$BODY")" "a project sandbox is never pooled"
  assert_eq "$PWD/proj" "$WS" "its workspace is the project"
  run_in "$ID" '{"argv":["sh","-c","pwd; cat kept.txt; echo new > made.txt"]}'
  assert_eq "$PWD/proj
mine" "$OUT" "the command in the project"
  api DELETE "/v1/sandboxes/$ID"
  assert_eq 200 "$CODE" "delete: $BODY"
  sandbox_gone "$ID"
  assert_eq new "$(cat "$PWD/proj/made.txt")" "the project keeps what the command wrote"
  api POST /v1/sandboxes '{"policy":"default","project":"relative/dir"}'
  assert_eq 400 "$CODE" "a relative project"
}

test_service_max_output_cap() {
  start_service --max-output 100
  create offline '"pool":false'
  # A run may not keep more than the service's --max-output, whatever it asks.
  run_in "$ID" '{"argv":["sh","-c","yes | head -c 5000; yes e | head -c 300 >&2"],"max_output":100000}'
  assert_eq 100 "$(jq '.stdout | length' <<< "$BODY")" "stdout kept"
  assert_eq 100 "$(jq '.stderr | length' <<< "$BODY")" "stderr kept"
  assert_eq "true true" "$(jq -r '"\(.stdout_truncated) \(.stderr_truncated)"' <<< "$BODY")" "truncated flags"
  run_in "$ID" '{"argv":["sh","-c","echo small"]}'
  assert_eq false "$(jq -r .stdout_truncated <<< "$BODY")" "a small output"
}

# The policy's own time limit (resources.timeout) bounds every command, as
# it bounds haven run's: a request may ask for less, never for more.
test_service_policy_timeout() {
  start_service
  printf 'name: short\nextends: offline\nresources:\n  timeout: 2s\n' > "$PWD/short.yaml"
  create "$PWD/short.yaml" '"pool":false'
  local t0=$SECONDS
  run_in "$ID" '{"argv":["sleep","20"],"timeout_s":600}'
  assert_eq 124 "$EXIT" "past the policy's time limit ($BODY)"
  assert_eq true "$(jq -r .timed_out <<< "$BODY")" "timed_out"
  [ $((SECONDS - t0)) -lt 10 ] || fail "the policy's 2 s limit took $((SECONDS - t0)) s"
  # Less than the policy's: the request's.
  run_in "$ID" '{"argv":["sleep","20"],"timeout_s":1}'
  assert_eq 124 "$EXIT" "past the request's limit"
  run_in "$ID" '{"argv":["true"],"timeout_s":600}'
  assert_eq 0 "$EXIT" "a command within both"
}

# A user's service (rootless) makes project sandboxes whose files API is
# the sandbox's own view, as root's is: what the policy hides in the
# project (.env) and protects (.git/hooks) is refused through the API,
# not read or written on the host's copy.
test_service_project_files_as_user() {
  local home=$PWD/nobody-run proj=$PWD/nobody-proj
  mkdir -p "$home" "$proj/.git/hooks"
  echo 'visible' > "$proj/a.txt"
  echo 'SECRET_TOKEN=hvt-user-secret' > "$proj/.env"
  chown -R nobody:nogroup "$home" "$proj"
  chmod 0755 "$PWD"
  SOCK=$home/haven/haven.sock
  setpriv --reuid=nobody --regid=nogroup --clear-groups env XDG_RUNTIME_DIR="$home" HOME="$home" \
    "$HAVEN" serve --socket "$SOCK" --pool-size 0 2> serve.log &
  SVC_PID=$!
  defer "stop_service"
  local i
  for i in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
  [ -S "$SOCK" ] || skip "haven serve does not start as nobody here: $(tail -1 serve.log)"
  as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups curl -s -w '\n%{http_code}' --unix-socket "$SOCK" "$@"; }
  local answer id
  answer=$(as_nobody -d "{\"policy\":\"default\",\"project\":\"$proj\"}" http://haven/v1/sandboxes)
  assert_eq 201 "$(tail -1 <<< "$answer")" "create as nobody: $answer"
  id=$(head -1 <<< "$answer" | jq -r .id)
  answer=$(as_nobody "http://haven/v1/sandboxes/$id/files/a.txt")
  assert_eq "visible 200" "$(tr -s '\n' ' ' <<< "$answer" | sed 's/ $//')" "a project file read"
  answer=$(as_nobody "http://haven/v1/sandboxes/$id/files/.env")
  assert_eq 400 "$(tail -1 <<< "$answer")" "the hidden .env through the API: $answer"
  ! grep -q hvt-user-secret <<< "$answer" || fail "the API answered the hidden secret: $answer"
  answer=$(as_nobody -X PUT --data-binary 'echo planted' "http://haven/v1/sandboxes/$id/files/.git/hooks/pre-commit")
  assert_eq 400 "$(tail -1 <<< "$answer")" "a hook written through the API: $answer"
  [ ! -e "$proj/.git/hooks/pre-commit" ] || fail "a hook was planted in the host's project"
  as_nobody -X DELETE "http://haven/v1/sandboxes/$id" > /dev/null
}
