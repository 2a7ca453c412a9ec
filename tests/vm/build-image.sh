#!/usr/bin/env bash
# Build (or find in the cache) a bootable Debian 12 image for the cgroup v2
# test VM: a raw ext4 root filesystem, the kernel and its initrd.
#
#   tests/vm/build-image.sh [OUTDIR]      (as root; OUTDIR: /var/cache/haven-vm)
#
# The image lands in OUTDIR/<key>/ where <key> is a hash of this script and
# the package list, so a changed script or list builds a new image and an
# unchanged one is reused.  Prints that directory (and only that) on stdout;
# progress goes to stderr.  Needs mmdebstrap, e2fsprogs and network access
# to the Debian mirror this machine's apt uses.
#
# Environment:
#   VM_WITH_DOCKER=0      leave docker.io and containerd out (default 1)
#   VM_KERNEL_PACKAGE     the kernel (default linux-image-amd64; the cloud
#                         kernel, linux-image-cloud-amd64, has no 9p)
#   VM_EXTRA_PACKAGES     more packages to install (space separated)
#   VM_DISK_FREE_MB       free space in the root filesystem (default 8192;
#                         the image file is sparse)
#   VM_CACHE_KEEP         how many images the cache keeps (default 3; and
#                         any used in the last 2 hours)
#   VM_MIRROR, VM_SECURITY_MIRROR
#                         override the Debian mirrors read from /etc/apt
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
outdir=${1:-${VM_CACHE_DIR:-/var/cache/haven-vm}}
suite=bookworm

packages=(
  systemd systemd-sysv dbus udev "${VM_KERNEL_PACKAGE:-linux-image-amd64}" initramfs-tools
  busybox-static jq python3 iproute2 nftables passt procps util-linux kmod e2fsprogs
  libseccomp2 libyajl2 libcap2 libmnl0 libnftnl11 libyaml-0-2 libasan8 libubsan1
  crun runc bubblewrap
)
if [ "${VM_WITH_DOCKER:-1}" = 1 ]; then
  # Debian's kernel enables AppArmor, and dockerd then loads its profile.
  packages+=(docker.io containerd apparmor)
fi
# shellcheck disable=SC2206
packages+=(${VM_EXTRA_PACKAGES:-})

log() { printf 'build-image: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap --mode=root, device nodes in the image)"

# The cache key: this script, the files it puts into the guest, the packages.
key=$( { cat "$0" "$here"/guest/*; printf '%s\n' "${packages[@]}" | sort -u; } | sha256sum | cut -c1-16)
dest=$outdir/$key
if [ -f "$dest/.complete" ]; then
  echo "$dest"
  exit 0
fi

command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: apt-get install mmdebstrap"
command -v mke2fs >/dev/null || die "mke2fs is missing: apt-get install e2fsprogs"

# One build at a time per cache directory.
mkdir -p "$outdir"
exec 9>"$outdir/.lock"
flock -w 3600 9 || die "timed out waiting for another build (lock $outdir/.lock)"
if [ -f "$dest/.complete" ]; then
  echo "$dest"
  exit 0
fi

# The Debian mirrors this machine's apt uses: "URI SUITE" pairs from
# sources.list (one-line style) and sources.list.d (*.list and deb822 *.sources).
apt_sources() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" | awk '$1 == "deb" {print $2, $3}'
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'function flush(  i, j) {
           if (types ~ /(^| )deb( |$)/ && enabled != "no")
             for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print u[i], s[j]
           types = ""; nu = 0; ns = 0; enabled = ""
         }
         /^[ \t]*#/ {next}
         /^[ \t]*$/ {flush(); next}
         tolower($1) == "types:"   {types = $0; sub(/^[^:]*:[ \t]*/, "", types)}
         tolower($1) == "uris:"    {for (i = 2; i <= NF; i++) u[++nu] = $i}
         tolower($1) == "suites:"  {for (i = 2; i <= NF; i++) s[++ns] = $i}
         tolower($1) == "enabled:" {enabled = tolower($2)}
         END {flush()}' "$f"
  done
}
mirror=${VM_MIRROR:-$(apt_sources | awk -v s="$suite" '$2 == s {print $1; exit}')}
security=${VM_SECURITY_MIRROR:-$(apt_sources | awk -v s="$suite-security" '$2 == s || $2 == s "/updates" {print $1; exit}')}
: "${mirror:=http://deb.debian.org/debian}"
sources=("deb $mirror $suite main" "deb $mirror $suite-updates main")
[ -n "$security" ] && sources+=("deb $security $suite-security main")
log "mirrors: ${sources[*]}"
log "packages: ${packages[*]}"

# unmount_under DIR: nothing under DIR may stay mounted before it is removed.
unmount_under() {
  local m
  for m in $(awk -v w="$1" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "$m" || true
  done
}
# A build killed outright leaves its work directory behind: with the lock
# held, every one there is stale.
for d in "$outdir"/.build.*; do
  [ -d "$d" ] || continue
  unmount_under "$d"
  rm -rf "$d"
done

work=$(mktemp -d "$outdir/.build.XXXXXX")
cleanup() {
  # mmdebstrap unmounts what it mounted, but be sure before removing.
  unmount_under "$work"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
root=$work/root

start=$(date +%s)
mmdebstrap --mode=root --variant=apt --format=directory \
  --include="$(IFS=,; echo "${packages[*]}")" \
  --essential-hook="\"$here/guest/essential.sh\" \"\$1\"" \
  --customize-hook="\"$here/guest/customize.sh\" \"\$1\"" \
  "$suite" "$root" "${sources[@]}" >&2

kver=$(find "$root/boot" -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' | sed 's/^vmlinuz-//' | sort -V | tail -1)
[ -n "$kver" ] || die "no kernel in $root/boot"
mkdir -p "$work/out"
cp "$root/boot/vmlinuz-$kver" "$work/out/vmlinuz"

# The initramfs: busybox, guest/init and the modules of a virtio ext4 root
# (uncompressed: quickest to unpack).
initrd=$work/initrd
mkdir -p "$initrd/bin"
cp "$root/bin/busybox" "$initrd/bin/busybox"
install -m 0755 "$here/guest/init" "$initrd/init"
modprobe -d "$root" -S "$kver" --show-depends -a virtio_pci virtio_blk ext4 crc32c_generic |
  awk '$1 == "insmod" && !seen[$2]++ {print $2}' | while read -r ko; do
    mkdir -p "$initrd/$(dirname "${ko#"$root"}")"
    cp "$ko" "$initrd/${ko#"$root"}"
    echo "${ko#"$root"}" >> "$initrd/modules"
  done
[ -s "$initrd/modules" ] || die "no modules for the initramfs"
(cd "$initrd" && find . -mindepth 1 | sort | "$root/bin/busybox" cpio -o -H newc 2>/dev/null) > "$work/out/initrd.img"

used_mb=$(du -sm "$root" | cut -f1)
size_mb=$((used_mb * 5 / 4 + ${VM_DISK_FREE_MB:-8192}))
log "root filesystem: ${used_mb} MiB used, image ${size_mb} MiB (sparse)"
mke2fs -q -t ext4 -L haven-root -E root_owner=0:0 -d "$root" "$work/out/rootfs.img" "${size_mb}M" >&2

dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Package} ${Version}\n' > "$work/out/packages.txt"
printf '%s\n' "$kver" > "$work/out/kernel-version"
touch "$work/out/.complete"
rm -rf "$dest"
mv "$work/out" "$dest"
touch "$dest/.last-used"
# Keep the VM_CACHE_KEEP most recently used images (run-in-vm.sh touches
# .last-used), and any used in the last 2 hours: other checkouts, with other
# versions of these scripts, may be using them.
keep=${VM_CACHE_KEEP:-3}
find "$outdir" -mindepth 2 -maxdepth 2 -name .last-used -printf '%T@ %h\n' | sort -rn | cut -d' ' -f2- |
  tail -n +$((keep + 1)) | while read -r old; do
    [ "$old" = "$dest" ] && continue
    [ -n "$(find "$old/.last-used" -mmin -120)" ] && continue
    log "removing the old image $old"
    rm -rf "$old"
  done
log "built $dest in $(( $(date +%s) - start )) s"
echo "$dest"
