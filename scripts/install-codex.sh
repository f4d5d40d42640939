#!/usr/bin/env bash
# Installs the real Codex CLI (@openai/codex, pinned) with npm into DIR
# (default build/codex, relative to the repository root) unless it is
# already there, and prints the path of the codex binary.
# CODEX_VERSION picks another version denytrace's model was checked
# against (tracer/roots/codex_versions.def); the newest is the default.
#
# usage: scripts/install-codex.sh [--status FILE] [DIR]
# exit:  0 installed (or already there), path on stdout
#        3 cannot install: npm missing, the registry unreachable, or the
#          installed binary does not run (one-line reason on stderr)
# --status FILE also writes the outcome for the test suites to read, one
#   line: "codex PATH" or "none REASON" (see tests/testlib.h, dtt_codex).
#
# `make codex` runs it under `timeout`: its own timeouts use --foreground so
# that npm stays in the caller's process group and dies with it.
set -u
VERSION=${CODEX_VERSION:-0.171.0}
PKG="@openai/codex@$VERSION"
STATUS=
if [ "${1:-}" = --status ]; then
	STATUS=$2
	shift 2
fi
cd "$(dirname "$0")/.." || exit 3

# fail REASON: the one-line reason on stderr (and in the status file), exit 3
fail() {
	echo "install-codex: $1" >&2
	[ -z "$STATUS" ] || echo "none $1" >"$STATUS"
	exit 3
}

DIR=${1:-build/codex}
mkdir -p "$DIR" 2>/dev/null || fail "cannot create $DIR"
DIR=$(cd "$DIR" && pwd)
BIN="$DIR/node_modules/.bin/codex"

installed() {
	local v
	[ -x "$BIN" ] || return 1
	v=$(timeout --foreground 60 "$BIN" --version 2>/dev/null) || return 1
	case "$v" in *"$VERSION"*) return 0 ;; esac
	return 1
}

succeed() {
	[ -z "$STATUS" ] || echo "codex $BIN" >"$STATUS"
	echo "$BIN"
	exit 0
}

installed && succeed
command -v npm >/dev/null 2>&1 || fail "npm is not installed; cannot install $PKG"
command -v node >/dev/null 2>&1 || fail "node is not installed; cannot run $PKG"
log="$DIR/npm-install.log"
# One retry with short back-off: an unreachable registry fails in seconds.
if ! timeout --foreground 300 npm install --no-audit --no-fund --no-save --loglevel=error \
	--fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 \
	--prefix "$DIR" "$PKG" >"$log" 2>&1; then
	reason=$(grep -m1 -E 'ERR!|error' "$log" | sed 's/^npm //')
	fail "npm install $PKG failed or timed out (registry unreachable?): ${reason:-see $log}"
fi
installed || fail "$PKG installed but '$BIN --version' does not report $VERSION"
succeed
