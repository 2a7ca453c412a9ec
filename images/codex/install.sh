#!/bin/sh
# Codex CLI (@openai/codex) on Debian 12; run as root inside the image
# (images/common/lib.sh says where).  The package declares node >= 16:
# Debian 12's node 18 runs its launcher (bin/codex.js), which starts the
# native binary of the platform's optional dependency.
. "$(dirname "$0")/lib.sh"
version=${CODEX_VERSION:-0.169.0}

apt_install ca-certificates curl git nodejs ripgrep procps less
install_npm
add_agent_user .codex
npm_global "@openai/codex@$version"
codex --version
finish
