# Steps every agent image shares.  Sourced by images/AGENT/install.sh,
# which runs as root inside the image's root filesystem: in the
# Dockerfile's RUN (docker build / podman build from debian:12), or in
# mmdebstrap's customize hook (images/build-rootfs.sh).  Both paths run
# the same script, so the two images hold the same files.
set -eu
export DEBIAN_FRONTEND=noninteractive

# The user the agent runs as: uid/gid 1000, a passwd entry with a real
# home and shell, as `useradd` on a workstation makes one.  Haven's
# policies read `~` in an engine container as this home (the image's
# passwd, or $HOME), so the agent's state directories (~/.claude,
# ~/.codex, ...) are found where the agent looks.
AGENT_USER=agent
AGENT_UID=1000
AGENT_HOME=/home/agent

# apt_install PACKAGE...: from Debian's archive only.
apt_install() {
  apt-get update
  apt-get install -y --no-install-recommends "$@"
}

# add_agent_user [STATE-DIR...]: the user, and the agent's state
# directories in its home (~/.claude, ...), owned by it.  Haven's policy
# hides the home at run time; these are there for the engine: a new named
# volume mounted on one (compose, devcontainer) starts as a copy of the
# image's directory, owner included, so the agent can write its state
# there.
add_agent_user() {
  local d
  groupadd --gid "$AGENT_UID" "$AGENT_USER"
  useradd --uid "$AGENT_UID" --gid "$AGENT_UID" --comment "haven agent" \
    --home-dir "$AGENT_HOME" --create-home --shell /bin/bash "$AGENT_USER"
  for d in "$@"; do
    install -d -o "$AGENT_USER" -g "$AGENT_USER" -m 0700 "$AGENT_HOME/$d"
  done
  # The project is mounted here (docker run -v "$PWD:/workspace").
  install -d -o "$AGENT_USER" -g "$AGENT_USER" -m 0755 /workspace
}

# npm itself, from npm's registry rather than Debian: Debian 12's npm
# package (9.2) pulls in some 300 node-* packages (webpack, babel, jest)
# and took 4 of the 4.5 minutes of a first build here; npm's own tarball
# bundles its dependencies and is one download.  Pinned, and checked
# against the registry's integrity hash before anything in it runs.
# npm 10 is the last line that runs on Debian 12's node 18.
NPM_VERSION=10.9.9
NPM_INTEGRITY=sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==
NPM_REGISTRY=https://registry.npmjs.org

# install_npm: needs nodejs, curl and ca-certificates (apt_install).
install_npm() {
  local tmp got
  tmp=$(mktemp -d)
  curl -fsSL --retry 3 -o "$tmp/npm.tgz" "$NPM_REGISTRY/npm/-/npm-$NPM_VERSION.tgz"
  got=sha512-$(openssl dgst -sha512 -binary "$tmp/npm.tgz" | base64 -w0)
  if [ "$got" != "$NPM_INTEGRITY" ]; then
    echo "npm-$NPM_VERSION.tgz: integrity $got, expected $NPM_INTEGRITY" >&2
    return 1
  fi
  tar -xzf "$tmp/npm.tgz" -C "$tmp"
  node "$tmp/package/bin/npm-cli.js" install --global --prefix /usr/local --no-audit --no-fund "$tmp/npm.tgz"
  rm -rf "$tmp"
}

# npm_global PACKAGE@VERSION...: into /usr/local (node_modules in
# /usr/local/lib, commands in /usr/local/bin), from npm's registry; /usr
# is dpkg's.
npm_global() {
  npm install --global --prefix /usr/local --no-audit --no-fund --no-update-notifier "$@"
}

# What the build leaves behind and the image does not need.
finish() {
  apt-get clean
  rm -rf /var/lib/apt/lists/* /root/.npm /root/.cache /tmp/* /var/tmp/*
}
