#!/bin/sh
# Aider (aider-chat, from PyPI) on Debian 12; run as root inside the
# image (images/common/lib.sh says where).  Debian has no aider package:
# pip installs it and its dependencies into a virtual environment of
# Debian's python3 (3.11) in /opt/aider.  This needs PyPI (pypi.org,
# files.pythonhosted.org); AIDER_VERSION pins a release.
. "$(dirname "$0")/lib.sh"
spec=aider-chat${AIDER_VERSION:+==$AIDER_VERSION}

apt_install ca-certificates git python3 python3-venv procps less
add_agent_user .aider
python3 -m venv /opt/aider
/opt/aider/bin/pip install --no-cache-dir "$spec"
ln -s /opt/aider/bin/aider /usr/local/bin/aider
aider --version
finish
