#!/usr/bin/bash
# The checks, run INSIDE a container as the user under test:
#   probe.sh [PROJECT]   (default $HOME/project)
# For each policy (CT_POLICIES, default "default claude-code"): secrets
# hidden (~/.ssh/id_rsa in this user's home, /etc/shadow), the project
# writable, network (a TCP connect to a listener of this container's
# refused), exec (the policy plus block_shell: no shell runs); then
# `haven doctor`, whose verdict on each policy must agree with what
# `haven run` did.  One line per check:
#   RESULT POLICY CHECK enforced [(without namespaces)]
#   RESULT POLICY CHECK refused: RULE-LINE          (exit 125, named)
#   RESULT POLICY CHECK FAIL: WHY
# A check FAILs when the run was refused without naming the rule and
# pointing at haven doctor (today's "clone container init: operation not
# permitted" is such a refusal), when it did not run and was not refused,
# and when it ran with the rule silently dropped.  Each check's probe is
# first run without haven (a control): a probe that cannot see the
# secret, write, connect or run a shell there would pass for nothing.
set -u
HAVEN=${HAVEN:-/usr/local/bin/haven}
PROJECT=${1:-$HOME/project}
# NAME+weaker: the shipped policy NAME extended by a file that accepts
# every weaker form a run without namespaces offers for files, /tmp,
# the allowlist and limits (best_effort; not unix_sockets): where
# namespaces cannot be made it runs, and its checks then show what
# Landlock and seccomp enforce.
POLICIES=${CT_POLICIES:-default claude-code default+weaker claude-code+weaker}
RAN=H-CTESTS-RAN
SECRET=H-CTESTS-SECRET-KEY
SHADOW=H-CTESTS-SHADOW
# A rule as the plan names it (filesystem.tmpfs, network.allow...), or
# the best_effort name that would accept its weaker form.
RULE_RE='(filesystem|network|credentials|resources|process|syscalls|capabilities|kubernetes|env|home|best_effort)\.[a-z_]+'
scratch=$(mktemp -d /tmp/h-ctests-probe.XXXXXX)
listener=
cleanup() {
  [ -z "$listener" ] || kill "$listener" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

say() { echo "RESULT $*"; }
oneline() { tr '\n' ' ' < "$1" | cut -c1-"${2:-300}"; }
# The error a failed run ended with (its last line: the notes come first).
lasterr() { grep -v '^[[:space:]]*$' "$1" | tail -1 | cut -c1-300; }

# The secrets and the project.
mkdir -p "$PROJECT" "$HOME/.ssh" || { say setup - FAIL: cannot make "$PROJECT" or "$HOME/.ssh"; exit 0; }
echo "$SECRET" > "$HOME/.ssh/id_rsa" && chmod 600 "$HOME/.ssh/id_rsa"
cd "$PROJECT" || exit 0

# A TCP listener of this container's (outside any sandbox), on every
# address: the sandbox's connects go to loopback and, where the container
# has one, its own network address.
python3 - "$scratch/port" > "$scratch/listener.log" 2>&1 <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("0.0.0.0", 0))
s.listen(16)
open(sys.argv[1] + ".part", "w").write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".part", sys.argv[1])
while True:
    c, _ = s.accept()
    c.close()
PY
listener=$!
for _ in $(seq 50); do [ -s "$scratch/port" ] && break; sleep 0.1; done
PORT=$(cat "$scratch/port" 2>/dev/null)
ADDRS=127.0.0.1
addr=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub(/\/.*/, "", $4); print $4; exit}')
[ -z "$addr" ] || ADDRS="$ADDRS $addr"

# The probes (bash -c scripts), each printing $RAN first: evidence that
# the command ran at all.
P_HOME="echo $RAN; cat '$HOME/.ssh/id_rsa'"
P_SHADOW="echo $RAN; cat /etc/shadow"
P_WRITE="echo $RAN; echo written > '$PROJECT/h-ctests-written'"
P_NET="echo $RAN; for a in $ADDRS; do (exec 3<>/dev/tcp/\$a/$PORT) 2>/dev/null && echo CONNECTED \$a; done"
P_EXEC="import subprocess
print('$RAN', flush=True)
try:
    subprocess.run(['/bin/sh', '-c', 'echo SHELL-RAN'])
except OSError as e:
    print('no shell:', e)"

# The controls: each probe shows the violation when nothing holds it.
controls_ok=1
control() { # NAME WANT COMMAND...
  local name=$1 want=$2
  shift 2
  if ! "$@" 2>&1 | grep -q "$want"; then
    say all "$name" "FAIL: the probe's control (no haven) did not see '$want': it could not tell a dropped rule"
    controls_ok=0
  fi
}
control secrets_home "$SECRET" bash -c "$P_HOME"
control secrets_shadow "$SHADOW" bash -c "$P_SHADOW"
control project_writable "$RAN" bash -c "$P_WRITE; cat '$PROJECT/h-ctests-written'"
control network_tcp CONNECTED bash -c "$P_NET"
control exec_block_shell SHELL-RAN python3 -c "$P_EXEC"
rm -f "$PROJECT/h-ctests-written"
[ "$controls_ok" = 1 ] || exit 0

# hrun POLICY NAME COMMAND...: haven run, its output in $scratch/NAME.out
# and .err, its status in RC.
hrun() {
  local p=$1 name=$2
  shift 2
  timeout -k 5 90 "$HAVEN" run --policy "$p" -- "$@" > "$scratch/$name.out" 2> "$scratch/$name.err" < /dev/null
  RC=$?
}

# verdict POLICY CHECK NAME HELD: the line for one check (see the top).
# Also keeps, per policy, how its runs went (for doctor's agreement).
declare -A OUTCOME=() REFUSAL=()
verdict() {
  local p=$1 c=$2 name=$3 held=$4 err=$scratch/$3.err out=$scratch/$3.out mode=
  # What haven said, for the test's log (notes, refusals, errors).
  sed "s/^/stderr $p $c: /" "$err"
  if [ "$RC" = 125 ]; then
    # A refusal by name: its last line points at haven doctor and a line
    # before it names a rule (a note, which also names one and points at
    # haven doctor, does not count: the run may have failed after it).
    if lasterr "$err" | grep -q 'haven doctor' && grep -v 'note:' "$err" | grep -qE "$RULE_RE"; then
      # Every rule the refusal names (its lines "  RULE: why"), else the
      # first line that names one.
      local rules
      rules=$(grep -E "^[[:space:]]+${RULE_RE}[^:]*:" "$err" | sed 's/^[[:space:]]*//; s/: .*//' | paste -sd ';' | sed 's/;/; /g')
      [ -n "$rules" ] || rules=$(grep -v 'note:' "$err" | grep -m1 -E "$RULE_RE" | cut -c1-200)
      say "$p" "$c" "refused: $rules"
      OUTCOME[$p]=${OUTCOME[$p]:-refused}
      local r
      for r in $(grep -v 'note:' "$err" | grep -oE "$RULE_RE" | sort -u); do
        [[ " ${REFUSAL[$p]:-} " == *" $r "* ]] || REFUSAL[$p]="${REFUSAL[$p]:-} $r"
      done
    else
      say "$p" "$c" "FAIL: refused (exit 125) without naming the rule or pointing at haven doctor: $(lasterr "$err")"
      OUTCOME[$p]=unnamed
    fi
    return
  fi
  if ! grep -qx "$RAN" "$out"; then
    say "$p" "$c" "FAIL: did not run (exit $RC) and was not refused by name: $(lasterr "$err")"
    OUTCOME[$p]=unnamed
    return
  fi
  if grep -q 'namespaces cannot be made' "$err"; then
    mode=" (without namespaces)"
    OUTCOME[$p]=${OUTCOME[$p]:-landlock}
  else
    OUTCOME[$p]=${OUTCOME[$p]:-namespaces}
  fi
  if [ "$held" = 1 ]; then
    say "$p" "$c" "enforced$mode"
  else
    say "$p" "$c" "FAIL: ran$mode with the rule silently dropped: $(oneline "$out" 200) $(oneline "$err" 200)"
  fi
}

# policy_arg P: what --policy gets for P (a shipped name, or the file
# of P+weaker, written outside the project); policy_name P: the name
# haven doctor gives it.
policy_arg() {
  case $1 in
    *+weaker)
      local f=$scratch/${1%+weaker}-weaker.yaml
      [ -e "$f" ] || printf 'name: h-ctests-%s-weaker\nextends: %s\nbest_effort: [private_tmp, protect_after_run, network_ports, cgroups]\n' \
        "${1%+weaker}" "${1%+weaker}" > "$f"
      echo "$f" ;;
    *) echo "$1" ;;
  esac
}
policy_name() {
  case $1 in *+weaker) echo "h-ctests-${1%+weaker}-weaker" ;; *) echo "$1" ;; esac
}

for p in $POLICIES; do
  arg=$(policy_arg "$p")
  hrun "$arg" home bash -c "$P_HOME"
  grep -q "$SECRET" "$scratch/home.out"
  verdict "$p" secrets_home home $?
  hrun "$arg" shadow bash -c "$P_SHADOW"
  grep -q "$SHADOW" "$scratch/shadow.out"
  verdict "$p" secrets_shadow shadow $?
  rm -f "$PROJECT/h-ctests-written"
  hrun "$arg" write bash -c "$P_WRITE"
  held=0
  [ "$(cat "$PROJECT/h-ctests-written" 2>/dev/null)" = written ] && held=1
  verdict "$p" project_writable write $held
  hrun "$arg" net bash -c "$P_NET"
  grep -q CONNECTED "$scratch/net.out"
  verdict "$p" network_tcp net $?
  # The policy with block_shell (a file extending it).
  printf 'name: h-ctests-noshell-%s\nextends: %s\nprocess:\n  block_shell: true\n' "$(policy_name "$p")" "$arg" \
    > "$scratch/noshell-$p.yaml"
  hrun "$scratch/noshell-$p.yaml" exec python3 -c "$P_EXEC"
  grep -q SHELL-RAN "$scratch/exec.out"
  verdict "$p" exec_block_shell exec $?
done

# haven doctor, as this user, here: it runs, and its verdict on each
# policy agrees with what haven run did (a refused policy: refused, with
# the rules run named; one that ran: runs, with or without namespaces
# as run said).
dargs=()
for p in $POLICIES; do dargs+=(--policy "$(policy_arg "$p")"); done
timeout -k 5 60 "$HAVEN" doctor "${dargs[@]}" > "$scratch/doctor.out" 2> "$scratch/doctor.err"
drc=$?
sed 's/^/doctor: /' "$scratch/doctor.out" "$scratch/doctor.err"
if [ "$drc" != 0 ] || [ ! -s "$scratch/doctor.out" ]; then
  say all doctor "FAIL: haven doctor exited $drc: $(oneline "$scratch/doctor.err")"
  exit 0
fi
for p in $POLICIES; do
  line=$(grep -m1 -E "^[[:space:]]*$(policy_name "$p"):" "$scratch/doctor.out")
  if [ -z "$line" ]; then
    say "$p" doctor "FAIL: haven doctor says nothing of policy $p"
    continue
  fi
  case ${OUTCOME[$p]:-} in
    refused)
      if [[ "$line" != *": refused here: "* ]]; then
        say "$p" doctor "FAIL: haven run refused ($(echo ${REFUSAL[$p]})) but doctor says: $line"
        continue
      fi
      for r in ${REFUSAL[$p]}; do
        grep -q -- "$r" "$scratch/doctor.out" || { say "$p" doctor "FAIL: haven run refused $r, doctor does not name it: $line"; continue 2; }
      done
      say "$p" doctor "agrees: $line" ;;
    landlock)
      if [[ "$line" == *": runs without namespaces"* ]]; then say "$p" doctor "agrees: $line"
      else say "$p" doctor "FAIL: haven run ran without namespaces but doctor says: $line"; fi ;;
    namespaces)
      if [[ "$line" == *": runs"* && "$line" != *"without namespaces"* ]]; then say "$p" doctor "agrees: $line"
      else say "$p" doctor "FAIL: haven run ran with namespaces but doctor says: $line"; fi ;;
    *)
      say "$p" doctor "FAIL: haven run neither ran nor refused by name; doctor says: $line" ;;
  esac
done
