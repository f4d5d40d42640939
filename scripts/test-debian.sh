#!/bin/sh
# The README's two commands, `make demo` and `make test`, on another Debian
# release: in test-SUITE, a cached copy of the debootstrap tree of SUITE
# (scripts/debian-tree.sh), holding a copy of this checkout (what git
# tracks or would add, without build output), with the tree as the root of
# its own mount namespace so that bubblewrap works as on a machine.
# Packages the tests install stay in the tree for the next run; so does
# its build/ directory.
#
# usage: test-debian.sh SUITE [MAKE_ARGS...]   (make test's, e.g. SUITES=...)
# exit:  0 both passed; 1 one failed; 2 usage; 3 no network; 4 no tree
set -u
cd "$(dirname "$0")/.." || exit 4
[ $# -ge 1 ] || {
	echo "usage: test-debian.sh SUITE [MAKE_ARGS...]" >&2
	exit 2
}
suite=$1
shift
begin=$(date +%s)
# A tree of its own, copied from the clean one: the packages and build
# output it gathers must not reach make test-deb's clean tree.
tree=$(dirname "$(./scripts/debian-tree.sh path "$suite")")/test-$suite
if [ ! -d "$tree" ]; then
	base=$(./scripts/debian-tree.sh make "$suite") || exit $?
	rm -rf "$tree.part"
	cp -a "$base" "$tree.part" && mv "$tree.part" "$tree" || exit 4
fi
made=$(date +%s)

# Not under /root (0700): the tests that drop to another user run the
# build's binaries and preload its probe.
# build/ and the like are ignored by .gitignore and so neither copied nor,
# in the tree, deleted: the tree's own build output is reused.
mkdir -p "$tree/srv/denytrace"
rsync -a --delete --filter=':- .gitignore' --exclude=/.git ./ "$tree/srv/denytrace/" || exit 4

# The packages first, apart, so that a missing network is told as such.
log=$(dirname "$tree")/deps-$suite.log
if ! nice -n 10 ./scripts/debian-tree.sh run "$tree" make -C /srv/denytrace deps >"$log" 2>&1; then
	if grep -q -e 'Temporary failure resolving' -e 'Could not resolve' \
		-e 'Network is unreachable' -e 'Failed to fetch' "$log"; then
		echo "test-debian: cannot reach a Debian mirror (no network?) to install the packages: see $log" >&2
		exit 3
	fi
	echo "test-debian: installing the packages in the $suite tree failed: see $log" >&2
	exit 1
fi
deps=$(date +%s)

nice -n 10 ./scripts/debian-tree.sh run "$tree" \
	sh -c 'cd /srv/denytrace && make demo && make test "$@"' sh "$@"
status=$?
end=$(date +%s)
echo "test-debian: $suite: make demo && make test: $([ $status -eq 0 ] && echo passed || echo "failed ($status)");" \
	"$((end - begin)) s in all: tree $((made - begin)) s, packages $((deps - made)) s," \
	"demo and tests $((end - deps)) s"
[ $status -eq 0 ] || exit 1
