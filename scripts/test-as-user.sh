#!/usr/bin/env bash
# Runs `make test` (or the make targets given) as an ordinary user over a
# copy of this tree, the way a newcomer with the Debian packages installed
# runs it: tests that need root must skip, the rest must pass.
#
# usage: scripts/test-as-user.sh [MAKE-ARGS...]      (run as root)
# env:   DT_USER      the user to run as, created when missing (dt-user)
#        DT_USER_DIR  where the copy goes (/var/tmp/dt-user), replaced
#        DT_USER_CODEX=share  reuse this tree's build/codex (default: the
#                     copy installs Codex itself, or skips its tests)
# exit:  make's status; 2 when not run as root
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "test-as-user: run as root: it creates a user and switches to it" >&2
	exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
user=${DT_USER:-dt-user}
dir=${DT_USER_DIR:-/var/tmp/dt-user}
home=/var/tmp/$user-home
if ! id -u "$user" >/dev/null 2>&1; then
	useradd --create-home --home-dir "$home" --shell /bin/sh --user-group "$user"
fi
home=$(getent passwd "$user" | cut -d: -f6)

rm -rf "$dir"
mkdir -p "$dir"
# The sources only: the copy builds everything itself, as a fresh clone does.
tar -C "$src" --exclude=./build --exclude=./build-asan --exclude=./build-fuzz \
	--exclude=./.git -cf - . | tar -C "$dir" -xf -
if [ "${DT_USER_CODEX:-}" = share ] && [ -e "$src/build/codex" ]; then
	mkdir -p "$dir/build"
	ln -s "$(readlink -f "$src/build/codex")" "$dir/build/codex"
fi
chown -R "$user:" "$dir"

# Criterion's runner binds /tmp/criterion_PID.sock and does not always
# remove it. One left by a root run cannot be replaced by the user whose
# runner gets that PID again (pid_max 32768 wraps within a CI run): the
# suite aborts with "Could not initialize the message server: Address
# already in use". Sockets of runners no longer alive go first.
for sock in /tmp/criterion_*.sock; do
	[ -S "$sock" ] || continue
	pid=${sock##*_}
	kill -0 "${pid%.sock}" 2>/dev/null || rm -f "$sock"
done

echo "test-as-user: make ${*:-test} as $user (uid $(id -u "$user")) in $dir"
keep=()
for v in npm_config_registry http_proxy https_proxy no_proxy; do
	[ -n "${!v:-}" ] && keep+=("$v=${!v}")
done
exec runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" \
	PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 "${keep[@]}" \
	make --no-print-directory -C "$dir" "${@:-test}"
