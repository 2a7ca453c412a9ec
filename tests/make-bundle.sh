#!/bin/sh
# Make an OCI bundle at DIR from the machine's busybox-static:
# rootfs/ with busybox and its applets, and config.json from `haven-runc spec`
# running `sh -c 'id; hostname; ls /'` without a terminal.
set -eu
dir=${1:?usage: make-bundle.sh DIR [RUNTIME]}
runtime=${2:-$(dirname "$0")/../haven-runc}
busybox=$(command -v busybox) || { echo "make-bundle.sh: install busybox-static" >&2; exit 1; }
mkdir -p "$dir/rootfs/bin" "$dir/rootfs/etc" "$dir/rootfs/proc" "$dir/rootfs/sys" "$dir/rootfs/dev" "$dir/rootfs/tmp"
cp "$busybox" "$dir/rootfs/bin/busybox"
for applet in $("$busybox" --list); do
  [ -e "$dir/rootfs/bin/$applet" ] || ln -s busybox "$dir/rootfs/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\n' > "$dir/rootfs/etc/passwd"
printf 'root:x:0:\nuser:x:1000:\n' > "$dir/rootfs/etc/group"
rm -f "$dir/config.json"
"$runtime" spec --bundle "$dir"
jq '.process.terminal = false | .process.args = ["sh", "-c", "id; hostname; ls /"]' "$dir/config.json" > "$dir/config.json.new"
mv "$dir/config.json.new" "$dir/config.json"
