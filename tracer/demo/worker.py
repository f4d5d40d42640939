# A Hermes-shaped kanban worker reporting back: it writes the board database
# named by HERMES_KANBAN_DB the way Hermes does (Python sqlite3, WAL with a
# fallback to DELETE journal mode, BEGIN IMMEDIATE), a fresh connection for
# each write. The busy timeout is 5 s, not Hermes' 120 s, to keep the demo
# bounded.
# usage: worker.py WRITES INTERVAL [UID:GID]
#   UID:GID  become that user first. The demo starts the worker as root so
#            that the probe is loaded before the switch: its ring descriptor
#            stays writable, and its path need not be readable by UID.
import os
import sqlite3
import sys
import time

writes, interval = int(sys.argv[1]), float(sys.argv[2])
if len(sys.argv) > 3:
    uid, gid = (int(x) for x in sys.argv[3].split(":"))
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
db = os.environ["HERMES_KANBAN_DB"]
marks, errors = "", []
for i in range(writes):
    c = None
    try:
        c = sqlite3.connect(db, timeout=5, isolation_level=None)
        try:
            c.execute("PRAGMA journal_mode=WAL")
        except sqlite3.Error:
            c.execute("PRAGMA journal_mode=DELETE")
        c.execute("BEGIN IMMEDIATE")
        c.execute("UPDATE tasks SET status = ? WHERE id = 1", ("progress %d" % i,))
        c.execute("COMMIT")
        marks += "."
    except sqlite3.Error as e:
        marks += "x"
        errors.append(str(e))
    finally:
        if c is not None:
            c.close()
    time.sleep(interval)
failed = marks.count("x")
print("worker: writes %s (x = failed)" % marks)
why = ": " + max(set(errors), key=errors.count) if errors else ""
print("worker: %d of %d writes failed%s" % (failed, writes, why), flush=True)
sys.exit(3 if failed else 0)
