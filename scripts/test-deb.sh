#!/bin/sh
# make test-deb: the Debian package is sound and works where it is
# installed. On this machine: lintian reports no error, the package holds
# the CLI, the probe under the multiarch library directory, the man page
# and the completions, and neither binary has an rpath. Then, in a clean
# Debian tree of this machine's release (cached debootstrap, used through
# a throwaway layer): `apt-get install ./PACKAGE` installs it with its
# dependencies, `denytrace demo --json` finds refusals in both phases,
# and `apt-get purge` leaves none of its files behind. Each finding's
# Python lines must name worker.py's sqlite3 calls: the probe reads
# CPython's frames version by version (preload/pyframes.c), and a tree of
# another release (SUITE: trixie has Python 3.13, this machine 3.11) is
# where a wrong offset would show, as no line or a wrong one.
#
# usage: test-deb.sh PACKAGE.deb [SUITE]
#        SUITE: the Debian release of the tree (default: this machine's)
# exit:  0 passed; 1 a check failed; 2 usage; 3 no network; 4 no tree
set -u
cd "$(dirname "$0")/.." || exit 4
{ [ $# -eq 1 ] || [ $# -eq 2 ]; } && [ -f "$1" ] || {
	echo "usage: test-deb.sh PACKAGE.deb [SUITE]" >&2
	exit 2
}
deb=$1
fail=0
check() {
	if [ "$1" = ok ]; then
		echo "test-deb: ok: $2"
	else
		echo "test-deb: FAILED: $2" >&2
		fail=1
	fi
}
begin=$(date +%s)

if command -v lintian >/dev/null 2>&1; then
	lintian --fail-on error --tag-display-limit 0 "$deb" >"$deb.lintian" 2>&1
	check "$([ $? -eq 0 ] && echo ok)" "lintian: no error ($(grep -c '^[EW]:' "$deb.lintian") errors and warnings: $deb.lintian)"
else
	check "" "lintian is missing (apt-get install lintian)"
fi

multiarch=$(cc -print-multiarch)
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/denytrace "./usr/lib/$multiarch/denytrace/libdenytrace.so" \
	./usr/share/man/man1/denytrace.1.gz ./usr/share/bash-completion/completions/denytrace \
	./usr/share/zsh/vendor-completions/_denytrace ./usr/share/doc/denytrace/copyright; do
	check "$(echo "$contents" | grep -qxF "$f" && echo ok)" "the package holds $f"
done
x=$(mktemp -d)
dpkg-deb -x "$deb" "$x"
for f in usr/bin/denytrace "usr/lib/$multiarch/denytrace/libdenytrace.so"; do
	[ -f "$x/$f" ] || continue
	check "$(readelf -d "$x/$f" | grep -qE 'RPATH|RUNPATH' || echo ok)" "$f has no rpath"
done
rm -rf "$x"

. /etc/os-release
suite=${2:-$VERSION_CODENAME}
tree=$(./scripts/debian-tree.sh make "$suite") || exit $?
log=$(dirname "$tree")/test-deb-$suite.log
nice -n 10 ./scripts/debian-tree.sh run --throwaway --copy "$deb" "$tree" sh -c '
set -e
deb=/tmp/$(basename "$1")
apt-get install -y -q "$deb"
denytrace demo --json --out /tmp/demo > /tmp/demo.json
python3 - <<EOF
import json
doc = json.load(open("/tmp/demo.json"))
for p in doc["phases"]:
    assert p["refusals"] > 0, "phase %d found no refusal" % p["phase"]
causes = doc["phases"][-1]["by_cause"]
assert "root-not-granted" in causes, "phase 2 causes: %s" % causes
print("demo: " + ", ".join("phase %d %d refusals" % (p["phase"], p["refusals"]) for p in doc["phases"]))
import sys
version = sys.version.split()[0]
source = open("/tmp/demo/worker.py").read().splitlines()
named = 0
for p in doc["phases"]:
    report = json.load(open(p["report_json"]))
    lines = [l for f in report["findings"] for l in (f.get("python_lines") or [])]
    assert lines, "phase %d: no finding names a Python line (python %s)" % (p["phase"], version)
    for f in report["findings"]:
        # every refusal of the demo comes from the code of worker.py
        got = sum(l["count"] for l in (f.get("python_lines") or []))
        assert got == f["count"], "phase %d: %d of %d refusals have a Python line (python %s)" \
            % (p["phase"], got, f["count"], version)
    for l in lines:
        assert l["file"] == "/tmp/demo/worker.py", "phase %d: a line of %s" % (p["phase"], l["file"])
        text = source[l["line"] - 1] if 0 < l["line"] <= len(source) else ""
        # connect, or a call on the connection c: execute, and close
        # (closing may remove or checkpoint the journal, and be refused)
        assert "sqlite3.connect(" in text or text.strip().startswith("c."), \
            "phase %d: worker.py:%d (%r) is no sqlite3 call (python %s)" % (p["phase"], l["line"], text, version)
        named += 1
print("python %s: %d lines named, each a sqlite3 call of worker.py, one for each refusal"
      % (version, named))
EOF
dpkg -L denytrace | while read -r f; do [ -d "$f" ] || echo "$f"; done > /tmp/files
apt-get purge -y -q denytrace
left=$(while read -r f; do [ ! -e "$f" ] || echo "$f"; done < /tmp/files)
[ -z "$left" ] || { echo "left behind after purge: $left"; exit 1; }
! dpkg -s denytrace >/dev/null 2>&1 || { echo "still known to dpkg after purge"; exit 1; }
echo "purged: $(wc -l < /tmp/files) files removed"
' sh "$(basename "$deb")" >"$log" 2>&1
status=$?
grep -e '^demo:' -e '^python ' -e '^purged:' -e 'left behind' -e 'still known' -e 'Error' "$log"
if [ $status -ne 0 ] && grep -q -e 'Temporary failure resolving' -e 'Failed to fetch' "$log"; then
	echo "test-deb: cannot reach a Debian mirror (no network?) to install the dependencies: see $log" >&2
	exit 3
fi
check "$([ $status -eq 0 ] && echo ok)" "apt-get install, denytrace demo, apt-get purge in a clean $suite tree (log: $log)"
echo "test-deb: $(($(date +%s) - begin)) s"
exit $fail
