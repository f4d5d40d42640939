#!/usr/bin/python3
# A stdio MCP server shaped like Hermes' hermes-tools: Codex starts it, and
# it is the one that writes the board (kanban_complete), not the worker. It
# finds the board as Hermes does: HERMES_KANBAN_DB, else the default board
# <root>/kanban.db (named board <root>/kanban/boards/<slug>/kanban.db with
# HERMES_KANBAN_BOARD), root HERMES_KANBAN_HOME, else HERMES_HOME, else
# ~/.hermes. So a lost HERMES_KANBAN_DB makes it write another board, and
# the write succeeds.
#
# usage: board_mcp.py MARKER [--no-board | --db PATH]
# On start it writes its row, then MARKER (JSON: pid, the board it wrote,
# its HERMES_* variables), then answers initialize and tools/list until
# Codex closes its stdin. --no-board: a user's unrelated server, which
# writes no board. --db PATH: a server whose board its own command line
# pins, whatever its environment says. --link-dir DIR: a server that is
# also refused a file call (a hard link to a directory: EPERM, even for
# root), so that one run has a refusal beside its handoff findings.
import json
import os
import sqlite3
import sys


def board():
    env = os.environ
    if env.get("HERMES_KANBAN_DB"):
        return env["HERMES_KANBAN_DB"]
    root = env.get("HERMES_KANBAN_HOME") or env.get("HERMES_HOME")
    root = root or os.path.join(os.path.expanduser("~"), ".hermes")
    slug = env.get("HERMES_KANBAN_BOARD")
    if slug:
        return os.path.join(root, "kanban", "boards", slug, "kanban.db")
    return os.path.join(root, "kanban.db")


def complete(db):
    os.makedirs(os.path.dirname(db), exist_ok=True)
    c = sqlite3.connect(db, timeout=5, isolation_level=None)
    c.execute("CREATE TABLE IF NOT EXISTS tasks (id TEXT, status TEXT)")
    c.execute("BEGIN IMMEDIATE")
    c.execute("INSERT INTO tasks VALUES (?, 'done')", (os.environ.get("HERMES_KANBAN_TASK"),))
    c.execute("COMMIT")
    c.close()


def reply(i, **kw):
    sys.stdout.write(json.dumps(dict(jsonrpc="2.0", id=i, **kw)) + "\n")
    sys.stdout.flush()


def serve():
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if "id" not in m or "method" not in m:
            continue  # a notification, or a reply
        if m["method"] == "initialize":
            v = (m.get("params") or {}).get("protocolVersion", "2025-06-18")
            reply(m["id"], result={"protocolVersion": v, "capabilities": {"tools": {}},
                                   "serverInfo": {"name": "board", "version": "1"}})
        elif m["method"] == "tools/list":
            reply(m["id"], result={"tools": [{"name": "kanban_complete", "description": "done",
                                              "inputSchema": {"type": "object",
                                                              "properties": {}}}]})
        elif m["method"] == "ping":
            reply(m["id"], result={})
        else:
            reply(m["id"], error={"code": -32601, "message": "no such method"})


marker = sys.argv[1]
args = sys.argv[2:]
if "--no-board" in args:
    db = None
elif "--db" in args:
    db = args[args.index("--db") + 1]
else:
    db = board()
error = None
try:
    if db:
        complete(db)
except (OSError, sqlite3.Error) as e:
    error = str(e)
if "--link-dir" in args:
    d = args[args.index("--link-dir") + 1]
    try:
        os.link(d, d + "-link")
    except OSError:
        pass
env = {k: v for k, v in os.environ.items() if k.startswith(("HERMES_", "HCOM_"))}
with open(marker + ".tmp", "w") as f:
    json.dump({"pid": os.getpid(), "db": db, "error": error, "env": env}, f)
os.rename(marker + ".tmp", marker)
serve()
