# haven doctor: the host's mechanisms, the isolation and way out haven
# run picks, and each policy's verdict, as root, as uid 65534 (for whom
# /dev/net/tun, mode 0600 here, does not open and no cgroup can be made),
# and where namespaces cannot be made (a user namespace of the test's own
# whose user.max_user_namespaces is 0, with every capability dropped:
# what an unprivileged container under Docker's default profile looks
# like to haven).  (haven_in, need_haven, make_project: test_haven.sh.)

# doctor_lines TEXT: fails unless each policy in policies/ has a line.
doctor_every_policy_said() {
  local f name
  for f in "$here"/../../policies/*.yaml; do
    name=$(basename "$f" .yaml)
    echo "$1" | grep -qE "^  $name: " || fail "no verdict for policy $name in: $1"
  done
}

# No cgroup of the probe's is left in any hierarchy.
doctor_no_probe_cgroup() {
  local left
  left=$(ls -d /sys/fs/cgroup/*/haven/doctor-probe-* /sys/fs/cgroup/haven/doctor-probe-* 2>/dev/null)
  assert_eq "" "$left" "cgroups the probe left"
}

test_doctor_as_root() {
  need_haven
  unset HAVEN_ISOLATION HAVEN_EGRESS_WAY
  make_project
  haven_in "$P" doctor
  assert_eq 0 "$RC" "haven doctor ($OUT)"
  assert_contains "$OUT" "haven doctor: uid 0 in "
  local m
  for m in "namespaces       ok" "user namespaces  ok" "mount            ok" "seccomp          ok" \
           "cgroups          ok: cgroup " "nftables         ok" "/dev/net/tun     ok" "Landlock         ok: ABI "; do
    echo "$OUT" | grep -qF -- "  $m" || fail "no \"$m\" line in: $OUT"
  done
  assert_contains "$OUT" "haven run uses: namespaces: they can be made here"
  # root opens /dev/net/tun: pasta, where it is installed.
  if [ -x /usr/bin/pasta ]; then
    assert_contains "$OUT" "Allowlists go out through: pasta: "
  fi
  assert_contains "$OUT" "Policies, for the project $P:"
  doctor_every_policy_said "$OUT"
  assert_contains "$OUT" "  default: runs (namespaces)"
  assert_contains "$OUT" "  strict: runs (namespaces)"
  # claude-code's allowlist has a way out, named.
  echo "$OUT" | grep -A1 "^  claude-code: runs (namespaces)" | grep -q "its allowlist goes out through " \
    || fail "no way out for claude-code's allowlist in: $OUT"
  doctor_no_probe_cgroup

  # The same as JSON.
  haven_in "$P" doctor --json
  assert_eq 0 "$RC" "haven doctor --json"
  echo "$OUT" | jq -e . >/dev/null || fail "not JSON: $OUT"
  assert_eq "namespaces true true 0" "$(echo "$OUT" | jq -r '"\(.isolation) \(.mechanisms.namespaces.ok) \(.mechanisms.cgroups.ok) \(.uid)"')"
  assert_eq "$(ls "$here"/../../policies/*.yaml | wc -l)" \
    "$(echo "$OUT" | jq '[.policies[] | select(.file != null and (.file | startswith("'"$(cd "$here/../.." && pwd)"'/")))] | length')" \
    "policies from the build tree"
  assert_eq "" "$(echo "$OUT" | jq -r '.policies[] | select(.verdict != "runs") | .name')" "policies that do not run"
}

test_doctor_as_user() {
  need_haven
  unset HAVEN_ISOLATION HAVEN_EGRESS_WAY
  make_project
  chown -R 65534:65534 "$P"
  chmod 755 "$WORK"
  # /dev/net/tun is root's alone here (CI's VMs may open it to all).
  local tun_600=false
  [ "$(stat -c %a /dev/net/tun 2>/dev/null)" = 600 ] && tun_600=true
  local haven
  haven=$(world_readable_copy "$HAVEN")
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_RUNTIME_DIR= \
        HAVEN_POLICY_PATH= timeout 60 "$haven" doctor 2>&1)
  RC=$?
  assert_eq 0 "$RC" "haven doctor as uid 65534 ($OUT)"
  assert_contains "$OUT" "haven doctor: uid 65534 in "
  if $tun_600; then
    echo "$OUT" | grep -qE "^  /dev/net/tun     missing: .*(Permission denied|permission denied)" \
      || fail "/dev/net/tun not missing for uid 65534: $OUT"
    assert_contains "$OUT" "Allowlists go out through: forwarder"
  fi
  echo "$OUT" | grep -qE "^  cgroups          missing: .*(Permission denied|permission denied|Read-only)" \
    || fail "cgroups not missing for uid 65534: $OUT"
  doctor_every_policy_said "$OUT"
  if echo "$OUT" | grep -q "^haven run uses: namespaces"; then
    assert_contains "$OUT" "  default: runs (namespaces)"
    # Limits need a cgroup, which this user cannot make: refused by name.
    assert_contains "$OUT" "  strict: refused here: resources.memory, resources.cpus, resources.pids: needs a cgroup"
    assert_contains "$OUT" "  ci: refused here: resources.memory, resources.pids: needs a cgroup"
    if $tun_600; then
      echo "$OUT" | grep -A1 "^  claude-code: runs (namespaces)" | grep -q "its allowlist goes out through forwarder" \
        || fail "claude-code's allowlist does not go out through the forwarder: $OUT"
    fi
  fi
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_RUNTIME_DIR= \
        HAVEN_POLICY_PATH= timeout 60 "$haven" doctor --json 2>/dev/null)
  echo "$OUT" | jq -e . >/dev/null || fail "not JSON: $OUT"
  assert_eq "false 65534" "$(echo "$OUT" | jq -r '"\(.mechanisms.cgroups.ok) \(.uid)"')"
  if $tun_600; then
    assert_eq "false forwarder" "$(echo "$OUT" | jq -r '"\(.mechanisms.tun.ok) \(.egress)"')"
  fi
  doctor_no_probe_cgroup
}

test_doctor_policy_errors_and_options() {
  need_haven
  unset HAVEN_ISOLATION HAVEN_EGRESS_WAY
  make_project
  printf 'name: broken\nnetwork:\n  mode: none\nfilesystem:\n  hide_hme: true\n' > "$P.pol/broken.yaml"
  printf 'extends: default\nname: open\nnetwork:\n  mode: open\n' > "$P.pol/open.yaml"
  haven_in "$P" doctor --policy "$P.pol/broken.yaml" --policy "$P.pol/open.yaml"
  assert_eq 0 "$RC" "a report, whatever it says ($OUT)"
  # Only the policies asked for.
  assert_not_contains "$OUT" "  default: "
  echo "$OUT" | grep -qE "^  $P.pol/broken.yaml: cannot be used: $P.pol/broken.yaml:5:" \
    || fail "the broken policy's error does not name its file and line: $OUT"
  assert_contains "$OUT" "  open: runs (namespaces)"
  haven_in "$P" doctor --json -p "$P.pol/broken.yaml"
  assert_eq "invalid" "$(echo "$OUT" | jq -r '.policies[0].verdict')"
  assert_contains "$(echo "$OUT" | jq -r '.policies[0].error')" "$P.pol/broken.yaml:5:"
  haven_in "$P" doctor --policy no-such-policy-here
  assert_eq 0 "$RC"
  assert_contains "$OUT" "  no-such-policy-here: cannot be used: "

  # Bad options: exit 2, the usage on stderr.
  local err
  err=$(cd "$P" && "$HAVEN" doctor --frobnicate 2>&1 >/dev/null)
  assert_eq 2 "$?" "exit status for an unknown option"
  assert_contains "$err" "haven doctor [--json]"
  haven_in "$P" doctor extra-argument
  assert_eq 2 "$RC"
  haven_in "$P" doctor --help
  assert_eq 0 "$RC"
  assert_contains "$OUT" "haven doctor [--json] [--policy NAME|FILE]..."
}

# haven doctor in a user namespace of the test's own that may make no
# further one (user.max_user_namespaces 0 there), as its root with no
# capabilities: no namespace can be made, as in a container under
# Docker's default profile.  ARGS: doctor's.
doctor_without_namespaces() {
  local dir=$1
  shift
  OUT=$(cd "$dir" && timeout 60 unshare --user --map-root-user sh -c \
        'echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --inh-caps=-all --bounding-set=-all "$@"' \
        sh "$HAVEN" doctor "$@" 2>&1)
  RC=$?
}

test_doctor_without_namespaces() {
  need_haven
  unset HAVEN_ISOLATION HAVEN_EGRESS_WAY
  unshare --user --map-root-user sh -c 'echo 0 > /proc/sys/user/max_user_namespaces' 2>/dev/null \
    || skip "user.max_user_namespaces cannot be set in a user namespace here"
  make_project
  printf 'extends: default\nname: weak\nbest_effort: [private_tmp, protect_after_run]\n' > "$P.pol/weak.yaml"
  doctor_without_namespaces "$P"
  assert_eq 0 "$RC" "haven doctor without namespaces ($OUT)"
  echo "$OUT" | grep -qE "^  user namespaces  missing: .*No space left on device" \
    || fail "user namespaces not missing: $OUT"
  echo "$OUT" | grep -qE "^  namespaces       missing: .*Operation not permitted" \
    || fail "namespaces not missing: $OUT"
  assert_contains "$OUT" "haven run uses: Landlock and seccomp only (no namespaces): namespaces cannot be made here: "
  doctor_every_policy_said "$OUT"
  assert_not_contains "$OUT" "runs (namespaces)"
  # Every verdict comes from the plan: runs, weaker or refused by rule.
  local bad
  bad=$(echo "$OUT" | sed -n '/^Policies, /,$p' | grep -E "^  [^ ]" \
        | grep -vE ": (runs without namespaces|refused here: [^:]+: .+)")
  assert_eq "" "$bad" "policy lines that are no verdict"
  # claude-code's allowlist needs a network namespace: refused unless its
  # best_effort accepts ports only; either way its words name the rule.
  echo "$OUT" | grep -E "^  claude-code: " | grep -q "network" \
    || echo "$OUT" | grep -A20 "^  claude-code: runs without namespaces" | grep -q "network" \
    || fail "claude-code's network rule not named: $OUT"

  # The project's own secrets cannot be hidden without a mount: the
  # files are named.
  assert_contains "$OUT" "  default: refused here: filesystem.block $P/.env: "
  assert_contains "$OUT" "  default: refused here: filesystem.block $P/src/deep/.env: "

  # Namespaces asked for where they cannot be made: every policy refused,
  # saying so.
  HAVEN_ISOLATION=namespaces doctor_without_namespaces "$P" --policy default
  assert_contains "$OUT" "  default: refused here: HAVEN_ISOLATION=namespaces: they cannot be made here ("

  # A project without secrets, and a policy that accepts the weaker
  # forms of what needs a mount: it runs, and says what is weaker.
  local empty
  empty=$(mktemp -d "$WORK/empty-XXXXXX")
  doctor_without_namespaces "$empty" --json --policy "$P.pol/weak.yaml" --policy default
  echo "$OUT" | jq -e . >/dev/null || fail "not JSON: $OUT"
  assert_eq "landlock false false" \
    "$(echo "$OUT" | jq -r '"\(.isolation) \(.mechanisms.namespaces.ok) \(.mechanisms.user_namespaces.ok)"')"
  assert_eq "landlock landlock" "$(echo "$OUT" | jq -r '[.policies[].isolation] | join(" ")')"
  assert_eq "weaker" "$(echo "$OUT" | jq -r '.policies[0].verdict')" "weak policy ($OUT)"
  assert_contains "$(echo "$OUT" | jq -r '.policies[0].weaker[].rule')" "filesystem.tmpfs /tmp"
  assert_eq "refused" "$(echo "$OUT" | jq -r '.policies[1].verdict')" "default policy"
  doctor_without_namespaces "$empty" --policy "$P.pol/weak.yaml"
  assert_contains "$OUT" "  weak: runs without namespaces, 2 rules in a weaker form: filesystem.tmpfs /tmp, filesystem.tmpfs /var/tmp"
  # The same verdicts as where Landlock is asked for (HAVEN_ISOLATION).
  doctor_without_namespaces "$empty" --json --policy "$P.pol/weak.yaml" --policy default
  local forced
  forced=$(cd "$empty" && HAVEN_ISOLATION=landlock timeout 60 "$HAVEN" doctor --json --policy "$P.pol/weak.yaml" \
           --policy default 2>/dev/null)
  assert_eq "HAVEN_ISOLATION=landlock" "$(echo "$forced" | jq -r .isolation_why)"
  assert_eq "$(echo "$OUT" | jq -c '[.policies[] | {verdict, refused: [.refused[].rule], weaker: [.weaker[].rule]}]')" \
    "$(echo "$forced" | jq -c '[.policies[] | {verdict, refused: [.refused[].rule], weaker: [.weaker[].rule]}]')" \
    "verdicts, forced and real"
}
