#!/usr/bin/env bash
# make demo: a Hermes-shaped worker writes its board database (SQLite, WAL,
# BEGIN IMMEDIATE) from a sandbox that was not granted the board directory.
# denytrace records the refusals from inside and explains them. Leaves
# nothing behind but the output directory it prints.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
DT="$BUILD/denytrace"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

OUT=$(mktemp -d "${TMPDIR:-/tmp}/denytrace-demo.XXXXXX")
HERMES_HOME="$OUT/home/.hermes"
BOARD="$HERMES_HOME/kanban"
DB="$BOARD/kanban.db"
WORK="$OUT/workspace"
mkdir -p "$BOARD" "$WORK"

"$PY" - "$DB" <<'PYEOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA journal_mode=WAL")
c.execute("CREATE TABLE IF NOT EXISTS tasks (id INTEGER PRIMARY KEY, title TEXT, status TEXT)")
c.execute("INSERT INTO tasks (title, status) VALUES ('write the report', 'running')")
c.commit()
c.close()
PYEOF

cat > "$OUT/worker.py" <<'PYEOF'
# A kanban worker finishing its task: it must write the board database.
import os, sqlite3, sys
db = os.environ["HERMES_KANBAN_DB"]
try:
    c = sqlite3.connect(db, timeout=5)
    c.execute("BEGIN IMMEDIATE")
    c.execute("UPDATE tasks SET status = 'done' WHERE id = 1")
    c.execute("COMMIT")
    print("worker: task marked done")
except sqlite3.Error as e:
    print(f"worker: cannot report back: {e}", file=sys.stderr)
    sys.exit(3)
PYEOF

# Sandbox: the workspace is writable, the board directory is not.
if bwrap --ro-bind / / --dev /dev true 2>/dev/null; then
	KIND="bubblewrap (--ro-bind / /, --bind $WORK)"
	SANDBOX=(bwrap --ro-bind / / --bind "$WORK" "$WORK" --dev /dev --proc /proc --chdir "$WORK" --)
elif "$BUILD/helpers/landlock-run" --rw "$WORK" --rw /dev/null -- true 2>/dev/null; then
	KIND="Landlock (writes only beneath $WORK)"
	SANDBOX=("$BUILD/helpers/landlock-run" --rw "$WORK" --rw /dev/null --)
else
	echo "demo: neither bubblewrap nor Landlock can create a sandbox here" >&2
	exit 1
fi

echo "== denytrace demo: a board-DB worker in a sandbox missing its root"
echo "   sandbox:          $KIND"
echo "   HERMES_KANBAN_DB: $DB"
echo
set +e
(cd "$WORK" && "$DT" run -o "$OUT/demo.ring" -- "${SANDBOX[@]}" \
	env HERMES_HOME="$HERMES_HOME" HERMES_KANBAN_DB="$DB" HERMES_KANBAN_WORKSPACE="$WORK" \
	"$PY" "$OUT/worker.py")
status=$?
set -e
echo "   worker exit status: $status"
echo
echo "== denytrace show --type denial $OUT/demo.ring"
"$DT" show --type denial "$OUT/demo.ring"
echo
echo "== denytrace show --type reopen"
"$DT" show --type reopen "$OUT/demo.ring"
if "$DT" report --help >/dev/null 2>&1; then
	echo
	echo "== denytrace report $OUT/demo.ring"
	"$DT" report "$OUT/demo.ring"
	"$DT" report --format json "$OUT/demo.ring" > "$OUT/report.json"
	"$DT" report --format markdown "$OUT/demo.ring" > "$OUT/report.md"
fi
echo
echo "demo output: $OUT"
