#!/bin/sh
# Installs what building and testing denytrace need, from Debian packages.
# Run as root or with sudo available; does nothing when all is there.
set -eu

PKGS="build-essential pkg-config libseccomp-dev libcriterion-dev
libdw-dev libelf-dev bubblewrap sqlite3 libsqlite3-dev python3 clang
libclang-rt-14-dev cppcheck strace git tar coreutils valgrind fossil
libxml2-utils chromium
gnupg rsync util-linux"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
# npm (for the Codex tests and a corpus row) by the command, not the
# package: a nodejs built elsewhere ships its own npm and conflicts with
# Debian's, which apt would then refuse to install at all.
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -z "$missing" ]; then
	echo "install-deps: all dependencies present"
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "install-deps: missing:$missing; run as root or install sudo" >&2
	exit 1
fi
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
