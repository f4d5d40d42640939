#!/usr/bin/python3
# A stand-in for the Responses API `codex exec` talks to, on 127.0.0.1 (a
# free port): no account, no network. It holds its reply until MARKER
# exists (bounded: Codex ends its MCP servers when the turn completes, and
# the test needs the server to have run), then streams one assistant
# message and completes the turn.
#
# usage: responses_stub.py MARKER LOG
# Prints its port and a newline, in one write, once it listens; notes each
# request in LOG.
import http.server
import json
import os
import sys
import threading
import time

marker, log = sys.argv[1], sys.argv[2]
REPLY = "dt-stub-model-reply"
# Never outlive a lost test. A daemon: a main thread that ends for any
# reason ends the stub, instead of leaving a process that still holds its
# listening socket, never accepts, and waits 900 s for this timer.
guard = threading.Timer(900, os._exit, (3,))
guard.daemon = True
guard.start()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def note(self, text):
        with open(log, "a") as f:
            f.write(text + "\n")

    def do_GET(self):
        self.note("GET " + self.path)
        self.send_error(404)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.endswith("/responses"):
            self.note("POST " + self.path)
            self.send_error(404)
            return
        t0 = time.monotonic()
        while not os.path.exists(marker) and time.monotonic() - t0 < 10:
            time.sleep(0.02)
        self.note("responses marker=%d" % os.path.exists(marker))
        ev = [{"type": "response.created", "response": {"id": "resp_dt"}},
              {"type": "response.output_item.done", "output_index": 0,
               "item": {"type": "message", "role": "assistant", "id": "msg_dt",
                        "content": [{"type": "output_text", "text": REPLY}]}},
              {"type": "response.completed", "response": {"id": "resp_dt", "usage": {
                  "input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}}]
        out = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e))
                      for e in ev).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
# One write: under PYTHONUNBUFFERED print() writes the port and its newline
# separately, and a reader that has the digits may close the pipe in between
# (then the newline's EPIPE ended the main thread before serve_forever).
os.write(1, b"%d\n" % s.server_address[1])
s.serve_forever()
