#!/usr/bin/env bash
# mmdebstrap --essential-hook for the test VM image (root filesystem at $1),
# before the kernel is installed.  The VM boots with build-image.sh's own
# initramfs, not the one initramfs-tools builds when the kernel is installed
# (the kernel package needs initramfs-tools), so let that one be small and
# quick to build: only the modules of a virtio disk, no resume device.
set -euo pipefail
mkdir -p "$1/etc/initramfs-tools/conf.d"
printf 'MODULES=list\nRESUME=none\n' > "$1/etc/initramfs-tools/conf.d/haven-vm.conf"
printf 'virtio_pci\nvirtio_blk\next4\n' > "$1/etc/initramfs-tools/modules"
