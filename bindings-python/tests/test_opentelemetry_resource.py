"""The SDK's own Resource at the Collector: a service whose Resource is
built in code (no OTEL_SERVICE_NAME in its environment, a custom string
and a custom integer attribute) is named by exactly that Resource in what
one `usertrace record --otlp` sends a real Collector, for its spans and
its log records; then only what the recorder adds of its own (its pid,
executable). Also when the recorder attaches after the service started,
when what the exporter wrote of the resource before went nowhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs usertrace[opentelemetry]: run-tests.sh installs it")

from google.protobuf import json_format  # noqa: E402
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.proto.logs.v1.logs_pb2 import LogsData  # noqa: E402
from opentelemetry.proto.resource.v1.resource_pb2 import Resource  # noqa: E402
from opentelemetry.proto.trace.v1.trace_pb2 import TracesData  # noqa: E402

from conftest import usertrace_cli  # noqa: E402
from test_opentelemetry import APPS, collector, environment, hex_ids_to_base64, seen_by_the_sdk  # noqa: E402,F401

pytestmark = [pytest.mark.kernel, pytest.mark.recorder]

# What the recorder adds after an SDK's resource, for a process on this
# host outside any container (and linux.namespace.*, where it sees them).
RECORDER_KEYS = {"host.name", "process.pid", "process.executable.name", "process.executable.path", "process.command_line"}


def app_environment(tmp_path: Path, provider: str, **extra: str) -> Dict[str, str]:
    """The tests' environment, without the variables that would name the
    service: the Resource built in code alone names it."""
    env = environment(tmp_path, provider, **extra)
    env.pop("OTEL_SERVICE_NAME", None)
    env.pop("OTEL_RESOURCE_ATTRIBUTES", None)
    return env


def collector_data(out: Path, message: type, count: int, items: Callable[[Any], int]) -> List[Any]:
    """What the Collector wrote to `out`, once it holds at least `count`
    items (`items` counts them in one message), or after 20 s."""
    deadline = time.monotonic() + 20
    while True:
        data = [json_format.ParseDict(hex_ids_to_base64(json.loads(line)), message()) for line in (out.read_text().splitlines() if out.exists() else [])]
        if sum(items(d) for d in data) >= count or time.monotonic() > deadline:
            return data
        time.sleep(0.1)


def span_resources(out: Path, count: int) -> List[Tuple[Resource, int]]:
    """Each ResourceSpans the Collector received: its resource and how many spans it held."""
    data = collector_data(out, TracesData, count, lambda d: sum(len(ss.spans) for rs in d.resource_spans for ss in rs.scope_spans))
    return [(rs.resource, sum(len(ss.spans) for ss in rs.scope_spans)) for d in data for rs in d.resource_spans]


def log_resources(out: Path, count: int) -> List[Resource]:
    data = collector_data(out, LogsData, count, lambda d: sum(len(sl.log_records) for rl in d.resource_logs for sl in rl.scope_logs))
    return [rl.resource for d in data for rl in d.resource_logs]


def assert_the_sdk_s_resource(got: Resource, sdk: Resource, pid: int) -> None:
    """`got` holds exactly the SDK's attributes, first, then only the
    recorder's own, its process.pid being `pid`."""
    n = len(sdk.attributes)
    assert list(got.attributes)[:n] == list(sdk.attributes), f"{got}\nis not first\n{sdk}"
    rest = {kv.key: kv.value for kv in list(got.attributes)[n:]}
    assert all(k in RECORDER_KEYS or k.startswith("linux.namespace.") for k in rest), sorted(rest)
    assert rest["process.pid"].int_value == pid, rest


def sdk_resource(tmp_path: Path) -> Resource:
    """The resource the SDK's in-memory exporter saw (one, for every span)."""
    request = ExportTraceServiceRequest.FromString((tmp_path / "memory.pb").read_bytes())
    resources = [rs.resource for rs in request.resource_spans]
    assert len(resources) == 1, resources
    attributes = {kv.key: kv.value for kv in resources[0].attributes}
    assert attributes["service.name"].string_value == "checkout-py"
    assert (attributes["deployment.tier"].string_value, attributes["checkout.shard"].int_value) == ("canary", 7)
    assert attributes["telemetry.sdk.language"].string_value == "python"
    return resources[0]


def test_a_resource_built_in_code_names_the_spans_and_logs_at_the_collector(tmp_path: Path, collector: Tuple[str, Path]) -> None:
    endpoint, out = collector
    provider = f"pyotelres{os.getpid()}"
    pid_file = tmp_path / "pid"
    # `sh -c 'echo $$ > pid; exec python app'`: the app's pid, for process.pid.
    app = f"echo $$ > {pid_file}; exec {sys.executable} {APPS / 'resource_in_code.py'}"
    run = subprocess.run(
        [usertrace_cli(), "record", "-e", f"{provider}_*", "--otlp", endpoint, "--", "sh", "-c", app],
        env=app_environment(tmp_path, provider), capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    sdk = sdk_resource(tmp_path)
    pid = int(pid_file.read_text())
    spans = seen_by_the_sdk(tmp_path / "memory.pb")
    assert [s.name for s, _, _ in spans] == ["load cart", "GET /cart"]
    got = span_resources(out, len(spans))
    assert sum(n for _, n in got) == len(spans), got
    for resource, _ in got:
        assert_the_sdk_s_resource(resource, sdk, pid)
    logs = ExportLogsServiceRequest.FromString((tmp_path / "logs.pb").read_bytes())
    assert [rl.resource for rl in logs.resource_logs] == [sdk], "the logger's resource is the tracer's"
    got_logs = log_resources(out.with_name("logs.json"), 1)
    assert got_logs, "no log record arrived"
    for resource in got_logs:
        assert_the_sdk_s_resource(resource, sdk, pid)


def test_a_recorder_that_attaches_late_names_the_spans_by_the_sdk_s_resource(tmp_path: Path, collector: Tuple[str, Path]) -> None:
    endpoint, out = collector
    provider = f"pyotellate{os.getpid()}"
    env = app_environment(tmp_path, provider, LATE_RUN_S="3")
    app = subprocess.Popen([sys.executable, str(APPS / "resource_in_code.py")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert app.stdout is not None and app.stdout.readline() == "ready\n", app.communicate()
        # Spans made now are written to nobody: no recorder listens yet.
        time.sleep(0.5)
        record = [
            usertrace_cli(), "record", "-e", f"{provider}_*", "--otlp", endpoint, "-p", str(app.pid),
            "--", "sh", "-c", f"while kill -0 {app.pid} 2>/dev/null; do sleep 0.05; done",
        ]
        # The recorder's command waits for the app, which must be reaped first.
        recorder = subprocess.Popen(record, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, app_stderr = app.communicate(timeout=60)
        _, stderr = recorder.communicate(timeout=60)
    finally:
        app.kill()
    assert app.returncode == 0, app_stderr
    assert recorder.returncode == 0, stderr
    sdk = sdk_resource(tmp_path)
    got = span_resources(out, 20)
    # About 2.5 s of a span every 20 ms, less what attaching takes.
    assert sum(n for _, n in got) >= 20, f"{got}\n{stderr}"
    for resource, _ in got:
        assert_the_sdk_s_resource(resource, sdk, app.pid)
