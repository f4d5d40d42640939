#!/bin/sh
# make cross-aarch64: the probe, the CLI, its unit suites and the helpers
# tests/aarch64 runs, built for aarch64 with Debian's cross toolchain into
# OUT (build-aarch64), then tests/aarch64/test_aarch64 (a native suite)
# runs them under qemu-user: what the probe records there, and rings read
# across the two architectures; then the unit suites themselves run under
# qemu (tests/aarch64/run-units.sh), as root of a private user and mount
# namespace where binfmt_misc hands aarch64 programs to qemu.
#
# It runs `scripts/install-deps.sh --aarch64` first (the cross compiler,
# qemu-user-static, libseccomp-dev:arm64; a no-op when all is there).
# Criterion's arm64 packages cannot be installed
# beside the amd64 ones on Debian 12 (libnanomsg5 is a binNMU on amd64
# only, and Multi-Arch: same needs equal versions), so their files are
# unpacked from the arm64 .debs (apt-get download, cached in CACHE) into
# OUT/arm64-root, which only these links read; and libdw's, which the
# aarch64 CLI loads to name the functions of a stack.
#
# usage: cross-aarch64.sh [OUT]
# Exit status 3: the packages could not be had (no arm64 lists or .debs
# on the mirror this machine uses); anything else that fails is 1 or 2.
set -eu
OUT=${1:-build-aarch64}
HOST_BUILD=${BUILD:-build}
CACHE=${DT_CACHE:-/var/cache/denytrace}/arm64-debs
TRIPLET=aarch64-linux-gnu
QEMU_LIBC=/usr/$TRIPLET
CRITERION_DEBS="libcriterion-dev libcriterion3 libnanomsg5 libgit2-1.5 libhttp-parser2.9
libmbedcrypto7 libmbedx509-1 libmbedtls14 libssh2-1 libssl3 zlib1g libpcre2-8-0 libffi8
libgssapi-krb5-2 libk5crypto3 libkrb5-3 libkrb5support0 libcom-err2 libkeyutils1
libdw1 libelf1 libbz2-1.0 liblzma5 libzstd1"

./scripts/install-deps.sh --aarch64 || {
	echo "cross-aarch64: the aarch64 packages could not be installed" >&2
	exit 3
}
for tool in $TRIPLET-gcc qemu-aarch64-static; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "cross-aarch64: $tool missing: run scripts/install-deps.sh --aarch64" >&2
		exit 2
	}
done
[ -e /usr/lib/$TRIPLET/libseccomp.so ] || {
	echo "cross-aarch64: libseccomp-dev:arm64 missing: run scripts/install-deps.sh --aarch64" >&2
	exit 2
}

# CMD as root of a new user namespace mapping ids 0-65535 to themselves
# (so a file can be given to another owner and `nobody` exists, as
# outside), with its own mount namespace. Without root, only our own id
# is mapped.
in_private_namespace() {
	[ "$(id -u)" = 0 ] || {
		unshare -Urm "$@"
		return
	}
	fifo=$(mktemp -u) && mkfifo "$fifo" || return 2
	unshare -Um sh -c 'read go <"$0" && exec "$@"' "$fifo" "$@" &
	pid=$!
	while kill -0 $pid 2>/dev/null &&
		[ "$(readlink /proc/$pid/ns/user)" = "$(readlink /proc/self/ns/user)" ]; do
		sleep 0.1
	done
	if echo "0 0 65536" >/proc/$pid/uid_map && echo "0 0 65536" >/proc/$pid/gid_map; then
		echo go >"$fifo"
	else
		kill $pid
	fi
	wait $pid
	rc=$?
	rm -f "$fifo"
	return $rc
}

# Criterion for arm64, from its packages' files.
root=$OUT/arm64-root
if [ ! -e "$root/usr/lib/$TRIPLET/libcriterion.so" ] || [ ! -e "$root/usr/lib/$TRIPLET/libdw.so.1" ]; then
	mkdir -p "$CACHE" "$root"
	for p in $CRITERION_DEBS; do
		ls "$CACHE/${p}_"*_arm64.deb >/dev/null 2>&1 && continue
		# apt's download sandbox user must be able to write there
		(cd "$CACHE" && apt-get download -q "$p:arm64") || {
			echo "cross-aarch64: $p:arm64 could not be downloaded" >&2
			exit 3
		}
	done
	for d in "$CACHE"/*_arm64.deb; do dpkg-deb -x "$d" "$root"; done
fi
libs=$(cd "$root" && pwd)/usr/lib/$TRIPLET:$(cd "$root" && pwd)/lib/$TRIPLET

units=$(for f in tests/unit/test_*.c; do n=${f##*/}; echo "$OUT/unit/${n%.c}"; done)
# -s: the compiler lines would fill the tail of a CI log
make -s --no-print-directory -j2 BUILD="$OUT" CC=$TRIPLET-gcc AR=$TRIPLET-ar \
	CFLAGS="-O2 -g -I$root/usr/include -L${libs%%:*} -Wl,-rpath-link,$libs" \
	"$OUT/libdenytrace.so" "$OUT/denytrace" "$OUT/helpers/callall" \
	"$OUT/helpers/stackshapes" "$OUT/helpers/ring-writer" "$OUT/helpers/smallstack" $units
file "$OUT/libdenytrace.so" "$OUT/denytrace" | sed 's/, BuildID.*//'

make --no-print-directory -j2 BUILD="$HOST_BUILD" all helpers "$HOST_BUILD/aarch64/test_aarch64"
status=0
DT_BUILD=$HOST_BUILD DT_AARCH64_BUILD=$OUT DT_QEMU_LIBC=$QEMU_LIBC DT_AARCH64_LIBS=$libs \
	"$HOST_BUILD/aarch64/test_aarch64" --jobs 1 || status=1

in_private_namespace ./tests/aarch64/run-units.sh "$(cd "$OUT" && pwd)" "$QEMU_LIBC" "$libs" \
	$units || status=1
exit $status
