"""The Python stage of the four-language demo (``harness/demo``).

Says ``ready`` on stdout once it and the stages after it are set up, then
reads requests (``ID TRACEPARENT PATH`` lines) on stdin, works on each
inside a span ``demo_py_work`` begun under the caller's traceparent, hands
its own on to the next stage, asks the next stage (the command in its arguments, the
Java lookup) and answers ``ID RESULT`` on stdout. See
examples/rust/src/bin/demo-front.rs for the whole chain.

    python worker.py NEXT-STAGE-COMMAND...
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import usertrace

demo = usertrace.Provider("demo_py")
work = demo.span("work", request_id="u64", path=str)
cache = demo.tracepoint("cache", request_id="u64", hit=bool)
_seen: set = set()


@usertrace.traced(provider=demo)  # its own span, nested in demo_py_work
def checksum(path: str) -> str:
    digest = hashlib.sha256()
    for _ in range(200):
        digest.update(path.encode())
    return digest.hexdigest()[:8]


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: worker.py NEXT-STAGE-COMMAND...", file=sys.stderr)
        return 2
    # `usertrace record -- CMD` holds each new event of its programs until it
    # is attached, through a descriptor they inherit. subprocess closes
    # inherited descriptors: pass that one on, or the Java stage's first
    # events would go out before the recorder saw its tracepoints.
    attach_fd = os.environ.get(usertrace.ATTACH_FD_ENV, "")
    pass_fds = (int(attach_fd),) if attach_fd.isdigit() else ()
    lookup = subprocess.Popen(
        sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", pass_fds=pass_fds
    )
    assert lookup.stdin is not None and lookup.stdout is not None
    if lookup.stdout.readline() != "ready\n":
        print("worker.py: the Java stage did not say it was ready", file=sys.stderr)
        return 1
    print("ready", flush=True)
    for line in sys.stdin:
        request_id_text, traceparent, path = line.rstrip("\n").split(" ", 2)
        request_id = int(request_id_text)
        caller = usertrace.TraceContext.from_traceparent(traceparent)  # None for "-"
        # Its context current inside: checksum's span is its child.
        with work.begin_in(caller, request_id, path) as span, usertrace.use_context(span.context):
            hit = path in _seen
            _seen.add(path)
            if cache.enabled:
                cache.emit(request_id, hit)
            digest = checksum(path)
            lookup.stdin.write(f"{request_id} {span.traceparent or '-'} {path}\n")
            lookup.stdin.flush()
            answer = lookup.stdout.readline().rstrip("\n").split(" ", 1)[1]
        print(f"{request_id} {answer}/{digest}", flush=True)
    lookup.stdin.close()
    return lookup.wait()


if __name__ == "__main__":
    sys.exit(main())
