#!/usr/bin/env bash
# Build an agent image without pulling a base image: the Debian 12 root
# filesystem comes from mmdebstrap (Debian's archive), the agent's own
# steps are the RUN lines of images/AGENT/Dockerfile run in it, and the
# image's configuration (LABEL, USER, WORKDIR, ENV, CMD, ...) is the
# Dockerfile's, given to `docker import` / `podman import` as --change.
#
#   images/build-rootfs.sh [--import docker|podman] [--tag TAG] [--rebuild] AGENT
#   images/build-rootfs.sh --changes AGENT
#   images/build-rootfs.sh --path AGENT
#
# Prints the root filesystem tarball's path on stdout (with --import, the
# image is then imported as TAG, default haven/AGENT); --changes prints
# the Dockerfile's configuration, one --change value per line, for
# callers with engine command lines of their own; --path prints where the
# tarball is or would be cached, and builds nothing.  Progress goes to
# stderr.
#
# The tarball is cached: $HAVEN_IMAGE_CACHE/AGENT-KEY.tar (default
# /var/cache/haven-images), KEY a hash of this script, the Dockerfile,
# the files it copies and its build arguments' values, so an unchanged
# image is never downloaded again and a changed one is rebuilt.
# --rebuild ignores the cache (for Debian's security updates).
#
# A Dockerfile build argument (ARG NAME) is taken from the environment,
# as `docker build --build-arg NAME` would: CLAUDE_CODE_VERSION=2.1.330
# images/build-rootfs.sh claude-code.
#
# The Dockerfile subset understood: FROM debian:12; ARG; COPY of files
# under images/; RUN in shell form; then only configuration instructions.
# Anything else is an error naming the line: a silently different image
# would be worse.
#
# Needs root (mmdebstrap --mode=root: chroot, device nodes), mmdebstrap
# and access to Debian's archive and npm's registry (the RUN steps'
# downloads).  Environment: HAVEN_IMAGE_CACHE, HAVEN_IMAGE_MIRROR (default
# http://deb.debian.org/debian), HAVEN_IMAGE_SECURITY_MIRROR (default
# http://deb.debian.org/debian-security), HAVEN_IMAGE_BUILD_CA_DIR (the
# *.crt files trusted while the RUN steps download, and removed from the
# image afterwards; default /usr/local/share/ca-certificates, where a
# TLS-inspecting proxy's CA is installed).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
die() { printf 'build-rootfs: %s\n' "$*" >&2; exit 1; }
log() { printf 'build-rootfs: %s\n' "$*" >&2; }

engine= tag= rebuild=0 changes_only=0 path_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --import) engine=${2:?--import needs docker or podman}; shift 2 ;;
    --tag) tag=${2:?--tag needs a name}; shift 2 ;;
    --rebuild) rebuild=1; shift ;;
    --changes) changes_only=1; shift ;;
    --path) path_only=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
[ $# = 1 ] || die "usage: $0 [--import docker|podman] [--tag TAG] [--rebuild] AGENT  (or --changes/--path AGENT)"
agent=$1
case $agent in */* | .* | '') die "AGENT is the name of a folder of images/: $agent" ;; esac
dockerfile=$here/$agent/Dockerfile
[ -f "$dockerfile" ] || die "no $dockerfile (agents: $(cd "$here" && ls -d */Dockerfile | sed 's,/Dockerfile,,' | tr '\n' ' '))"
: "${tag:=haven/$agent}"

# Read the Dockerfile.  The build steps (COPY, RUN) go into a hook
# script that mmdebstrap runs on the finished root filesystem; the
# configuration goes into `changes`.
steps=()
changes=()
args=()
seen_from=0
lineno=0
line_ref() { echo "$dockerfile:$lineno"; }
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  case $line in '' | '#'*) continue ;; esac
  case $line in *\\) die "$(line_ref): continuation lines are not supported here: write the instruction on one line" ;; esac
  instr=${line%%[[:space:]]*}
  rest=${line#"$instr"}
  rest=${rest#"${rest%%[![:space:]]*}"}
  instr=${instr^^}
  case $instr in
    FROM)
      [ "$rest" = debian:12 ] || die "$(line_ref): FROM $rest: this script builds Debian 12 only (FROM debian:12)"
      seen_from=1 ;;
    ARG)
      name=${rest%%=*}
      [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "$(line_ref): ARG $rest: not a NAME or NAME=DEFAULT"
      if [ -n "${!name+set}" ]; then
        args+=("$name=${!name}")
      elif [ "$name" != "$rest" ]; then
        args+=("$name=${rest#*=}")
      fi ;;
    COPY)
      [ ${#changes[@]} = 0 ] || die "$(line_ref): COPY after a configuration instruction is not supported here"
      case $rest in '--'* | '['*) die "$(line_ref): COPY $rest: only COPY SRC... DEST/ is supported here" ;; esac
      read -r -a words <<< "$rest"
      [ ${#words[@]} -ge 2 ] || die "$(line_ref): COPY needs a source and a destination"
      dest=${words[-1]}
      case $dest in /*/) ;; *) die "$(line_ref): COPY's destination must be an absolute directory ending in /" ;; esac
      for src in "${words[@]:0:${#words[@]}-1}"; do
        case $src in /* | *..*) die "$(line_ref): COPY $src: sources are paths inside images/" ;; esac
        [ -f "$here/$src" ] || die "$(line_ref): COPY $src: no such file in $here"
        steps+=("copy $(printf '%q %q' "$here/$src" "$dest")")
      done ;;
    RUN)
      [ ${#changes[@]} = 0 ] || die "$(line_ref): RUN after a configuration instruction is not supported here (it would run as another user or elsewhere)"
      case $rest in '['*) die "$(line_ref): RUN in exec form is not supported here: use the shell form" ;; esac
      steps+=("run $(printf '%q' "$rest")") ;;
    LABEL | USER | WORKDIR | ENV | CMD | ENTRYPOINT | EXPOSE | VOLUME | STOPSIGNAL)
      changes+=("$instr $rest") ;;
    *) die "$(line_ref): $instr is not supported by this script" ;;
  esac
done < "$dockerfile"
[ $seen_from = 1 ] || die "$dockerfile: no FROM debian:12"

if [ $changes_only = 1 ]; then
  printf '%s\n' "${changes[@]}"
  exit 0
fi

case $engine in '' | docker | podman) ;; *) die "--import $engine: docker or podman" ;; esac

# The cache key: what decides the image's content.
# Comment lines do not count: documenting the script must not make
# every cached image stale.
key=$( {
  grep -v '^[[:space:]]*#' "$0"
  cat "$dockerfile"
  for s in "${steps[@]}"; do
    case $s in copy\ *) eval "set -- ${s#copy }"; printf '%s\n' "${1#"$here/"}"; cat "$1" ;; esac
  done
  printf '%s\n' "${args[@]}"
} | sha256sum | cut -c1-16)
cache=${HAVEN_IMAGE_CACHE:-/var/cache/haven-images}
tarball=$cache/$agent-$key.tar
if [ $path_only = 1 ]; then
  echo "$tarball"
  exit 0
fi

[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap --mode=root)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: apt-get install mmdebstrap"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock -w 3600 9 || die "timed out waiting for another build (lock $cache/.lock)"

if [ $rebuild = 1 ] || [ ! -f "$tarball" ]; then
  mirror=${HAVEN_IMAGE_MIRROR:-http://deb.debian.org/debian}
  security=${HAVEN_IMAGE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
  work=$(mktemp -d "$cache/.build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # This machine's own certificate authorities (a proxy that inspects
  # TLS on the way to npm's registry has its CA there) are trusted
  # during the build only: taken out of the image again after the last
  # RUN, so the image trusts Debian's CAs and nothing of this machine's.
  build_cas=()
  for c in "${HAVEN_IMAGE_BUILD_CA_DIR:-/usr/local/share/ca-certificates}"/*.crt; do
    [ -f "$c" ] && build_cas+=("$c")
  done
  [ ${#build_cas[@]} = 0 ] || log "trusted during the build only: ${build_cas[*]}"
  # The hook: COPY and RUN as docker build does them, as root in the new
  # root filesystem, with only the build arguments in the environment.
  hook=$work/hook.sh
  {
    echo '#!/bin/sh'
    echo 'set -eu'
    echo 'root=$1'
    printf 'copy() { mkdir -p "$root$2"; cp "$1" "$root$2"; }\n'
    printf 'run() { chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root'
    [ ${#build_cas[@]} = 0 ] || printf ' NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'
    for a in "${args[@]}"; do printf ' %q' "$a"; done
    printf ' /bin/sh -c "cd / && $1"; }\n'
    for c in "${build_cas[@]}"; do
      printf 'mkdir -p "$root/usr/local/share/ca-certificates"; cp %q "$root/usr/local/share/ca-certificates/haven-build-%s"\n' \
        "$c" "$(basename "$c")"
    done
    printf '%s\n' "${steps[@]}"
    if [ ${#build_cas[@]} != 0 ]; then
      echo 'rm -f "$root"/usr/local/share/ca-certificates/haven-build-*'
      echo 'if [ -x "$root/usr/sbin/update-ca-certificates" ]; then chroot "$root" update-ca-certificates --fresh >/dev/null; fi'
    fi
    # mmdebstrap copied this machine's resolver and hostname in for the
    # downloads; the engines give a container both.
    echo 'rm -f "$root/etc/resolv.conf" "$root/etc/hostname"'
  } > "$hook"
  chmod 700 "$hook"
  log "building $agent ($tarball) from $mirror"
  start=$(date +%s)
  # minbase: the package set of Docker's debian:12 (Priority: required).
  # stdin from /dev/null: mmdebstrap reads a sources.list from a stdin
  # that is not a terminal.
  mmdebstrap --mode=root --variant=minbase --format=tar \
    --customize-hook="$hook \"\$1\"" \
    bookworm "$work/rootfs.tar" \
    "deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb $security bookworm-security main" \
    < /dev/null >&2
  mv "$work/rootfs.tar" "$tarball"
  log "built $tarball in $(( $(date +%s) - start )) s ($(du -m "$tarball" | cut -f1) MiB)"
  # Older tarballs of this agent, unless used in the last 2 hours (other
  # checkouts with other versions of the Dockerfile may want them).
  find "$cache" -maxdepth 1 -name "$agent-*.tar" ! -path "$tarball" -mmin +120 -print -delete | sed 's/^/build-rootfs: removed /' >&2
else
  log "cached: $tarball"
  touch "$tarball"
fi

if [ -n "$engine" ]; then
  change_args=()
  for c in "${changes[@]}"; do change_args+=(--change "$c"); done
  "$engine" import "${change_args[@]}" "$tarball" "$tag" >&2
  log "imported into $engine as $tag"
fi
echo "$tarball"
