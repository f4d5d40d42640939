#!/bin/sh
# make deb: BUILD/denytrace_VERSION_ARCH.deb from what make all built,
# with dpkg's own tools (no debhelper needed): make install into a staging
# tree with the Debian layout, then dpkg-shlibdeps, dpkg-gencontrol and
# dpkg-deb. Metadata from debian/ (control, changelog, copyright).
#
# usage: make-deb.sh BUILD MULTIARCH     prints the package's path
set -eu
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || {
	echo "usage: make-deb.sh BUILD MULTIARCH" >&2
	exit 2
}
build=$1 multiarch=$2
for tool in dpkg-shlibdeps dpkg-gencontrol dpkg-parsechangelog; do
	command -v $tool >/dev/null 2>&1 || {
		echo "make deb: $tool is missing: apt-get install dpkg-dev" >&2
		exit 1
	}
done
[ -n "$multiarch" ] || {
	echo "make deb: the compiler names no multiarch directory (cc -print-multiarch)" >&2
	exit 1
}

version=$(dpkg-parsechangelog -S Version)
code=$(sed -n 's/^#define DT_VERSION_STRING "\(.*\)"$/\1/p' preload/version.h)
[ "$version" = "$code" ] || {
	echo "make deb: debian/changelog says $version, preload/version.h $code: add a changelog entry" >&2
	exit 1
}
arch=$(dpkg --print-architecture)
work=$build/deb
stage=$work/denytrace
rm -rf "$work"
mkdir -p "$stage/DEBIAN"

make --no-print-directory -s install BUILD="$build" DESTDIR="$stage" PREFIX=/usr \
	PROBEDIR="/usr/lib/$multiarch/denytrace" >/dev/null
doc=$stage/usr/share/doc/denytrace
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
	"$stage/usr/bin/denytrace" "$stage/usr/lib/$multiarch/denytrace/libdenytrace.so"
gzip -9n "$stage/usr/share/man/man1/denytrace.1"
install -m 0644 debian/copyright "$doc/copyright"
gzip -9nc debian/changelog >"$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
install -D -m 0644 debian/denytrace.lintian-overrides "$stage/usr/share/lintian/overrides/denytrace"

# The probe has no DT_NEEDED (it binds to the libc every program has
# loaded): only the CLI gives shared-library dependencies.
dpkg-shlibdeps -T"$work/substvars" -e"$stage/usr/bin/denytrace" 2>"$work/shlibdeps.log" || {
	cat "$work/shlibdeps.log" >&2
	exit 1
}
dpkg-gencontrol -pdenytrace -P"$stage" -T"$work/substvars" -f"$work/files" \
	-cdebian/control -ldebian/changelog
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
deb=$build/denytrace_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
