#!/bin/sh
# make-image.sh ROOTFS NAME OUT [ENTRYPOINT-JSON [CMD-JSON]]
# An OCI image archive (an image layout in a tar, what `ctr images
# import` reads) of the directory ROOTFS as one uncompressed layer, named
# NAME (a full reference: docker.io/library/havenbox:test), with the
# entrypoint and command given as JSON arrays (default: none and
# ["/bin/sh"]).  The CRI tests have no registry: their images are made
# here from the busybox root filesystem of tests/make-rootfs.sh.
set -eu
rootfs=${1:?usage: make-image.sh ROOTFS NAME OUT [ENTRYPOINT-JSON [CMD-JSON]]}
name=${2:?NAME}
out=${3:?OUT}
entrypoint=${4:-null}
cmd=${5:-'["/bin/sh"]'}
command -v jq > /dev/null || { echo "make-image.sh: jq is needed" >&2; exit 1; }
case $name in
  *:*) tag=${name##*:} ;;
  *) echo "make-image.sh: NAME needs a tag (NAME:TAG)" >&2; exit 1 ;;
esac
# Go's names for the architecture, which are Debian's for these two.
case $(uname -m) in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) echo "make-image.sh: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac

dir=$(mktemp -d "${TMPDIR:-/tmp}/hv-image.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/blobs/sha256"

# add_blob FILE: move FILE into the layout under its digest; prints
# "DIGEST SIZE".
add_blob() {
  d=$(sha256sum "$1" | cut -d' ' -f1)
  s=$(stat -c %s "$1")
  mv "$1" "$dir/blobs/sha256/$d"
  echo "sha256:$d $s"
}

# Owners as they are (the image's users own their homes); a fixed order
# and no access times, so the same tree gives the same layer.
tar -C "$rootfs" --sort=name --numeric-owner --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
  -cf "$dir/layer" .
set -- $(add_blob "$dir/layer")
layer=$1 layer_size=$2

jq -n --arg arch "$arch" --arg diff "$layer" --argjson ep "$entrypoint" --argjson cmd "$cmd" '{
  architecture: $arch, os: "linux",
  config: {Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
           Entrypoint: $ep, Cmd: $cmd, WorkingDir: "/"},
  rootfs: {type: "layers", diff_ids: [$diff]}
}' > "$dir/config"
set -- $(add_blob "$dir/config")
config=$1 config_size=$2

jq -n --arg c "$config" --argjson cs "$config_size" --arg l "$layer" --argjson ls "$layer_size" '{
  schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
  layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]
}' > "$dir/manifest"
set -- $(add_blob "$dir/manifest")
manifest=$1 manifest_size=$2

# containerd's importer takes the image's name from its own annotation;
# the standard one carries the tag for other readers of the layout.
jq -n --arg m "$manifest" --argjson ms "$manifest_size" --arg name "$name" --arg tag "$tag" --arg arch "$arch" '{
  schemaVersion: 2,
  manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
               platform: {architecture: $arch, os: "linux"},
               annotations: {"io.containerd.image.name": $name, "org.opencontainers.image.ref.name": $tag}}]
}' > "$dir/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' > "$dir/oci-layout"
tar -C "$dir" -cf "$out" oci-layout index.json blobs
