"""A recorder already listening (a node's agent, or `usertrace record`
running the service) records the exporter's first batch: the exporter
registers its events when it is built, not at its first export, which
would find them registered that instant and nobody attached yet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
    try:
        assert recorder.stderr is not None
        said = [recorder.stderr.readline()]
        assert "no event matches" in said[0], said
        app = subprocess.run([sys.executable, str(APPS / "first_batch.py")], env=environment(tmp_path, provider), capture_output=True, text=True, timeout=120)
        assert app.returncode == 0, app.stderr
    finally:
        done.touch()
        said.append(recorder.communicate(timeout=60)[1])
    assert recorder.returncode == 0, said
    spans = [e for e in map(json.loads, out.read_text().splitlines()) if e.get("type") == "event"]
    assert [e["fields"]["name"] for e in spans] == ["GET /first"], f"{spans}\n{said}"
