#!/usr/bin/env bash
# Runs every Criterion suite (unit, then integration) and the script suites.
# Criterion prints its own synthesis line per binary; this script prints a
# final tally, names every skipped test with its reason (tests skip when
# root, Landlock, bubblewrap or Codex is missing), and fails if any suite
# failed.
set -u
# usage: run-tests.sh BUILD [--unit-only]
# env:   DT_SUITES="test_a test_b" runs only the suites so named
#        DT_SKIPS_ALLOWED=FILE: a skipped test whose reason holds none of
#        FILE's lines fails the run (CI: a suite that must run, because CI
#        installed what it needs, cannot pass by skipping)
#        DT_FUZZ=1 also runs `make fuzz-smoke` (each libFuzzer target for a
#        few seconds) after the suites, before the tally, so that the tally
#        and the skipped tests are the last lines printed
BUILD=${1:-build}
SUITES=("$BUILD"/unit/test_* "$BUILD"/integration/test_*)
[ "${2:-}" = "--unit-only" ] && SUITES=("$BUILD"/unit/test_*)
if [ -n "${DT_SUITES:-}" ]; then
	chosen=()
	for t in "${SUITES[@]}"; do
		case " $DT_SUITES " in *" $(basename "$t") "*) chosen+=("$t") ;; esac
	done
	SUITES=("${chosen[@]}")
fi
export DT_BUILD=$BUILD
cd "$(dirname "$0")/.." || exit 2
# denytrace run writes a launch file per run: into a directory of the
# suites' own, not the home of whoever runs them; and never under /tmp
# (nor under a checkout that lies there), which Codex's workspace-write
# sandbox grants: fix --verify rightly distrusts a launch file the command
# could have written. /var/tmp is not granted unless TMPDIR names it.
XDG_STATE_HOME=$(mktemp -d /var/tmp/denytrace-state.XXXXXX) || exit 2
export XDG_STATE_HOME
trap 'rm -rf "$XDG_STATE_HOME"' EXIT
results=$BUILD/test-results
rm -rf "$results"
mkdir -p "$results"
failed=()
for t in "${SUITES[@]}"; do
	[ -x "$t" ] || continue
	name=$(basename "$(dirname "$t")")/$(basename "$t")
	echo "== $name"
	# Each suite's own .timeout holds (Criterion's --timeout would
	# override every one of them, the longer ones included); the whole
	# binary gets a backstop so that a hang in a test without one cannot
	# stall CI.
	t0=$SECONDS
	if ! timeout -k 30 "${DT_SUITE_BACKSTOP:-1800}" "$t" --jobs 2 \
		--output="json:$results/${name//\//.}.json"; then
		failed+=("$t")
	fi
	# a CI log's tail then says where the time went
	echo "== $name: $((SECONDS - t0)) s"
done

if [ "${DT_FUZZ:-}" = 1 ]; then
	echo "== fuzz: each libFuzzer target for 15 s (make fuzz-smoke)"
	make --no-print-directory fuzz-smoke || failed+=(fuzz-smoke)
fi

# The skipped tests, grouped by reason, from Criterion's JSON reports.
python3 - "$results" <<'EOF'
import glob, json, os, sys
by_reason, total, n = {}, 0, 0
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        continue  # a crashed suite: its failure is reported below
    for suite in doc.get("test_suites", []):
        for t in suite.get("tests", []):
            total += 1
            if t.get("status") != "SKIPPED":
                continue
            n += 1
            why = (t.get("messages") or ["no reason given"])[0]
            by_reason.setdefault(why, []).append(suite["name"] + "::" + t["name"])
print("%d tests, %d skipped" % (total, n))
allowed = None
if os.environ.get("DT_SKIPS_ALLOWED"):
    with open(os.environ["DT_SKIPS_ALLOWED"]) as f:
        allowed = [l.strip() for l in f if l.strip() and not l.startswith("#")]
refused = 0
for why, tests in by_reason.items():
    bad = allowed is not None and not any(a in why for a in allowed)
    refused += len(tests) if bad else 0
    print("skipped %d%s: %s" % (len(tests), " (NOT ALLOWED HERE)" if bad else "", why))
    for t in tests:
        print("    " + t)
# Each failed test again, with its first messages: CI keeps only the end
# of the output, and a suite's own report scrolled away long before.
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        continue
    for suite in doc.get("test_suites", []):
        for t in suite.get("tests", []):
            if t.get("status") in ("PASSED", "SKIPPED"):
                continue
            print("failed: %s::%s (%s)" % (suite["name"], t["name"], t.get("status")))
            for m in (t.get("messages") or [])[:4]:
                print("    " + " | ".join(l for l in m.splitlines() if l.strip())[:400])
if refused:
    print("%d skipped for a reason %s does not allow" % (refused, os.environ["DT_SKIPS_ALLOWED"]))
    sys.exit(3)
EOF
[ $? = 3 ] && failed+=("skips-not-allowed")

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED suites: ${failed[*]}"
	exit 1
fi
echo "all test suites passed"
