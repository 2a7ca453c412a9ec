# GET /v1/sandboxes/ID/denials (session/sandbox_denials.c): a sandbox's
# denials read back from its policy's trail, each with its kind, what and
# rule; every record the sandbox's listener and monitor write names it
# ("sandbox"); and "shell" in the sandbox's JSON.

# denied_ptrace ID N: in sandbox ID, ptrace(PTRACE_ATTACH, N) (the agent
# profile denies ptrace: EPERM, and a "denied" record in the trail).
denied_ptrace() {
  run_in "$1" "{\"argv\":[\"python3\",\"-c\",\"import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); r=l.syscall(101,16,$2,0,0); print(r, ctypes.get_errno())\"]}"
  assert_eq 0 "$EXIT" "python3 in $1: $BODY"
  assert_eq "-1 1" "$OUT" "ptrace got EPERM in $1"
}

test_service_denials() {
  start_service
  printf 'name: svc-denials-test\nextends: offline\naudit:\n  log: %s\n' "$PWD/trail.jsonl" > "$PWD/pol.yaml"
  create "$PWD/pol.yaml"
  local a=$ID
  create "$PWD/pol.yaml"
  local b=$ID
  create offline
  local none=$ID
  denied_ptrace "$a" 7
  denied_ptrace "$a" 8
  denied_ptrace "$b" 9
  # The listener writes as the call is answered; wait for the third.
  local i
  for i in $(seq 50); do
    [ "$(jq -c 'select(.event == "denied")' "$PWD/trail.jsonl" | wc -l)" -ge 3 ] && break
    sleep 0.1
  done
  # Every record of the listener names its sandbox (the trail is shared).
  assert_eq "" "$(jq -c 'select(.sandbox == null)' "$PWD/trail.jsonl")" "records without a sandbox"
  api GET "/v1/sandboxes/$a/denials"
  assert_eq 200 "$CODE" "$BODY"
  strict_json "$PWD/answer" || fail "not JSON: $BODY"
  assert_eq "$PWD/trail.jsonl" "$(jq -r .trail <<< "$BODY")" "the trail's path"
  assert_eq null "$(jq -r .note <<< "$BODY")" "no note with a trail"
  assert_eq 2 "$(jq '.denials | length' <<< "$BODY")" "a's two denials (not b's): $BODY"
  assert_eq '["0x7","0x8"]' "$(jq -c '[.denials[].record.args[1]]' <<< "$BODY")" "oldest first"
  assert_eq 'syscall' "$(jq -r '.denials[0].kind' <<< "$BODY")"
  assert_eq 'syscalls.profile: agent' "$(jq -r '.denials[0].rule' <<< "$BODY")"
  assert_contains "$(jq -r '.denials[0].what' <<< "$BODY")" "system call ptrace"
  # The record's policy line that would allow it (denial_explain.h).
  assert_eq 'syscalls: {allow: [ptrace]}' "$(jq -r '.denials[0].allow' <<< "$BODY")" "allow: $BODY"
  assert_eq "$a" "$(jq -r '.denials[1].record.sandbox' <<< "$BODY")"
  assert_eq true "$(jq '.denials[0].time | test("^[0-9]{4}-")' <<< "$BODY")" "time: $BODY"
  # ... which `haven why` in the sandbox reads from its own view: a's
  # two, never b's.
  run_in "$a" '{"argv":["haven","why","--json"]}'
  assert_eq 0 "$EXIT" "haven why in $a: $BODY"
  assert_eq '["0x7","0x8"]' "$(jq -sc '[.[] | select(.event == "denied") | .args[1]]' <<< "$OUT")" "a's view: $OUT"
  # limit: the last N.
  api GET "/v1/sandboxes/$a/denials?limit=1"
  assert_eq 200 "$CODE" "$BODY"
  assert_eq '["0x8"]' "$(jq -c '[.denials[].record.args[1]]' <<< "$BODY")" "limit=1: the newest"
  api GET "/v1/sandboxes/$a/denials?limit=0"
  assert_eq 400 "$CODE" "limit=0: $BODY"
  api GET "/v1/sandboxes/$b/denials"
  assert_eq '["0x9"]' "$(jq -c '[.denials[].record.args[1]]' <<< "$BODY")" "b's own: $BODY"
  # A policy without a trail: a note, no trail.
  api GET "/v1/sandboxes/$none/denials"
  assert_eq 200 "$CODE" "$BODY"
  assert_eq null "$(jq -r .trail <<< "$BODY")"
  assert_eq 0 "$(jq '.denials | length' <<< "$BODY")"
  assert_contains "$(jq -r .note <<< "$BODY")" "the policy keeps no audit trail"
  api GET "/v1/sandboxes/hvs-none/denials"
  assert_eq 404 "$CODE" "no such sandbox: $BODY"
  api POST "/v1/sandboxes/$a/denials" '{}'
  assert_eq 405 "$CODE" "$BODY"
  # A record of another sandbox that claims a's id in another member, and
  # lines that are no records, are not a's denials.
  printf '{"event":"denied","syscall":"evil","sandbox":"other","x":{"sandbox":"%s"}}\nnot json "sandbox":"%s"\n' \
    "$a" "$a" >> "$PWD/trail.jsonl"
  api GET "/v1/sandboxes/$a/denials"
  assert_eq 2 "$(jq '.denials | length' <<< "$BODY")" "lines that are not a's records: $BODY"
  api DELETE "/v1/sandboxes/$a"
  # The exit record names it too.
  assert_eq 1 "$(grep -F '"event":"exit"' "$PWD/trail.jsonl" | grep -cF "\"sandbox\":\"$a\"")" "a's exit record"
}

# The records the container's monitor writes into the policy's trail
# (egress, Landlock) name the sandbox too.  (A service's allow-list
# sandbox has no way out here: its pasta dies with the maker that started
# it, so no resolver refusal can be made; what the monitor writes at the
# start, where the kernel's audit is off, is checked instead.)
test_service_denials_monitor_records() {
  start_service
  printf 'name: svc-denials-mon\nextends: offline\nnetwork:\n  mode: allowlist\n  allow: [allowed.example]\naudit:\n  log: %s\n' \
    "$PWD/trail.jsonl" > "$PWD/pol.yaml"
  create "$PWD/pol.yaml"
  run_in "$ID" '{"argv":["true"]}'
  api DELETE "/v1/sandboxes/$ID"
  local mine
  mine=$(jq -c "select(.container == \"$ID\")" "$PWD/trail.jsonl")
  [ -n "$mine" ] || skip "the monitor wrote no record here (the kernel's audit is on): $(cat "$PWD/trail.jsonl")"
  assert_eq "" "$(jq -c "select(.container == \"$ID\" and .sandbox != \"$ID\")" "$PWD/trail.jsonl")" \
    "the monitor's records name the sandbox"
}

# "shell": whether sh may run, in the create answer, GET and the list.
test_service_shell() {
  start_service
  create offline
  assert_eq true "$(jq .shell <<< "$BODY")" "offline lets a shell run: $BODY"
  local open=$ID
  printf 'extends: offline\nprocess:\n  block_shell: true\n' > "$PWD/noshell.yaml"
  create "$PWD/noshell.yaml"
  assert_eq false "$(jq .shell <<< "$BODY")" "block_shell: $BODY"
  local blocked=$ID
  api GET "/v1/sandboxes/$blocked"
  assert_eq false "$(jq .shell <<< "$BODY")" "GET: $BODY"
  api GET /v1/sandboxes
  assert_eq "false true" "$(jq -r "[.sandboxes[] | select(.id == \"$blocked\" or .id == \"$open\") | .shell] | sort | map(tostring) | join(\" \")" <<< "$BODY")" \
    "list: $BODY"
  # It is what happens: sh does not run there.
  run_in "$blocked" '{"argv":["sh","-c","true"]}'
  [ "$EXIT" != 0 ] || fail "sh ran under block_shell"
  printf 'extends: offline\nprocess:\n  allow_exec: [python3, cat]\n' > "$PWD/nosh.yaml"
  create "$PWD/nosh.yaml"
  assert_eq false "$(jq .shell <<< "$BODY")" "allow_exec without sh: $BODY"
  printf 'extends: offline\nprocess:\n  allow_exec: [python3, /bin/sh]\n' > "$PWD/sh.yaml"
  create "$PWD/sh.yaml"
  assert_eq true "$(jq .shell <<< "$BODY")" "allow_exec with sh: $BODY"
}
