#!/usr/bin/env bash
# The demo is built into the CLI (tracer/demo/demo.c): `denytrace demo`.
# This wrapper stays for old habits: scripts/demo.sh [BUILD] [demo options].
set -euo pipefail
BUILD=${1:-build}
[ $# -gt 0 ] && shift
exec "$BUILD/denytrace" demo "$@"
