#!/usr/bin/python3
# A Hermes-shaped kanban worker: it finishes its task and reports back by
# writing the board database, the way Hermes does (Python sqlite3, WAL with
# a fallback to DELETE journal mode, BEGIN IMMEDIATE, busy timeout).
#
# usage: hermes_worker.py            write to $HERMES_KANBAN_DB
#        hermes_worker.py --init MODE  create the board ($HERMES_KANBAN_DB)
#                                      in journal mode MODE (wal, delete)
# HERMES_WORKER_JOURNAL=delete keeps the board in DELETE mode (no WAL try).
# Prints "ok" or "error: MESSAGE"; exits 0, or 3 when it cannot report back.
import os
import sqlite3
import sys

db = os.environ["HERMES_KANBAN_DB"]

if len(sys.argv) > 2 and sys.argv[1] == "--init":
    c = sqlite3.connect(db)
    mode = c.execute("PRAGMA journal_mode=%s" % sys.argv[2]).fetchone()[0]
    c.execute("CREATE TABLE IF NOT EXISTS tasks (id INTEGER PRIMARY KEY, title TEXT, status TEXT)")
    c.execute("INSERT INTO tasks (title, status) VALUES ('write the report', 'running')")
    c.commit()
    c.close()
    print("init", mode)
    sys.exit(0)

try:
    c = sqlite3.connect(db, timeout=5, isolation_level=None)
    if os.environ.get("HERMES_WORKER_JOURNAL", "wal") == "wal":
        try:
            c.execute("PRAGMA journal_mode=WAL")
        except sqlite3.Error:
            c.execute("PRAGMA journal_mode=DELETE")
    c.execute("BEGIN IMMEDIATE")
    c.execute("INSERT INTO tasks (title, status) VALUES ('report', 'done')")
    c.execute("COMMIT")
    print("ok")
except sqlite3.Error as e:
    print("error:", e)
    sys.exit(3)
