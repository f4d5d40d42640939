#!/bin/sh
# The benchmark's entry point (`make bench` runs `./scripts/bench.sh BUILD`).
# Usage: scripts/bench.sh [BUILD] [--quick] [--json FILE] [--rounds N] [--only LIST]
#        [--skip LIST] [--audit-all]
# Everything is in scripts/bench.py (Python 3 standard library only); see
# `scripts/bench.sh build --help`.
set -e
here=$(dirname "$0")
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# The optional bpftrace baseline needs the syscall tracepoints in tracefs.
# As root with bpftrace installed, mount tracefs where it is missing (it is
# left mounted; `umount /sys/kernel/tracing` undoes it).
if [ "$(id -u)" = 0 ] && command -v bpftrace >/dev/null 2>&1 &&
   [ -d /sys/kernel/tracing ] && [ ! -d /sys/kernel/tracing/events ] &&
   [ ! -d /sys/kernel/debug/tracing/events ]; then
	if mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
		echo "bench.sh: mounted tracefs on /sys/kernel/tracing for the bpftrace baseline (left mounted)" >&2
	else
		echo "bench.sh: could not mount tracefs on /sys/kernel/tracing: the bpftrace baseline will be skipped" >&2
	fi
fi

exec "$py" "$here/bench.py" "$@"
