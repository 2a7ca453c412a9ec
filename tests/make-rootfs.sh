#!/bin/sh
# Make a busybox root filesystem at DIR from the machine's busybox-static:
# the directories a container expects, busybox and a link per applet, and
# /etc/passwd and /etc/group with root, user (1000), nobody (65534) and a
# group extra (2000).  Every suite and the README's bundle start from it
# (there is no image registry).
set -eu
r=${1:?usage: make-rootfs.sh DIR}
busybox=$(command -v busybox) || { echo "make-rootfs.sh: install busybox-static" >&2; exit 1; }
mkdir -p "$r/bin" "$r/sbin" "$r/etc" "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/root" "$r/home/user"
chmod 1777 "$r/tmp"
cp "$busybox" "$r/bin/busybox"
for applet in $("$r/bin/busybox" --list); do
  [ -e "$r/bin/$applet" ] || ln -s busybox "$r/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' \
  > "$r/etc/passwd"
printf 'root:x:0:\nuser:x:1000:\nextra:x:2000:\nnobody:x:65534:\n' > "$r/etc/group"
