# Usability of the `haven` command: --help everywhere, the man page, the
# working directory with --project, policy list's order, the policies'
# descriptions, exit statuses of commands that cannot run, the hint for
# limits an ordinary user cannot have, and `haven audit`.
# (haven_in, need_haven, make_project: test_haven.sh.)

test_usability_help_exits_zero() {
  need_haven
  local args
  for args in "--help" "-h" "run --help" "run -h" "run --policy strict --help" "policy --help" \
              "policy list --help" "policy explain --help" "policy check -h" "policy compile --help" \
              "audit --help" "install --help" "uninstall --help"; do
    haven_in "$WORK" $args
    assert_eq 0 "$RC" "haven $args ($OUT)"
    assert_contains "$OUT" "usage:" "haven $args"
  done
  haven_in "$WORK" run --help
  assert_contains "$OUT" "haven run [--policy NAME|FILE]"
  assert_not_contains "$OUT" "haven policy" "haven run --help prints run's usage only"
  haven_in "$WORK" policy --help
  assert_contains "$OUT" "haven policy list"
  # After the command (or "--"), --help is the command's.
  make_project
  haven_in "$P" run -- sh -c 'echo "$1"' sh --help
  assert_eq "--help" "$OUT"
  haven_in "$P" run sh -c 'echo "$0"' --help
  assert_eq "--help" "$OUT"
  haven_in "$WORK" policy
  assert_eq 125 "$RC"
  assert_contains "$OUT" "list, explain, check or compile"
}

test_usability_man_page() {
  need_haven
  command -v groff >/dev/null || skip "no groff"
  local page=$here/../../man/haven.1 warnings cmd
  [ -f "$page" ] || fail "no man page at $page"
  warnings=$(groff -ww -man -z "$page" 2>&1)
  assert_eq "" "$warnings" "groff -ww warnings"
  if command -v man >/dev/null; then
    warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    assert_eq "" "$warnings" "man --warnings"
  fi
  local text
  text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$page" 2>/dev/null || groff -man -Tutf8 "$page")
  # Every command `haven --help` lists (haven run, haven policy list, ...)
  # is in the synopsis and has its paragraph under COMMANDS.
  local commands n=0
  commands=$(echo "$text" | sed -n '/^COMMANDS/,/^[A-Z]/p')
  while read -r cmd; do
    n=$((n + 1))
    assert_contains "$text" "$cmd" "man page names \"$cmd\""
    echo "$commands" | grep -qE "^       ${cmd#haven }( |\$)" || fail "no paragraph for \"$cmd\" under COMMANDS"
  done < <("$HAVEN" --help | grep -oE '^  haven [a-z]+( (check|compile|list|explain))?' | sed 's/^  //' | sort -u)
  [ "$n" -ge 8 ] || fail "only $n commands found in haven --help"
  # ... and every option haven run and haven audit take.
  local opt
  for opt in $("$HAVEN" run --help | grep -oE -- '--[a-z][a-z-]+' | sort -u) \
             $("$HAVEN" audit --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
    assert_contains "$text" "$opt" "man page documents $opt"
  done
}

test_usability_project_sets_cwd() {
  need_haven
  make_project
  # From elsewhere, the command starts in the project.
  haven_in "$WORK" run --project "$P" -- pwd
  assert_eq "$P" "$OUT" "cwd with --project from outside"
  haven_in "$WORK" run --project "$P" -- cat src/main.c
  assert_eq code "$OUT"
  # From inside the project, where it was.
  haven_in "$P/src/deep" run --project "$P" -- pwd
  assert_eq "$P/src/deep" "$OUT" "cwd with --project from inside"
  haven_in "$P/src" run -- pwd
  assert_eq "$P/src" "$OUT" "cwd without --project"
  # A sibling whose name starts with the project's is not inside it.
  mkdir -p "${P}x"
  haven_in "${P}x" run --project "$P" -- pwd
  assert_eq "$P" "$OUT" "cwd from a sibling named like the project"
  haven_in "$WORK" policy compile default --project "$P"
  assert_eq "$P" "$(echo "$OUT" | jq -r .process.cwd)" "compile --project"
}

test_usability_policy_list_sorted() {
  need_haven
  local home=$WORK/list-home
  mkdir -p "$home/.config/haven/policies"
  printf 'description: zzz first on disk\n' > "$home/.config/haven/policies/zzz-mine.yaml"
  printf 'description: aaa mine\n' > "$home/.config/haven/policies/aaa-mine.yaml"
  # Shadows the shipped one: listed once, with this description.
  printf 'description: my own ci\n' > "$home/.config/haven/policies/ci.yaml"
  OUT=$(HOME=$home timeout 30 "$HAVEN" policy list 2>&1)
  assert_eq 0 $? "policy list"
  local names
  names=$(echo "$OUT" | awk '{print $1}')
  assert_eq "$(echo "$names" | LC_ALL=C sort)" "$names" "policy list is sorted"
  assert_eq "$(echo "$names" | LC_ALL=C sort -u)" "$names" "each policy once"
  assert_eq aaa-mine "$(echo "$names" | head -1)"
  assert_eq zzz-mine "$(echo "$names" | tail -1)"
  assert_contains "$OUT" "ci             my own ci"
  assert_contains "$OUT" "strict         Default plus no shells"
}

# A description says what the policy does: "no shells" only where shells
# are refused, and a policy that refuses them says so.
test_usability_policy_descriptions_true() {
  need_haven
  local name desc explain
  for name in $("$HAVEN" policy list | awk '{print $1}'); do
    desc=$("$HAVEN" policy list | awk -v n="$name" '$1 == n' | cut -c16-)
    explain=$("$HAVEN" policy explain "$name")
    if [[ "$explain" == *"No shell may be executed"* ]]; then
      [[ "$desc" == *"no shell"* ]] || fail "$name refuses shells but its description does not say so: $desc"
    else
      [[ "$desc" != *"no shell"* ]] || fail "$name's description says no shells, but it allows them: $desc"
    fi
    if [[ "$explain" == *"The project directory is read-only"* ]]; then
      [[ "$desc" == *"read-only project"* ]] || fail "$name: project read-only, not in its description: $desc"
    else
      [[ "$desc" != *"read-only project"* ]] || fail "$name's description says read-only project: $desc"
    fi
  done
  # ci runs CI scripts, which are shell scripts: they run.
  make_project
  haven_in "$P" run --policy ci -- sh -c 'echo shell ran'
  assert_eq "shell ran" "$OUT"
}

test_usability_exec_exit_status() {
  need_haven
  make_project
  printf 'extends: default\nprocess:\n  block_shell: true\n' > "$P.pol/noshell.yaml"
  printf 'extends: default\nprocess:\n  allow_exec: [ls, cat]\n' > "$P.pol/only.yaml"
  haven_in "$P" run -- no-such-program-here
  assert_eq 127 "$RC" "not in PATH ($OUT)"
  assert_contains "$OUT" "executable file not found in \$PATH"
  haven_in "$P" run -- /no/such/program
  assert_eq 127 "$RC" "no such file ($OUT)"
  haven_in "$P" run -- /etc/passwd
  assert_eq 126 "$RC" "not executable ($OUT)"
  assert_contains "$OUT" "permission denied"
  haven_in "$P" run -- /etc
  assert_eq 126 "$RC" "a directory ($OUT)"
  # A shell under block_shell (masked: found, not executable).
  haven_in "$P" run --policy "$P.pol/noshell.yaml" -- sh -c true
  assert_eq 126 "$RC" "sh under block_shell ($OUT)"
  assert_contains "$OUT" "permission denied"
  # A program allow_exec leaves out: Landlock refuses the execve itself.
  haven_in "$P" run --policy "$P.pol/only.yaml" -- id
  assert_eq 126 "$RC" "id outside allow_exec ($OUT)"
  assert_contains "$OUT" "permission denied"
  # The trail's exit record says what haven exited with.
  printf 'extends: default\naudit:\n  log: %s\n' "$P.pol/trail.log" > "$P.pol/logged.yaml"
  haven_in "$P" run --policy "$P.pol/logged.yaml" -- /etc/passwd
  assert_eq 126 "$RC" "not executable, logged ($OUT)"
  assert_eq 126 "$(jq -r 'select(.event == "exit") | .status' "$P.pol/trail.log")" "trail exit status"
  # The command's own statuses pass through.
  haven_in "$P" run --policy "$P.pol/only.yaml" -- ls
  assert_eq 0 "$RC"
  haven_in "$P" run -- sh -c 'exit 3'
  assert_eq 3 "$RC"
  haven_in "$P" run -- sh -c 'exit 126'
  assert_eq 126 "$RC"
  # haven's own failures stay 125.
  haven_in "$P" run --policy no-such-policy -- true
  assert_eq 125 "$RC"
}

test_usability_limits_as_user_hint() {
  need_haven
  make_project
  chown -R 65534:65534 "$P"
  chmod 755 "$WORK"
  local haven home=$WORK/user-home
  mkdir -p "$home"
  chown 65534:65534 "$home"
  haven=$(world_readable_copy "$HAVEN")
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$home" XDG_RUNTIME_DIR= \
        timeout 30 "$haven" run --policy strict -- true 2>&1)
  RC=$?
  [ "$RC" != 0 ] || skip "this user may create cgroups here: strict ran"
  assert_eq 125 "$RC"
  assert_contains "$OUT" 'hint: policy "strict" sets resources.memory, resources.cpus, resources.pids'
  assert_contains "$OUT" "Run haven as root"
  # A policy without those limits runs as this user.
  printf 'extends: default\nresources:\n  nofile: 1024\n  timeout: 60s\n' > "$P.pol/light.yaml"
  chmod 644 "$P.pol/light.yaml"
  chmod 755 "$P.pol"
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$home" XDG_STATE_HOME= XDG_RUNTIME_DIR= \
        timeout 30 "$haven" run --policy "$P.pol/light.yaml" -- echo ran 2>&1)
  assert_eq "ran" "$OUT"
}

# A trail as the monitors write it, with records that are not records.
write_sample_trail() {
  local f=$1 id=$2 now old
  now=$(date -u +%Y-%m-%dT%H:%M:%S.000000001Z)
  old=$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%S.5Z)
  {
    echo "{\"time\":\"$old\",\"event\":\"start\",\"policy\":\"ci\",\"container\":\"$id\",\"pid\":10,\"command\":[\"make\",\"test\"]}"
    echo "{\"time\":\"$old\",\"event\":\"denied\",\"policy\":\"ci\",\"container\":\"$id\",\"process\":\"init\",\"syscall\":\"mount\",\"pid\":11,\"comm\":\"old\"}"
    echo 'not json at all'
    echo '{"time":"2026-11-23T10:00:00Z"'
    printf '{"time":"2026-11-23T10:00:00Z","event":"x\0y"}\n'
    python3 -c 'print("[" * 200000 + "]" * 200000)'
    python3 -c 'print("{\"time\":\"2026-11-23T10:00:00Z\",\"event\":\"" + "a" * 300000 + "\"}")'
    echo "{\"time\":\"$now\",\"event\":\"denied\",\"policy\":\"ci\",\"container\":\"$id\",\"process\":\"exec\",\"syscall\":\"ptrace\",\"pid\":12,\"comm\":\"evil\\u001b[2J\"}"
    echo "{\"time\":\"$now\",\"event\":\"net-denied\",\"policy\":\"ci\",\"container\":\"$id\",\"destination\":\"198.51.100.10\",\"port\":81,\"protocol\":\"tcp\",\"names\":[]}"
    printf '{"time":"%s","event":"exit","policy":"ci","container":"%s","status":0}' "$now" "$id"  # no newline at the end
  } > "$f"
}

# `haven audit` with no trail once printed nothing and exited 0, as if
# nothing had been refused.  It names the places it looked, on stderr.
test_usability_audit_empty_says_where_it_looked() {
  need_haven
  local h=$WORK/empty-home-$$ out err
  mkdir -p "$h"
  # As root the engine containers' trails are read too (other tests'
  # may be there): a filter nothing matches.
  out=$(HOME=$h XDG_STATE_HOME= "$HAVEN" audit --since "$(date -u -d '+1 hour' +%Y-%m-%dT%H:%MZ)" 2> audit.err)
  assert_eq 0 "$?" "exit status"
  assert_eq "" "$out" "stdout"
  err=$(cat audit.err)
  assert_contains "$err" "haven audit: no records matching the filters; looked in:"
  assert_contains "$err" "haven audit:   /var/log/haven/containers/*.jsonl" "root's container trails"
  assert_contains "$err" "haven audit:   $h/.local/state/haven/audit.log (not there)" "haven run's trail"
  assert_contains "$err" "~/.local/state/haven/audit.log" "where haven run writes"
  # As a user, with no trail at all: the containers' trails of that user.
  out=$(cd / && HOME=$h XDG_STATE_HOME=$h/state setpriv --reuid 65534 --regid 65534 --clear-groups "$HAVEN" audit 2>&1)
  assert_contains "$out" "haven audit: no records; looked in:
haven audit:   $h/state/haven/containers/*.jsonl (not there)
haven audit:   $h/.local/state/haven/audit.log (not there)" "a user's trails"
  # A file named: that file.
  : > "$h/empty.jsonl"
  out=$("$HAVEN" audit "$h/empty.jsonl" 2>&1 >/dev/null)
  assert_contains "$out" "haven audit:   $h/empty.jsonl"
  assert_not_contains "$out" "/var/log/haven/containers" "a named file only"
}

test_usability_audit_trail_readable() {
  need_haven
  local f=$WORK/sample.jsonl id=${CTR_PREFIX}-0123456789abcdef
  write_sample_trail "$f" "$id"
  haven_in "$WORK" audit "$f"
  assert_eq 0 "$RC" "haven audit ($OUT)"
  local records
  records=$(echo "$OUT" | grep -v '^haven audit:')
  assert_eq 5 "$(echo "$records" | wc -l)" "five records ($OUT)"
  assert_contains "$OUT" "haven audit: 5 lines skipped: not audit records (the first at $f:3)"
  assert_contains "$records" "${id:0:12} (ci)  denied  ptrace by pid 12 (evil\\x1b[2J), exec"
  assert_contains "$records" "(ci)  start  make test"
  assert_contains "$records" "net-denied  tcp to 198.51.100.10 port 81"
  assert_contains "$records" "exit  status=0"
  [[ "$OUT" != *$'\e'* ]] || fail "an escape character reached the output"
  # Oldest first, also across files given in another order.
  assert_contains "$(echo "$records" | head -1)" "start"
  # Filters: time, event or system call, container.
  haven_in "$WORK" audit --since 10m "$f"
  assert_eq 3 "$(echo "$OUT" | grep -vc '^haven audit:')" "--since 10m ($OUT)"
  assert_not_contains "$OUT" "mount"
  haven_in "$WORK" audit --since "$(date -d '-3 hours' +%Y-%m-%dT%H:%M)" "$f"
  assert_eq 5 "$(echo "$OUT" | grep -vc '^haven audit:')" "--since a local time ($OUT)"
  haven_in "$WORK" audit --since "$(date -u -d '+1 hour' +%Y-%m-%dT%H:%MZ)" "$f"
  assert_eq 0 "$(echo "$OUT" | grep -vc '^haven audit:')" "--since the future ($OUT)"
  # Nothing shown: it says where it looked (it once printed nothing).
  assert_contains "$OUT" "haven audit: no records matching the filters; looked in:
haven audit:   $f" "--since the future"
  haven_in "$WORK" audit --event denied "$f"
  assert_eq 2 "$(echo "$OUT" | grep -c '  denied  ')" "--event denied ($OUT)"
  assert_not_contains "$OUT" "net-denied"
  haven_in "$WORK" audit -e ptrace -e exit "$f"
  assert_eq 2 "$(echo "$OUT" | grep -vc '^haven audit:')" "-e ptrace -e exit ($OUT)"
  haven_in "$WORK" audit --container "${id:0:8}" "$f"
  assert_eq 5 "$(echo "$OUT" | grep -vc '^haven audit:')" "--container prefix ($OUT)"
  haven_in "$WORK" audit --container "${id:0:8}x" "$f"
  assert_eq 0 "$(echo "$OUT" | grep -vc '^haven audit:')" "--container other ($OUT)"
  # --json: the records as they are (stdout only: the count goes to stderr).
  local json
  json=$(cd "$WORK" && timeout 30 "$HAVEN" audit --json --event denied "$f" 2>/dev/null)
  assert_eq 2 "$(echo "$json" | jq -c . | wc -l)" "--json is JSON lines ($json)"
  assert_eq "mount ptrace" "$(echo "$json" | jq -r .syscall | tr '\n' ' ' | sed 's/ $//')"
  # Bad options and files are errors naming them.
  haven_in "$WORK" audit --since yesterday "$f"
  assert_eq 125 "$RC"
  assert_contains "$OUT" '--since "yesterday": expected'
  haven_in "$WORK" audit "$WORK/no-such-trail"
  assert_eq 125 "$RC"
  assert_contains "$OUT" "$WORK/no-such-trail"
  mkfifo "$WORK/fifo.jsonl"
  haven_in "$WORK" audit "$WORK/fifo.jsonl"
  assert_eq 125 "$RC" "a FIFO ($OUT)"
  assert_contains "$OUT" "not a regular file"
}

# Where haven writes them: haven run's audit.log (strict) and, as root,
# the engine containers' trails in /var/log/haven/containers.
test_usability_audit_default_trails() {
  need_haven
  make_project
  local home=$WORK/audit-home id=${CTR_PREFIX}-feedc0de
  mkdir -p "$home"
  (cd "$P" && HOME=$home timeout 30 "$HAVEN" run --policy strict -- unshare -U true >/dev/null 2>&1)
  [ -s "$home/.local/state/haven/audit.log" ] || fail "strict wrote no audit log"
  mkdir -p /var/log/haven/containers
  write_sample_trail "/var/log/haven/containers/$id.jsonl" "$id"
  # Another container's records, more than stdio's buffer: the note on
  # stderr about the sample's bad lines once landed in the middle of a
  # record (2>&1 into a pipe).  run.sh removes both trails at its end.
  local now i
  now=$(date -u +%Y-%m-%dT%H:%M:%S.000000001Z)
  for i in $(seq 1 100); do
    echo "{\"time\":\"$now\",\"event\":\"net-denied\",\"policy\":\"ci\",\"container\":\"${CTR_PREFIX}-0ther\",\"destination\":\"198.51.100.$i\",\"port\":443,\"protocol\":\"tcp\",\"names\":[]}"
  done > "/var/log/haven/containers/${CTR_PREFIX}-0ther.jsonl"
  OUT=$(HOME=$home timeout 30 "$HAVEN" audit --since 10m 2>&1)
  assert_contains "$OUT" "haven-run (strict)  denied  unshare by pid"
  assert_contains "$OUT" "haven-run (strict)  start  unshare -U true in $P"
  assert_contains "$OUT" "${id:0:12} (ci)  denied  ptrace"
  assert_eq 1 "$(printf '%s\n' "$OUT" | grep -c '^haven audit: 5 lines skipped')" "the note on a line of its own ($OUT)"
  assert_eq 100 "$(printf '%s\n' "$OUT" | grep -c 'port 443$')" "the other container's records whole"
  OUT=$(HOME=$home timeout 30 "$HAVEN" audit --container strict 2>&1)
  assert_contains "$OUT" "haven-run (strict)  exit  status=1"
  assert_not_contains "$OUT" "(ci)"
}
