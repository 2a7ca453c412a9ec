# Credentials a policy hands over on purpose (policies/README.md,
# "Credentials"): variables named in env.pass, env.set_from_file and
# set_from_env, ssh-agent forwarding, git tokens per allowed host.  Each
# test runs `haven run` and looks inside for what is there and what is not.

# A fresh project, policy directory and home: cr_setup sets P, POL, H.
cr_setup() {
  need_haven
  make_project
  POL=$P.pol
  H=$(mktemp -d "$WORK/home-XXXXXX")
  mkdir -p "$H/.ssh" "$H/.config/haven" "$H/.claude" "$H/.codex" "$H/.gemini" "$H/.aider"
  echo private-key > "$H/.ssh/id_ed25519"
}

# cr_run [VAR=value...] -- haven args: haven run from $P with HOME=$H and
# only the given variables besides PATH; output in $OUT, status in $RC.
cr_run() {
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  OUT=$(cd "$P" && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$H" "${vars[@]}" timeout 30 "$HAVEN" "$@" 2>&1 </dev/null)
  RC=$?
  # An allowlist on a host without any route (an offline VM) runs with
  # loopback only and says so: not what these tests look at.
  OUT=$(sed '/^haven: note: the host has no route/d' <<< "$OUT")
}

test_credentials_named_variables_pass_globs_do_not() {
  cr_setup
  cat > "$POL/env.yaml" <<'EOP'
env:
  pass: [ANTHROPIC_API_KEY, 'OPENAI_*', '*']
EOP
  cr_run ANTHROPIC_API_KEY=sk-ant OPENAI_API_KEY=sk-oai OPENAI_BASE_URL=http://llm GITHUB_TOKEN=ghp MY_PASSWORD=pw \
    OTHER=1 -- run --policy "$POL/env.yaml" -- sh -c 'env | grep -E "^(ANTHROPIC|OPENAI|GITHUB|MY_|OTHER)" | sort'
  assert_eq 0 "$RC" "run ($OUT)"
  assert_eq "ANTHROPIC_API_KEY=sk-ant
OPENAI_BASE_URL=http://llm
OTHER=1" "$OUT" "named key passed, globs passed no credential"
  haven_in "$P" policy explain "$POL/env.yaml"
  assert_eq 1 "$(echo "$OUT" | grep -c ANTHROPIC_API_KEY)" "explain names the key once ($OUT)"
  assert_contains "$OUT" "ANTHROPIC_API_KEY            passed when set: named explicitly (it looks like a credential, *_KEY)"
}

# Each shipped agent policy passes its agent's key and endpoint variables
# and no other secret.  claude-code, codex and gemini-cli keep the API key
# on haven's side (credentials.api): with the key's variable set, the
# sandbox holds the gateway's URL and a placeholder and none of the
# provider's key variables; without it (the agent's own login) the other
# variables pass as env.pass names them.
test_credentials_agent_policies_pass_their_keys() {
  cr_setup
  local vars=(ANTHROPIC_API_KEY=a1 ANTHROPIC_AUTH_TOKEN=a2 CLAUDE_CODE_OAUTH_TOKEN=a3 ANTHROPIC_BASE_URL=a4
              OPENAI_API_KEY=o1 CODEX_API_KEY=o2 OPENAI_BASE_URL=o3 OPENAI_API_BASE=o4
              GEMINI_API_KEY=g1 GOOGLE_API_KEY=g2 GOOGLE_GEMINI_BASE_URL=g3 OPENROUTER_API_KEY=r1
              GITHUB_TOKEN=bad AWS_SECRET_ACCESS_KEY=bad NPM_TOKEN=bad HF_TOKEN=bad DB_PASSWORD=bad)
  local policy want ph=haven-gateway-placeholder
  for policy in claude-code codex gemini-cli aider; do
    case $policy in
      claude-code) want="ANTHROPIC_API_KEY=$ph ANTHROPIC_BASE_URL=http://127.0.0.1:8961" ;;
      codex) want="CODEX_API_KEY=$ph OPENAI_API_KEY=$ph OPENAI_BASE_URL=http://127.0.0.1:8962/v1" ;;
      gemini-cli) want="GEMINI_API_KEY=$ph GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8963" ;;
      aider) want="ANTHROPIC_API_KEY=a1 OPENAI_API_BASE=o4 OPENAI_API_KEY=o1 OPENROUTER_API_KEY=r1" ;;
    esac
    cr_run "${vars[@]}" -- run --policy "$policy" -- \
      sh -c 'env | grep -E "=(a|o|g|r)[0-9]$|=bad$|=haven-gateway-placeholder$|=http://127.0.0.1:" | sort | xargs'
    assert_eq 0 "$RC" "$policy ($OUT)"
    assert_eq "$want" "$OUT" "$policy: its keys, nothing else secret"
  done
  # Without the API key's variable: no gateway, the agent's own login.
  cr_run ANTHROPIC_AUTH_TOKEN=a2 CLAUDE_CODE_OAUTH_TOKEN=a3 ANTHROPIC_BASE_URL=a4 GITHUB_TOKEN=bad -- \
    run --policy claude-code -- sh -c 'env | grep -E "=(a|o|g|r)[0-9]$|=bad$|placeholder|127.0.0.1" | sort | xargs'
  assert_eq 0 "$RC" "claude-code without ANTHROPIC_API_KEY ($OUT)"
  assert_eq "ANTHROPIC_AUTH_TOKEN=a2 ANTHROPIC_BASE_URL=a4 CLAUDE_CODE_OAUTH_TOKEN=a3" "$OUT" \
    "claude-code without ANTHROPIC_API_KEY: its login's variables"
}

test_credentials_set_from_file_and_env() {
  cr_setup
  printf 'ghp_from_file\n' > "$H/.config/haven/gh-token"
  chmod 600 "$H/.config/haven/gh-token"
  cat > "$POL/inject.yaml" <<'EOP'
env:
  set_from_file: {GITHUB_TOKEN: ~/.config/haven/gh-token}
  set_from_env: {NPM_TOKEN: HAVEN_NPM_TOKEN}
EOP
  cr_run HAVEN_NPM_TOKEN=npm_host GITHUB_TOKEN=host_value -- run --policy "$POL/inject.yaml" -- \
    sh -c 'env | grep -E "TOKEN" | sort'
  assert_eq 0 "$RC" "run ($OUT)"
  assert_eq "GITHUB_TOKEN=ghp_from_file
NPM_TOKEN=npm_host" "$OUT" "injected values, the host's names not passed"

  # Refused, each naming the policy entry: a missing host variable, a
  # file others may write, a link (to another secret), one not the caller's.
  cr_run -- run --policy "$POL/inject.yaml" -- true
  assert_eq 125 "$RC"
  assert_eq "haven: $POL/inject.yaml:3:18: env.set_from_env: NPM_TOKEN: the host variable HAVEN_NPM_TOKEN is not set" "$OUT"
  chmod 620 "$H/.config/haven/gh-token"
  cr_run HAVEN_NPM_TOKEN=x -- run --policy "$POL/inject.yaml" -- true
  assert_eq 125 "$RC"
  assert_eq "haven: $POL/inject.yaml:2:19: env.set_from_file: GITHUB_TOKEN: $H/.config/haven/gh-token is writable by others (mode 0620): chmod go-w it" "$OUT"
  chmod 600 "$H/.config/haven/gh-token"
  chown 65534 "$H/.config/haven/gh-token"
  cr_run HAVEN_NPM_TOKEN=x -- run --policy "$POL/inject.yaml" -- true
  assert_eq 125 "$RC"
  assert_contains "$OUT" "gh-token is owned by uid 65534, not by you (uid 0): refusing to read it as a token"
  rm "$H/.config/haven/gh-token"
  ln -s "$H/.ssh/id_ed25519" "$H/.config/haven/gh-token"
  cr_run HAVEN_NPM_TOKEN=x -- run --policy "$POL/inject.yaml" -- true
  assert_eq 125 "$RC"
  assert_eq "haven: $POL/inject.yaml:2:19: env.set_from_file: GITHUB_TOKEN: $H/.config/haven/gh-token is a symbolic link: name the file itself" "$OUT"
  rm "$H/.config/haven/gh-token"
  cr_run HAVEN_NPM_TOKEN=x -- run --policy "$POL/inject.yaml" -- true
  assert_eq 125 "$RC"
  assert_eq "haven: $POL/inject.yaml:2:19: env.set_from_file: GITHUB_TOKEN: token file $H/.config/haven/gh-token: no such file or directory" "$OUT"
  head -c 65537 /dev/zero | tr '\0' x > "$H/.config/haven/gh-token"
  cr_run HAVEN_NPM_TOKEN=x -- run --policy "$POL/inject.yaml" -- true
  assert_eq 125 "$RC"
  assert_contains "$OUT" "gh-token is larger than 65536 bytes"
  printf 'a\0b' > "$H/.config/haven/gh-token"
  cr_run HAVEN_NPM_TOKEN=x -- run --policy "$POL/inject.yaml" -- true
  assert_eq 125 "$RC"
  assert_contains "$OUT" "gh-token holds a NUL byte: not a token"
  rm "$H/.config/haven/gh-token"
  mkfifo "$H/.config/haven/gh-token"
  cr_run HAVEN_NPM_TOKEN=x -- run --policy "$POL/inject.yaml" -- true
  assert_eq 125 "$RC" "a FIFO is refused, not waited on"
  assert_contains "$OUT" "gh-token is not a regular file"
  # A token file inside the project: the sandbox could re-point it.
  rm "$H/.config/haven/gh-token"
  echo tok > "$P/tok" && chmod 600 "$P/tok"
  printf 'env:\n  set_from_file: {GITHUB_TOKEN: %s/tok}\n' "$P" > "$POL/inproject.yaml"
  cr_run -- run --policy "$POL/inproject.yaml" -- true
  assert_eq 125 "$RC"
  assert_contains "$OUT" "refusing to run: the token file $P/tok is inside $P, which the sandbox can write"
}

test_credentials_ssh_agent_forwarded_on_request() {
  cr_setup
  command -v ssh-agent >/dev/null && command -v ssh-add >/dev/null && command -v ssh-keygen >/dev/null \
    || skip "openssh-client is not installed"
  ssh-keygen -q -t ed25519 -N '' -C haven-test-key -f "$WORK/agent-key-$$" || fail "ssh-keygen"
  local agent_out sock pid
  agent_out=$(ssh-agent -s -a "$WORK/agent-$$.sock") || fail "ssh-agent"
  sock=$WORK/agent-$$.sock
  pid=$(echo "$agent_out" | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')
  defer "kill $pid"
  SSH_AUTH_SOCK=$sock ssh-add -q "$WORK/agent-key-$$" || fail "ssh-add"
  printf 'credentials: {ssh_agent: true}\n' > "$POL/agent.yaml"
  cr_run SSH_AUTH_SOCK="$sock" -- run --policy "$POL/agent.yaml" -- \
    sh -c 'echo "$SSH_AUTH_SOCK"; ssh-add -l | cut -d" " -f3; ls -A ~/.ssh 2>/dev/null | wc -l; cat ~/.ssh/id_ed25519 2>/dev/null | grep -c private-key; true'
  assert_eq 0 "$RC" "run ($OUT)"
  assert_eq "/run/haven/ssh-agent.sock
haven-test-key
0
0" "$OUT" "the agent answers inside, ~/.ssh stays hidden"
  # Without ssh_agent: no socket, no variable.
  cr_run SSH_AUTH_SOCK="$sock" -- run -- sh -c 'echo "[$SSH_AUTH_SOCK]"; test -e /run/haven/ssh-agent.sock; echo $?; ssh-add -l >/dev/null 2>&1; echo $?'
  assert_eq "[]
1
2" "$OUT" "no agent unless the policy asks"
  # Asked for, but none running: refused, naming the policy line.
  cr_run -- run --policy "$POL/agent.yaml" -- true
  assert_eq 125 "$RC"
  assert_eq "haven: $POL/agent.yaml:1:26: credentials.ssh_agent is true, but SSH_AUTH_SOCK is not set: no ssh-agent is running (start one: eval \"\$(ssh-agent)\"; ssh-add)" "$OUT"
  kill "$pid"
  cr_run SSH_AUTH_SOCK="$sock" -- run --policy "$POL/agent.yaml" -- true
  assert_eq 125 "$RC"
  assert_contains "$OUT" "credentials.ssh_agent: "
  assert_contains "$OUT" "SSH_AUTH_SOCK=$sock"
}

test_credentials_git_token_only_for_allowed_hosts() {
  command -v git > /dev/null || skip "git missing (Debian package git)"
  cr_setup
  printf 'ghp_git\n' > "$H/.config/haven/git-token"
  chmod 600 "$H/.config/haven/git-token"
  cat > "$POL/git.yaml" <<'EOP'
network: {allow: [github.com, gitlab.example.com]}
credentials:
  git:
    - {host: github.com, token_file: ~/.config/haven/git-token}
    - {host: gitlab.example.com, token_env: HAVEN_GITLAB, username: oauth2}
EOP
  # The project is the sandbox's: a credential helper in its .git/config
  # must not answer (the empty helper drops it).
  git -C "$P" init -q 2>/dev/null || fail "git init"
  git -C "$P" config credential.helper '!f() { echo username=u; echo password=project-helper; }; f'
  local fill='printf "protocol=https\nhost=%s\n\n" "$1" | GIT_TERMINAL_PROMPT=0 git credential fill 2>/dev/null | sed -n "s/^\(username\|password\)=//p" | xargs; echo "rc=$?"'
  cr_run HAVEN_GITLAB='glpat/+x' GITHUB_TOKEN=host -- run --keep-bundle --policy "$POL/git.yaml" -- sh -c "
    f() { $fill; }
    f github.com; f gitlab.example.com; f evil.example.com
    printf 'protocol=http\nhost=github.com\n\n' | GIT_TERMINAL_PROMPT=0 git credential fill 2>&1 | grep -c password=
    printf 'protocol=https\nhost=github.com\nusername=a\npassword=b\n\n' | git credential approve 2>&1; echo approve=\$?
    echo \"[\$GITHUB_TOKEN]\"
    ls -A /run/haven/git-credentials; [ -e /run/haven/git/credentials ]; echo file=\$?"
  assert_eq 0 "$RC" "run ($OUT)"
  local bundle
  bundle=$(echo "$OUT" | sed -n 's/^haven: bundle kept in //p')
  [ -n "$bundle" ] && defer "rm -rf '$bundle'"
  assert_eq "x-access-token ghp_git
rc=0
oauth2 glpat/+x
rc=0

rc=0
0
approve=0
[]
credential.sock
file=1" "$(echo "$OUT" | grep -v '^haven: bundle kept')" "tokens for the listed hosts over https only, from the broker's socket"
  [ -n "$bundle" ] && [ -d "$bundle" ] || fail "no bundle kept ($OUT)"
  [ ! -e "$bundle/git" ] || fail "the run's git broker directory was left in $bundle/git"

  # A host the network does not allow gets no token: refused at load.
  printf 'network: {allow: [github.com]}\ncredentials:\n  git: [{host: gitlab.com, token_env: T}]\n' > "$POL/bad.yaml"
  haven_in "$P" policy check "$POL/bad.yaml"
  assert_eq 125 "$RC" "policy check ($OUT)"
  assert_contains "$OUT" "$POL/bad.yaml:3:9: credentials.git: gitlab.com is not a host network.allow lets the sandbox reach on port 443"
}

# Rootless: the agent and its socket are the user's, the sandbox in a
# user namespace reaches it.
test_credentials_ssh_agent_as_unprivileged_user() {
  cr_setup
  command -v ssh-agent >/dev/null || skip "openssh-client is not installed"
  chown -R 65534:65534 "$P"
  local haven u
  haven=$(world_readable_copy "$HAVEN")
  u=$(mktemp -d "$WORK/agent-user-XXXXXX")
  chown 65534:65534 "$u"
  printf 'credentials: {ssh_agent: true}\n' > "$POL/agent.yaml"
  chmod -R a+rX "$POL"
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent \
        timeout 60 sh -c 'eval "$(ssh-agent -s -a "$1/a.sock")" >/dev/null || exit 1
          trap "kill \$SSH_AGENT_PID" EXIT
          ssh-keygen -q -t ed25519 -N "" -C rootless-key -f "$1/k" && ssh-add -q "$1/k" || exit 1
          "$2" run --policy "$3" -- sh -c "id -u; ssh-add -l | cut -d\" \" -f3"' sh "$u" "$haven" "$POL/agent.yaml" 2>&1)
  assert_eq "65534
rootless-key" "$OUT"
}
