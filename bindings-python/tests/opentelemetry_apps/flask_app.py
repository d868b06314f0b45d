"""A Flask service as anyone writes it, with no tracing code: `/front`
calls `/back` over HTTP with urllib; `/back` answers with the
`traceparent` header it was sent, so a test can see the context
propagate."""

import os
import urllib.request

from flask import Flask, request

app = Flask(__name__)
PORT = int(os.environ["APP_PORT"])


@app.route("/front")
def front() -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/back") as reply:
        return reply.read()


@app.route("/back")
def back() -> str:
    return request.headers.get("traceparent", "none")


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=PORT, threaded=True)
