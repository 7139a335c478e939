#!/usr/bin/env bash
# Builds the Mod-Gearman C test peers from the tarballs in mod-gearman/ and
# prints where they are, one KEY=PATH line each:   eval "$(build-mod-gearman.sh)"
#
#   5.2.4  MG_WORKER MG_SEND_GEARMAN MG_SEND_MULTI MG_CHECK_GEARMAN MG_GEARMAN_TOP
#   3.3.3  MG_NEB_NAGIOS4 (the Nagios 4 broker module; 5.x supports Naemon only)
#   MG_PEERS_DIR: the cache they are built in
#
# The cache is test/peers/.build of this checkout (gitignored), or
# $NOSHELL_PEERS_CACHE: a directory of the caller's own, never a fixed name
# in /tmp that another user could create first. A build is redone only when
# its tarball or this script changed, so a call with nothing to do costs a
# checksum. Callers in parallel (test files, bench) wait for one another.
#
# Installs nothing: .ci/run installs the Debian packages listed in NEEDED.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
tarballs=$here/mod-gearman
cache=${NOSHELL_PEERS_CACHE:-$here/.build}
NEEDED=(build-essential autoconf automake autoconf-archive libtool libltdl-dev pkg-config
        libgearman-dev libssl-dev libncurses-dev libevent-dev)

die() {
  echo "build-mod-gearman: $1" >&2
  if [ $# -gt 1 ] && [ -f "$2" ]; then
    echo "--- last lines of $2:" >&2
    tail -n 25 "$2" >&2
  fi
  exit 1
}

# Created 0700; an existing one must be ours: we run what is built in it.
mkdir -p -m 700 "$cache" || die "cannot create the cache $cache"
cache=$(cd "$cache" && pwd -P)
case $cache in
*[[:space:]]*) die "autotools cannot build in a path with blanks ($cache): set NOSHELL_PEERS_CACHE" ;;
esac
[ -O "$cache" ] || die "$cache belongs to another user: remove it, or set NOSHELL_PEERS_CACHE"
if [ -n "$(find "$cache" -maxdepth 0 -perm /022)" ]; then
  die "$cache is writable by group or others: chmod go-w it, or set NOSHELL_PEERS_CACHE"
fi

exec 9>"$cache/.lock"
flock 9

# What decides a rebuild: the tarball's bytes and the recipe (this file).
self_sum=$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)
stamp_of() { # stamp_of TARBALL
  printf '%s %s\n' "$(sha256sum "$1" | cut -d' ' -f1)" "$self_sum"
}

checked_packages=0
check_packages() {
  [ "$checked_packages" = 0 ] || return 0
  checked_packages=1
  command -v dpkg-query >/dev/null || return 0 # not Debian: the build says what is missing
  local missing=() p
  for p in "${NEEDED[@]}"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=("$p")
  done
  [ ${#missing[@]} = 0 ] ||
    die "missing Debian packages: ${missing[*]} (sudo apt-get install --no-install-recommends ${missing[*]}, or sudo bash .ci/run)"
}

# Mod-Gearman 5's configure.ac stops without Naemon's pkg-config file and
# naemon/naemon.h, though the worker and the tools never include them (only the
# Naemon broker module does, and we do not build it). Rather than edit the
# vendored sources, configure sees an empty stand-in for both.
naemon_standin() {
  local d=$1
  mkdir -p "$d/include/naemon"
  : >"$d/include/naemon/naemon.h"
  cat >"$d/naemon.pc" <<EOF
Name: naemon
Description: empty stand-in: lets Mod-Gearman 5 configure its worker and tools
Version: 1.4.0
Cflags: -I$d/include
Libs:
EOF
}

all_there() { # all_there DIR FILE...
  local d=$1 f
  shift
  for f in "$@"; do [ -f "$d/$f" ] || return 1; done
}

# build NAME CONFIGURE-ARGS... -- MAKE-TARGETS...: one tarball into $cache/NAME.
build() {
  local name=$1 tgz="$tarballs/$1.tar.gz" src="$cache/$1" log="$cache/$1.log" stamp="$cache/$1.stamp"
  shift
  local conf=() targets=() want
  while [ $# -gt 0 ] && [ "$1" != -- ]; do conf+=("$1"); shift; done
  shift
  targets=("$@")
  [ -f "$tgz" ] || die "missing $tgz"
  want=$(stamp_of "$tgz")
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && all_there "$src" "${targets[@]}"; then
    return 0
  fi
  check_packages
  rm -rf "$stamp" "$src"
  : >"$log"
  # Our umask, not the archive's modes (its directories are group-writable).
  tar -xzf "$tgz" -C "$cache" --no-same-owner --no-same-permissions >>"$log" 2>&1 || die "cannot unpack $tgz" "$log"
  [ -d "$src" ] || die "$tgz does not unpack into $name/"
  # One && chain: set -e does not apply inside a command that || tests.
  (
    set -x
    cd "$src" &&
      autoreconf -fi &&
      ./configure "${conf[@]}" &&
      make -j"$(nproc 2>/dev/null || echo 2)" "${targets[@]}"
  ) >>"$log" 2>&1 || die "building $name failed (whole log: $log)" "$log"
  all_there "$src" "${targets[@]}" || die "$name built, but not all of ${targets[*]}" "$log"
  printf '%s\n' "$want" >"$stamp"
}

naemon_standin "$cache/naemon-standin"
# (An assignment before a function call holds, exported, while the function runs.)
PKG_CONFIG_PATH="$cache/naemon-standin${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
  build mod_gearman-5.2.4 -- mod_gearman_worker send_gearman send_multi check_gearman gearman_top
build mod_gearman-3.3.3 --disable-naemon-neb-module --disable-nagios3-neb-module -- mod_gearman_nagios4.o

v5=$cache/mod_gearman-5.2.4
printf '%s\n' \
  "MG_WORKER=$v5/mod_gearman_worker" \
  "MG_SEND_GEARMAN=$v5/send_gearman" \
  "MG_SEND_MULTI=$v5/send_multi" \
  "MG_CHECK_GEARMAN=$v5/check_gearman" \
  "MG_GEARMAN_TOP=$v5/gearman_top" \
  "MG_NEB_NAGIOS4=$cache/mod_gearman-3.3.3/mod_gearman_nagios4.o" \
  "MG_PEERS_DIR=$cache"
