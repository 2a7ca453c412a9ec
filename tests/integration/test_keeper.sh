# Keeper mode (runtime/include/keeper.h): a container whose init, instead
# of running process.args, starts commands on request over a socket.
# Driven by tests/helpers/keeper_drive (built by make check), which
# creates and starts the container with hv_create_opts.keeper_fd and
# prints one line per step; each command's output is in N.out / N.err.

KEEPER_DRIVE=$(cd "$(dirname "$RUNTIME")" && pwd)/tests/helpers/keeper_drive

# keeper_bundle: a config with something of every restriction the keeper
# must hand on: a user with groups, capabilities, no_new_privs, a
# seccomp profile and a stacked one (run.haven.seccomp), Landlock rules
# (run.haven.landlock: programs only from /bin), a umask.
keeper_bundle() {
  skip_on_runc "keeper mode is haven-runc's"
  [ -x "$KEEPER_DRIVE" ] || skip "tests/helpers/keeper_drive not built (make check builds it)"
  cfg "$B" '.process.user = {uid: 1000, gid: 1000, additionalGids: [2000], umask: 63}
    | .process.cwd = "/home/user"
    | .process.env = ["PATH=/bin", "FROM_CONFIG=1"]
    | .process.capabilities = {bounding: ["CAP_KILL", "CAP_CHOWN"], effective: ["CAP_KILL"], permitted: ["CAP_KILL"]}
    | .process.noNewPrivileges = true
    | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["ptrace"], action: "SCMP_ACT_ERRNO"}]}
    | .annotations["run.haven.seccomp"] = ({seccomp: {defaultAction: "SCMP_ACT_ALLOW",
        syscalls: [{names: ["unshare"], action: "SCMP_ACT_ERRNO"}]}} | tojson)
    | .annotations["run.haven.landlock"] = ({read: ["/"], write: ["/tmp", "/dev", "/home/user"], exec: ["/bin"],
        bestEffort: false} | tojson)'
  chown 1000:1000 "$B/rootfs/home/user"
  printf 'echo never\n' > "$B/rootfs/home/user/not-executable"
  chmod 644 "$B/rootfs/home/user/not-executable"
  printf '#!/bin/sh\necho ran\n' > "$B/rootfs/home/user/script"
  chmod 755 "$B/rootfs/home/user/script"
  printf '#!/nonexistent/sh\necho ran\n' > "$B/rootfs/bin/no-interpreter"
  chmod 755 "$B/rootfs/bin/no-interpreter"
}

drive() { # ID STEP...: the driver, its lines in $DRIVE, its status in $DRIVE_RC
  DRIVE=$(timeout -k 5 60 "$KEEPER_DRIVE" "$STATE_ROOT" "$B" "$@" 2>&1)
  DRIVE_RC=$?
}

# The lines of /proc/self/status that say what a process may do.
powers() { grep -E '^(Uid|Gid|Groups|NoNewPrivs|Seccomp|Seccomp_filters|Cap(Inh|Prm|Eff|Bnd|Amb)):' "$1"; }

test_keeper_commands() {
  keeper_bundle
  local id
  id=$(new_id keeper)
  drive "$id" "$PWD" \
    run cwd=/tmp env=PATH=/bin env=FOO=bar in=hello sh -c 'pwd; echo "$FOO:$FROM_CONFIG"; cat; echo; echo oops >&2; umask; exit 3' , \
    run sh -c 'pwd; id -u' , \
    run nosuch-command , \
    run /home/user/not-executable , \
    run /bin , \
    run cwd=/nonexistent true , \
    run sig=15 sh -c 'echo ready; sleep 100' , \
    run cat /proc/self/status , \
    run /home/user/script , \
    run no-interpreter , \
    close
  [ "$DRIVE_RC" = 0 ] || fail "keeper_drive failed: $DRIVE"
  # stdin, stdout, stderr, cwd, environment (the request's alone), the
  # config's umask, the status.
  assert_contains "$DRIVE" "run 1: pid" "first run"
  assert_contains "$DRIVE" "status 3"$'\n'"run 2:" "exit status"
  assert_eq $'/tmp\nbar:\nhello\n0077' "$(cat 1.out)" "stdout of run 1"
  assert_eq oops "$(cat 1.err)" "stderr of run 1"
  # No cwd asked: the config's; the config's user.
  assert_eq $'/home/user\n1000' "$(cat 2.out)" "cwd and user of run 2"
  assert_contains "$DRIVE" "run 3: pid" ; assert_contains "$(grep '^run 3:' <<< "$DRIVE")" "status 127"
  assert_eq "haven: exec nosuch-command: command not found" "$(cat 3.err)"
  assert_contains "$(grep '^run 4:' <<< "$DRIVE")" "status 126" "not executable"
  assert_eq "haven: exec /home/user/not-executable: Permission denied" "$(cat 4.err)"
  assert_contains "$(grep '^run 5:' <<< "$DRIVE")" "status 126" "a directory"
  assert_contains "$(grep '^run 6:' <<< "$DRIVE")" "status 126" "a missing cwd"
  assert_eq "haven: cwd /nonexistent: No such file or directory" "$(cat 6.err)"
  assert_contains "$(grep '^run 7:' <<< "$DRIVE")" "status 143" "SIGTERM to the run's group"
  # Landlock's exec rule: an executable file outside /bin is refused.
  assert_contains "$(grep '^run 9:' <<< "$DRIVE")" "status 126" "Landlock's exec rule"
  assert_eq "haven: exec /home/user/script: Permission denied" "$(cat 9.err)"
  # Found in PATH, but its interpreter is not there: 127, and not "not found".
  assert_contains "$(grep '^run 10:' <<< "$DRIVE")" "status 127" "a missing interpreter"
  assert_eq "haven: exec no-interpreter: No such file or directory" "$(cat 10.err)"
  assert_contains "$DRIVE" $'keeper ended\nleft 0' "the keeper's end"
  # A command has exactly what the config's process gets: compared with
  # the same config run as a container of its own.
  args "$B" cat /proc/self/status
  run_ctr "$B"
  [ "$RC" = 0 ] || fail "plain run failed: $OUT"
  printf '%s\n' "$OUT" > plain.status
  assert_eq "$(powers plain.status)" "$(powers 8.out)" "uid, groups, no_new_privs, seccomp, capabilities"
  assert_contains "$(powers 8.out)" "Seccomp_filters:"$'\t'"2" "both seccomp profiles"
  # Every signal at its default, none blocked (the keeper's own SIGPIPE
  # and SIGCHLD settings stay with it).
  assert_eq $'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000' "$(grep -E '^Sig(Blk|Ign):' 8.out)" "signals"
}

# pid 1 of its pid namespace: the orphans of a command are reaped, and
# what a command left running ends with the keeper.
test_keeper_orphans_and_end() {
  keeper_bundle
  local id
  id=$(new_id keeper)
  drive "$id" "$PWD" \
    run sh -c '(sleep 0.2 > /dev/null 2>&1 &); exit 0' , \
    run sh -c 'sleep 100 > /dev/null 2>&1 & echo $$' , \
    run sh -c 'sleep 0.5; grep -l "^State:.*Z" /proc/[0-9]*/status' , \
    close
  [ "$DRIVE_RC" = 0 ] || fail "keeper_drive failed: $DRIVE"
  assert_eq "" "$(cat 3.out)" "zombies in the sandbox"
  assert_contains "$DRIVE" $'keeper ended\nleft 0' "a command's background process outlived the keeper"
}

# What the keeper refuses: at create, a terminal (a command gets its own
# stdio); from its caller, a message that is no request (it ends rather
# than guess, and says why on its stderr).
test_keeper_refusals() {
  keeper_bundle
  cfg "$B" '.process.terminal = true'
  drive "$(new_id keeper)" "$PWD" close
  [ "$DRIVE_RC" != 0 ] || fail "created with a terminal: $DRIVE"
  assert_contains "$DRIVE" "keeper: process.terminal is not supported"
  cfg "$B" '.process.terminal = false'
  drive "$(new_id keeper)" "$PWD" run true , garbage
  [ "$DRIVE_RC" = 0 ] || fail "keeper_drive failed: $DRIVE"
  assert_contains "$DRIVE" "haven-keeper: keeper request: 3 bytes"
  assert_contains "$DRIVE" $'\nkeeper ended' "the keeper after a malformed request"
}

# Without a pid namespace of its own, the keeper ends the commands still
# running when its socket closes (no pid 1 of theirs does it).
test_keeper_end_without_pid_namespace() {
  keeper_bundle
  cfg "$B" '.linux.namespaces |= map(select(.type != "pid"))'
  local id
  id=$(new_id keeper)
  drive "$id" "$PWD" spawn sleep 100 , spawn sh -c 'sleep 100; exit 0' , run true , close
  [ "$DRIVE_RC" = 0 ] || fail "keeper_drive failed: $DRIVE"
  assert_contains "$DRIVE" "spawn 2: pid"
  assert_contains "$DRIVE" $'keeper ended\nleft 0' "running commands outlived the keeper"
}

# The spawn path's cost and an idle keeper's memory (printed: the test
# log keeps them; the bounds are loose, for a machine under load).
test_keeper_cost() {
  keeper_bundle
  local id
  id=$(new_id keeper)
  # The keeper is idle during the pause after "pid".
  timeout -k 5 60 "$KEEPER_DRIVE" "$STATE_ROOT" "$B" "$id" "$PWD" bench 200 , pid , pause 2 , close \
    > drive.out 2>&1 &
  local drv=$! i pid=
  for i in $(seq 400); do
    pid=$(awk '/^init /{print $2}' drive.out)
    [ -n "$pid" ] && break
    kill -0 "$drv" 2>/dev/null || break
    sleep 0.05
  done
  [ -n "$pid" ] || fail "no keeper pid: $(cat drive.out)"
  sleep 0.5
  local pss
  pss=$(awk '/^Pss:/{print $2}' /proc/"$pid"/smaps_rollup)
  wait "$drv" || fail "keeper_drive failed: $(cat drive.out)"
  echo "$(grep '^bench' drive.out); idle keeper PSS ${pss} kB"
  local running
  running=$(sed -n 's/.*running \([0-9]*\) us.*/\1/p' drive.out)
  [ "$running" -lt 20000 ] || fail "spawn to running took $running us"
  [ "$pss" -lt 8192 ] || fail "idle keeper PSS $pss kB"
}
