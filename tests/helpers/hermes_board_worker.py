#!/usr/bin/python3
# A kanban worker opening its board through the kanban_board package (found
# on PYTHONPATH), or, given a hermes-agent checkout as its first argument,
# through hermes-agent's own hermes_cli.kanban_db_connect.connect().
# usage: hermes_board_worker.py DB
#        hermes_board_worker.py --hermes CHECKOUT   (board: $HERMES_KANBAN_DB)
# Exits 0 when the board opened, 3 when the open was refused.
import sys
from pathlib import Path

try:
    if sys.argv[1] == "--hermes":
        sys.path.insert(0, sys.argv[2])
        from hermes_cli.kanban_db_connect import connect

        connect()
    else:
        from kanban_board.board import connect

        connect(Path(sys.argv[1]))
except OSError as e:
    print("error:", e)
    sys.exit(3)
print("ok")
