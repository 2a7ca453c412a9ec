# haven run: commands sandboxed on the host under policies.

HAVEN=$(dirname "$RUNTIME")/haven

# The haven tests are for haven-runc and its `haven` front end only.
need_haven() { skip_on_runc "haven run and policies are haven-runc features"; }

# haven_in DIR [haven args...]: run haven from DIR, output in $OUT, status $RC.
haven_in() {
  local dir=$1
  shift
  OUT=$(cd "$dir" && timeout 30 "$HAVEN" "$@" 2>&1 </dev/null)
  RC=$?
}

make_project() {
  # mktemp, not $RANDOM: tests share $WORK, and a name another test used
  # would bring its leftovers along.
  P=$(mktemp -d "$WORK/project-XXXXXX")
  chmod 755 "$P"
  # Policy files live beside the project, never in it: haven refuses a
  # policy the sandbox could rewrite.
  mkdir -p "$P/.git/hooks" "$P/src/deep" "$P.pol"
  echo "SECRET=1" > "$P/.env"
  echo "SECRET=2" > "$P/src/deep/.env"
  echo "[core]" > "$P/.git/config"
  echo code > "$P/src/main.c"
}

test_haven_default_policy_basics() {
  need_haven
  make_project
  haven_in "$P" run -- sh -c 'echo hi > out.txt && cat out.txt; cat .env | wc -c; cat src/deep/.env | wc -c;
     { echo x >> .git/config; } 2>/dev/null || echo git-config-ro; touch .git/hooks/pre-commit 2>/dev/null || echo hooks-ro;
     touch /etc/haven-test 2>/dev/null || echo etc-ro; touch /tmp/t && echo tmp-rw; ls /run | grep -vx haven | wc -l'
  assert_eq 0 "$RC" "exit code ($OUT)"
  assert_eq "hi
0
0
git-config-ro
hooks-ro
etc-ro
tmp-rw
0" "$OUT"
  assert_eq hi "$(cat "$P/out.txt")" "write reached the project"
  [ ! -e /etc/haven-test ] || fail "wrote to the host's /etc"
}

test_haven_secrets_absent() {
  need_haven
  make_project
  local home=$(mktemp -u "$WORK/home-XXXXXX")
  mkdir -p "$home/.ssh" "$home/.aws" "$home/.cache/pip"
  echo key > "$home/.ssh/id_ed25519"
  echo creds > "$home/.aws/credentials"
  echo cached > "$home/.cache/pip/x"
  OUT=$(cd "$P" && HOME=$home timeout 30 "$HAVEN" run -- sh -c 'ls -A ~; ls ~/.ssh 2>&1; cat ~/.aws/credentials 2>&1; cat ~/.cache/pip/x' 2>&1)
  assert_eq ".cache" "$(echo "$OUT" | head -1)" "home contents"
  assert_eq 2 "$(echo "$OUT" | grep -c "No such file or directory")" "secrets absent ($OUT)"
  assert_eq cached "$(echo "$OUT" | tail -1)" "allowed cache"
}

test_haven_env_filtering() {
  need_haven
  make_project
  OUT=$(cd "$P" && GITHUB_TOKEN=ghp_x AWS_SECRET_ACCESS_KEY=y OPENAI_API_KEY=z LANG=C.UTF-8 MYVAR=1 \
        timeout 30 "$HAVEN" run -- sh -c 'env | sort' 2>&1)
  assert_not_contains "$OUT" "GITHUB_TOKEN"
  assert_not_contains "$OUT" "AWS_SECRET"
  assert_not_contains "$OUT" "OPENAI_API_KEY"
  assert_not_contains "$OUT" "MYVAR"
  assert_contains "$OUT" "LANG=C.UTF-8"
  assert_contains "$OUT" "HAVEN=1"
}

test_haven_exit_codes_and_signals() {
  need_haven
  make_project
  haven_in "$P" run -- sh -c 'exit 7'
  assert_eq 7 "$RC"
  (cd "$P" && exec timeout 60 "$HAVEN" run -- sh -c 'trap "exit 9" TERM; echo > ready; while :; do sleep 0.1; done') &
  local pid=$! i
  # Signal only once the trap is set (the marker says so): a fixed sleep
  # is too short on a slow host (an emulated VM), and a SIGTERM that
  # arrives before the trap ends the container with 143 instead.
  for i in $(seq 300); do [ -e "$P/ready" ] && break; sleep 0.1; done
  [ -e "$P/ready" ] || fail "the container never set its trap (no $P/ready after 30 s)"
  kill -TERM $pid
  wait $pid
  assert_eq 9 "$?" "exit code after a forwarded SIGTERM"
  haven_in "$P" run -- no-such-command
  assert_contains "$OUT" "executable file not found"
  [ "$RC" != 0 ] || fail "missing command succeeded"
}

test_haven_no_network() {
  need_haven
  make_project
  haven_in "$P" run -- sh -c 'ip -o link | wc -l; ip -o link | grep -c "lo:.*UP"'
  assert_eq "1
1" "$OUT" "only loopback, and it is up"
}

# `extends: default` plus an allow list is an allowlist, never
# silently nothing; what it reaches: test_egress_policies.sh and
# test_egress_pasta.sh.  Entries are checked with file:line:column.
test_haven_network_allowlist_language() {
  need_haven
  make_project
  printf 'extends: default\nnetwork: {allow: [api.github.com, "github.com:22"]}\n' > "$P.pol/gh.yaml"
  haven_in "$P" policy check "$P.pol/gh.yaml"
  assert_eq 0 "$RC" "allowlist policy check ($OUT)"
  assert_contains "$OUT" "haven: warning: $P.pol/gh.yaml:2:35: network.allow: \"github.com:22\": github.com is a code host"
  haven_in "$P" policy explain "$P.pol/gh.yaml"
  assert_contains "$OUT" "api.github.com: TCP 443, 80"
  assert_contains "$OUT" "github.com: TCP 22"
  assert_contains "$OUT" "Enforced in the kernel"
  assert_not_contains "$OUT" "None: only" "an allowlist explained as no network"
  haven_in "$P" policy explain claude-code
  assert_contains "$OUT" "api.anthropic.com: TCP 443, 80"
  assert_not_contains "$OUT" "None: only" "claude-code explained as no network"
  haven_in "$P" run --policy "$P.pol/gh.yaml" -- true
  assert_not_contains "$OUT" "not resolved" "haven run still says names are not resolved"
  printf 'network:\n  allow:\n    - api.github.com\n    - "192.0.2.7/24"\n' > "$P.pol/bad.yaml"
  haven_in "$P" policy check "$P.pol/bad.yaml"
  [ "$RC" != 0 ] || fail "host bits accepted"
  assert_contains "$OUT" "$P.pol/bad.yaml:4:7: network.allow: \"192.0.2.7/24\": host bits set after /24"
  printf 'extends: claude-code\nnetwork: {mode: open}\n' > "$P.pol/open.yaml"
  haven_in "$P" run --policy "$P.pol/open.yaml" -- true
  [ "$RC" != 0 ] || fail "mode open over an allowlist ran"
  assert_contains "$OUT" "network.mode is open, but network.allow lists \"api.anthropic.com\""
}

test_haven_block_shell() {
  need_haven
  make_project
  cat > "$P.pol/noshell.yaml" <<'EOP'
extends: default
process:
  block_shell: true
EOP
  haven_in "$P" run --policy "$P.pol/noshell.yaml" -- ls "$P/src"
  assert_eq "deep
main.c" "$OUT"
  local cmd
  for cmd in "sh -c true" "busybox sh -c true" "bash -c true"; do
    command -v ${cmd%% *} >/dev/null || continue
    haven_in "$P" run --policy "$P.pol/noshell.yaml" -- $cmd
    [ "$RC" != 0 ] || fail "$cmd ran under block_shell"
    # (errno text in lower case, as Go prints it: engines match on it; a
    # shell's file is masked under block_shell, so the lookup may not
    # find it at all)
    [[ "$OUT" == *"permission denied"* || "$OUT" == *"executable file not found"* ]] || fail "$cmd: $OUT"
  done
  ln -s "$(command -v sh)" "$P/innocent-name"
  haven_in "$P" run --policy "$P.pol/noshell.yaml" -- "$P/innocent-name" -c true
  [ "$RC" != 0 ] || fail "a shell under another name ran"
  cp "$(readlink -f "$(command -v sh)")" "$P/copied-shell"
  haven_in "$P" run --policy "$P.pol/noshell.yaml" -- "$P/copied-shell" -c true
  [ "$RC" != 0 ] || fail "a copied shell ran"
}

test_haven_allow_exec() {
  need_haven
  make_project
  printf 'extends: default\nprocess:\n  allow_exec: [ls, cat]\n' > "$P.pol/only.yaml"
  haven_in "$P" run --policy "$P.pol/only.yaml" -- cat src/main.c
  assert_eq code "$OUT"
  haven_in "$P" run --policy "$P.pol/only.yaml" -- id
  [ "$RC" != 0 ] || fail "id ran although only ls and cat are allowed"
  assert_contains "$OUT" "permission denied"
}

test_haven_seccomp_denials() {
  need_haven
  make_project
  haven_in "$P" run -- sh -c 'unshare -U true 2>&1; unshare -m true 2>&1; echo done'
  assert_contains "$OUT" "unshare failed: Operation not permitted"
  assert_contains "$OUT" "done"
  if command -v python3 >/dev/null; then
    haven_in "$P" run -- python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for name, call in [("ptrace", lambda: libc.ptrace(16, 1, 0, 0)), ("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
                   ("bpf", lambda: libc.syscall(321, 0, 0, 0)), ("keyctl", lambda: libc.syscall(250, 0, 0, 0)),
                   ("io_uring_setup", lambda: libc.syscall(425, 1, 0)), ("userfaultfd", lambda: libc.syscall(323, 0)),
                   ("perf_event_open", lambda: libc.syscall(298, 0, 0, -1, -1, 0))]:
    r = call(); print(name, r, os.strerror(ctypes.get_errno()))
import fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"x"); print("TIOCSTI allowed")
except OSError as e: print("TIOCSTI", e.strerror)'
    local n
    n=$(echo "$OUT" | grep -c -- "-1 Operation not permitted")
    assert_eq 7 "$n" "denied syscalls ($OUT)"
    assert_contains "$OUT" "TIOCSTI Operation not permitted"
  fi
}

test_haven_audit_trail_records_denials() {
  need_haven
  make_project
  local log=$(mktemp -u "$WORK/audit-XXXXXX")/sub/audit.log
  printf 'extends: default\naudit:\n  log: %s\nsyscalls:\n  deny: [uname]\n' "$log" > "$P.pol/audit.yaml"
  haven_in "$P" run --policy "$P.pol/audit.yaml" -- python3 -c '
import ctypes, os, fcntl, termios
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", libc.ptrace(16, 1, 0, 0), os.strerror(ctypes.get_errno()))
print("uname", libc.syscall(63, 0), os.strerror(ctypes.get_errno()))
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"x")
except OSError as e: print("TIOCSTI", e.strerror, flush=True)
os._exit(3)'
  # The command sees what it would without the trail.
  assert_eq 3 "$RC" "exit status ($OUT)"
  assert_contains "$OUT" "ptrace -1 Operation not permitted"
  assert_contains "$OUT" "uname -1 Operation not permitted"
  assert_contains "$OUT" "TIOCSTI Operation not permitted"
  [ -f "$log" ] || fail "no audit log at $log"
  assert_eq 600 "$(stat -c %a "$log")" "audit log mode"
  assert_eq 700 "$(stat -c %a "$(dirname "$log")")" "audit log directory mode"
  jq -se 'map(select(.event == "start")) | .[0].policy == "audit" and .[0].command[0] == "python3"' "$log" >/dev/null \
    || fail "no start record: $(cat "$log")"
  assert_eq "ioctl
ptrace
uname" "$(jq -r 'select(.event == "denied") | .syscall' "$log" | sort)" "denied calls recorded"
  jq -se 'map(select(.event == "denied" and .syscall == "ioctl")) | .[0].args[1] == "0x5412" and .[0].comm == "python3"' "$log" >/dev/null \
    || fail "TIOCSTI record: $(cat "$log")"
  jq -se 'map(select(.event == "exit")) | .[0].status == 3 and .[0].seconds > 0' "$log" >/dev/null \
    || fail "no exit record: $(cat "$log")"
  # One run id on every record of the run, whoever wrote it (the session
  # its start and exit, the listener its denials), right after "policy".
  local run1=$(jq -r .run "$log" | sort -u)
  [[ "$run1" =~ ^[0-9a-f]{16}$ ]] || fail "run ids of one run: $run1"
  jq -e 'keys_unsorted | .[3] == "run"' "$log" >/dev/null || fail "run not after policy: $(head -1 "$log")"
  # Appends, one line per record: a second run adds its own three records.
  haven_in "$P" run --policy "$P.pol/audit.yaml" -- sh -c 'true'
  assert_eq 2 "$(jq -r 'select(.event == "start") | .event' "$log" | wc -l)" "start records after two runs"
  assert_eq 2 "$(jq -r .run "$log" | sort -u | wc -l)" "run ids of two runs"
  assert_eq 0 "$(ls "$P" | grep -c audit.sock)" "audit socket left behind"
}

test_haven_profile_none_keeps_own_denials() {
  # syscalls.profile none drops the agent profile, not the policy's own
  # deny list.
  need_haven
  make_project
  printf 'extends: default\nsyscalls:\n  profile: none\n  deny: [uname]\n' > "$P.pol/none.yaml"
  haven_in "$P" run --policy "$P.pol/none.yaml" -- python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("uname", libc.syscall(63, 0), os.strerror(ctypes.get_errno()))
print("personality", libc.syscall(135, 0xffffffff))'
  assert_contains "$OUT" "uname -1 Operation not permitted"
  assert_not_contains "$OUT" "personality -1" "personality (agent profile) is allowed under profile none"
}

test_haven_resource_limits_bite() {
  need_haven
  make_project
  printf 'extends: default\nresources:\n  pids: 20\n  memory: 64m\n  timeout: 2s\n' > "$P.pol/tight.yaml"
  haven_in "$P" run --policy "$P.pol/tight.yaml" -- sh -c 'for i in $(seq 40); do sleep 1 & done 2>&1 | head -1'
  # (dash says "Cannot fork", bash and busybox strerror(EAGAIN))
  [[ "$OUT" =~ "Resource temporarily unavailable"|"Cannot fork" ]] || fail "pids limit did not bite: $OUT"
  local start=$SECONDS
  haven_in "$P" run --policy "$P.pol/tight.yaml" -- sleep 30
  assert_eq 124 "$RC" "exit code after the wall-clock limit"
  assert_contains "$OUT" "time limit"
  [ $((SECONDS - start)) -lt 10 ] || fail "timeout not enforced"
}

test_haven_as_unprivileged_user() {
  need_haven
  make_project
  chown -R 65534:65534 "$P"
  chmod 755 "$WORK"
  local haven
  haven=$(world_readable_copy "$HAVEN")
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_RUNTIME_DIR= \
        GITHUB_TOKEN=x timeout 30 "$haven" run -- sh -c 'id -u; echo w > written; touch /etc/x 2>/dev/null || echo ro; env | grep -c TOKEN' 2>&1)
  assert_eq "65534
ro
0" "$OUT"
  assert_eq w "$(cat "$P/written")"
}

test_haven_seed_policy_format() {
  need_haven
  # LLM-safe-haven's format, as written in its README.
  make_project
  mkdir -p "$P/data"
  cat > "$P.pol/seed.yaml" <<EOP
filesystem: {read_only: ['$P/data'], block: ['/etc/passwd', '/home/*/.ssh']}
network: {allow: ['api.github.com'], block_all: true}
process: {allow_exec: ['python3', 'cat', 'ls'], block_shell: true}
EOP
  haven_in "$P" policy check "$P.pol/seed.yaml"
  assert_eq 0 "$RC" "seed policy check ($OUT)"
  haven_in "$P" run --policy "$P.pol/seed.yaml" -- cat /etc/passwd
  assert_eq "" "$(echo "$OUT" | grep -v '^haven:')" "blocked /etc/passwd content"
  haven_in "$P" run --policy "$P.pol/seed.yaml" -- python3 -c 'open("data/x", "w")'
  assert_contains "$OUT" "Read-only file system"
  haven_in "$P" run --policy "$P.pol/seed.yaml" -- sh -c true
  [ "$RC" != 0 ] || fail "shell ran under the seed policy"
}

test_haven_policy_errors() {
  need_haven
  make_project
  printf 'filesystem:\n  read_only: [/x]\n  blok: [~/.ssh]\n' > "$P.pol/typo.yaml"
  haven_in "$P" policy check "$P.pol/typo.yaml"
  [ "$RC" != 0 ] || fail "misspelt key accepted"
  assert_contains "$OUT" "$P.pol/typo.yaml:3:3: filesystem.blok: unknown key (expected one of: read_only, read_write, block"
  printf 'resources:\n  memory: lots\n' > "$P.pol/bad.yaml"
  haven_in "$P" policy check "$P.pol/bad.yaml"
  assert_contains "$OUT" "$P.pol/bad.yaml:2:11: resources.memory: expected a size such as 512m or 2g"
  printf 'process: {allow_exec: [bash], block_shell: true}\n' > "$P.pol/conflict.yaml"
  haven_in "$P" policy check "$P.pol/conflict.yaml"
  assert_contains "$OUT" "lists the shell \"bash\" but process.block_shell is true"
  printf 'filesystem: [\n' > "$P.pol/broken.yaml"
  haven_in "$P" policy check "$P.pol/broken.yaml"
  assert_contains "$OUT" "$P.pol/broken.yaml:2:1: invalid YAML"
  haven_in "$P" run --policy no-such-policy -- true
  assert_contains "$OUT" "policy \"no-such-policy\" not found"
}

test_haven_shipped_policies_load_and_explain() {
  need_haven
  local name
  for name in default offline strict claude-code codex gemini-cli aider devcontainer ci; do
    "$HAVEN" policy check "$name" >/dev/null || fail "policy $name does not load"
    "$HAVEN" policy explain "$name" | grep -q "^Files" || fail "policy $name has no explanation"
  done
  "$HAVEN" policy list | grep -q "^default " || fail "policy list lacks default"
}

test_policy_applied_to_docker_style_config() {
  need_haven
  # A config as an engine writes it: capabilities, a permissive seccomp
  # profile that allows unshare, a token in the environment.
  cfg "$B" '.process.capabilities = {bounding: ["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_RAW"], effective: ["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_RAW"], permitted: ["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_RAW"]}
            | .process.noNewPrivileges = false | .process.env += ["GITHUB_TOKEN=ghp_secret", "NOT_PASSED=1", "LANG=C.UTF-8"]
            | .linux.seccomp = {defaultAction: "SCMP_ACT_ERRNO", syscalls: [{names: ["unshare", "mkdir", "mkdirat"], action: "SCMP_ACT_ALLOW"}, {names: ["unshare"], action: "SCMP_ACT_LOG"}]}
            | .linux.seccomp.defaultAction = "SCMP_ACT_ALLOW"'
  # The environment gets the policy's pass, deny and set rules.
  args "$B" sh -c 'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; env | grep -E "TOKEN|NOT_PASSED|LANG|HAVEN" | sort; unshare -m true 2>&1 | cut -d: -f3'
  local id out
  id=$(new_id pol)
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" --policy default run --bundle "$B" "$id" 2>&1)
  assert_eq "haven-runc: note: policy default: env: not passed into the container (env.pass does not name them): GITHUB_TOKEN, NOT_PASSED
CapEff:	0000000000000000
NoNewPrivs:	1
HAVEN=1
LANG=C.UTF-8
 Operation not permitted" "$out"
  # The container's own choice, by annotation, tightens further...
  cfg "$B" '.annotations["run.haven.policy"] = "offline"'
  args "$B" sh -c 'grep NoNewPrivs /proc/self/status'
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" run --bundle "$B" "$(new_id ann)" 2>/dev/null)
  assert_eq "NoNewPrivs:	1" "$out"
  # ...unless the administrator locked the runtime to its policy.
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" --policy default --policy-lock run --bundle "$B" "$(new_id lock)" 2>&1) \
    && fail "locked runtime accepted a per-container policy"
  assert_contains "$out" "annotation run.haven.policy=\"offline\" refused: this runtime is locked to policy \"default\""
  # haven policy compile --config shows the tightened config.
  out=$("$HAVEN" policy compile default --config "$B/config.json")
  assert_eq "true" "$(echo "$out" | jq '.process.noNewPrivileges')"
  assert_eq "[]" "$(echo "$out" | jq -c '.process.capabilities.effective')"
  # resources.timeout (strict: 30m) is kept by the container's monitor.
  out=$("$HAVEN" policy compile strict --config "$B/config.json")
  assert_eq "1800 default" "$(echo "$out" | jq -r '.annotations | "\(.["run.haven.timeout"]) \(.["run.haven.audit"])"')"
}

# haven install/uninstall docker|podman on files of the test's own (the
# real /etc is never touched): the other settings survive, a second run
# changes nothing, a broken file is refused with its name and position.
test_haven_install_docker_and_podman() {
  need_haven
  local d=$PWD/etc-docker/daemon.json ino
  mkdir -p "$PWD/etc-docker"
  haven_in "$PWD" install docker --help
  assert_eq 0 "$RC" "install docker --help ($OUT)"
  assert_contains "$OUT" "haven install docker [--daemon-json PATH]"
  printf '{"debug": true, "runtimes": {"crun": {"path": "/usr/bin/crun"}}, "max-concurrent-downloads": 3}\n' > "$d"
  haven_in "$PWD" install docker --daemon-json "$d" --policy default
  assert_eq 0 "$RC" "install docker ($OUT)"
  assert_contains "$OUT" "registered runtime \"haven\" ($(readlink -f "$RUNTIME")) in $d"
  # No dockerd reads this file: no advice to signal every dockerd there is.
  assert_contains "$OUT" "no running dockerd reads $d"
  assert_eq 'true /usr/bin/crun 3' "$(jq -r '"\(.debug) \(.runtimes.crun.path) \(."max-concurrent-downloads")"' "$d")"
  assert_eq "$(readlink -f "$RUNTIME")" "$(jq -r .runtimes.haven.path "$d")"
  assert_eq '["--policy","default"]' "$(jq -c .runtimes.haven.runtimeArgs "$d")"
  ino=$(stat -c %i "$d")
  haven_in "$PWD" install docker --daemon-json "$d" --policy default
  assert_eq 0 "$RC"
  assert_contains "$OUT" "already registered"
  assert_eq "$ino" "$(stat -c %i "$d")" "daemon.json rewritten by a second install"
  haven_in "$PWD" uninstall docker --daemon-json "$d"
  assert_eq 0 "$RC" "uninstall docker ($OUT)"
  assert_eq 'null crun' "$(jq -r '"\(.runtimes.haven) \(.runtimes | keys | join(","))"' "$d")"
  printf '{\n  "debug": true,\n  "runtimes": {}\n' > "$d"
  cp "$d" broken.json
  haven_in "$PWD" install docker --daemon-json "$d"
  assert_eq 125 "$RC" "install into a malformed daemon.json"
  assert_contains "$OUT" "haven: install docker: $d:4:1: invalid JSON: parse error: premature EOF"
  cmp -s "$d" broken.json || fail "a malformed daemon.json was modified"
  haven_in "$PWD" install docker --daemon-json "$d" --policy no-such-policy
  assert_eq 125 "$RC"
  assert_contains "$OUT" 'policy "no-such-policy" not found'
  # The policy is applied to a sample container's config at install:
  # what containers cannot have is said once, there; a program the exec
  # rules need and this host lacks is said too (the image may have it).
  local d2=$PWD/etc-docker/daemon-policies.json
  haven_in "$PWD" install docker --daemon-json "$d2" --name haven-strict --policy strict
  assert_eq 0 "$RC" "install docker --policy strict ($OUT)"
  assert_not_contains "$OUT" "note:" "install docker --policy strict"
  printf 'extends: strict\nfilesystem:\n  read_write: [/srv/data]\nprocess:\n  allow_exec: [/usr/bin/true, no-such-tool-here]\n' > needs-tool.yaml
  haven_in "$PWD" install docker --daemon-json "$d2" --name haven-tool --policy "$PWD/needs-tool.yaml"
  assert_eq 0 "$RC" "install docker --policy needs-tool.yaml ($OUT)"
  assert_contains "$OUT" 'note: policy needs-tool: a container whose image is like this host fails to start'
  assert_contains "$OUT" '"no-such-tool-here" not found in PATH'
  assert_contains "$OUT" 'haven: install docker: note: policy needs-tool: filesystem.read_write "/srv/data" stays read-only in a container'
  haven_in "$PWD" install docker --daemon-json "$d2" --name haven-default --policy default
  assert_not_contains "$OUT" "note:" "install docker --policy default"
  haven_in "$PWD" uninstall docker --daemon-json "$d2" --name haven-strict
  haven_in "$PWD" uninstall docker --daemon-json "$d2" --name haven-tool
  haven_in "$PWD" uninstall docker --daemon-json "$d2" --name haven-default
  assert_eq '{}' "$(jq -c . "$d2")" "daemon-policies.json after three uninstalls"

  local c=$PWD/containers.conf.d/haven.conf
  haven_in "$PWD" install podman --conf "$c"
  assert_eq 0 "$RC" "install podman ($OUT)"
  assert_contains "$(cat "$c")" "\"haven\" = [\"$(readlink -f "$RUNTIME")\"]"
  assert_contains "$(cat "$c")" 'runtime_supports_json = ["crun", "runc", "kata", "runsc", "krun", "haven", "haven-runc"]'
  haven_in "$PWD" install podman --conf "$c" --policy strict
  assert_eq 125 "$RC"
  assert_contains "$OUT" "--annotation run.haven.policy=NAME"
  echo '# not ours' > other.conf
  haven_in "$PWD" uninstall podman --conf "$PWD/other.conf"
  assert_eq 125 "$RC" "uninstall of a drop-in haven did not write"
  # Nor does install replace a containers.conf someone else wrote.
  printf '[engine]\ncgroup_manager = "cgroupfs"\n' > own.conf
  cp own.conf own.conf.orig
  haven_in "$PWD" install podman --conf "$PWD/own.conf"
  assert_eq 125 "$RC" "install podman over a foreign containers.conf"
  assert_contains "$OUT" "own.conf exists and was not written by haven install podman; not replacing it"
  cmp -s own.conf own.conf.orig || fail "install podman changed a containers.conf it did not write"
  # Without --conf, each runtime name gets a drop-in of its own (in a
  # mount namespace with a tmpfs over /etc/containers: the host's stays).
  if [ -d /etc/containers ]; then
    OUT=$(unshare -m sh -c 'mount -t tmpfs none /etc/containers && "$0" install podman --runtime "$1" &&
          "$0" install podman --name haven-b --runtime "$1" && ls /etc/containers/containers.conf.d &&
          "$0" uninstall podman --name haven-b && ls /etc/containers/containers.conf.d' "$HAVEN" "$RUNTIME" 2>&1)
    assert_eq 0 $? "two podman registrations ($OUT)"
    assert_contains "$OUT" "haven-b.conf
haven.conf
removed /etc/containers/containers.conf.d/haven-b.conf
haven.conf"
  fi
  haven_in "$PWD" uninstall podman --conf "$c"
  assert_eq 0 "$RC"
  [ -e "$c" ] && fail "uninstall podman left $c"
  return 0
}

# Only `haven run` itself may say its config needs no policy applied: a
# config carrying haven's Landlock annotation (any config author can write
# one) still gets the policy its run.haven.policy annotation asks for.
test_policy_annotation_not_skipped_by_landlock_annotation() {
  need_haven
  cfg "$B" '.annotations["run.haven.policy"] = "default" | .annotations["run.haven.landlock"] = "{\"read\":[\"/\"],\"write\":[\"/\"],\"exec\":[\"/\"],\"bestEffort\":true}" '
  args "$B" sh -c 'grep CapEff /proc/self/status'
  local id out
  id=$(new_id ll)
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" run --bundle "$B" "$id" 2>&1 </dev/null)
  # The default policy keeps no capability; the bundle's config has some.
  assert_contains "$out" "CapEff:	0000000000000000" "the policy the annotation asks for was applied"
}
