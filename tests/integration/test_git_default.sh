# Everyday git under the default policy (policies/README.md, "Git in
# the sandbox").

# A repository with a committed .env and sub/.env, an untracked
# .env.local (all three hidden by default), and a host home whose global
# config holds an identity and a token.
git_default_project() {
  make_project
  rm -rf "$P/.git" "$P/.env" "$P/src/deep/.env"
  GH=$(mktemp -d "$WORK/home-XXXXXX")
  printf '[user]\n\tname = Host User\n\temail = host@example.com\n[url "https://x:tok-in-gitconfig@example.com/"]\n\tinsteadOf = https://example.com/\n' > "$GH/.gitconfig"
  (cd "$P" && git init -q && echo one > a && echo 'S=committed' > .env && mkdir -p sub && echo 'K=committed' > sub/.env &&
   git add a .env sub/.env src && git -c user.name=setup -c user.email=setup@x commit -qm one) || fail "git setup"
  echo 'U=untracked-secret' > "$P/.env.local"
}

git_in_sandbox() {
  OUT=$(cd "$P" && HOME=$GH timeout 30 "$HAVEN" run -- sh -c "$1" 2>&1 </dev/null)
  RC=$?
}

test_git_default_add_and_commit_with_hidden_env() {
  command -v git > /dev/null || skip "git missing (Debian package git)"
  need_haven
  git_default_project
  git_in_sandbox 'echo two >> a && git add -A && git commit -qam two && echo committed; cat .env.local; git status --short'
  assert_contains "$OUT" committed
  assert_not_contains "$OUT" untracked-secret
  assert_eq "a" "$(git -C "$P" show --name-only --format= HEAD)" "what the sandbox committed"
  assert_eq "S=committed" "$(git -C "$P" show HEAD:.env)" ".env in the commit"
  [ -z "$(git -C "$P" ls-files .env.local)" ] || fail "the hidden untracked .env.local was added"
  assert_eq "Host User <host@example.com>" "$(git -C "$P" log -1 --format='%an <%ae>')" "the host's identity"
}

# A committed, unchanged .env is hidden like any other (explain says
# hidden, and the sandbox once printed it): the sandbox reads blank lines,
# git finds the file unchanged, and a commit of everything (-a, add -A,
# from a subdirectory too) keeps the committed content.  On 2e9dd27 the
# cat printed S=committed.
test_git_default_tracked_secret_hidden() {
  command -v git > /dev/null || skip "git missing (Debian package git)"
  need_haven
  git_default_project
  git_in_sandbox 'cat .env sub/.env; test -w .env && echo WRITABLE; echo "status[$(git status --porcelain)]";
    git diff --exit-code && echo nodiff; echo two >> a && git add -A && (cd sub && git commit -qam two) && echo committed'
  assert_not_contains "$OUT" S=committed
  assert_not_contains "$OUT" K=committed
  assert_not_contains "$OUT" WRITABLE
  assert_contains "$OUT" "status[]"
  assert_contains "$OUT" nodiff
  assert_contains "$OUT" committed
  assert_eq "a" "$(git -C "$P" show --name-only --format= HEAD)" "what the sandbox committed"
  assert_eq "S=committed" "$(git -C "$P" show HEAD:.env)" ".env in the commit"
  assert_eq "K=committed" "$(git -C "$P" show HEAD:sub/.env)" "sub/.env in the commit"
  assert_eq "" "$(git -C "$P" status --porcelain --untracked-files=no)" "git status on the host after the run"
  assert_contains "$("$HAVEN" policy explain default)" "A hidden file git tracks (haven run, the project's top repository) is hidden too"
}

# A tracked secret edited and not committed: hidden too, git in the
# sandbox sees the committed content, so nothing of the edit is committed
# and the real file is untouched.
test_git_default_modified_tracked_secret_not_committed() {
  command -v git > /dev/null || skip "git missing (Debian package git)"
  need_haven
  git_default_project
  echo 'S=local-secret' > "$P/.env"
  git_in_sandbox 'cat .env; echo two >> a; git commit -qam two; echo rc=$?'
  assert_not_contains "$OUT" local-secret
  assert_contains "$OUT" "rc=0"
  assert_eq "a" "$(git -C "$P" show --name-only --format= HEAD)" "what the sandbox committed"
  assert_eq "S=committed" "$(git -C "$P" show HEAD:.env)" ".env in the commit"
  assert_eq "S=local-secret" "$(cat "$P/.env")" "the real .env"
}

# Where a filter of the repository's own could see the placeholder (a
# .gitattributes naming a filter, as git-crypt writes), the file stays
# /dev/null: git refuses it loudly, haven says why, nothing is committed.
test_git_default_tracked_secret_foreign_filter() {
  command -v git > /dev/null || skip "git missing (Debian package git)"
  need_haven
  git_default_project
  echo '.env filter=other' > "$P/.gitattributes"
  git_in_sandbox 'cat .env; echo two >> a; git commit -qam two; echo rc=$?'
  assert_not_contains "$OUT" S=committed
  assert_contains "$OUT" "haven: .env is tracked by git and hidden; because of a .gitattributes naming a filter it is /dev/null"
  assert_eq "one" "$(git -C "$P" log -1 --format=%s)" "no commit was made"
  # The repository's own attributes file (or an include that could name
  # one) would replace haven's: the same.
  rm "$P/.gitattributes"
  git -C "$P" config core.attributesFile /dev/null
  git_in_sandbox 'cat .env; echo two >> a; git commit -qam two; echo rc=$?'
  assert_not_contains "$OUT" S=committed
  assert_contains "$OUT" "haven: .env is tracked by git and hidden; because of the repository's core.attributesFile or include it is /dev/null"
  assert_eq "one" "$(git -C "$P" log -1 --format=%s)" "no commit was made"
}

# The identity comes from the host's global config, nothing else of it
# (the token stays out); the repository's own identity and a --global
# setting made in the sandbox win over it; GIT_AUTHOR_* pass.
test_git_default_identity_from_host() {
  command -v git > /dev/null || skip "git missing (Debian package git)"
  need_haven
  git_default_project
  git_in_sandbox 'git config --list --show-origin; git config --global user.name Scratch && git config user.name'
  assert_not_contains "$OUT" tok-in-gitconfig
  assert_contains "$OUT" "user.email=host@example.com"
  assert_eq "Scratch" "$(echo "$OUT" | tail -1)" "git config --global in the scratch home"
  OUT=$(cd "$P" && HOME=$GH GIT_AUTHOR_NAME="Env Author" timeout 30 "$HAVEN" run -- sh -c \
        'echo 3 >> a && git commit -qam env && git log -1 --format="%an|%cn"' 2>&1 </dev/null)
  assert_eq "Env Author|Host User" "$OUT" "GIT_AUTHOR_NAME passes"
  git -C "$P" config user.name "Repo User"
  git_in_sandbox 'git config user.name'
  assert_eq "Repo User" "$OUT" "the repository's own identity wins"
  assert_contains "$(cat "$P/.git/config")" "Repo User"
}

test_git_default_identity_as_unprivileged_user() {
  command -v git > /dev/null || skip "git missing (Debian package git)"
  need_haven
  git_default_project
  local haven
  haven=$(world_readable_copy "$HAVEN")
  chown -R 65534:65534 "$P" "$GH"
  chmod 755 "$WORK"
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$GH" XDG_STATE_HOME= XDG_RUNTIME_DIR= \
        timeout 30 "$haven" run -- sh -c 'cat .env; echo two >> a && git add -A && git commit -qam two && echo committed' 2>&1 </dev/null)
  assert_contains "$OUT" committed
  assert_not_contains "$OUT" S=committed
  assert_eq "a" "$(git -c safe.directory='*' -C "$P" show --name-only --format= HEAD)" "what the sandbox committed"
  assert_eq "Host User <host@example.com>" "$(git -c safe.directory='*' -C "$P" log -1 --format='%an <%ae>')" \
    "the host's identity"
}

# The protected .git/config stays read-only: git writes config by
# renaming config.lock over it, which the kernel answers EBUSY for a
# mount point.  The file is unchanged, and `git -c` or --global work.
test_git_default_protected_config_stays() {
  command -v git > /dev/null || skip "git missing (Debian package git)"
  need_haven
  git_default_project
  local before
  before=$(cat "$P/.git/config")
  git_in_sandbox 'git config user.name Agent; echo rc=$?; git -c user.name=Agent -c user.email=a@x commit -q --allow-empty -m c && echo dash-c-ok'
  assert_contains "$OUT" "rc=4"
  assert_contains "$OUT" dash-c-ok
  assert_eq "$before" "$(cat "$P/.git/config")" ".git/config"
}
