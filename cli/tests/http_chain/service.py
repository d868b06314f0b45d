"""One service of the HTTP chain (cli/tests/http_chain/mod.rs), in Python
on the binding alone: http.server and urllib.

    python service.py NEXT_URL COUNT

Says ``port=N`` once its span is registered (under ``$USERTRACE_PROVIDER``)
and it listens on 127.0.0.1 (port 0: the kernel picks). Then, COUNT times:
takes one GET, makes its ``traceparent`` current (``usertrace.extract``,
``use_context``), begins the ``traced`` span ``handle`` inside it, calls
NEXT_URL with the span's ``traceparent`` (``usertrace.inject``), answers
with the next service's reply and prints ``span trace=T span=S parent=P``
(hex; ``-`` for no parent)."""

import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer

import usertrace

NEXT_URL, COUNT = sys.argv[1], int(sys.argv[2])
# Registered here, before the port is said: under `usertrace record`, that
# waits until the recorder has attached.
handle = usertrace.traced("handle")


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        incoming = usertrace.extract(self.headers)
        with usertrace.use_context(incoming):
            with handle:
                mine = usertrace.current_context()
                headers: dict = {}
                usertrace.inject(headers)
                with urllib.request.urlopen(urllib.request.Request(NEXT_URL, headers=headers)) as reply:
                    body = reply.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        parent = incoming.span_id if incoming else "-"
        print(f"span trace={mine.trace_id if mine else '-'} span={mine.span_id if mine else '-'} parent={parent}", flush=True)

    def log_message(self, format: str, *args: object) -> None:
        pass


server = HTTPServer(("127.0.0.1", 0), Handler)
print(f"port={server.server_address[1]}", flush=True)
for _ in range(COUNT):
    server.handle_request()
server.server_close()
