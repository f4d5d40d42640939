#!/usr/bin/env bash
# Installs the real Codex CLI (@openai/codex, pinned) with npm into DIR
# (default build/codex, relative to the repository root) unless it is
# already there, and prints the path of the codex binary.
#
# usage: scripts/install-codex.sh [DIR]
# exit:  0 installed (or already there), path on stdout
#        3 cannot install: npm missing, the registry unreachable, or the
#          installed binary does not run (one-line reason on stderr)
set -u
VERSION=0.169.0
PKG="@openai/codex@$VERSION"
cd "$(dirname "$0")/.." || exit 3
DIR=${1:-build/codex}
mkdir -p "$DIR" 2>/dev/null || { echo "install-codex: cannot create $DIR" >&2; exit 3; }
DIR=$(cd "$DIR" && pwd)
BIN="$DIR/node_modules/.bin/codex"

installed() {
	local v
	[ -x "$BIN" ] || return 1
	v=$(timeout 60 "$BIN" --version 2>/dev/null) || return 1
	case "$v" in *"$VERSION"*) return 0 ;; esac
	return 1
}

if installed; then
	echo "$BIN"
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "install-codex: npm is not installed; cannot install $PKG" >&2
	exit 3
fi
if ! command -v node >/dev/null 2>&1; then
	echo "install-codex: node is not installed; cannot run $PKG" >&2
	exit 3
fi
log="$DIR/npm-install.log"
if ! timeout 300 npm install --no-audit --no-fund --no-save --loglevel=error \
	--prefix "$DIR" "$PKG" >"$log" 2>&1; then
	reason=$(grep -m1 -E 'ERR!|error' "$log" | sed 's/^npm //')
	echo "install-codex: npm install $PKG failed or timed out (registry unreachable?): ${reason:-see $log}" >&2
	exit 3
fi
if ! installed; then
	echo "install-codex: $PKG installed but '$BIN --version' does not report $VERSION" >&2
	exit 3
fi
echo "$BIN"
