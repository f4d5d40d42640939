#!/bin/sh
# A Debian tree made with debootstrap and kept in a cache outside the
# checkout, and commands run inside it as if it were the machine.
#
# usage: debian-tree.sh path SUITE
#            the cached tree's directory (whether it exists or not)
#        debian-tree.sh make SUITE
#            creates it (minbase, plus make and CA certificates) unless it
#            is there, and prints its path
#        debian-tree.sh run [--throwaway] [--copy FILE] TREE COMMAND...
#            runs COMMAND inside TREE; --throwaway: on a writable layer
#            over TREE, dropped afterwards, so TREE stays clean; --copy:
#            FILE into the tree's /tmp first
#
# The command runs in private mount and PID namespaces in which TREE is
# the root (bind-mounted on itself, then pivot_root), not a plain chroot:
# bubblewrap refuses to build a sandbox when / is not a mount point of
# its own namespace, and would fall back to nothing.
#
# env:  DT_CACHE     the cache (default /var/cache/denytrace)
#       DT_MIRROR    a Debian mirror URL (default: debootstrap's own)
# exit: the command's status; 2 usage; 3 Debian's mirror could not be
#       reached (no network); 4 the tree could not be made or entered
set -eu

CACHE=${DT_CACHE:-/var/cache/denytrace}

die() {
	status=$1
	shift
	echo "debian-tree: $*" >&2
	exit "$status"
}

tree_path() {
	echo "$CACHE/debian-$1"
}

# Exit 3 when no Debian mirror answers: debootstrap's own failure would be
# a page of wget output ending in "Failed getting release file".
check_mirror() {
	log=$1
	if grep -q -e 'Failed getting release file' -e 'unable to resolve' \
		-e 'Temporary failure in name resolution' -e 'Network is unreachable' "$log"; then
		die 3 "cannot reach a Debian mirror (no network?): $(tail -n 1 "$log")"
	fi
}

make_tree() {
	suite=$1
	made=$(tree_path "$suite")
	if [ -x "$made/usr/bin/make" ]; then
		echo "$made"
		return
	fi
	command -v debootstrap >/dev/null 2>&1 ||
		die 4 "debootstrap is missing: apt-get install debootstrap"
	[ "$(id -u)" -eq 0 ] || die 4 "making a Debian tree needs root (debootstrap)"
	mkdir -p "$CACHE"
	part=$made.part
	rm -rf "$part"
	log=$CACHE/debootstrap-$suite.log
	echo "debian-tree: debootstrap $suite into $made (log: $log)" >&2
	# shellcheck disable=SC2086
	if ! nice -n 10 debootstrap --variant=minbase --include=make,mount,ca-certificates \
		"$suite" "$part" ${DT_MIRROR:-} >"$log" 2>&1; then
		check_mirror "$log"
		die 4 "debootstrap $suite failed: $(tail -n 1 "$log")"
	fi
	# Package lists now, so that apt-get install works inside at once.
	if ! run_in "$part" apt-get update -q >>"$log" 2>&1; then
		check_mirror "$log"
		die 4 "apt-get update in the new $suite tree failed: see $log"
	fi
	mv "$part" "$made"
	echo "$made"
}

# The part that runs inside the new namespaces, as root of both: mounts
# what a machine has, pivots into the tree, drops the old root and runs
# the command with a clean environment.
INSIDE='
set -e
tree=$1 throwaway=$2 copy=$3 ca=$4
shift 4
if [ "$throwaway" = 1 ]; then
	# a tmpfs over /mnt, seen only in this namespace: nothing is left behind
	layer=/mnt
	mount -t tmpfs tmpfs "$layer"
	mkdir "$layer/upper" "$layer/work" "$layer/root"
	mount -t overlay overlay -o "lowerdir=$tree,upperdir=$layer/upper,workdir=$layer/work" \
		"$layer/root"
	tree=$layer/root
else
	mount --bind "$tree" "$tree"
fi
mount -t proc proc "$tree/proc"
mount --rbind /dev "$tree/dev"
mount --rbind /sys "$tree/sys"
cp /etc/resolv.conf "$tree/etc/resolv.conf" 2>/dev/null || true
[ -z "$copy" ] || cp "$copy" "$tree/tmp/"
# the CA certificates this machine gives node (a TLS-inspecting proxy),
# so that npm reaches its registry from the tree as from the host
[ -z "$ca" ] || cp "$ca" "$tree/etc/ssl/denytrace-host-ca.crt"
mkdir -p "$tree/.oldroot"
cd "$tree"
pivot_root . .oldroot
exec /usr/sbin/chroot . /bin/sh -c "umount -l /.oldroot && rmdir /.oldroot && cd / && exec \"\$@\"" \
	sh "$@"
'

run_in() {
	throwaway=0 copy=""
	while :; do
		case $1 in
		--throwaway) throwaway=1 ;;
		--copy)
			copy=$(realpath "$2")
			shift
			;;
		*) break ;;
		esac
		shift
	done
	tree=$1
	shift
	[ -d "$tree/etc" ] || die 4 "$tree is not a Debian tree"
	ca=""
	[ ! -f "${NODE_EXTRA_CA_CERTS:-}" ] || ca=$NODE_EXTRA_CA_CERTS
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" DEBIAN_FRONTEND=noninteractive \
		${ca:+NODE_EXTRA_CA_CERTS=/etc/ssl/denytrace-host-ca.crt} \
		unshare --mount --pid --fork --propagation private \
		sh -c "$INSIDE" sh "$tree" "$throwaway" "$copy" "$ca" "$@"
}

[ $# -ge 2 ] || die 2 "usage: debian-tree.sh path|make SUITE, or run [--throwaway] [--copy FILE] TREE COMMAND..."
case $1 in
path) tree_path "$2" ;;
make) make_tree "$2" ;;
run)
	shift
	run_in "$@"
	;;
*) die 2 "unknown action $1: path, make or run" ;;
esac
