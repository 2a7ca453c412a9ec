#!/bin/sh
# Make an OCI bundle at DIR from the machine's busybox-static:
# rootfs/ from make-rootfs.sh, and config.json from `haven-runc spec`
# running `sh -c 'id; hostname; ls /'` without a terminal.
set -eu
dir=${1:?usage: make-bundle.sh DIR [RUNTIME]}
runtime=${2:-$(dirname "$0")/../haven-runc}
"$(dirname "$0")/make-rootfs.sh" "$dir/rootfs"
rm -f "$dir/config.json"
"$runtime" spec --bundle "$dir"
jq '.process.terminal = false | .process.args = ["sh", "-c", "id; hostname; ls /"]' "$dir/config.json" > "$dir/config.json.new"
mv "$dir/config.json.new" "$dir/config.json"
