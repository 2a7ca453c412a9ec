#!/usr/bin/env bash
# Build the haven node installer image (deploy/kubernetes's DaemonSet):
# a Debian 12 root filesystem from mmdebstrap (minbase, with curl and
# ca-certificates for the API server call) carrying, in
# /opt/haven-installer, haven-runc built from this checkout (bin/),
# the shipped policies (policies/) and deploy/kubernetes/node-installer.sh.
# No registry: the image is an OCI archive (tests/cri/make-image.sh), for
# `ctr -n k8s.io images import` on a node, `kind load image-archive`, or
# to push with a tool of your choice; or imported into Docker/Podman.
#
#   images/node-installer/build.sh [--import docker|podman|ctr] [--tag NAME] [--out FILE]
#
# NAME defaults to docker.io/haven/node-installer:VERSION (haven-runc's
# version; the DaemonSet names haven/node-installer:VERSION, the same
# image); FILE to node-installer-VERSION.oci.tar in the current
# directory.  The Debian part is cached in $HAVEN_IMAGE_CACHE (default
# /var/cache/haven-images) as node-installer-base-KEY.tar, KEY a hash of
# this script: a rebuild after a change of haven-runc downloads nothing.
# --rebuild builds the Debian part again (Debian's security updates).
# Needs root (mmdebstrap --mode=root), mmdebstrap, jq, and a built
# haven-runc (make) in the checkout; HAVEN_RUNC=PATH for another one.
# Prints the archive's path on stdout, progress on stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
die() { printf 'node-installer build: %s\n' "$*" >&2; exit 1; }
log() { printf 'node-installer build: %s\n' "$*" >&2; }

engine='' tag='' out='' rebuild=0
while [ $# -gt 0 ]; do
  case $1 in
    --import) engine=${2:?--import needs docker, podman or ctr}; shift 2 ;;
    --tag) tag=${2:?--tag needs a name}; shift 2 ;;
    --out) out=${2:?--out needs a file}; shift 2 ;;
    --rebuild) rebuild=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
case $engine in '' | docker | podman | ctr) ;; *) die "--import $engine: docker, podman or ctr" ;; esac

runtime=${HAVEN_RUNC:-$src/haven-runc}
[ -x "$runtime" ] || die "no $runtime: build haven first (./configure && make), or set HAVEN_RUNC"
version=$("$runtime" --version | awk 'NR == 1 {print $3}')
[ -n "$version" ] || die "$runtime --version names no version"
: "${tag:=docker.io/haven/node-installer:$version}"
: "${out:=$PWD/node-installer-$version.oci.tar}"
[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap --mode=root)"
command -v mmdebstrap > /dev/null || die "mmdebstrap is missing: apt-get install mmdebstrap"
command -v jq > /dev/null || die "jq is missing: apt-get install jq"

# The Debian part: what the installer script runs (bash, coreutils,
# util-linux's nsenter, chroot, sha256sum, curl).
cache=${HAVEN_IMAGE_CACHE:-/var/cache/haven-images}
key=$(grep -v '^[[:space:]]*#' "$0" | sha256sum | cut -c1-16)
base=$cache/node-installer-base-$key.tar
mkdir -p "$cache"
exec 9> "$cache/.lock"
flock -w 3600 9 || die "timed out waiting for another build (lock $cache/.lock)"
work=$(mktemp -d "$cache/.build-node-installer.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ $rebuild = 1 ] || [ ! -f "$base" ]; then
  mirror=${HAVEN_IMAGE_MIRROR:-http://deb.debian.org/debian}
  security=${HAVEN_IMAGE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
  log "building the Debian part ($base) from $mirror"
  start=$(date +%s)
  # mmdebstrap copies this machine's resolver and hostname in for its
  # downloads: the image gets the cluster's.
  # shellcheck disable=SC2016 # $1 is mmdebstrap's (the root filesystem)
  mmdebstrap --mode=root --variant=minbase --include=curl,ca-certificates,util-linux \
    --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
    bookworm "$work/base.tar" \
    "deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb $security bookworm-security main" \
    < /dev/null >&2
  mv "$work/base.tar" "$base"
  log "built $base in $(( $(date +%s) - start )) s"
  # Older Debian parts, unless used in the last 2 hours (another
  # checkout's version of this script may want its own).
  find "$cache" -maxdepth 1 -name 'node-installer-base-*.tar' ! -path "$base" -mmin +120 -print -delete \
    | sed 's/^/node-installer build: removed /' >&2
else
  log "cached: $base"
  touch "$base"
fi

# The payload, then the image.
root=$work/rootfs
mkdir -p "$root"
tar -xf "$base" -C "$root"
p=$root/opt/haven-installer
install -d -m 755 "$p" "$p/bin" "$p/policies"
install -m 755 "$runtime" "$p/bin/haven-runc"
install -m 644 "$src"/policies/*.yaml "$p/policies/"
install -m 755 "$src/deploy/kubernetes/node-installer.sh" "$p/node-installer.sh"
"$src/tests/cri/make-image.sh" "$root" "$tag" "$out" '["/opt/haven-installer/node-installer.sh"]' '["run"]' >&2
log "image $tag: $out ($(du -m "$out" | cut -f1) MiB; haven-runc $version)"

case $engine in
  # Docker before 25 cannot load an OCI layout: the root filesystem and
  # the command, as images/build-rootfs.sh imports its images.
  docker)
    tar -C "$root" --numeric-owner -cf "$work/rootfs.tar" .
    docker import --change 'ENTRYPOINT ["/opt/haven-installer/node-installer.sh"]' --change 'CMD ["run"]' \
      "$work/rootfs.tar" "$tag" >&2 ;;
  podman) podman load -i "$out" >&2 ;;
  ctr) ctr -n k8s.io images import "$out" >&2 ;;
esac
[ -z "$engine" ] || log "imported into $engine as $tag"
echo "$out"
