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
