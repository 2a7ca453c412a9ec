# The stand-in for mcr.microsoft.com/devcontainers/base:debian (there is
# no registry in the tests): a Debian userland with bash and git, and the
# user vscode made the way that image makes it, with plain useradd
# (passwd line vscode:x:1000:1000::/home/vscode:/bin/bash, empty comment).
ARG BASE_IMAGE
FROM $BASE_IMAGE
RUN useradd -m -s /bin/bash vscode
