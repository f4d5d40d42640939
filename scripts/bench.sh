#!/bin/sh
# The benchmark's entry point (`make bench` runs `./scripts/bench.sh BUILD`).
# Usage: scripts/bench.sh [BUILD] [--quick] [--json FILE] [--rounds N] [--only LIST]
# Everything is in scripts/bench.py (Python 3 standard library only); see
# `scripts/bench.sh build --help`.
set -e
here=$(dirname "$0")
py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" "$here/bench.py" "$@"
