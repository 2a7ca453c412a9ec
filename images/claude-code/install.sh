#!/bin/sh
# Claude Code (@anthropic-ai/claude-code) on Debian 12; run as root
# inside the image (images/common/lib.sh says where).
#
# Node: Debian 12's nodejs is 18.  Claude Code since 2.1.2xx declares
# node >= 22, but the package is a native binary: its postinstall
# (install.cjs, plain CommonJS) copies the platform's binary over
# bin/claude.exe and node is not used again.  Debian's node 18 runs that
# postinstall (npm prints an EBADENGINE warning); `claude` itself never
# starts node.  npm comes from npm's registry (lib.sh, install_npm).
. "$(dirname "$0")/lib.sh"
version=${CLAUDE_CODE_VERSION:-2.1.330}

apt_install ca-certificates curl git nodejs ripgrep procps less
install_npm
add_agent_user .claude
npm_global "@anthropic-ai/claude-code@$version"
# The native binary must have replaced the placeholder, or claude is a
# script that fails at first use.
claude --version
finish
