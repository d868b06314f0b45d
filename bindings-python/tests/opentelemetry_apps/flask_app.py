"""A Flask service as anyone writes it, with no tracing code: `/front`
calls `/back` over HTTP with urllib (or `$BACK_URL`, the next service of
a chain); `/back` answers with the `traceparent` header it was sent, so a
test can see the context propagate."""

import os
import signal
import urllib.request

from flask import Flask, request

app = Flask(__name__)
PORT = int(os.environ["APP_PORT"])
BACK_URL = os.environ.get("BACK_URL") or f"http://127.0.0.1:{PORT}/back"


@app.route("/front")
def front() -> bytes:
    with urllib.request.urlopen(BACK_URL) as reply:
        return reply.read()


@app.route("/back")
def back() -> str:
    return request.headers.get("traceparent", "none")


if __name__ == "__main__":
    # The tests stop it with SIGINT, as Ctrl-C would, so that the SDK
    # flushes at exit. A process started with SIGINT ignored (every
    # background job of a non-interactive shell is) would never stop:
    # Python installs its handler only where SIGINT is not ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    app.run(host="127.0.0.1", port=PORT, threaded=True)
