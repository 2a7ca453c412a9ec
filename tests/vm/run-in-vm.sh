#!/usr/bin/env bash
# Run a command as root in a throwaway cgroup v2 (pure unified) Debian 12 VM.
#
#   tests/vm/run-in-vm.sh [--timeout SECONDS] [--mem MB] [--cpus N] -- COMMAND...
#
# Boots the image from build-image.sh (building it first if it is not in the
# cache) with a copy-on-write overlay that is thrown away afterwards, shares
# this checkout into the VM read-write at the same absolute path, runs
# COMMAND there (cwd: the checkout) once systemd is up, prints its stdout and
# stderr as they come, powers the VM off and exits with COMMAND's status:
# 124 when the timeout ended the VM, 125 when the VM failed to run the
# command.  No network device.  Uses KVM when /dev/kvm works, else TCG.
#
# Environment: VM_CACHE_DIR (default /var/cache/haven-vm), VM_VERBOSE=1
# (stream the serial console to stderr), VM_KERNEL_ARGS (more kernel
# arguments), VM_ACCEL=kvm|tcg (force one), and build-image.sh's.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
timeout_s=1800
mem=2048
cpus=$(nproc)
usage() { echo "usage: $0 [--timeout SECONDS] [--mem MB] [--cpus N] -- COMMAND..." >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
    --mem) [ $# -ge 2 ] || usage; mem=$2; shift 2 ;;
    --cpus) [ $# -ge 2 ] || usage; cpus=$2; shift 2 ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[ $# -gt 0 ] || usage
for v in "$timeout_s" "$mem" "$cpus"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || usage
done

say() { printf 'run-in-vm: %s\n' "$*" >&2; }
qemu=$(command -v qemu-system-x86_64) || { say "qemu-system-x86_64 is missing: apt-get install qemu-system-x86 qemu-utils"; exit 125; }
command -v qemu-img >/dev/null || { say "qemu-img is missing: apt-get install qemu-utils"; exit 125; }
[ "$(id -u)" = 0 ] || { say "must run as root (9p passthrough shares the checkout as root)"; exit 125; }

image=$(VM_CACHE_DIR=${VM_CACHE_DIR:-/var/cache/haven-vm} "$here/build-image.sh") || { say "no image"; exit 125; }
touch "$image/.last-used"

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/haven-vm.XXXXXX")
qpid=
tails=()
cleanup() {
  local p
  # $qpid is timeout(1), which passes SIGTERM on to qemu; qemu.pid is qemu.
  local qemu_pid=
  [ -s "$tmp/qemu.pid" ] && qemu_pid=$(cat "$tmp/qemu.pid" 2>/dev/null)
  if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
    kill "$qpid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$qpid" 2>/dev/null || true
  fi
  if [ -n "$qemu_pid" ] && [ "$(cat "/proc/$qemu_pid/comm" 2>/dev/null)" = qemu-system-x86 ]; then
    kill -9 "$qemu_pid" 2>/dev/null || true
  fi
  for p in "${tails[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# KVM if it can really boot this kernel, else software emulation.  The
# probe boots the kernel with no root filesystem: it must reach its panic
# (and qemu, with -no-reboot, exit) within 5 s.  Some nested hosts refuse
# -cpu host's IA32_ARCH_CAPABILITIES MSR: then it tries without.  A host whose
# KVM is PVM only (kvm_pvm, no kvm_intel/kvm_amd) runs only PVM guest kernels.
accel=${VM_ACCEL:-}
cpu=
kvm_probe() {
  # (Not the subshell's last command, so that bash's report of a qemu that
  # aborted goes to /dev/null too.)
  ( timeout 5 "$qemu" -accel kvm -cpu "$1" -M q35 -m 256 -nodefaults -display none \
      -monitor none -serial none -no-reboot -kernel "$image/vmlinuz" \
      -append "console=ttyS0 panic=-1 root=/dev/nonexistent quiet" </dev/null; exit $? ) >/dev/null 2>&1
}
if [ "$accel" != tcg ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
  if [ -d /sys/module/kvm_pvm ] && [ ! -d /sys/module/kvm_intel ] && [ ! -d /sys/module/kvm_amd ]; then
    say "/dev/kvm is PVM (kvm_pvm), which cannot boot a stock Debian kernel"
  else
    for c in host host,-arch-capabilities; do
      if kvm_probe "$c"; then cpu=$c; break; fi
    done
    [ -n "$cpu" ] || say "KVM cannot boot the kernel here"
  fi
fi
if [ -n "$cpu" ]; then
  accel=kvm
  accel_args=(-accel kvm -cpu "$cpu")
  say "using KVM (-cpu $cpu)"
else
  [ "$accel" = kvm ] && { say "VM_ACCEL=kvm but KVM cannot run a VM here"; exit 125; }
  accel=tcg
  accel_args=(-accel tcg -cpu max)
  say "using TCG (software emulation: slow, timings are not comparable to hardware)"
fi

# The control share: the command (cwd: the checkout) and the checkout's path
# in; the exit status out.
mkdir -p "$tmp/ctl"
printf '%s\n' "$repo" > "$tmp/ctl/src"
{
  printf 'cd %q || exit 125\n' "$repo"
  printf 'exec'
  printf ' %q' "$@"
  printf '\n'
} > "$tmp/ctl/cmd"
printf '%s\n' "$*" > "$tmp/ctl/cmd.txt"
: > "$tmp/out"
: > "$tmp/console.log"

qemu-img create -q -f qcow2 -F raw -b "$image/rootfs.img" "$tmp/overlay.qcow2"

# cryptomgr.notests: the crypto self-tests take seconds under TCG.
cmdline="root=/dev/vda rw console=ttyS0 quiet panic=-1 cryptomgr.notests haven.run=1"
cmdline+=" systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all ${VM_KERNEL_ARGS:-}"
start=$(date +%s%N)
# timeout ends qemu (exit 124) and, 10 s later, kills it.
timeout -k 10 "$timeout_s" "$qemu" \
  -name haven-vm -pidfile "$tmp/qemu.pid" "${accel_args[@]}" -M q35 -smp "$cpus" -m "$mem" \
  -nodefaults -no-user-config -display none -vga none -nic none -no-reboot \
  -monitor none -serial "file:$tmp/console.log" \
  -kernel "$image/vmlinuz" -initrd "$image/initrd.img" -append "$cmdline" \
  -drive "file=$tmp/overlay.qcow2,format=qcow2,if=virtio,cache=unsafe,discard=unmap" \
  -device virtio-rng-pci \
  -virtfs "local,path=$repo,mount_tag=havensrc,security_model=passthrough,multidevs=remap" \
  -virtfs "local,path=$tmp/ctl,mount_tag=havenctl,security_model=passthrough" \
  -device virtio-serial-pci -chardev "file,id=hout,path=$tmp/out" \
  -device virtserialport,chardev=hout,name=haven.out \
  </dev/null >"$tmp/qemu.log" 2>&1 &
qpid=$!

# Stream the command's output (and with VM_VERBOSE=1 the console) until qemu
# is gone; tail --pid ends within its 0.2 s poll after that.
tail -s 0.2 -n +1 -f --pid="$qpid" "$tmp/out" &
tails+=($!)
if [ "${VM_VERBOSE:-0}" = 1 ]; then
  tail -s 0.2 -n +1 -f --pid="$qpid" "$tmp/console.log" >&2 &
  tails+=($!)
fi
set +e
wait "$qpid"
qrc=$?
set -e
qpid=
for p in "${tails[@]}"; do wait "$p" 2>/dev/null || true; done
tails=()
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))

show_console() {
  say "qemu: $(tail -5 "$tmp/qemu.log" | tr '\n' ' ')"
  say "last lines of the serial console:"
  tail -40 "$tmp/console.log" | tr -d '\r' | sed 's/^/    /' >&2
}
if [ $qrc = 124 ] || [ $qrc = 137 ]; then
  say "timed out after $timeout_s s; VM killed"
  show_console
  exit 124
fi
if [ ! -s "$tmp/ctl/rc" ]; then
  say "the VM stopped (qemu status $qrc) without running the command to its end"
  show_console
  exit 125
fi
rc=$(cat "$tmp/ctl/rc")
say "command exited with status $rc; VM up and down in $((elapsed / 1000)).$(printf '%03d' $((elapsed % 1000))) s ($accel)"
exit "$rc"
