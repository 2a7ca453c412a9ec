# Hooks (order, stdin, failure) and terminals through --console-socket.

hook_script() { # path name logfile
  cat > "$1" <<EOS
#!/bin/sh
state=\$(cat)
echo "$2 \$(echo "\$state" | grep -o '"status":"[a-z]*"')" >> "$3"
EOS
  chmod +x "$1"
}

test_hooks_order_and_state() {
  local log=$PWD/hooks.log h id
  for h in prestart createRuntime createContainer startContainer poststart poststop; do
    hook_script "$PWD/$h.sh" "$h" "$log"
  done
  # The container's own filesystem must hold startContainer's script.
  cp "$PWD/startContainer.sh" "$B/rootfs/bin/start-hook"
  sed -i "s|$log|/tmp/start-hook.log|" "$B/rootfs/bin/start-hook"
  cfg "$B" '.hooks = {prestart: [{path: ($d + "/prestart.sh")}], createRuntime: [{path: ($d + "/createRuntime.sh")}],
            createContainer: [{path: ($d + "/createContainer.sh")}], startContainer: [{path: "/bin/start-hook"}],
            poststart: [{path: ($d + "/poststart.sh")}], poststop: [{path: ($d + "/poststop.sh")}]}
            | .root.readonly = false' --arg d "$PWD"
  args "$B" sleep 100
  id=$(new_id hooks)
  rt create --bundle "$B" "$id"
  assert_eq "prestart \"status\":\"created\"
createRuntime \"status\":\"created\"
createContainer \"status\":\"created\"" "$(cat "$log")" "hooks after create"
  rt start "$id"
  assert_contains "$(cat "$log")" "poststart \"status\":\"running\""
  assert_eq "startContainer \"status\":\"created\"" "$(cat "$B/rootfs/tmp/start-hook.log")" "startContainer hook"
  rt kill "$id" KILL
  wait_status "$id" stopped
  rt delete "$id"
  assert_eq "poststop \"status\":\"stopped\"" "$(tail -1 "$log")" "poststop"
}

test_failing_prestart_hook_fails_create() {
  printf '#!/bin/sh\necho broken hook >&2\nexit 3\n' > "$PWD/bad.sh"
  chmod +x "$PWD/bad.sh"
  cfg "$B" '.hooks = {prestart: [{path: $p}]}' --arg p "$PWD/bad.sh"
  args "$B" sleep 100
  local id out
  id=$(new_id badhook)
  out=$(rt create --bundle "$B" "$id" 2>&1 </dev/null) && fail "create with failing hook succeeded"
  assert_contains "$out" "prestart hook #0"
  assert_contains "$out" "exit status 3"
  assert_contains "$out" "broken hook"
  rt state "$id" 2>/dev/null && fail "failed create left state"
  [ -z "$(ls "$STATE_ROOT")" ] || fail "state root not empty: $(ls "$STATE_ROOT")"
  return 0
}

test_hook_timeout() {
  printf '#!/bin/sh\nsleep 30\n' > "$PWD/slow.sh"
  chmod +x "$PWD/slow.sh"
  cfg "$B" '.hooks = {createRuntime: [{path: $p, timeout: 1}]}' --arg p "$PWD/slow.sh"
  local id out start=$SECONDS
  id=$(new_id slowhook)
  out=$(rt create --bundle "$B" "$id" 2>&1 </dev/null) && fail "create with a hanging hook succeeded"
  assert_contains "$out" "timed out after 1 s"
  [ $((SECONDS - start)) -lt 10 ] || fail "timeout not enforced"
}

test_terminal_via_console_socket() {
  local sock=$PWD/console.sock id
  cfg "$B" '.process.terminal = true | .process.consoleSize = {height: 33, width: 101}'
  args "$B" sh -c 'tty; stty size; ls -l /dev/console | cut -c1'
  python3 "$(dirname "${BASH_SOURCE[0]}")/console_receiver.py" "$sock" "$PWD/console.out" &
  local receiver=$!
  for i in $(seq 50); do [ -S "$sock" ] && break; sleep 0.05; done
  id=$(new_id tty)
  timeout 20 "$RUNTIME" --root "$STATE_ROOT" run --console-socket "$sock" --bundle "$B" "$id" || fail "run with terminal failed"
  wait $receiver || fail "receiver failed"
  local out
  out=$(tr -d '\r' < console.out)
  assert_contains "$out" "/dev/pts/0"
  assert_contains "$out" "33 101"
  assert_contains "$out" "
c"
}

test_detached_terminal_without_socket_is_an_error() {
  cfg "$B" '.process.terminal = true'
  local out
  out=$(rt create --bundle "$B" "$(new_id tty)" 2>&1 </dev/null) && fail "terminal without console socket accepted"
  assert_contains "$out" "console-socket"
}

test_run_foreground_terminal_proxied() {
  # No --console-socket: `run` holds the pty itself and copies it to its
  # own stdio (runc's behaviour); `script` gives it a terminal.
  cfg "$B" '.process.terminal = true'
  args "$B" sh -c 'tty; echo proxied; exit 5'
  local id
  id=$(new_id proxy)
  script -qec "timeout 20 $RUNTIME --root $STATE_ROOT run --bundle $B $id" "$PWD/typescript" </dev/null > /dev/null
  assert_eq 5 "$?" "exit code through the terminal proxy"
  local out
  out=$(tr -d '\r' < typescript)
  assert_contains "$out" "/dev/pts/0"
  assert_contains "$out" "proxied"
}
