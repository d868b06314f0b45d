"""A recorder already listening (a node's agent, or `usertrace record`
running the service) records the exporter's first batch: the exporter
registers its events when it is built, not at its first export, which
would find them registered that instant and nobody attached yet."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs usertrace[opentelemetry]: run-tests.sh installs it")

from conftest import usertrace_cli  # noqa: E402
from test_opentelemetry import APPS, environment  # noqa: E402

pytestmark = [pytest.mark.kernel, pytest.mark.recorder]


def test_the_first_batch_is_recorded_by_a_recorder_already_listening(tmp_path: Path) -> None:
    provider = f"pyotelfirst{os.getpid()}"
    out, done = tmp_path / "events.jsonl", tmp_path / "done"
    # A recorder that did not start the service, as a node's agent: it
    # runs until `done` exists, and finds the service as it registers.
    wait = f"while [ ! -e {done} ]; do sleep 0.05; done"
    recorder = subprocess.Popen(
        [usertrace_cli(), "record", "-e", f"{provider}_otel_span", "-o", str(out), "--", "sh", "-c", wait],
        stderr=subprocess.PIPE, text=True,
    )
    said: "queue.Queue[str]" = queue.Queue()
    stderr = recorder.stderr
    assert stderr is not None

    def pump() -> None:
        for line in stderr:
            said.put(line)

    pumping = threading.Thread(target=pump, daemon=True)
    pumping.start()
    app = subprocess.Popen(
        [sys.executable, str(APPS / "first_batch.py")], env=environment(tmp_path, provider),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    lines = []
    try:
        assert app.stdout is not None and app.stdin is not None
        assert app.stdout.readline() == "built\n", app.communicate()
        # Built, and no span exported yet: the recorder attaches to the
        # span event now, or never did (registered at the first export,
        # it would be attached only after that export found nobody).
        deadline = time.monotonic() + 30
        while not any(f"attached user_events:{provider}_otel_span" in line for line in lines):
            try:
                lines.append(said.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                pytest.fail(f"the recorder never attached to {provider}_otel_span while the exporter was built: {lines}")
        app.stdin.write("go\n")
        app.stdin.flush()
        _, app_stderr = app.communicate(timeout=120)
        assert app.returncode == 0, app_stderr
    finally:
        app.kill()
        app.communicate()
        done.touch()
        recorder.wait(timeout=60)
        pumping.join(timeout=10)
        stderr.close()
    assert recorder.returncode == 0, lines
    spans = [e for e in map(json.loads, out.read_text().splitlines()) if e.get("type") == "event"]
    assert [e["fields"]["name"] for e in spans] == ["GET /first"], f"{spans}\n{lines}"
