# The restricted ssh-agent view (credentials.ssh_agent {keys: [...]}):
# haven run against a real ssh-agent holding two keys, the policy naming
# one.  Inside: the view lists only that key, signs with it and with no
# other, refuses to remove keys; on the host: the agent keeps both keys
# and the trail has a record of each sign request.  Uses cr_setup and
# cr_run (test_credentials.sh).

# sv_agent: two keys a and b in $K (their .pub copies in $P), a real
# agent holding both at $SOCK; FA, FB their fingerprints.
sv_agent() {
  cr_setup
  command -v ssh-agent >/dev/null && command -v ssh-add >/dev/null && command -v ssh-keygen >/dev/null \
    || skip "openssh-client is not installed"
  command -v python3 >/dev/null || skip "python3 is not installed (it writes a sign request by hand)"
  K=$(mktemp -d "$WORK/sshview-XXXXXX")
  ssh-keygen -q -t ed25519 -N '' -C key-a -f "$K/a" && ssh-keygen -q -t ed25519 -N '' -C key-b -f "$K/b" \
    || fail "ssh-keygen"
  SOCK=$K/agent.sock
  local agent_out pid
  agent_out=$(ssh-agent -s -a "$SOCK") || fail "ssh-agent"
  pid=$(echo "$agent_out" | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')
  defer "kill $pid"
  SSH_AUTH_SOCK=$SOCK ssh-add -q "$K/a" "$K/b" 2>/dev/null || fail "ssh-add"
  # Only the agent can sign from here on.
  rm "$K/a" "$K/b"
  cp "$K/a.pub" "$K/b.pub" "$P/"
  FA=$(ssh-keygen -lf "$K/a.pub" | cut -d' ' -f2)
  FB=$(ssh-keygen -lf "$K/b.pub" | cut -d' ' -f2)
}

# A sign request for the key in $1 (a .pub file) written by hand, so that
# one for a key the view does not list reaches it (ssh-keygen would not
# send it): prints the answer's message type (5 failure, 14 signature).
SV_SIGN='import base64, os, socket, struct, sys
blob = base64.b64decode(open(sys.argv[1]).read().split()[1])
s = lambda b: struct.pack(">I", len(b)) + b
msg = bytes([13]) + s(blob) + s(b"data") + struct.pack(">I", 0)
c = socket.socket(socket.AF_UNIX); c.connect(os.environ["SSH_AUTH_SOCK"])
c.sendall(struct.pack(">I", len(msg)) + msg)
n = struct.unpack(">I", c.recv(4))[0]
print(c.recv(n)[0])'

test_ssh_view_lists_and_signs_only_the_named_key() {
  sv_agent
  printf 'credentials: {ssh_agent: {keys: ["%s"]}}\naudit: {log: %s/trail.jsonl}\n' "$FA" "$K" > "$POL/view.yaml"
  cr_run SSH_AUTH_SOCK="$SOCK" -- run --policy "$POL/view.yaml" -- sh -c "
    echo \"\$SSH_AUTH_SOCK\"; ls -A /run/haven/ssh-agent; test -e /run/haven/ssh-agent.sock; echo agent-socket=\$?
    ssh-add -l | cut -d' ' -f2,3
    echo data > /tmp/m
    ssh-keygen -q -Y sign -f a.pub -n file /tmp/m >/dev/null 2>&1; echo sign-a=\$?
    ssh-keygen -Y check-novalidate -n file -s /tmp/m.sig < /tmp/m >/dev/null 2>&1; echo verify-a=\$?
    rm -f /tmp/m.sig; ssh-keygen -q -Y sign -f b.pub -n file /tmp/m >/dev/null 2>&1; echo sign-b=\$?
    python3 -c '$SV_SIGN' b.pub
    ssh-add -D >/dev/null 2>&1; echo remove-all=\$?
    ssh-add -d a.pub >/dev/null 2>&1; echo remove-a=\$?
    ssh-add -x </dev/null >/dev/null 2>&1; echo lock=\$?"
  assert_eq 0 "$RC" "run ($OUT)"
  assert_eq "/run/haven/ssh-agent/agent.sock
agent.sock
agent-socket=1
$FA key-a
sign-a=0
verify-a=0
sign-b=255
5
remove-all=1
remove-a=1
lock=1" "$OUT" "the view lists and signs with key a only"
  # The real agent still holds both keys, unlocked.
  assert_eq 2 "$(SSH_AUTH_SOCK=$SOCK ssh-add -l | wc -l)" "the agent's keys"
  # One record per sign request: a's allowed, b's refused; nothing else
  # of them (never the data).
  local recs
  recs=$(grep '"event":"ssh-sign"' "$K/trail.jsonl" | sed 's/.*"event":"ssh-sign",//; s/"container":"[^"]*",//; s/"run":"[0-9a-f]*",//; s/,"seq":[0-9]*,"prev":"[0-9a-f]*"//')
  assert_eq "\"policy\":\"view\",\"key\":\"$FA\",\"allowed\":true}
\"policy\":\"view\",\"key\":\"$FB\",\"allowed\":false}" "$recs" "the trail's sign records"
}

# A key named by its public key file, read at each run; a file the
# sandbox could rewrite is refused, as a token file is.
test_ssh_view_key_from_file() {
  sv_agent
  printf 'credentials: {ssh_agent: {keys: [%s/b.pub]}}\n' "$K" > "$POL/file.yaml"
  cr_run SSH_AUTH_SOCK="$SOCK" -- run --policy "$POL/file.yaml" -- sh -c "ssh-add -l | cut -d' ' -f2,3"
  assert_eq 0 "$RC" "run ($OUT)"
  assert_eq "$FB key-b" "$OUT" "the key in the file"
  printf 'credentials: {ssh_agent: {keys: [%s/b.pub]}}\n' "$P" > "$POL/inproject.yaml"
  cr_run SSH_AUTH_SOCK="$SOCK" -- run --policy "$POL/inproject.yaml" -- true
  assert_eq 125 "$RC"
  assert_contains "$OUT" "$P/b.pub is inside $P, which the sandbox can write"
  # Not a public key: refused naming the entry.
  echo "not a key" > "$K/bad.pub"
  printf 'credentials: {ssh_agent: {keys: [%s/bad.pub]}}\n' "$K" > "$POL/bad.yaml"
  cr_run SSH_AUTH_SOCK="$SOCK" -- run --policy "$POL/bad.yaml" -- true
  assert_eq 125 "$RC"
  assert_contains "$OUT" "$POL/bad.yaml:1:34: credentials.ssh_agent.keys: $K/bad.pub: the key is not base64"
  # No agent: refused before the run, as with ssh_agent: true.
  cr_run -- run --policy "$POL/file.yaml" -- true
  assert_eq 125 "$RC"
  assert_contains "$OUT" "SSH_AUTH_SOCK is not set"
}

# Rootless: the agent, its socket and the run are the user's; the view's
# socket is reached from the sandbox's user namespace.
test_ssh_view_as_unprivileged_user() {
  cr_setup
  command -v ssh-agent >/dev/null || skip "openssh-client is not installed"
  chown -R 65534:65534 "$P"
  local haven u
  haven=$(world_readable_copy "$HAVEN")
  u=$(mktemp -d "$WORK/sshview-user-XXXXXX")
  chown 65534:65534 "$u"
  chmod -R a+rX "$POL"
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent \
        timeout 60 sh -c 'eval "$(ssh-agent -s -a "$1/a.sock")" >/dev/null || exit 1
          trap "kill \$SSH_AGENT_PID" EXIT
          ssh-keygen -q -t ed25519 -N "" -C shown-key -f "$1/k" && ssh-keygen -q -t ed25519 -N "" -C hidden-key -f "$1/h" \
            && ssh-add -q "$1/k" "$1/h" 2>/dev/null || exit 1
          printf "credentials: {ssh_agent: {keys: [%s/k.pub]}}\n" "$1" > "$1/view.yaml"
          "$2" run --policy "$1/view.yaml" -- sh -c "id -u; ssh-add -l | cut -d\" \" -f3"' sh "$u" "$haven" 2>&1)
  assert_eq "65534
shown-key" "$OUT"
}
