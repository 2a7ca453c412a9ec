# Hooks (order, stdin, failure) and terminals through --console-socket.

hook_script() { # path name logfile
  cat > "$1" <<EOS
#!/bin/sh
state=\$(cat)
echo "$2 \$(echo "\$state" | grep -o '"id":"[^"]*"') \$(echo "\$state" | grep -o '"status":"[a-z]*"')" >> "$3"
EOS
  chmod +x "$1"
}

# setup_hooks: every hook appends "NAME "id":"ID" "status":"STATUS"" to
# one log, $HOOKLOG: the host's hooks directly, the startContainer hook
# (run in the container) through a bind mount.
setup_hooks() {
  local dir=$PWD/hooklog h
  HOOKLOG=$dir/hooks.log
  mkdir -p "$dir"
  for h in prestart createRuntime createContainer poststart poststop; do
    hook_script "$PWD/$h.sh" "$h" "$HOOKLOG"
  done
  # The container's own filesystem must hold startContainer's script.
  hook_script "$B/rootfs/bin/start-hook" startContainer /hooklog/hooks.log
  cfg "$B" '.hooks = {prestart: [{path: ($d + "/prestart.sh")}], createRuntime: [{path: ($d + "/createRuntime.sh")}],
            createContainer: [{path: ($d + "/createContainer.sh")}], startContainer: [{path: "/bin/start-hook"}],
            poststart: [{path: ($d + "/poststart.sh")}], poststop: [{path: ($d + "/poststop.sh")}]}
            | .mounts += [{destination: "/hooklog", type: "bind", source: $l, options: ["rbind", "rw"]}]
            | .root.readonly = false' --arg d "$PWD" --arg l "$dir"
  args "$B" sleep 100
}

test_hooks_order_and_state() {
  # Order and state of all hooks but poststart (see the next test).
  setup_hooks
  local id
  id=$(new_id hooks)
  rt create --bundle "$B" "$id" || fail "create failed"
  local i="\"id\":\"$id\"" st
  # runc passes status "creating" to the hooks run during create.
  st=$(msg '"status":"created"' '"status":"creating"')
  assert_eq "prestart $i $st
createRuntime $i $st
createContainer $i $st" "$(grep -v ^poststart "$HOOKLOG")" "hooks after create"
  rt start "$id" || fail "start failed"
  assert_eq "prestart $i $st
createRuntime $i $st
createContainer $i $st
startContainer $i \"status\":\"created\"" "$(grep -v ^poststart "$HOOKLOG")" "hooks after start"
  rt kill "$id" KILL
  wait_status "$id" stopped
  assert_eq 0 "$(grep -c ^poststop "$HOOKLOG")" "poststop hooks before delete"
  rt delete "$id" || fail "delete failed"
  assert_eq "poststop $i \"status\":\"stopped\"" "$(tail -1 "$HOOKLOG")" "poststop after delete"
  assert_eq 1 "$(grep -c ^poststart "$HOOKLOG")" "poststart hooks run"
}

test_hooks_poststart_after_start() {
  skip_on_runc "runc 1.1 runs poststart hooks during create, before startContainer"
  setup_hooks
  local id
  id=$(new_id hooks)
  rt create --bundle "$B" "$id" || fail "create failed"
  assert_eq 0 "$(grep -c ^poststart "$HOOKLOG")" "poststart hooks before start"
  rt start "$id" || fail "start failed"
  local i="\"id\":\"$id\""
  assert_eq "prestart createRuntime createContainer startContainer poststart" "$(cut -d' ' -f1 "$HOOKLOG" | xargs)" "hook order"
  assert_eq "poststart $i \"status\":\"running\"" "$(tail -1 "$HOOKLOG")" "poststart state"
}

# `run` creates, starts and deletes in one process, where start and
# delete may skip reading config.json when create saw no poststart or
# poststop hooks (to save time at start-up): with hooks, both still run.
test_hooks_run_runs_poststart_and_poststop() {
  setup_hooks
  args "$B" true
  local id
  id=$(new_id hooksrun)
  rt run --bundle "$B" "$id" < /dev/null || fail "run failed"
  local i="\"id\":\"$id\""
  assert_eq "prestart createRuntime createContainer startContainer poststart poststop" \
    "$(cut -d' ' -f1 "$HOOKLOG" | xargs)" "hooks of run"
  assert_eq "poststop $i \"status\":\"stopped\"" "$(tail -1 "$HOOKLOG")" "poststop state"
}

test_failing_prestart_hook_fails_create() {
  printf '#!/bin/sh\necho broken hook >&2\nexit 3\n' > "$PWD/bad.sh"
  chmod +x "$PWD/bad.sh"
  cfg "$B" '.hooks = {prestart: [{path: $p}]}' --arg p "$PWD/bad.sh"
  args "$B" sleep 100
  local id out
  id=$(new_id badhook)
  out=$(rt create --bundle "$B" "$id" 2>&1 </dev/null) && fail "create with failing hook succeeded"
  assert_contains "$out" "$(msg "prestart hook #0" "error running hook #0")"
  assert_contains "$out" "exit status 3"
  assert_contains "$out" "broken hook"
  rt state "$id" 2>/dev/null && fail "failed create left state"
  [ -z "$(ls "$STATE_ROOT")" ] || fail "state root not empty: $(ls "$STATE_ROOT")"
  return 0
}

test_hook_timeout() {
  # The hook itself hangs; then (not for runc, which kills only the hook's
  # own process and waits for its output pipe) a child of the hook holds
  # its stdout open.
  local bodies=('exec sleep 30') body
  is_runc || bodies+=('sleep 30; true')
  for body in "${bodies[@]}"; do
    printf '#!/bin/sh\n%s\n' "$body" > "$PWD/slow.sh"
    chmod +x "$PWD/slow.sh"
    cfg "$B" '.hooks = {createRuntime: [{path: $p, timeout: 1}]}' --arg p "$PWD/slow.sh"
    local id out start=$SECONDS
    id=$(new_id slowhook)
    out=$(rt create --bundle "$B" "$id" 2>&1 </dev/null) && fail "create with a hanging hook succeeded"
    assert_contains "$out" "$(msg "timed out after 1 s" "hook ran past specified timeout of 1.0s")"
    [ $((SECONDS - start)) -lt 10 ] || fail "timeout not enforced for a hook running '$body'"
    rt state "$id" >/dev/null 2>&1 && fail "failed create left a container"
  done
  return 0
}

test_terminal_via_console_socket() {
  local sock=$PWD/console.sock id
  cfg "$B" '.process.terminal = true | .process.consoleSize = {height: 33, width: 101}'
  args "$B" sh -c 'tty; stty size; ls -l /dev/console | cut -c1; sleep 0.2'
  python3 "$(dirname "${BASH_SOURCE[0]}")/console_receiver.py" "$sock" "$PWD/console.out" &
  local receiver=$!
  defer "kill $receiver"
  wait_socket "$sock"
  id=$(new_id tty)
  # create/start: runc takes --console-socket only for detached containers.
  rt create --console-socket "$sock" --bundle "$B" "$id" || fail "create with terminal failed"
  rt start "$id" || fail "start failed"
  wait $receiver || fail "receiver failed"
  wait_status "$id" stopped
  local pts
  pts=$(head -1 console.out)
  assert_contains "$pts" "pty-master /dev/pts/" "received fd"
  assert_eq "${pts#pty-master }
33 101
c" "$(tr -d '\r' < console.out | sed 1d)" "terminal output"
}

test_detached_terminal_without_socket_is_an_error() {
  cfg "$B" '.process.terminal = true'
  local out
  out=$(rt create --bundle "$B" "$(new_id tty)" 2>&1 </dev/null) && fail "terminal without console socket accepted"
  assert_contains "$out" "$(msg "console-socket" "cannot allocate tty if runc will detach without setting console socket")"
}

test_run_foreground_terminal_proxied() {
  # No --console-socket: `run` holds the pty itself and copies it to its
  # own stdio (runc's behaviour); `script` gives it a terminal.  timeout
  # must leave it in the terminal's foreground process group: in a
  # background group its tcsetattr stops it with SIGTTOU (runc too).  That
  # is what happens when `script` runs the command through dash (SHELL
  # unset, as in CI), which forks timeout instead of exec'ing it.
  cfg "$B" '.process.terminal = true'
  args "$B" sh -c 'tty; echo proxied; exit 5'
  local id
  id=$(new_id proxy)
  script -qec "timeout --foreground 20 $RUNTIME --root $STATE_ROOT run --bundle $B $id" "$PWD/typescript" </dev/null > /dev/null
  assert_eq 5 "$?" "exit code through the terminal proxy"
  local out
  out=$(tr -d '\r' < typescript)
  assert_contains "$out" "/dev/pts/0"
  assert_contains "$out" "proxied"
}

# Network none after the hooks: a prestart hook that puts an
# veth pair into init's network namespace, as Docker's network set-up
# (libnetwork-setkey) does into whatever namespace init has, fails create
# when the config says network none (run.haven.network, which a policy
# with network none sets), naming the interface; the same hook without
# the annotation runs and the container has the interface (the hook
# works); any other value of the annotation is refused.
test_network_none_holds_after_hooks() {
  skip_on_runc "haven's run.haven.network"
  command -v ip > /dev/null || skip "ip (iproute2) missing"
  cat > "$PWD/addif.sh" <<'EOS'
#!/bin/sh
pid=$(sed 's/.*"pid": *\([0-9]*\).*/\1/')
exec ip link add hvnone0 netns "$pid" type veth peer name hvnone1 netns "$pid"
EOS
  chmod +x "$PWD/addif.sh"
  cfg "$B" '.hooks = {prestart: [{path: $p}]} | .linux.namespaces |= (map(select(.type != "network")) + [{type: "network"}])' \
    --arg p "$PWD/addif.sh"
  args "$B" sh -c 'ls /sys/class/net | xargs'
  run_ctr "$B"
  assert_eq 0 "$RC" "the hook without network none: $OUT"
  assert_eq "hvnone0 hvnone1 lo" "$OUT" "interfaces the hook made"
  cfg "$B" '.annotations["run.haven.network"] = "none"'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "create with an interface under network none succeeded: $OUT"
  assert_contains "$OUT" "the policy's network is none, but the container's network namespace has interface(s) hvnone"
  assert_contains "$OUT" "after the prestart and createRuntime hooks"
  assert_contains "$OUT" "hvnone0" "the interfaces named"
  assert_contains "$OUT" "hvnone1" "the interfaces named"
  [ -z "$(ls "$STATE_ROOT")" ] || fail "state root not empty: $(ls "$STATE_ROOT")"
  cfg "$B" '.annotations["run.haven.network"] = "open" | del(.hooks)'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "run.haven.network=open accepted"
  assert_contains "$OUT" 'config.json: .annotations["run.haven.network"]: "open": the only value is "none"'
}
