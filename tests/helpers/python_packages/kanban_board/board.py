# Opens a kanban board the way hermes-agent's kanban_db_connect.connect()
# does, so that a refusal has the same Python frames: a generator context
# manager takes a lock file beside the database through pathlib (standard
# library frames on both sides of ours), entered from a `with` in connect().
import contextlib
import sqlite3
from pathlib import Path


@contextlib.contextmanager
def board_init_lock(db: Path):
    lock = db.with_name(db.name + ".init.lock")
    handle = lock.open("a+b")  # the refused open
    try:
        yield
    finally:
        handle.close()


def connect(db: Path) -> sqlite3.Connection:
    db.parent.mkdir(parents=True, exist_ok=True)
    with board_init_lock(db):
        return sqlite3.connect(db)
