# A Hermes-shaped dispatcher, as the board database sees it: it opens the
# board (WAL mode), holds it open for a moment, closes it, and comes back.
# While it holds it, kanban.db-wal and kanban.db-shm exist; closing the
# last connection checkpoints and deletes them.
# usage: dispatcher.py DB HOLD GAP   (seconds; stops at EOF on stdin)
#        dispatcher.py --init DB     (create the board in WAL mode)
import select
import sqlite3
import sys

if sys.argv[1] == "--init":
    c = sqlite3.connect(sys.argv[2])
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT, status TEXT)")
    c.execute("INSERT INTO tasks (title, status) VALUES ('write the report', 'running')")
    c.commit()
    c.close()
    sys.exit(0)

db, hold, gap = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])


def stop_within(seconds):
    return bool(select.select([sys.stdin], [], [], seconds)[0])


while True:
    c = sqlite3.connect(db, timeout=120, isolation_level=None)
    c.execute("SELECT count(*) FROM tasks").fetchone()
    stop = stop_within(hold)
    c.close()
    if stop or stop_within(gap):
        break
