#!/usr/bin/env bash
# mmdebstrap --essential-hook for the test VM image (root filesystem at $1),
# before the kernel is installed: initramfs-tools builds a small initrd with
# just what a virtio disk needs instead of one with every driver, and there
# is no resume device to wait for.
set -euo pipefail
mkdir -p "$1/etc/initramfs-tools/conf.d"
printf 'MODULES=list\nRESUME=none\n' > "$1/etc/initramfs-tools/conf.d/haven-vm.conf"
printf 'virtio_pci\nvirtio_blk\next4\n' > "$1/etc/initramfs-tools/modules"
