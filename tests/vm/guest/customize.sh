#!/usr/bin/env bash
# mmdebstrap --customize-hook for the test VM image: runs on the build host
# with the finished root filesystem at $1.
set -euo pipefail
root=$1
guest=$(cd "$(dirname "$0")" && pwd)

echo haven-vm > "$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\thaven-vm\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
printf '/dev/vda\t/\text4\trw,errors=remount-ro\t0\t0\n' > "$root/etc/fstab"
# A fixed machine id: every boot of a fresh overlay would otherwise be a
# "first boot" (systemd-firstboot prompts on the console).
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$root/etc/machine-id"
echo >> "$root/etc/machine-id"

install -m 0755 "$guest/haven-vm-run" "$root/usr/local/sbin/haven-vm-run"
install -m 0644 "$guest/haven-vm-run.service" "$root/etc/systemd/system/haven-vm-run.service"
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' > "$root/etc/systemd/journald.conf.d/haven-vm.conf"

# Drivers the test VM has no use for, which udev would load at every boot
# (slow under TCG): kvm (-cpu max under TCG offers SVM), q35's watchdog,
# SMBus, AHCI and the PC speaker.
for m in kvm_amd kvm_intel iTCO_wdt iTCO_vendor_support lpc_ich i2c_i801 ahci pcspkr; do
  echo "blacklist $m"
done > "$root/etc/modprobe.d/haven-vm.conf"

systemctl --root="$root" enable haven-vm-run.service
# Nothing periodic or interactive: the VM lives for one command.
for u in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
         e2scrub_reap.service fstrim.timer logrotate.timer man-db.timer \
         systemd-tmpfiles-clean.timer getty@tty1.service systemd-firstboot.service \
         modprobe@drm.service modprobe@efi_pstore.service modprobe@dm_mod.service; do
  systemctl --root="$root" mask "$u" >/dev/null 2>&1 || true
done
# Docker (when installed) starts on first use through docker.socket, not at
# every boot.
for u in docker.service containerd.service; do
  if [ -e "$root/lib/systemd/system/$u" ]; then
    systemctl --root="$root" disable "$u"
  fi
done
