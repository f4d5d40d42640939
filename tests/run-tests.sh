#!/usr/bin/env bash
# Runs every Criterion suite (unit, then integration) and the script suites.
# Criterion prints its own synthesis line per binary; this script prints a
# final tally and fails if any suite failed.
set -u
# usage: run-tests.sh BUILD [--unit-only]
BUILD=${1:-build}
SUITES=("$BUILD"/unit/test_* "$BUILD"/integration/test_*)
[ "${2:-}" = "--unit-only" ] && SUITES=("$BUILD"/unit/test_*)
export DT_BUILD=$BUILD
cd "$(dirname "$0")/.." || exit 2
failed=()
for t in "${SUITES[@]}"; do
	[ -x "$t" ] || continue
	echo "== $(basename "$(dirname "$t")")/$(basename "$t")"
	if ! "$t" --jobs 2 --timeout 120; then
		failed+=("$t")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED suites: ${failed[*]}"
	exit 1
fi
echo "all test suites passed"
