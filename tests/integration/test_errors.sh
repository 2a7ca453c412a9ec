# Bad input gets a clear error naming the file, the JSON path and the
# problem, and leaves nothing behind.

expect_create_error() { # expected-substring
  local id out
  id=$(new_id err)
  out=$(rt create --bundle "$B" "$id" 2>&1 </dev/null) && fail "create succeeded"
  assert_contains "$out" "$1"
  rt state "$id" >/dev/null 2>&1 && fail "failed create left a container"
  return 0
}

test_error_config_type() {
  cfg "$B" '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 1, hard: 1}, {type: "RLIMIT_CORE", soft: 0, hard: "x"}]'
  expect_create_error "$(msg "config.json: .process.rlimits[1].hard: expected an unsigned integer" \
    "cannot unmarshal string into Go struct field POSIXRlimit.process.rlimits.hard of type uint64")"
}

test_error_malformed_json() {
  echo '{"ociVersion": "1.0.0", "process": {' > "$B/config.json"
  expect_create_error "$(msg "config.json: invalid JSON" "runc create failed: unexpected EOF")"
}

test_error_missing_bundle_and_rootfs() {
  local out
  out=$(rt create --bundle /nonexistent/bundle x 2>&1) && fail "create without bundle succeeded"
  assert_contains "$out" "/nonexistent/bundle"
  cfg "$B" '.root.path = "nope"'
  expect_create_error "$(msg "rootfs $B/nope" "invalid rootfs: stat $B/nope: no such file or directory")"
}

test_error_bad_flags_and_commands() {
  local out
  out=$(rt create --bogus x 2>&1) && fail "unknown flag accepted"
  assert_contains "$out" "$(msg "unknown option --bogus" "flag provided but not defined: -bogus")"
  out=$(rt frobnicate 2>&1) && fail "unknown command accepted"
  assert_contains "$out" "$(msg "unknown command \"frobnicate\"" "No help topic for 'frobnicate'")"
  out=$(rt start 2>&1) && fail "start without id accepted"
  assert_contains "$out" "$(msg "container id is required" "requires exactly 1 argument(s)")"
  out=$(rt state ../../etc 2>&1) && fail "path-like id accepted"
  assert_contains "$out" "$(msg "invalid container id" "invalid container ID format")"
}

test_error_duplicate_id() {
  args "$B" sleep 100
  local id out
  id=$(new_id dup)
  rt run -d --bundle "$B" "$id"
  out=$(rt create --bundle "$B" "$id" 2>&1 </dev/null) && fail "duplicate id accepted"
  assert_contains "$out" "already exists"
  assert_eq running "$(status_of "$id")" "original container"
}

test_error_missing_executable() {
  args "$B" /bin/no-such-program
  expect_create_error "no-such-program"
  args "$B" no-such-program
  expect_create_error "executable file not found in \$PATH"
}

# Docker and Podman pick exit codes 127 and 126 by matching Go's lower-case
# error strings ("no such file or directory", "permission denied") in the
# runtime's message; a file without execute permission fails create (as in
# runc), not the exec after start.
test_error_exec_messages_engines_match() {
  args "$B" /bin/no-such-program
  # (runc's text log escapes the quotes: match after them)
  expect_create_error 'stat /bin/no-such-program: no such file or directory'
  args "$B" /etc/passwd
  expect_create_error '/etc/passwd'
  expect_create_error ': permission denied'
}

# As runc: engines run `delete --force` after a failed create, which left
# nothing, and print what the runtime says.
test_delete_force_of_missing_container() {
  local out
  out=$(rt delete --force "$(new_id gone)" 2>&1) || fail "delete --force of a missing container failed: $out"
  assert_eq "" "$out" "delete --force output"
  out=$(rt delete "$(new_id gone)" 2>&1) && fail "delete of a missing container succeeded"
  assert_contains "$out" "container does not exist"
}

# A create in progress (no state.json yet) is not deleted from under its
# creator; what a dead create left behind is removed.
test_delete_during_create() {
  skip_on_runc "runc removes the directory of a container being created"
  local id out
  id=$(new_id slow)
  args "$B" sleep 100
  cat > slow.sh <<'HOOK'
#!/bin/sh
sleep 2
HOOK
  chmod +x slow.sh
  cfg "$B" '.hooks = {createRuntime: [{path: $p}]}' --arg p "$PWD/slow.sh"
  rt create --bundle "$B" "$id" > create.out 2>&1 &
  local creator=$!
  local i
  for i in $(seq 100); do [ -d "$STATE_ROOT/$id" ] && break; sleep 0.02; done
  [ -d "$STATE_ROOT/$id" ] || fail "create never made its state directory"
  out=$(rt delete --force "$id" 2>&1) && fail "delete --force during create succeeded"
  assert_contains "$out" "container $id is being created"
  wait $creator || fail "create failed: $(cat create.out)"
  assert_eq created "$(status_of "$id")"
  rt delete --force "$id" || fail "delete --force after create failed"
  # A dead create's directory (no state.json, nobody holding the lock).
  mkdir -p "$STATE_ROOT/$id"
  : > "$STATE_ROOT/$id/.create.lock"
  rt delete "$id" || fail "delete of a dead create's leftovers failed"
  [ -e "$STATE_ROOT/$id" ] && fail "leftover state directory not removed"
  return 0
}
