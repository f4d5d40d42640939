#!/bin/sh
# Installs what building and testing denytrace need, from Debian packages
# (debootstrap and lintian for make test-deb and make test-debian13).
# Run as root or with sudo available; does nothing when all is there.
# --aarch64 adds what make cross-aarch64 needs: Debian's cross compiler,
# qemu-user-static and, through multiarch (arm64 added to dpkg's
# architectures), libseccomp-dev:arm64.
# Works on Debian 12 and 13: a package whose name carries a version (the
# clang runtime, libclang-rt-N-dev) is named after the clang this
# distribution offers, never a version written here.
set -eu

PKGS="build-essential pkg-config libseccomp-dev libcriterion-dev
libdw-dev libelf-dev bubblewrap sqlite3 libsqlite3-dev python3 python3-yaml clang
cppcheck strace git tar coreutils valgrind fossil
libxml2-utils chromium
gnupg rsync util-linux zsh e2fsprogs
debootstrap lintian"
AARCH64=
if [ "${1:-}" = --aarch64 ]; then
	AARCH64=1
	PKGS="$PKGS gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static libseccomp-dev:arm64"
fi

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

# The major version of the clang that is installed, or else of the one
# apt would install for "clang" (its dependency clang-N); empty when
# neither is known (no package lists yet).
clang_major() {
	if command -v clang >/dev/null 2>&1; then
		clang -dumpversion | cut -d. -f1
		return
	fi
	apt-cache depends clang 2>/dev/null | sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -n1
}

# The runtime libFuzzer and the sanitizers need (make fuzz, make test's
# fuzz-smoke), for the clang above.
clang_runtime() {
	v=$(clang_major)
	[ -n "$v" ] && echo "libclang-rt-$v-dev"
}

missing_packages() {
	for p in $PKGS $(clang_runtime); do
		installed "$p" || printf ' %s' "$p"
	done
	# npm (for the Codex tests and a corpus row) by the command, not the
	# package: a nodejs built elsewhere ships its own npm and conflicts with
	# Debian's, which apt would then refuse to install at all.
	command -v npm >/dev/null 2>&1 || printf ' npm'
}

missing=$(missing_packages)
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
export DEBIAN_FRONTEND=noninteractive
if [ -n "$AARCH64" ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	$SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -q
# Again with fresh package lists: the clang runtime's name may only now
# be known.
missing=$(missing_packages)
echo "install-deps: installing:$missing"
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
# Installing clang may have named a runtime that the lists alone did not.
missing=$(missing_packages)
if [ -n "$missing" ]; then
	echo "install-deps: installing:$missing"
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -q --no-install-recommends $missing
fi
