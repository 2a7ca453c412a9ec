# Podman (rootful; podman -> conmon -> haven-runc), with haven registered
# by `haven install podman` and chosen with --runtime.

prun() {
  OUT=$(pm run --rm "${PR[@]}" --network none "$@" 2>&1 </dev/null)
  RC=$?
}

pstart() { # NAME [podman run options] IMAGE ARGS...
  local name=$1
  shift
  pm run -d --name "$name" "${PR[@]}" --network none "$@" >/dev/null 2>run.err || fail "podman run -d $name: $(cat run.err)"
}

test_podman_run_and_exit_codes() {
  need_podman
  prun "$IMAGE" echo hello
  assert_eq 0 "$RC"
  assert_eq hello "$OUT"
  assert_eq "$(readlink -f "$RUNTIME")" "$(pm info --runtime haven -f '{{.Host.OCIRuntime.Path}}')" "podman info runtime path"
  prun "$IMAGE" sh -c 'exit 42'
  assert_eq 42 "$RC" "exit status"
  # The runtime's message (from the JSON log Podman asked for) is what
  # Podman shows, and its text picks the exit status.
  prun "$IMAGE" /no/such/program
  assert_eq 127 "$RC" "exit status for a missing program"
  assert_contains "$OUT" 'Error: haven: create container'
  assert_contains "$OUT" 'exec: "/no/such/program": stat /no/such/program: no such file or directory'
  assert_not_contains "$OUT" "container does not exist"
  prun "$IMAGE" /etc/passwd
  assert_eq 126 "$RC" "exit status for a file that is not executable"
  assert_contains "$OUT" 'exec: "/etc/passwd": permission denied'
  prun --annotation run.haven.policy=no-such-policy "$IMAGE" true
  [ "$RC" != 0 ] || fail "a container asking for a missing policy ran"
  assert_contains "$OUT" 'policy "no-such-policy" not found'
}

test_podman_runtime_by_path() {
  need_podman
  # --runtime PATH: Podman knows the runtime by its file name, which the
  # drop-in lists in runtime_supports_json too.
  OUT=$(pm run --rm --runtime "$RUNTIME" --network none "$IMAGE" /no/such/program 2>&1)
  assert_contains "$OUT" 'stat /no/such/program: no such file or directory'
  OUT=$(pm run --rm --runtime "$RUNTIME" --network none "$IMAGE" echo by-path 2>&1)
  assert_eq by-path "$OUT"
}

test_podman_tty() {
  need_podman
  OUT=$(pm run --rm "${PR[@]}" --network none -t "$IMAGE" tty 2>&1 </dev/null | tr -d '\r')
  assert_contains "$OUT" "/dev/pts/0" "podman run -t"
  OUT=$(echo from-stdin | pm run --rm "${PR[@]}" --network none -i "$IMAGE" cat 2>&1)
  assert_eq from-stdin "$OUT" "podman run -i"
  with_pty $'echo typed-$((6*7))\nexit 4\n' "podman ${PODMAN_GLOBAL[*]} run --rm --runtime haven --network none -it $IMAGE sh"
  assert_eq 4 "$RC" "exit status of podman run -it"
  assert_contains "$OUT" "typed-42"
}

test_podman_exec() {
  need_podman
  local n
  n=$(new_name exec)
  pstart "$n" -e FOO=bar "$IMAGE" sleep 1000
  OUT=$(pm exec "$n" sh -c 'echo $FOO $(id -u)' 2>&1)
  assert_eq "bar 0" "$OUT" "podman exec"
  OUT=$(pm exec -u 1000 "$n" id -u 2>&1)
  assert_eq 1000 "$OUT" "podman exec -u"
  pm exec "$n" sh -c 'exit 6'
  assert_eq 6 $? "exit status of podman exec"
  OUT=$(pm exec -t "$n" tty 2>&1 | tr -d '\r')
  assert_contains "$OUT" "/dev/pts/" "podman exec -t"
  with_pty $'echo in-exec-$((2+3))\nexit 3\n' "podman ${PODMAN_GLOBAL[*]} exec -it $n sh"
  assert_eq 3 "$RC" "exit status of podman exec -it"
  assert_contains "$OUT" "in-exec-5"
  OUT=$(pm exec "$n" /no/such/program 2>&1)
  assert_eq 127 $? "exit status of podman exec of a missing program"
  assert_contains "$OUT" "no such file or directory"
}

test_podman_stop_and_kill() {
  need_podman
  local n t0 t1
  n=$(new_name stop)
  pstart "$n" "$IMAGE" sh -c 'trap "exit 3" TERM; while true; do sleep 0.1; done'
  sleep 0.5
  pm stop -t 20 "$n" >/dev/null || fail "podman stop failed"
  assert_eq "exited 3" "$(pm_state "$n" '{{.State.Status}} {{.State.ExitCode}}')" "state after SIGTERM"
  n=$(new_name stop-kill)
  pstart "$n" "$IMAGE" sh -c 'trap "" TERM; while true; do sleep 0.1; done'
  sleep 0.5
  t0=$(date +%s)
  pm stop -t 2 "$n" >/dev/null 2>&1 || fail "podman stop -t 2 failed"
  t1=$(date +%s)
  assert_eq "exited 137" "$(pm_state "$n" '{{.State.Status}} {{.State.ExitCode}}')" "state after SIGKILL"
  [ $((t1 - t0)) -ge 2 ] || fail "SIGKILL came before the 2 s grace period"
  n=$(new_name kill)
  pstart "$n" "$IMAGE" sh -c 'trap "exit 9" USR1; while true; do sleep 0.1; done'
  sleep 0.5
  pm kill -s USR1 "$n" >/dev/null || fail "podman kill -s USR1 failed"
  wait_for 10 sh -c "[ \"\$(podman ${PODMAN_GLOBAL[*]} inspect -f '{{.State.Status}}' $n)\" = exited ]" \
    || fail "USR1 did not end it"
  assert_eq 9 "$(pm_state "$n" '{{.State.ExitCode}}')" "exit code after USR1"
}

test_podman_pause_stats_top() {
  need_podman
  local n
  n=$(new_name pause)
  pstart "$n" "$IMAGE" sh -c 'sleep 1000 & sleep 1001'
  pm pause "$n" >/dev/null || fail "podman pause failed"
  assert_eq paused "$(pm_state "$n" '{{.State.Status}}')"
  pm unpause "$n" >/dev/null || fail "podman unpause failed"
  assert_eq running "$(pm_state "$n" '{{.State.Status}}')"
  wait_for 10 sh -c "podman ${PODMAN_GLOBAL[*]} top $n | grep -q 'sleep 1000'" || fail "podman top: $(pm top "$n" 2>&1)"
  assert_contains "$(pm top "$n" 2>&1)" "sleep 1001" "podman top"
  OUT=$(pm stats --no-stream --format '{{.Name}} {{.MemUsage}} {{.PIDs}}' "$n" 2>&1)
  assert_contains "$OUT" "$n " "podman stats"
  [[ "$OUT" =~ \ 2$ ]] || fail "podman stats: expected 2 pids (sh execs its last command): $OUT"
}

test_podman_update() {
  need_podman
  need_runtime_update
  local n
  n=$(new_name update)
  pstart "$n" "$IMAGE" sleep 1000
  # (Podman 4.3's update has no --pids-limit)
  OUT=$(pm update --memory 64m --memory-swap 64m --cpus 0.5 "$n" 2>&1) \
    || fail "podman update failed: $OUT"
  OUT=$(pm exec "$n" sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/cpu.max' | xargs)
  assert_contains "$OUT" "67108864" "memory limit after podman update"
  assert_contains "$OUT" "50000" "cpu quota after podman update"
}

test_podman_rm_force() {
  need_podman
  local n id
  n=$(new_name rmf)
  pstart "$n" "$IMAGE" sleep 1000
  id=$(pm_state "$n" '{{.Id}}')
  pm rm -f -t 0 "$n" >/dev/null || fail "podman rm -f failed"
  pm inspect "$n" >/dev/null 2>&1 && fail "container still exists after rm -f"
  [ -e "/run/haven/$id" ] && fail "runtime state of $id left behind"
  # A --rm container leaves nothing in the runtime either.
  prun "$IMAGE" true
  local f bundle
  for f in /run/haven/*/state.json; do
    [ -f "$f" ] || continue
    bundle=$(jq -r .bundle "$f" 2>/dev/null)
    [[ "$bundle" == "$PODMAN_DIR/"* ]] && fail "runtime state left behind: $f"
  done
  return 0
}

# Rootless Podman: an ordinary user (plain useradd, its subuid/subgid
# range, its own XDG_RUNTIME_DIR) runs containers with haven-runc.  Podman
# runs the runtime inside its user namespace as uid 0, without --root:
# the state must go under the user's XDG_RUNTIME_DIR, and on a host whose
# cgroups are not delegated the container runs without one.
test_podman_rootless_user() {
  rootless_podman_setup
  local u=$RL_USER d=$RL_DIR xdg=$RL_XDG uid=$RL_UID n id
  OUT=$(upm import "$WORK/image.tar" havenbox:rootless 2>&1) || fail "podman import as $u: $OUT"

  OUT=$(upm run --rm --runtime haven --network none havenbox:rootless sh -c 'echo hi; id -u' 2>&1 </dev/null)
  assert_eq "hi
0" "$OUT" "rootless podman run"
  [ -z "$(ls -A "$xdg/haven" 2>/dev/null)" ] || fail "podman run --rm left runtime state: $(ls "$xdg/haven")"

  n=$(new_name rootless)
  OUT=$(upm run -d --name "$n" --runtime haven --network none havenbox:rootless \
        sh -c 'trap "exit 3" TERM; while true; do sleep 0.1; done' 2>&1 </dev/null) || fail "podman run -d: $OUT"
  id=$(upm inspect -f '{{.Id}}' "$n" 2>&1)
  # haven-runc's state (runc would keep its own under $xdg/runc).
  [ -f "$xdg/haven/$id/state.json" ] || fail "no state under $xdg/haven/$id: $(ls -la "$xdg" "$xdg/haven" 2>&1)"
  assert_eq "$uid" "$(stat -c %u "$xdg/haven/$id")" "owner of the state directory"
  [ -e "/run/haven/$id" ] && fail "state of a rootless container in /run/haven"
  assert_eq '""' "$(jq .cgroupPath "$xdg/haven/$id/state.json")" "cgroup of a rootless container on this host"
  OUT=$(upm exec "$n" sh -c 'echo $((6*7)) $(id -u)' 2>&1 </dev/null)
  assert_eq "42 0" "$OUT" "podman exec"
  OUT=$(upm exec -u 1000 "$n" id -u 2>&1 </dev/null)
  assert_eq 1000 "$OUT" "podman exec -u 1000"
  upm exec "$n" sh -c 'exit 6' </dev/null
  assert_eq 6 $? "exit status of podman exec"
  # (upm and rootless_top_see_loop see this function's locals.)
  rootless_top_see_loop() { upm top "$n" </dev/null 2>&1 | grep -q 'sleep 0.1'; }
  wait_for 10 rootless_top_see_loop || fail "podman top: $(upm top "$n" 2>&1 </dev/null)"
  upm stop -t 20 "$n" >/dev/null 2>&1 </dev/null || fail "podman stop"
  assert_eq "exited 3" "$(upm inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$n" 2>&1)" "state after stop"
  upm rm "$n" >/dev/null 2>&1 </dev/null || fail "podman rm"
  [ -e "$xdg/haven/$id" ] && fail "runtime state of $id left behind"
  [ -z "$(ls -A "$xdg/haven" 2>/dev/null)" ] || fail "runtime state left: $(ls "$xdg/haven")"

  # A limit with no cgroup to hold it is refused, naming the field.  The
  # runtime is run as Podman runs it: root of the user's namespace.
  local b=$d/bundle
  mkdir -m 755 "$b"
  ln -s "$WORK/rootfs" "$b/rootfs"
  "$RUNTIME" spec --bundle "$b" || fail "spec"
  jq '.process.terminal = false | .process.args = ["true"] | .linux.resources.memory.limit = 67108864' \
    "$b/config.json" > "$b/c" && mv "$b/c" "$b/config.json" && chmod 644 "$b/config.json"
  OUT=$(upm unshare sh -c "cd $b && $d/bin/haven-runc run limited" 2>&1 </dev/null)
  [ $? != 0 ] || fail "a rootless container with a memory limit and no cgroup ran"
  assert_contains "$OUT" ".linux.resources.memory.limit: a rootless container cannot have this limit here: it needs a cgroup"
  [ -e "$xdg/haven/limited" ] && fail "a refused create left its state"
  return 0
}

# The default policy through Podman's annotation, from init and exec
# (exec --privileged too): the same checks as Docker's
# (test_docker_policy_default_whole in test_docker.sh).
test_podman_policy_default_whole() {
  need_podman
  make_policy_workspace
  # Podman's own pids limit (2048) is stricter than the policy's 4096
  # for containers: the stricter one applies.
  local POLICY_WANT_ROOT=${POLICY_WANT_ROOT/$'\n4096\n'/$'\n2048\n'}
  OUT=$(pm run --rm "${PR[@]}" --network none --annotation run.haven.policy=default -e FOO=1 \
    -v "$WS:/workspace" -v "$SSHDIR:/root/.ssh" -w /workspace "$IMAGE" sh -c "$POLICY_CHECK" 2>&1)
  # The runtime's create notes (here: FOO not passed) reach podman run's
  # output or not, depending on when it attaches (conmon hands the
  # runtime's stderr to the container's log): checked by the docker test.
  OUT=$(printf '%s\n' "$OUT" | grep -v '^haven-runc: note: ')
  assert_eq "$POLICY_WANT_ROOT" "$OUT" "init under run.haven.policy=default"
  local c
  c=$(new_name pol)
  pm run -d --name "$c" "${PR[@]}" --network none --annotation run.haven.policy=default -e FOO=1 \
    -v "$WS:/workspace" -v "$SSHDIR:/root/.ssh" -w /workspace "$IMAGE" sleep 1000 >/dev/null 2>run.err \
    || fail "podman run -d: $(cat run.err)"
  defer "pm rm -f -t 0 $c"
  OUT=$(pm exec "$c" sh -c "$POLICY_CHECK" 2>&1)
  assert_eq "$POLICY_WANT_ROOT" "$OUT" "podman exec under run.haven.policy=default"
  OUT=$(pm exec --privileged "$c" sh -c "$POLICY_CHECK" 2>&1)
  assert_eq "$POLICY_WANT_ROOT" "$OUT" "podman exec --privileged is tightened"
}

# Under Podman: test_docker_policy_concurrent_rename_keeps_secret_hidden.
test_podman_policy_concurrent_rename_keeps_secret_hidden() {
  need_podman
  concurrent_rename_race pm "${PR[@]}" --network none --annotation run.haven.policy=default
}

# --- Every Podman network mode ---

# pm_http_from PODMAN-RUN-ARGS... -- ADDR: as dke_http_from, under Podman.
pm_http_from() {
  local args=() addr
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  addr=$2
  pm run --rm "${args[@]}" "$IMAGE" sh -c "echo interfaces: \$(ls /sys/class/net | xargs)
    printf 'GET /index.html HTTP/1.0\r\n\r\n' | nc -w 3 $addr 8080 2>&1 | grep 'served by' || echo unreachable" \
    2>&1 < /dev/null | grep -v '^haven-runc: note: '
}

# Network none under Podman: run.haven.policy=default (network none) gives
# only loopback and no way to a server on Podman's default network, a
# network made with `podman network create --internal` (what
# podman-compose makes; aardvark-dns answers container names), the host's
# and another container's.  The servers run under Podman's default
# runtime, and a client of that runtime reaches them.
test_podman_network_none_every_mode() {
  need_podman
  [ "$ENGINE_RUNTIME" = haven ] || skip "haven's policy"
  local net srvd srvu ipd ipu mode
  net=$(new_name pnet)
  pm network create --internal "$net" > /dev/null 2> net.err || fail "network create: $(cat net.err)"
  defer "pm network rm -f $net > /dev/null"
  srvd=$(new_name psrvd)
  srvu=$(new_name psrvu)
  pm run -d --name "$srvd" --network podman "$IMAGE" httpd -f -p 8080 -h /www > /dev/null 2> run.err \
    || fail "server on podman's default network: $(cat run.err)"
  pm run -d --name "$srvu" --network "$net" "$IMAGE" httpd -f -p 8080 -h /www > /dev/null 2> run.err \
    || fail "server on $net: $(cat run.err)"
  ipd=$(pm_state "$srvd" '{{(index .NetworkSettings.Networks "podman").IPAddress}}')
  ipu=$(pm_state "$srvu" "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}")
  [[ "$ipd" =~ ^[0-9.]+$ && "$ipu" =~ ^[0-9.]+$ ]] || fail "no server addresses: '$ipd' '$ipu'"
  OUT=$(pm_http_from --network podman -- "$ipd")
  assert_contains "$OUT" "served by haven" "the default runtime on podman's network reaches the server"
  OUT=$(pm_http_from --network "$net" -- "$srvu")
  assert_contains "$OUT" "served by haven" "the default runtime on $net reaches the server by name"
  for mode in "podman $ipd" "$net $ipu" "$net $srvu" "host $ipd" "container:$srvu 127.0.0.1"; do
    OUT=$(pm_http_from "${PR[@]}" --annotation run.haven.policy=default --network "${mode% *}" -- "${mode#* }")
    assert_eq "interfaces: lo
unreachable" "$OUT" "run.haven.policy=default on --network ${mode% *} (to ${mode#* })"
  done
}

# An allowlist on a Podman network: the container's nameserver is
# aardvark-dns on the network's gateway; a listed container name
# resolves and connects, another container's name is refused by haven's
# resolver (though the policy's CIDR covers its address: a name is
# allowed by name), and its address on another port is refused.
test_podman_egress_container_name() {
  need_podman
  [ "$ENGINE_RUNTIME" = haven ] || skip "haven's egress table and resolver"
  local net sub web other pol=$PWD/pnames.yaml
  net=$(new_name pnet)
  pm network create --internal "$net" > /dev/null 2> net.err || fail "network create: $(cat net.err)"
  defer "pm network rm -f $net > /dev/null"
  sub=$(pm network inspect -f '{{range .Subnets}}{{.Subnet}}{{end}}' "$net")
  [[ "$sub" =~ ^[0-9./]+$ ]] || fail "no subnet of $net: $sub"
  web=$(new_name pweb)
  other=$(new_name pother)
  pm run -d --name "$web" --network "$net" "$IMAGE" httpd -f -p 8080 -h /www > /dev/null 2> run.err \
    || fail "web: $(cat run.err)"
  pm run -d --name "$other" --network "$net" "$IMAGE" httpd -f -p 8080 -h /www > /dev/null 2> run.err \
    || fail "other: $(cat run.err)"
  # Private answers are dropped unless a CIDR allows them: the network's,
  # on port 8080 only.
  printf 'extends: default\nnetwork:\n  allow: ["%s:8080", "%s:8080"]\n' "$web" "$sub" > "$pol"
  OUT=$(pm run --rm "${PR[@]}" --annotation run.haven.policy="$pol" --network "$net" "$IMAGE" sh -c "
    nslookup $web 2>&1
    printf 'GET /index.html HTTP/1.0\r\n\r\n' | nc -w 3 $web 8080 2>&1 | grep 'served by' || echo web-unreachable
    nslookup $other 2>&1" 2>&1 < /dev/null)
  echo "$OUT"
  assert_contains "$OUT" "served by haven" "the listed container name resolves and connects"
  # (busybox's nslookup asks with the search domain dns.podman appended)
  [[ "$OUT" =~ "can't find $other"(\.dns\.podman)?": NXDOMAIN" ]] || fail "another container's name not refused: $OUT"
  assert_not_contains "$OUT" "Name:	$other" "another container's name"
  local ipo
  ipo=$(pm_state "$other" "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}")
  OUT=$(pm run --rm "${PR[@]}" --annotation run.haven.policy="$pol" --network "$net" "$IMAGE" sh -c "
    nc -w 3 $ipo 80 </dev/null 2>&1 || echo port-80-refused" 2>&1 < /dev/null)
  assert_contains "$OUT" "port-80-refused" "a port the CIDR entry does not list"
  # --network host with an allowlist: refused, never run unfiltered.
  OUT=$(pm run --rm "${PR[@]}" --annotation run.haven.policy="$pol" --network host "$IMAGE" true 2>&1 < /dev/null)
  [ $? != 0 ] || fail "podman run --network host with an allowlist policy ran"
  assert_contains "$OUT" "allows only some destinations (network.allow)" "--network host refused with haven's reason"
}
