# The suite's own check: probe.sh, given a stand-in for haven
# (fake-haven.sh) that drops every rule, that refuses without naming one,
# or that refuses by name with a doctor that agrees or not, says FAIL,
# refused or enforced as it must.  Each check's FAIL is thereby shown to
# happen (a suite that could not fail would pass a haven that enforces
# nothing).  One container, Docker's default profile, as root.

# ct_fake_probe NAME MODE DOCTOR: the probe in container NAME with the
# stand-in; its lines in fake-MODE.out.
ct_fake_probe() {
  dk exec -e CT_POLICIES="default claude-code" -e HAVEN=/opt/h-ctests/fake-haven.sh -e FAKE_MODE="$2" -e FAKE_DOCTOR="$3" "$1" \
    /usr/bin/bash /opt/h-ctests/probe.sh > "fake-$2.out" 2>&1
  sed "s/^/$2: /" "fake-$2.out"
}

# ct_expect FILE CHECK PATTERN: each policy's CHECK line in FILE matches
# PATTERN (grep -E).
ct_expect() {
  local p line
  for p in default claude-code; do
    line=$(grep -m1 "^RESULT $p $2 " "$1")
    [[ -n "$line" ]] && echo "$line" | grep -qE "$3" || fail "$1: $p $2: expected /$3/, got: ${line:-no line}"
  done
}

test_probe_verdicts() {
  need_docker
  local n=$CTR_PREFIX-probe c
  defer "dk rm -f $n"
  # shellcheck disable=SC2046
  dk run -d --name "$n" $(ct_mounts -v) "$IMAGE" /usr/bin/sleep infinity > run.out 2>&1 || fail "docker run: $(cat run.out)"
  ct_fake_probe "$n" drop "runs (namespaces)"
  for c in secrets_home secrets_shadow network_tcp exec_block_shell; do
    ct_expect fake-drop.out "$c" 'FAIL: ran with the rule silently dropped'
  done
  ct_expect fake-drop.out project_writable ' enforced$'
  ct_expect fake-drop.out doctor ' agrees: '
  ct_fake_probe "$n" unnamed "runs (namespaces)"
  for c in secrets_home secrets_shadow project_writable network_tcp exec_block_shell; do
    ct_expect fake-unnamed.out "$c" 'FAIL: refused \(exit 125\) without naming the rule'
  done
  ct_expect fake-unnamed.out doctor 'FAIL: haven run neither ran nor refused by name'
  # Refused by name, and a doctor that says the policy runs: disagreement.
  ct_fake_probe "$n" named "runs (namespaces)"
  for c in secrets_home secrets_shadow project_writable network_tcp exec_block_shell; do
    ct_expect fake-named.out "$c" 'refused: .*network\.allow'
  done
  ct_expect fake-named.out doctor 'FAIL: haven run refused \(network\.allow\) but doctor says'
  mv fake-named.out fake-named-disagrees.out
  ct_fake_probe "$n" named "refused here: network.allow: a name allowlist needs a network namespace"
  ct_expect fake-named.out doctor ' agrees: '
}
