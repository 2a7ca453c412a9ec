# Docker (dockerd -> containerd -> containerd-shim-runc-v2 -> haven-runc):
# what `docker run --runtime haven` users do, checked from the engine's
# side (exit codes, inspect, logs) and from inside the container.

# Run a container in the foreground; output in $OUT, status in $RC.
drun() {
  OUT=$(dk run --rm "${DR[@]}" --network none "$@" 2>&1 </dev/null)
  RC=$?
}

# Start a detached container NAME running ARGS...
dstart() { # NAME [docker run options] IMAGE ARGS...
  local name=$1
  shift
  dk run -d --name "$name" "${DR[@]}" --network none "$@" >/dev/null 2>run.err || fail "docker run -d $name: $(cat run.err)"
}

test_docker_registration() {
  need_docker
  local rt
  rt=$(dk info -f '{{range $k, $v := .Runtimes}}{{$k}}={{$v.Path}} {{end}}')
  assert_contains "$rt" "haven=$(readlink -f "$RUNTIME")" "docker info runtimes"
  # The daemon's own settings survived the registration.
  assert_eq false "$(jq -r .iptables "$WORK/docker/daemon.json")" "daemon.json iptables"
  # dockerd lives in a network namespace of its own, not the host's.
  [ "$(readlink "/proc/$(cat "$WORK/docker/dockerd.pid")/ns/net")" != "$(readlink /proc/self/ns/net)" ] \
    || fail "the test dockerd runs in the host's network namespace"
  assert_eq '["--policy","default"]' "$(jq -c '.runtimes["haven-default"].runtimeArgs' "$WORK/docker/daemon.json")"
  # A second install changes nothing; dockerd reloads runtimes on SIGHUP.
  local before after out
  before=$(stat -c %i:%Y "$WORK/docker/daemon.json")
  out=$(haven install docker --daemon-json "$WORK/docker/daemon.json" --runtime "$RUNTIME")
  assert_contains "$out" "already registered"
  after=$(stat -c %i:%Y "$WORK/docker/daemon.json")
  assert_eq "$before" "$after" "daemon.json rewritten by a second install"
  out=$(haven install docker --daemon-json "$WORK/docker/daemon.json" --runtime "$RUNTIME" --name haven-reload)
  # The advice names the dockerd that reads this file, not every dockerd.
  assert_contains "$out" "reload dockerd (kill -HUP $(cat "$WORK/docker/dockerd.pid"))"
  defer "dk_uninstall_runtime '$WORK/docker/daemon.json' haven-reload"
  kill -HUP "$(cat "$WORK/docker/dockerd.pid")"
  wait_for 20 sh -c "'$DOCKER_CLI' info -f '{{range \$k, \$v := .Runtimes}}{{\$k}} {{end}}' | grep -q haven-reload" \
    || fail "dockerd did not pick up a runtime added with haven install + SIGHUP"
  OUT=$(dk run --rm --runtime haven-reload --network none "$IMAGE" echo reloaded 2>&1)
  assert_eq reloaded "$OUT"
}

# `haven uninstall docker` while a container runs with a runtime that has
# arguments (--policy; without them Docker runs haven-runc itself, which
# is still there): once dockerd reloads without it, Docker has deleted
# the wrapper it ran the runtime through, its shim cannot run kill or
# delete, and Docker 20.10 reports the container stopped (it kills init
# itself) and removed, but leaves the shim behind for good, the runtime
# installed again or not (here ended by hand).  The uninstall says to
# remove such containers first.  (The engine tests themselves left shims
# behind that way, before dk_uninstall_runtime.)
test_docker_uninstall_with_running_container() {
  need_docker
  [ "$ENGINE_RUNTIME" = haven ] || skip "haven install"
  local dj=$WORK/docker/daemon.json c out t0 id shim
  dk_install_strand() {
    haven install docker --daemon-json "$dj" --runtime "$RUNTIME" --name haven-strand --policy default > install.out 2>&1 \
      || fail "haven install docker: $(cat install.out)"
    kill -HUP "$(cat "$WORK/docker/dockerd.pid")"
    wait_for 20 sh -c "'$DOCKER_CLI' info -f '{{range \$k, \$v := .Runtimes}}{{\$k}} {{end}}' | grep -qw haven-strand" \
      || fail "dockerd did not pick up haven-strand"
  }
  dk_install_strand
  defer "dk_uninstall_runtime '$dj' haven-strand"
  c=$(new_name strand)
  dk run -d --name "$c" --runtime haven-strand "$IMAGE" sleep 600 > /dev/null 2> run.err || fail "run: $(cat run.err)"
  id=$(dk inspect -f '{{.Id}}' "$c")
  out=$(haven uninstall docker --daemon-json "$dj" --name haven-strand)
  assert_contains "$out" "remove the containers that run with it first" "what uninstall says"
  kill -HUP "$(cat "$WORK/docker/dockerd.pid")"
  wait_for 20 sh -c "! '$DOCKER_CLI' info -f '{{range \$k, \$v := .Runtimes}}{{\$k}} {{end}}' | grep -qw haven-strand" \
    || fail "dockerd kept haven-strand after the reload"
  # Docker 20.10: kill through the runtime fails, dockerd kills init
  # itself after 10 s and reports the stop done, but the task cannot be
  # deleted: its shim stays.
  t0=$SECONDS
  out=$(dk stop -t 1 "$c" 2>&1)
  echo "stop: $? after $((SECONDS - t0)) s: $out"
  sleep 1
  pgrep -f "containerd-shim.* -id $id" > /dev/null || fail "no shim left: Docker deleted the task without the runtime"
  # Nor does anything later (docker rm, the runtime installed again):
  # the shim is ended here, by its pid.
  dk rm -f "$c" > /dev/null 2>&1
  dk_install_strand
  shim=$(pgrep -f "containerd-shim.* -id $id") || fail "the shim ended after all: say so in haven uninstall"
  kill -KILL $shim
}

test_docker_run_output_and_exit_codes() {
  need_docker
  drun "$IMAGE" echo hello
  assert_eq 0 "$RC" "exit status"
  assert_eq hello "$OUT"
  drun "$IMAGE" sh -c 'exit 42'
  assert_eq 42 "$RC" "exit status of sh -c 'exit 42'"
  # (pid 1 ignores signals it has no handler for: --init puts sh at pid 2)
  drun --init "$IMAGE" sh -c 'kill -KILL $$'
  assert_eq 137 "$RC" "exit status of a SIGKILLed process"
  # The runtime's error reaches the user (through the shim's log.json),
  # and docker picks the exit status from its text.
  drun "$IMAGE" /no/such/program
  assert_eq 127 "$RC" "exit status for a missing program"
  assert_contains "$OUT" 'OCI runtime create failed'
  assert_contains "$OUT" 'stat /no/such/program: no such file or directory'
  drun "$IMAGE" /etc/passwd
  assert_eq 126 "$RC" "exit status for a file that is not executable"
  assert_contains "$OUT" 'exec: "/etc/passwd": permission denied'
  drun "$IMAGE" no-such-command
  assert_eq 127 "$RC" "exit status for a command not in PATH"
  assert_contains "$OUT" 'executable file not found in $PATH'
}

test_docker_run_tty_and_stdin() {
  need_docker
  OUT=$(dk run --rm "${DR[@]}" --network none -t "$IMAGE" sh -c 'tty; stty size' 2>&1 </dev/null | tr -d '\r')
  assert_contains "$OUT" "/dev/pts/0" "docker run -t"
  OUT=$(echo from-stdin | dk run --rm "${DR[@]}" --network none -i "$IMAGE" sh -c 'cat; tty || true' 2>&1)
  assert_contains "$OUT" "from-stdin" "docker run -i"
  assert_contains "$OUT" "not a tty" "docker run -i without -t"
  with_pty $'echo typed-$((6*7))\nexit 5\n' "$DOCKER_CLI run --rm --runtime haven --network none -it $IMAGE sh"
  assert_eq 5 "$RC" "exit status of docker run -it"
  assert_contains "$OUT" "typed-42" "docker run -it"
}

test_docker_exec() {
  need_docker
  local n
  n=$(new_name exec)
  dstart "$n" -e FOO=bar -w /tmp "$IMAGE" sleep 1000
  OUT=$(dk exec "$n" sh -c 'echo $FOO $(pwd) $(id -u)' 2>&1)
  assert_eq "bar /tmp 0" "$OUT" "docker exec environment"
  OUT=$(dk exec -u 1000:2000 -w / -e FOO=baz "$n" sh -c 'echo $FOO $(pwd) $(id -u) $(id -g)' 2>&1)
  assert_eq "baz / 1000 2000" "$OUT" "docker exec -u -w -e"
  dk exec "$n" sh -c 'exit 7'
  assert_eq 7 $? "exit status of docker exec"
  OUT=$(dk exec -t "$n" tty 2>&1 | tr -d '\r')
  assert_contains "$OUT" "/dev/pts/" "docker exec -t"
  OUT=$(echo piped | dk exec -i "$n" cat 2>&1)
  assert_eq piped "$OUT" "docker exec -i"
  with_pty $'echo in-exec-$((2+3))\nexit 3\n' "$DOCKER_CLI exec -it $n sh"
  assert_eq 3 "$RC" "exit status of docker exec -it"
  assert_contains "$OUT" "in-exec-5"
  OUT=$(dk exec "$n" /no/such/program 2>&1)
  assert_eq 126 $? "exit status of docker exec of a missing program (as with runc)"
  assert_contains "$OUT" "OCI runtime exec failed"
  assert_contains "$OUT" "stat /no/such/program: no such file or directory"
  # A detached exec keeps running after docker exec returns.
  dk exec -d "$n" sh -c 'sleep 1; echo done > /tmp/detached'
  wait_for 10 dk exec "$n" test -f /tmp/detached || fail "docker exec -d did not run"
}

test_docker_stop() {
  need_docker
  local n t0 t1
  n=$(new_name stop-term)
  dstart "$n" "$IMAGE" sh -c 'trap "exit 3" TERM; while true; do sleep 0.1; done'
  sleep 0.5
  t0=$(date +%s)
  dk stop -t 20 "$n" >/dev/null || fail "docker stop failed"
  t1=$(date +%s)
  assert_eq "exited 3" "$(dk_state "$n" '{{.State.Status}} {{.State.ExitCode}}')" "state after SIGTERM"
  [ $((t1 - t0)) -lt 10 ] || fail "a container that exits on SIGTERM took $((t1 - t0)) s to stop"
  n=$(new_name stop-kill)
  dstart "$n" "$IMAGE" sh -c 'trap "" TERM; while true; do sleep 0.1; done'
  sleep 0.5
  t0=$(date +%s)
  dk stop -t 2 "$n" >/dev/null || fail "docker stop failed"
  t1=$(date +%s)
  assert_eq "exited 137" "$(dk_state "$n" '{{.State.Status}} {{.State.ExitCode}}')" "state after SIGKILL"
  [ $((t1 - t0)) -ge 2 ] || fail "SIGKILL came before the 2 s grace period"
  [ $((t1 - t0)) -lt 15 ] || fail "docker stop -t 2 took $((t1 - t0)) s"
}

test_docker_kill_signal() {
  need_docker
  local n
  n=$(new_name kill)
  dstart "$n" "$IMAGE" sh -c 'trap "echo got-USR1; exit 9" USR1; while true; do sleep 0.1; done'
  sleep 0.5
  dk kill -s USR1 "$n" >/dev/null || fail "docker kill -s USR1 failed"
  wait_for 10 sh -c "[ \"\$('$DOCKER_CLI' inspect -f '{{.State.Status}}' $n)\" = exited ]" || fail "USR1 did not end it"
  assert_eq 9 "$(dk_state "$n" '{{.State.ExitCode}}')" "exit code after USR1"
  assert_contains "$(dk logs "$n" 2>&1)" "got-USR1"
  n=$(new_name kill9)
  dstart "$n" "$IMAGE" sleep 1000
  dk kill "$n" >/dev/null || fail "docker kill failed"
  wait_for 10 sh -c "[ \"\$('$DOCKER_CLI' inspect -f '{{.State.Status}}' $n)\" = exited ]" || fail "SIGKILL did not end it"
  assert_eq 137 "$(dk_state "$n" '{{.State.ExitCode}}')"
}

test_docker_restart() {
  need_docker
  local n pid1 pid2
  n=$(new_name restart)
  dstart "$n" "$IMAGE" sleep 1000
  pid1=$(dk_state "$n" '{{.State.Pid}}')
  dk restart -t 1 "$n" >/dev/null || fail "docker restart failed"
  assert_eq running "$(dk_state "$n" '{{.State.Status}}')"
  pid2=$(dk_state "$n" '{{.State.Pid}}')
  [ "$pid1" != "$pid2" ] || fail "restart kept pid $pid1"
  # --restart: the engine restarts a container that exits.
  n=$(new_name restart-policy)
  dstart "$n" --restart on-failure:2 "$IMAGE" sh -c 'exit 1'
  wait_for 30 sh -c "[ \"\$('$DOCKER_CLI' inspect -f '{{.RestartCount}} {{.State.Status}}' $n)\" = '2 exited' ]" \
    || fail "restart policy: $(dk_state "$n" '{{.RestartCount}} {{.State.Status}}')"
}

test_docker_pause_unpause() {
  need_docker
  local n a b
  n=$(new_name pause)
  # (written with rename: a reader never sees the file truncated)
  dstart "$n" "$IMAGE" sh -c 'i=0; while true; do i=$((i+1)); echo $i > /tmp/c; mv /tmp/c /tmp/count; sleep 0.05; done'
  sleep 0.5
  dk pause "$n" >/dev/null || fail "docker pause failed"
  assert_eq paused "$(dk_state "$n" '{{.State.Status}}')"
  a=$(cat "$(dk_state "$n" '{{.GraphDriver.Data.MergedDir}}')/tmp/count")
  sleep 0.5
  b=$(cat "$(dk_state "$n" '{{.GraphDriver.Data.MergedDir}}')/tmp/count")
  assert_eq "$a" "$b" "counter of a paused container"
  OUT=$(dk exec "$n" true 2>&1) && fail "docker exec into a paused container succeeded"
  assert_contains "$OUT" "paused"
  dk unpause "$n" >/dev/null || fail "docker unpause failed"
  assert_eq running "$(dk_state "$n" '{{.State.Status}}')"
  sleep 0.5
  b=$(dk exec "$n" cat /tmp/count)
  [ "$b" -gt "$a" ] || fail "counter did not advance after unpause ($a -> $b)"
}

test_docker_update() {
  need_docker
  need_runtime_update
  local n
  n=$(new_name update)
  dstart "$n" "$IMAGE" sleep 1000
  OUT=$(dk update --memory 64m --memory-swap 64m --cpus 0.5 --pids-limit 50 "$n" 2>&1) \
    || fail "docker update failed: $OUT"
  OUT=$(dk exec "$n" sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max' | xargs)
  assert_contains "$OUT" "67108864" "memory limit after update"
  assert_contains "$OUT" "50" "pids limit after update"
  assert_contains "$OUT" "50000" "cpu quota after update"
  assert_eq 67108864 "$(dk_state "$n" '{{.HostConfig.Memory}}')"
}

test_docker_stats_and_top() {
  need_docker
  local n
  n=$(new_name stats)
  # (sh runs its last command with exec: two processes)
  dstart "$n" "$IMAGE" sh -c 'sleep 1000 & sleep 1001'
  wait_for 10 sh -c "'$DOCKER_CLI' top $n | grep -q 'sleep 1000'" || fail "docker top: $(dk top "$n" 2>&1)"
  OUT=$(dk top "$n" 2>&1)
  assert_contains "$OUT" "sleep 1001" "docker top"
  assert_contains "$OUT" "sleep 1000" "docker top"
  OUT=$(dk stats --no-stream --format '{{.Name}} {{.MemUsage}} {{.PIDs}}' "$n" 2>&1)
  assert_contains "$OUT" "$n " "docker stats"
  [[ "$OUT" =~ \ 2$ ]] || fail "docker stats: expected 2 pids: $OUT"
  [[ "$OUT" != *" 0B /"* ]] || fail "docker stats reports no memory use: $OUT"
}

test_docker_logs() {
  need_docker
  local n
  n=$(new_name logs)
  dstart "$n" "$IMAGE" sh -c 'echo to-stdout; echo to-stderr >&2; sleep 1000'
  wait_for 10 sh -c "'$DOCKER_CLI' logs $n 2>&1 | grep -q to-stderr" || fail "logs never showed up"
  assert_eq to-stdout "$(dk logs "$n" 2>/dev/null)" "stdout log"
  assert_eq to-stderr "$(dk logs "$n" 2>&1 >/dev/null)" "stderr log"
}

test_docker_init() {
  need_docker
  # An orphan (the inner sh's background sleep) is reaped by docker-init.
  drun --init "$IMAGE" sh -c 'cat /proc/1/cmdline | tr "\0" " "; echo; sh -c "sleep 0.2 &"; sleep 1;
    echo zombies=$(ps -o stat | grep -c "^Z")'
  assert_eq 0 "$RC" "docker run --init: $OUT"
  assert_contains "$OUT" "/sbin/docker-init -- sh" "pid 1 with --init"
  assert_contains "$OUT" "zombies=0"
}

test_docker_read_only_and_tmpfs() {
  need_docker
  drun --read-only --tmpfs /scratch:size=1m,mode=1777 "$IMAGE" sh -c \
    'touch /root-file 2>&1; echo rc=$?; touch /scratch/f && echo tmpfs-ok; grep " /scratch " /proc/mounts'
  assert_contains "$OUT" "Read-only file system" "--read-only root"
  assert_contains "$OUT" "rc=1"
  assert_contains "$OUT" "tmpfs-ok"
  assert_contains "$OUT" "tmpfs /scratch tmpfs rw,nosuid,nodev,noexec"
  assert_contains "$OUT" "size=1024k"
}

test_docker_bind_mounts_and_volumes() {
  need_docker
  mkdir -p "$PWD/data"
  echo from-host > "$PWD/data/in"
  drun -v "$PWD/data:/data" "$IMAGE" sh -c 'cat /data/in; echo from-container > /data/out'
  assert_eq from-host "$OUT"
  assert_eq from-container "$(cat "$PWD/data/out")" "file written through a bind mount"
  drun -v "$PWD/data:/data:ro" "$IMAGE" sh -c 'echo x > /data/ro 2>&1'
  assert_contains "$OUT" "Read-only file system" "read-only bind"
  [ -e "$PWD/data/ro" ] && fail "write through a read-only bind reached the host"
  local vol
  vol=$(new_name vol)
  drun -v "$vol:/v" "$IMAGE" sh -c 'echo kept > /v/f'
  drun -v "$vol:/v" "$IMAGE" cat /v/f
  assert_eq kept "$OUT" "named volume content across containers"
}

test_docker_user() {
  need_docker
  drun --user 65534:65534 "$IMAGE" id
  assert_eq "uid=65534(nobody) gid=65534(nobody) groups=65534(nobody)" "$OUT"
  drun --user 1000 --group-add 2000 "$IMAGE" id
  assert_contains "$OUT" "uid=1000(user) gid=1000(user)"
  assert_contains "$OUT" "2000(extra)"
  drun --user 1000 "$IMAGE" sh -c 'touch /root/x 2>&1'
  assert_contains "$OUT" "Permission denied" "uid 1000 writing /root"
}

test_docker_capabilities() {
  need_docker
  drun --cap-drop ALL "$IMAGE" sh -c 'grep -E "^Cap(Eff|Bnd|Prm)" /proc/self/status | awk "{print \$2}" | sort -u'
  assert_eq 0000000000000000 "$OUT" "capabilities with --cap-drop ALL"
  drun --cap-drop ALL "$IMAGE" chown 1000 /tmp
  [ "$RC" != 0 ] || fail "chown worked without CAP_CHOWN"
  drun "$IMAGE" ip link set lo down
  [ "$RC" != 0 ] || fail "ip link set worked without CAP_NET_ADMIN"
  drun --cap-add NET_ADMIN "$IMAGE" sh -c 'ip link set lo down && echo net-admin-ok'
  assert_eq net-admin-ok "$OUT" "--cap-add NET_ADMIN"
}

test_docker_no_new_privileges() {
  need_docker
  drun --security-opt no-new-privileges "$IMAGE" grep NoNewPrivs /proc/self/status
  assert_contains "$OUT" "NoNewPrivs:	1"
  drun "$IMAGE" grep NoNewPrivs /proc/self/status
  assert_contains "$OUT" "NoNewPrivs:	0"
}

test_docker_seccomp_profile() {
  need_docker
  cat > profile.json <<'EOF'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
              {"names": ["chmod", "fchmodat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}]}
EOF
  drun --security-opt "seccomp=$PWD/profile.json" "$IMAGE" sh -c 'mkdir /tmp/d 2>&1; chmod 600 /tmp 2>&1; echo end'
  assert_contains "$OUT" "can't create directory '/tmp/d': Operation not permitted"
  assert_contains "$OUT" "Function not implemented"
  drun "$IMAGE" sh -c 'mkdir /tmp/d && echo mkdir-ok'
  assert_eq mkdir-ok "$OUT" "mkdir under Docker's default profile"
  # Docker's default profile is in force: unshare is refused.
  drun "$IMAGE" unshare -U true
  [ "$RC" != 0 ] || fail "unshare -U allowed under the default seccomp profile"
}

test_docker_pids_limit() {
  need_docker
  drun --pids-limit 10 "$IMAGE" sh -c 'for i in $(seq 20); do sleep 5 & done 2>&1 | head -1; cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max'
  assert_contains "$OUT" "can't fork" "20 processes under --pids-limit 10"
  assert_contains "$OUT" "10"
}

test_docker_memory_oom() {
  need_docker
  local n
  n=$(new_name oom)
  OUT=$(dk run --name "$n" "${DR[@]}" --network none -m 32m --memory-swap 32m "$IMAGE" sh -c \
    'x=a; while true; do x=$x$x; done' 2>&1)
  assert_eq "true 137" "$(dk_state "$n" '{{.State.OOMKilled}} {{.State.ExitCode}}')" "OOMKilled and exit code"
  assert_eq 33554432 "$(dk_state "$n" '{{.HostConfig.Memory}}')"
}

test_docker_rm_force_running() {
  need_docker
  local n id root
  n=$(new_name rmf)
  dstart "$n" "$IMAGE" sleep 1000
  id=$(dk_state "$n" '{{.Id}}')
  dk rm -f "$n" >/dev/null || fail "docker rm -f failed"
  dk inspect "$n" >/dev/null 2>&1 && fail "container still exists after rm -f"
  # Nothing left in the runtime's state root (Docker 20.10's layout:
  # <exec-root>/runtime-runc/<containerd namespace>/<id>).
  for root in "$WORK"/docker/exec/runtime-runc/*; do
    [ -e "$root/$id" ] && fail "runtime state of $id left behind in $root"
  done
  [ -d "/sys/fs/cgroup/memory/docker/$id" ] && fail "cgroup of $id left behind"
  return 0
}

test_docker_parallel_20() {
  need_docker
  local i pids=() names=()
  for i in $(seq 20); do
    names+=("$CTR_PREFIX-par-$i")
    dk run -d --name "$CTR_PREFIX-par-$i" "${DR[@]}" --network none "$IMAGE" sleep 1000 > "par-$i.out" 2>&1 &
    pids+=($!)
  done
  local bad=0
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { bad=$((bad + 1)); echo "start $i: $(cat "par-$((i + 1)).out")" >&2; }
  done
  [ $bad = 0 ] || fail "$bad of 20 parallel starts failed: $(cat par-*.out | grep -iv '^[0-9a-f]\{64\}$' | head -2)"
  local running
  running=$(dk ps -q --filter "name=$CTR_PREFIX-par-" | wc -l)
  assert_eq 20 "$running" "running containers"
  for n in "${names[@]}"; do
    assert_eq haven "$(dk_state "$n" '{{.HostConfig.Runtime}}')"
  done
  dk rm -f "${names[@]}" >/dev/null || fail "removing the 20 containers failed"
  assert_eq 0 "$(dk ps -aq --filter "name=$CTR_PREFIX-par-" | wc -l)" "containers left"
}

test_docker_network_none() {
  need_docker
  drun "$IMAGE" sh -c 'ls /sys/class/net | xargs'
  assert_eq lo "$OUT" "interfaces with --network none"
}

test_docker_internal_network() {
  need_docker
  local net srv ip
  net=$(new_name net)
  dk network create --internal "$net" >/dev/null 2>net.err || fail "network create --internal: $(cat net.err)"
  srv=$(new_name srv)
  dk run -d --name "$srv" "${DR[@]}" --network "$net" "$IMAGE" httpd -f -p 8080 -h /www >/dev/null 2>run.err \
    || fail "server: $(cat run.err)"
  ip=$(dk_state "$srv" "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}")
  [[ "$ip" =~ ^[0-9.]+$ ]] || fail "server has no address on $net: $ip"
  OUT=$(dk run --rm "${DR[@]}" --network "$net" "$IMAGE" sh -c \
    "ping -c 1 -W 5 $srv >/dev/null && echo ping-name-ok; ping -c 1 -W 5 $ip >/dev/null && echo ping-ip-ok;
     printf 'GET /index.html HTTP/1.0\r\n\r\n' | nc -w 5 $srv 8080" 2>&1)
  assert_contains "$OUT" "ping-name-ok" "ping by name"
  assert_contains "$OUT" "ping-ip-ok" "ping by address"
  assert_contains "$OUT" "served by haven" "http between the two containers"
  assert_eq true "$(dk network inspect -f '{{.Internal}}' "$net")" "network is internal"
}

test_docker_policy_runtime_args() {
  need_docker
  # haven-default = haven-runc --policy default (daemon.json runtimeArgs):
  # the policy turns no_new_privs on and makes the root read-only.
  OUT=$(dk run --rm --runtime haven-default --network none "$IMAGE" sh -c \
    'grep NoNewPrivs /proc/self/status; touch /x 2>&1' 2>&1)
  assert_contains "$OUT" "NoNewPrivs:	1"
  assert_contains "$OUT" "touch: /x: Read-only file system"
  drun "$IMAGE" sh -c 'grep NoNewPrivs /proc/self/status; touch /x && echo root-writable'
  assert_eq "NoNewPrivs:	0
root-writable" "$OUT" "the plain haven runtime applies no policy"
}

test_docker_devices() {
  need_docker
  drun --device /dev/zero:/dev/myzero "$IMAGE" sh -c 'head -c 4 /dev/myzero | od -An -tx1 | xargs; stat -c "%t:%T" /dev/myzero'
  assert_eq "00 00 00 00
1:5" "$OUT" "--device /dev/zero:/dev/myzero"
  # runc's defaults under Docker's deny-all device rules: mknod of any
  # node, /dev/net/tun usable, nothing else.
  drun "$IMAGE" sh -c 'mknod /tmp/tun c 10 200 && cat /tmp/tun 2>&1; mknod /tmp/loop b 7 0 && echo block-mknod-ok;
    mknod /tmp/mem c 1 1 && head -c 1 /tmp/mem 2>&1; head -c 1 /dev/mem 2>&1'
  assert_eq "cat: read error: File descriptor in bad state
block-mknod-ok
head: /tmp/mem: Operation not permitted
head: /dev/mem: No such file or directory" "$OUT"
}

test_docker_privileged_and_shared_namespaces() {
  need_docker
  drun --privileged "$IMAGE" sh -c 'grep Seccomp: /proc/self/status; mkdir /mnt; mount -t tmpfs none /mnt && echo mount-ok'
  assert_eq "Seccomp:	0
mount-ok" "$OUT" "--privileged"
  local a
  a=$(new_name ns)
  dstart "$a" --ipc shareable "$IMAGE" sleep 1000
  OUT=$(dk run --rm "${DR[@]}" --network "container:$a" --pid "container:$a" --ipc "container:$a" "$IMAGE" \
    sh -c 'ps -o comm | grep -c "^sleep"; hostname' 2>&1)
  assert_eq "1
$(dk exec "$a" hostname)" "$OUT" "--pid/--network/--ipc container:"
  # Its init shares the pid namespace: when it exits the shim kills what
  # is left in its cgroup (kill --all).
  local b
  b=$(new_name ns-b)
  dstart "$b" --pid "container:$a" "$IMAGE" sh -c 'sleep 999 & sleep 1; true'
  wait_for 20 sh -c "[ \"\$('$DOCKER_CLI' inspect -f '{{.State.Status}}' $b)\" = exited ]" || fail "$b did not exit"
  wait_for 10 sh -c "! '$DOCKER_CLI' exec $a ps -o comm,args | grep -q 'sleep 999'" \
    || fail "the exited container's background process survived: $(dk exec "$a" ps)"
  drun --pid host "$IMAGE" sh -c '[ $(ps -o pid | wc -l) -gt 5 ] && echo host-pids'
  assert_eq host-pids "$OUT" "--pid host"
}

# A workspace and a home as devcontainers and compose mount them, with
# canary secrets: the workspace's .env and a private key in it, an ssh
# key mounted into the home.  Sets WS and SSHDIR.
make_policy_workspace() {
  WS=$(mktemp -d "$WORK/ws.XXXXXX")
  SSHDIR=$(mktemp -d "$WORK/ssh.XXXXXX")
  mkdir -p "$WS/.git/hooks" "$WS/sub"
  printf '[core]\n' > "$WS/.git/config"
  echo CANARY-ENV > "$WS/.env"
  echo CANARY-KEY > "$WS/sub/id_rsa"
  echo visible > "$WS/keep.txt"
  echo CANARY-SSH > "$SSHDIR/id_ed25519"
  chmod -R a+rwX "$WS"
}

# What the default policy promises, asked from inside the container.
POLICY_CHECK='
echo "env:[$(cat /workspace/.env 2>&1)] key:[$(cat /workspace/sub/id_rsa 2>&1)]"
echo "ssh:[$(cat $HOME/.ssh/id_ed25519 2>&1 | sed "s/.*: //")] keep:[$(cat /workspace/keep.txt)]"
echo "image-home:[$(ls -A $HOME | tr "\n" " ")]"
touch /workspace/new-$$ && rm /workspace/new-$$ && echo workspace-writable
touch /tmp/x-$$ && rm /tmp/x-$$ && echo tmp-writable
touch $HOME/x-$$ && rm $HOME/x-$$ && echo home-writable
for f in /etc/x /usr/x /workspace/.git/hooks/pre-commit /workspace/.git/config; do
  (echo x >> $f) 2>&1 | sed "s/.*: //" | sed "s|^|$f: |"
done
echo "FOO:[${FOO:-}] HAVEN:[${HAVEN:-}] HOME:[$HOME]"
grep -E "^(CapEff|NoNewPrivs)" /proc/self/status
syscall_probe ptrace io_uring tiocsti setuid-file userns
cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null
cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null
for d in / /tmp $HOME; do
  echo "$d $(grep " $d " /proc/mounts | tail -1 | grep -o "size=[0-9a-z]*" || echo unbounded)"
done
(echo x > /x-$$) 2>&1 | sed "s/.*: //"
'
# The default policy's memory for engine containers: 75% of the host's,
# whole MiB (policy/host_share.c).
DEFAULT_CONTAINER_MEMORY=$(( ($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024 / 100 * 75) & ~1048575 ))
POLICY_WANT_ROOT='env:[] key:[]
ssh:[No such file or directory] keep:[visible]
image-home:[.ssh ]
workspace-writable
tmp-writable
home-writable
/etc/x: Read-only file system
/usr/x: Read-only file system
/workspace/.git/hooks/pre-commit: Read-only file system
/workspace/.git/config: Read-only file system
FOO:[] HAVEN:[1] HOME:[/root]
CapEff:	0000000000000000
NoNewPrivs:	1
ptrace: Operation not permitted
io_uring: Operation not permitted
tiocsti: Operation not permitted
setuid-file: Operation not permitted
userns: Operation not permitted
4096
'"$DEFAULT_CONTAINER_MEMORY"'
/ unbounded
/tmp size=1048576k
/root size=1048576k
Read-only file system'

# The default policy end to end: through a runtime registered with --policy
# default, from init and from `docker exec` (also --privileged): the
# canaries are unreadable, nothing outside the workspace, the home and
# /tmp is writable, .git/hooks and .git/config are read-only, -e FOO
# does not pass, no capabilities, no_new_privs, ptrace, io_uring, TIOCSTI,
# set-ID files and user namespaces refused, a pids limit.
test_docker_policy_default_whole() {
  need_docker
  make_policy_workspace
  local c
  c=$(new_name pol)
  OUT=$(dk run --rm --runtime haven-default -e FOO=1 -v "$WS:/workspace" -v "$SSHDIR:/root/.ssh" -w /workspace \
    "$IMAGE" sh -c "$POLICY_CHECK" 2>&1)
  # -e FOO=1 is dropped, and create says so (names only, never values).
  assert_eq "haven-runc: note: policy default: env: not passed into the container (env.pass does not name them): FOO
$POLICY_WANT_ROOT" "$OUT" "init under --policy default"
  dk run -d --name "$c" --runtime haven-default -e FOO=1 -v "$WS:/workspace" -v "$SSHDIR:/root/.ssh" \
    -w /workspace "$IMAGE" sleep 1000 >/dev/null 2>run.err || fail "docker run -d: $(cat run.err)"
  defer "dk rm -f $c"
  OUT=$(dk exec "$c" sh -c "$POLICY_CHECK" 2>&1)
  assert_eq "$POLICY_WANT_ROOT" "$OUT" "docker exec under --policy default"
  OUT=$(dk exec --privileged -e FOO=2 "$c" sh -c "$POLICY_CHECK" 2>&1)
  assert_eq "$POLICY_WANT_ROOT" "$OUT" "docker exec --privileged is tightened, never widened"
  # The canaries are still there, unchanged, on the host.
  assert_eq "CANARY-ENV" "$(cat "$WS/.env")"
  assert_eq "" "$(cat "$WS/.git/hooks/pre-commit" 2>/dev/null)" "hook written"
}

# Under Docker: one policied container renames a parent of a
# hidden file back and forth while others of the same workspace are
# created.  Their walk for hidden files must not miss it and their masks
# must not be skipped: each container pins (binds onto itself) every
# directory on the way to a hidden file, so the renamer cannot move it.
test_docker_policy_concurrent_rename_keeps_secret_hidden() {
  need_docker
  concurrent_rename_race dk --runtime haven-default
}

# concurrent_rename_race CLI RUN-OPTION...: the race above, with every
# container made by `CLI run RUN-OPTION...` (dk or pm).
concurrent_rename_race() {
  local cli=$1 r i seen=
  shift
  make_policy_workspace
  mkdir -p "$WS/race/dir"
  echo CANARY-RACE > "$WS/race/dir/.env"
  chmod -R a+rwX "$WS"
  r=$(new_name renamer)
  "$cli" run -d --name "$r" "$@" -v "$WS:/workspace" -w /workspace "$IMAGE" sh -c '
    echo > started; i=0
    while [ ! -e stop ] && [ $i -lt 200000 ]; do
      mv race race2 2>/dev/null; mv race2 race 2>/dev/null; i=$((i + 1))
    done
    mv race race2 2>&1 | head -1 > refused; sleep 1000' >/dev/null 2>run.err || fail "run -d: $(cat run.err)"
  defer "$cli rm -f $r >/dev/null 2>&1; [ -d '$WS/race' ] || mv '$WS/race2' '$WS/race'; true"
  wait_for 30 test -e "$WS/started" || fail "the renaming container did not start: $("$cli" logs "$r" 2>&1)"
  for i in $(seq 10); do
    OUT=$("$cli" run --rm "$@" -v "$WS:/workspace" -w /workspace "$IMAGE" \
      sh -c 'cat race/dir/.env race2/dir/.env 2>/dev/null; echo end' 2>&1)
    case $OUT in *CANARY-RACE*) seen="$seen run $i: $OUT;" ;; esac
  done
  touch "$WS/stop"
  wait_for 30 test -e "$WS/refused"
  [ -z "$seen" ] || fail "a container created during the renames read the hidden race/dir/.env:$seen"
  assert_contains "$(tr A-Z a-z < "$WS/refused")" "busy" "the renamer's mv of a pinned directory"
}

# ~ is the home of the container's user from the image's passwd (an
# empty comment field as useradd writes it): hidden behind an empty
# tmpfs the user owns.
test_docker_policy_home_of_image_user() {
  need_docker
  drun --runtime haven-default --user 1001:1001 "$IMAGE" sh -c \
    'echo "$HOME"; ls -A "$HOME" | wc -l; stat -c "%u %a" "$HOME"; touch "$HOME/.gitconfig" && echo ok'
  assert_eq "/home/dev
0
1001 700
ok" "$OUT"
}

# Init runs as root, the engine execs as the image's user dev (what a
# devcontainer with only remoteUser does): dev's home is hidden too, an
# empty tmpfs dev owns and can write, without the image's .profile, and a
# key the engine mounts into it is masked like ~/.ssh in root's home.
test_docker_policy_home_of_exec_user() {
  need_docker
  local c key
  key=$(mktemp -d "$WORK/key.XXXXXX")
  echo CANARY-KEY > "$key/id_ed25519"
  c=$(new_name exec-user)
  dk run -d --name "$c" --runtime haven-default -v "$key:/home/dev/.ssh" "$IMAGE" sleep 1000 \
    >/dev/null 2>run.err || fail "docker run -d: $(cat run.err)"
  defer "dk rm -f $c"
  OUT=$(dk exec -u dev "$c" sh -c 'echo "$HOME"; ls -A "$HOME"; stat -c "%u %a" "$HOME";
    cat "$HOME/.ssh/id_ed25519" 2>&1 | grep -c CANARY; touch "$HOME/.gitconfig" && echo ok' 2>&1)
  assert_eq "/home/dev
.ssh
1001 700
0
ok" "$OUT" "the exec user's home"
  OUT=$(dk exec "$c" sh -c 'stat -c "%u %a" /root; ls -A /root | wc -l; cat /home/dev/.ssh/id_ed25519 2>&1 | grep -c CANARY' 2>&1)
  assert_eq "0 700
0
0" "$OUT" "root's home, and dev's key seen from root"
}

# The engine's own socket bound into a policed container would let the
# agent start a privileged container: create refuses it, bound as a
# socket or inside the directory that holds it; the plain runtime lets
# Docker do what it is told.
test_docker_policy_engine_socket_refused() {
  need_docker
  drun --runtime haven-default -v "$DOCKER_SOCK:/var/run/docker.sock" "$IMAGE" true
  [ "$RC" != 0 ] || fail "a policed container started with the docker socket bound in"
  assert_contains "$OUT" "/var/run/docker.sock binds the socket $DOCKER_SOCK into a policed container"
  drun --runtime haven-default -v "$(dirname "$DOCKER_SOCK"):/host-run" "$IMAGE" true
  [ "$RC" != 0 ] || fail "a policed container started with the docker socket's directory bound in"
  assert_contains "$OUT" "which holds the engine socket docker.sock, into a policed container"
  drun --runtime haven -v "$DOCKER_SOCK:/var/run/docker.sock" "$IMAGE" test -S /var/run/docker.sock
  assert_eq 0 "$RC" "the docker socket under the plain runtime ($OUT)"
}

# --policy strict: no shells (Landlock inside the container, the shell
# binaries masked), a read-only workspace, tighter limits.
test_docker_policy_strict() {
  need_docker
  make_policy_workspace
  drun --runtime haven-strict -v "$WS:/workspace" "$IMAGE" /usr/bin/syscall_probe ptrace
  assert_eq "ptrace: Operation not permitted" "$OUT" "a program runs under strict"
  # project_writable: false: the workspace is read-only.
  drun --runtime haven-strict -v "$WS:/workspace" "$IMAGE" /usr/bin/syscall_probe write-workspace
  assert_contains "$OUT" "write-workspace: Read-only file system"
  drun --runtime haven-strict -v "$WS:/workspace" "$IMAGE" sh -c 'echo shell ran'
  [ "$RC" != 0 ] || fail "a shell ran under strict: $OUT"
  assert_not_contains "$OUT" "shell ran"
  local c
  c=$(new_name strict)
  dk run -d --name "$c" --runtime haven-strict -v "$WS:/workspace" "$IMAGE" /usr/bin/syscall_probe sleep \
    >/dev/null 2>run.err || fail "docker run -d: $(cat run.err)"
  defer "dk rm -f $c"
  assert_eq "io_uring: Operation not permitted" "$(dk exec "$c" /usr/bin/syscall_probe io_uring 2>&1)" "exec of a program"
  OUT=$(dk exec "$c" sh -c 'echo shell ran' 2>&1)
  assert_not_contains "$OUT" "shell ran" "docker exec of a shell under strict"
}

# Under the hidden home, what the engine mounts into it shows only where
# home_allow names it (default: ~/.cache); a protected path in the
# workspace that is a symbolic link (planted by an earlier run) makes
# create fail and name it, instead of protecting the link's target.
test_docker_policy_home_mounts_and_planted_link() {
  need_docker
  make_policy_workspace
  local cache other
  cache=$(mktemp -d "$WORK/cache.XXXXXX")
  other=$(mktemp -d "$WORK/other.XXXXXX")
  echo cached > "$cache/f"
  echo other > "$other/f"
  drun --runtime haven-default -v "$cache:/root/.cache" -v "$other:/root/other" "$IMAGE" sh -c \
    'cat /root/.cache/f; cat /root/other/f 2>&1 | sed "s/.*: //"'
  assert_eq "cached
No such file or directory" "$OUT"
  rm -rf "$WS/.git/hooks"
  mkdir "$WS/elsewhere"
  ln -s ../elsewhere "$WS/.git/hooks"
  drun --runtime haven-default -v "$WS:/workspace" "$IMAGE" true
  [ "$RC" != 0 ] || fail "a container started with .git/hooks a symbolic link"
  assert_contains "$OUT" 'filesystem.protect ".git/hooks": /workspace/.git/hooks is a symbolic link; remove it'
  # A link further up (.git itself) is refused the same way.
  rm "$WS/.git/hooks"
  mv "$WS/.git" "$WS/real-git"
  ln -s real-git "$WS/.git"
  drun --runtime haven-default -v "$WS:/workspace" "$IMAGE" true
  [ "$RC" != 0 ] || fail "a container started with .git a symbolic link"
  assert_contains "$OUT" 'filesystem.protect ".git/hooks": /workspace/.git/hooks is or passes through a symbolic link'
}

# The audit trail of a policed container (runtime/monitor/include/container_monitor.h).
# Denied calls from init and from `docker exec` are answered EPERM by the
# container's monitor and recorded in /var/log/haven/containers/<id>.jsonl;
# `docker rm` ends the monitor and the trail stays.
test_docker_policy_audit_trail() {
  need_docker
  [ "$ENGINE_RUNTIME" = haven ] || skip "haven's audit monitor"
  local n id trail m
  n=$(new_name audit)
  dk run -d --name "$n" --runtime haven-default --network none "$IMAGE" \
    sh -c 'chroot / true 2>/tmp/init.err; echo $? > /tmp/init.rc; sleep 1000' >/dev/null 2>run.err \
    || fail "docker run: $(cat run.err)"
  id=$(dk_state "$n" '{{.Id}}')
  trail=/var/log/haven/containers/$id.jsonl
  defer "rm -f '$trail'"
  wait_for 20 dk exec "$n" test -s /tmp/init.rc || fail "init did not run its denied call"
  assert_eq "1 chroot: can't change root directory to '/': Operation not permitted" \
    "$(dk exec "$n" cat /tmp/init.rc) $(dk exec "$n" cat /tmp/init.err)" "init's chroot"
  OUT=$(dk exec "$n" sh -c 'unshare -m true 2>&1; echo rc=$?' 2>&1)
  assert_eq "unshare: unshare(0x20000): Operation not permitted
rc=1" "$OUT" "docker exec's unshare"
  jq -se --arg id "$id" '
    (.[0] | .event == "start" and .policy == "default" and .container == $id and .command[0] == "sh")
    and (map(select(.event == "denied" and .syscall == "chroot" and .process == "init" and .container == $id)) | length == 1)
    and (map(select(.event == "denied" and .syscall == "unshare" and .process == "exec" and .comm == "unshare")) | length == 1)' \
    "$trail" >/dev/null || fail "trail: $(cat "$trail" 2>&1)"
  m=$(jq -s '.[0].monitor_pid' "$trail")
  [ "$(cat /proc/$m/comm 2>/dev/null)" = haven-monitor ] || fail "no monitor $m while the container runs"
  dk rm -f "$n" >/dev/null || fail "docker rm -f"
  wait_for 10 sh -c "[ ! -e /proc/$m ] || grep -q '^State:.*Z' /proc/$m/status" || fail "monitor $m outlived docker rm"
  jq -se '.[-1].event == "exit"' "$trail" >/dev/null || fail "no exit record: $(tail -1 "$trail")"
}

# The image user's git identity under --policy default (without it
# the hidden home hid the image's ~/.gitconfig and commits failed with
# "Please tell me who you are").  The hidden home gets its own
# ~/.gitconfig with user.name and user.email of the image's (from
# ~/.config/git/config then ~/.gitconfig, the last winning), nothing else
# (the token in it stays hidden), writable by the user, for root and for
# the image's user dev alike; git in the container commits with it.  On
# 2e9dd27 the home was empty.
test_docker_policy_image_git_identity() {
  need_docker
  command -v git >/dev/null && command -v useradd >/dev/null || skip "git or useradd missing (the test image is built from them)"
  devc_images
  local ctx img=havenbox-gitid:test c
  ctx=$(mktemp -d "$WORK/gitid.XXXXXX")
  printf '[user]\n\tname = Image User\n[url "https://x:tok-in-image@example.com/"]\n\tinsteadOf = https://example.com/\n' > "$ctx/gitconfig"
  printf '[user]\n\temail = "image@example.invalid" ; a comment\n\tname = Overridden by ~/.gitconfig\n' > "$ctx/xdg"
  printf '# only the XDG file\n[User]\n  Name = Dev "Q." User\n' > "$ctx/dev-xdg"
  printf 'FROM %s\nRUN useradd -m -u 1001 dev\nCOPY gitconfig /root/.gitconfig\nCOPY xdg /root/.config/git/config\nCOPY dev-xdg /home/dev/.config/git/config\n' \
    "$DEVC_BASE" > "$ctx/Dockerfile"
  dk build -q -t "$img" "$ctx" >build.log 2>&1 || fail "docker build: $(tail -3 build.log)"
  c=$(new_name gitid)
  dstart "$c" --runtime haven-default "$img" sleep 1000
  defer "dk rm -f $c >/dev/null 2>&1; dk rmi -f $img >/dev/null 2>&1"
  OUT=$(dk exec "$c" sh -c 'cat "$HOME/.gitconfig"; stat -c "%u %a" "$HOME/.gitconfig"; git config --global user.name;
    git config --global user.email; ls -A "$HOME"' 2>&1)
  assert_not_contains "$OUT" tok-in-image
  assert_not_contains "$OUT" insteadOf
  assert_contains "$OUT" "0 644
Image User
image@example.invalid
.gitconfig"
  # git commits with it, and git config --global may change it.
  OUT=$(dk exec -w /tmp "$c" sh -c 'git init -q r 2>/dev/null && cd r && git commit -q --allow-empty -m one && git log -1 --format="%an <%ae>";
    git config --global user.name Changed && git config --global user.name' 2>&1)
  assert_eq "Image User <image@example.invalid>
Changed" "$OUT" "a commit in the container"
  OUT=$(dk exec -u dev "$c" sh -c 'git config --global user.name; stat -c "%u %a" "$HOME/.gitconfig"' 2>&1)
  assert_eq 'Dev Q. User
1001 644' "$OUT" "the image user dev's identity"
}

# The default policy's CPU share for engine containers (without it one
# container could take every CPU of the host): a CFS quota of 90% of the
# CPUs the runtime may use; a stricter --cpus of the engine stays.  On
# 2e9dd27 the quota was unlimited.
test_docker_policy_default_cpu_share() {
  need_docker
  local want
  want=$(( $(nproc) * 100000 * 90 / 100 ))
  drun --runtime haven-default "$IMAGE" sh -c \
    'cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"'
  assert_eq "$want 100000" "$OUT" "cpu quota and period under --policy default"
  drun --runtime haven-default --cpus 0.5 "$IMAGE" sh -c \
    'cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"'
  assert_eq "50000 100000" "$OUT" "docker run --cpus 0.5 under --policy default"
}
