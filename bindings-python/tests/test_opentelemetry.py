"""OpenTelemetry's SDK through usertrace, end to end: a real
`opentelemetry-instrument`, one `usertrace record --otlp` to a real
OpenTelemetry Collector (its file exporter keeps exactly what arrived),
and the spans that arrive compared with what the SDK's
`InMemorySpanExporter` saw in the same run, message for message.

Needs `usertrace[opentelemetry]`, Flask and the instrumentations
(run-tests.sh installs them) and the Collector that
harness/build-otel-components builds.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs usertrace[opentelemetry]: run-tests.sh installs it")

from google.protobuf import json_format  # noqa: E402
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.proto.logs.v1.logs_pb2 import LogsData  # noqa: E402
from opentelemetry.proto.trace.v1.trace_pb2 import Span, TracesData  # noqa: E402

from conftest import usertrace_cli  # noqa: E402

pytestmark = [pytest.mark.kernel, pytest.mark.recorder]

APPS = Path(__file__).parent / "opentelemetry_apps"
REQUESTS = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def collector_binary() -> Path:
    """The Collector harness/build-otel-components built; if it is not
    there yet, that script builds it, or waits for the build test-all
    runs beside this suite."""
    cache = Path(os.environ.get("USERTRACE_CACHE") or Path.home() / ".cache" / "usertrace")
    binary = cache / "bin" / "otelcol"
    if not binary.is_file():
        build = Path(__file__).resolve().parents[2] / "harness" / "build-otel-components"
        made = subprocess.run([str(build)], capture_output=True, text=True, timeout=3600)
        assert made.returncode == 0, f"harness/build-otel-components failed:\n{made.stderr}"
    assert binary.is_file(), f"build the Collector with harness/build-otel-components: no {binary}"
    return binary


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[Tuple[str, Path]]:
    """A real Collector receiving OTLP/HTTP, writing what it receives to a file."""
    port, out = free_port(), tmp_path / "traces.json"
    config = tmp_path / "otelcol.yaml"
    config.write_text(
        f"receivers:\n  otlp:\n    protocols:\n      http:\n        endpoint: 127.0.0.1:{port}\n"
        f"exporters:\n  file:\n    path: {out}\n    flush_interval: 100ms\n"
        f"  file/logs:\n    path: {out.with_name('logs.json')}\n    flush_interval: 100ms\n"
        "service:\n  telemetry:\n    metrics:\n      level: none\n"
        "  pipelines:\n    traces:\n      receivers: [otlp]\n      exporters: [file]\n"
        "    logs:\n      receivers: [otlp]\n      exporters: [file/logs]\n"
    )
    log = open(tmp_path / "otelcol.log", "w")
    child = subprocess.Popen([str(collector_binary()), "--config", f"file:{config}"], stdout=log, stderr=log)
    try:
        wait_listening(port, child, tmp_path / "otelcol.log")
        yield f"http://127.0.0.1:{port}", out
    finally:
        child.kill()
        child.wait()
        log.close()


def wait_listening(port: int, child: "subprocess.Popen[Any]", log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert child.poll() is None, f"exited: {log.read_text()}"
            assert time.monotonic() < deadline, f"not listening in 60 s: {log.read_text()}"
            time.sleep(0.1)


def arrived(out: Path, count: int) -> List[Tuple[Span, str, str]]:
    """The spans the Collector wrote (at least `count`), each with its scope."""
    deadline = time.monotonic() + 20
    while True:
        spans = []
        for line in out.read_text().splitlines() if out.exists() else []:
            data = json_format.ParseDict(hex_ids_to_base64(json.loads(line)), TracesData())
            for rs in data.resource_spans:
                spans += [(s, ss.scope.name, ss.scope.version) for ss in rs.scope_spans for s in ss.spans]
        if len(spans) >= count or time.monotonic() > deadline:
            return spans
        time.sleep(0.1)


def hex_ids_to_base64(value: Any) -> Any:
    """OTLP/JSON spells ids in hex; protobuf's JSON, in base64."""
    if isinstance(value, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode() if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str) else hex_ids_to_base64(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [hex_ids_to_base64(v) for v in value]
    return value


def logs_arrived(out: Path, count: int) -> List[Tuple[bytes, str]]:
    """The log records the Collector wrote (at least `count`), each
    serialized, with its scope's name."""
    deadline = time.monotonic() + 20
    while True:
        logs = []
        for line in out.read_text().splitlines() if out.exists() else []:
            data = json_format.ParseDict(hex_ids_to_base64(json.loads(line)), LogsData())
            logs += [(r.SerializeToString(), sl.scope.name) for rl in data.resource_logs for sl in rl.scope_logs for r in sl.log_records]
        if len(logs) >= count or time.monotonic() > deadline:
            return logs
        time.sleep(0.1)


def logs_seen_by_the_sdk(path: Path) -> List[Tuple[bytes, str]]:
    request = ExportLogsServiceRequest.FromString(path.read_bytes())
    return [(r.SerializeToString(), sl.scope.name) for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]


def seen_by_the_sdk(path: Path) -> List[Tuple[Span, str, str]]:
    request = ExportTraceServiceRequest.FromString(path.read_bytes())
    return [(s, ss.scope.name, ss.scope.version) for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]


def by_span_id(spans: List[Tuple[Span, str, str]]) -> Dict[bytes, Tuple[Span, str, str]]:
    return {s.span_id: (s, name, version) for s, name, version in spans}


def environment(tmp_path: Path, provider: str, **extra: str) -> Dict[str, str]:
    env = dict(
        os.environ, USERTRACE_OTEL_PROVIDER=provider, MEMORY_SPANS_FILE=str(tmp_path / "memory.pb"), MEMORY_LOGS_FILE=str(tmp_path / "logs.pb")
    )
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(APPS), env.get("PYTHONPATH")]))
    env.update(OTEL_METRICS_EXPORTER="none", OTEL_LOGS_EXPORTER="none", OTEL_BSP_SCHEDULE_DELAY="50", OTEL_BLRP_SCHEDULE_DELAY="50", OTEL_SERVICE_NAME="flask-app")
    env.update(extra)
    return env


def instrumented_app(env: Dict[str, str], record: Optional[List[str]]) -> "subprocess.Popen[str]":
    """The Flask app under `opentelemetry-instrument`, under `record` if given."""
    instrument = str(Path(sys.executable).parent / "opentelemetry-instrument")
    command = [instrument, sys.executable, str(APPS / "flask_app.py")]
    # A session of its own: `stop_all` then ends the app and its recorder
    # together, whatever state a failed test left them in.
    return subprocess.Popen((record or []) + command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def stop_all(process: "subprocess.Popen[str]") -> None:
    """Kills `process` and everything it started (its session)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def app_pid(parent: int) -> int:
    """The app, a child of `parent` (`opentelemetry-instrument` execs it)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            return int(stat.parent.name)
    raise AssertionError(f"no child of {parent}")


def get(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as reply:
        return str(reply.read().decode())


# How long an app may take to listen: under the guest's emulation, Python
# 3.9 importing Flask and the SDK under opentelemetry-instrument took over
# a minute.
APP_START_S = 300


def wait_for_app(port: int, process: "subprocess.Popen[str]") -> None:
    """Waits until the app listens on `port`; if it does not, stops it
    first, so that no process of this test outlives it."""
    deadline = time.monotonic() + APP_START_S
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None:
                raise AssertionError(f"the app exited: {process.communicate()}")
            if time.monotonic() > deadline:
                stop_all(process)
                raise AssertionError(f"the app did not listen in {APP_START_S} s: {process.communicate()}")
            time.sleep(0.1)


def serve(port: int, process: "subprocess.Popen[str]", requests: int) -> List[str]:
    """Waits for the app (run by `process`, a recorder), sends `requests`
    to /front, then stops it as Ctrl-C would (so the SDK flushes at exit);
    returns the replies."""
    try:
        wait_for_app(port, process)
        replies = [get(port, "/front") for _ in range(requests)]
        os.kill(app_pid(process.pid), signal.SIGINT)
        _, stderr = process.communicate(timeout=APP_START_S)
    except BaseException:
        stop_all(process)
        raise
    assert process.returncode == 0, stderr
    return replies


# With the usertrace sampler too: while a recorder listens, it records.
@pytest.mark.parametrize("sampler", ["parentbased_always_on", "usertrace"])
def test_a_flask_apps_spans_reach_a_collector_as_the_sdk_saw_them(tmp_path: Path, collector: Tuple[str, Path], sampler: str) -> None:
    endpoint, out = collector
    provider, port = f"pyotel{os.getpid()}", free_port()
    env = environment(
        tmp_path, provider, APP_PORT=str(port), OTEL_TRACES_EXPORTER="usertrace,usertrace_test_memory", OTEL_TRACES_SAMPLER=sampler,
        OTEL_LOGS_EXPORTER="usertrace,usertrace_test_memory", OTEL_PYTHON_LOGGING_AUTO_INSTRUMENTATION_ENABLED="true",
    )
    record = [usertrace_cli(), "record", "-e", f"{provider}_*", "--otlp", endpoint, "--"]
    serve(port, instrumented_app(env, record), REQUESTS)
    sdk = seen_by_the_sdk(tmp_path / "memory.pb")
    # Per request: the server span of /front, urllib's client span, and
    # the server span of /back.
    assert len(sdk) == 3 * REQUESTS, sdk
    got = by_span_id(arrived(out, len(sdk)))
    assert set(got) == {s.span_id for s, _, _ in sdk}
    for span, name, version in sdk:
        assert got[span.span_id] == (span, name, version), f"{span.name} differs"
    traces = {s.trace_id for s, _, _ in sdk}
    assert len(traces) == REQUESTS, "one trace per request"
    kinds = sorted(Span.SpanKind.Name(s.kind) for s, _, _ in sdk)
    assert kinds == sorted(["SPAN_KIND_SERVER"] * 2 * REQUESTS + ["SPAN_KIND_CLIENT"] * REQUESTS)
    # The log records (werkzeug's line per request, at least), likewise.
    sdk_logs = logs_seen_by_the_sdk(tmp_path / "logs.pb")
    assert len(sdk_logs) >= 2 * REQUESTS, sdk_logs
    assert sorted(logs_arrived(out.with_name("logs.json"), len(sdk_logs))) == sorted(sdk_logs)


def test_spans_too_large_for_one_event_arrive_whole(tmp_path: Path, collector: Tuple[str, Path]) -> None:
    endpoint, out = collector
    provider = f"pyotelbig{os.getpid()}"
    env = environment(tmp_path, provider)
    run = subprocess.run(
        [usertrace_cli(), "record", "-e", f"{provider}_*", "--otlp", endpoint, "--", sys.executable, str(APPS / "big_spans.py")],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    sdk = seen_by_the_sdk(tmp_path / "memory.pb")
    assert [s.name for s, _, _ in sdk] == ["big", "wide"]
    big, wide = sdk[0][0], sdk[1][0]
    assert len(big.attributes[0].value.string_value) == 20 * 1024 and big.events and big.links
    assert len(wide.attributes) == 200
    got = by_span_id(arrived(out, 2))
    for span, name, version in sdk:
        assert got[span.span_id] == (span, name, version), f"{span.name} differs"
    assert not any(kv.key == "usertrace.otel.loss" for s, _, _ in got.values() for kv in s.attributes)


def test_with_the_sampler_and_no_recorder_nothing_is_recorded_and_traceparent_still_propagates(tmp_path: Path) -> None:
    port = free_port()
    env = environment(
        tmp_path, f"pyotelsampler{os.getpid()}", APP_PORT=str(port),
        OTEL_TRACES_EXPORTER="usertrace,usertrace_test_memory", OTEL_TRACES_SAMPLER="parentbased_usertrace",
    )
    process = instrumented_app(env, None)
    incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
    try:
        wait_for_app(port, process)
        root = urllib.request.urlopen(f"http://127.0.0.1:{port}/front", timeout=30).read().decode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/front", headers={"traceparent": incoming})
        continued = urllib.request.urlopen(request, timeout=30).read().decode()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=APP_START_S)
    except BaseException:
        stop_all(process)
        raise
    assert process.returncode == 0, stderr
    assert seen_by_the_sdk(tmp_path / "memory.pb") == [], "no span recorded while nobody listens"
    # /back saw a traceparent from urllib's non-recording span: a new
    # trace for the root request, the incoming trace for the other.
    version, trace, _, flags = root.split("-")
    assert (version, len(trace)) == ("00", 32) and trace != "0" * 32, root
    assert int(flags, 16) & 1 == 0, f"not sampled: {root}"
    assert continued.split("-")[1] == "4bf92f3577b34da6a3ce929d0e0e4736", continued


def dump_events(dump: Path) -> List[Dict[str, Any]]:
    """The events of a flight recorder's dump, as `usertrace convert` reads them."""
    converted = subprocess.run([usertrace_cli(), "convert", str(dump), "-", "--format", "json"], capture_output=True, text=True, timeout=60)
    assert converted.returncode == 0, converted.stderr
    lines = [json.loads(line) for line in converted.stdout.splitlines()]
    return [e for e in lines if e.get("type") == "event"]


def test_a_failed_span_triggers_the_flight_recorder_and_the_dump_holds_it(tmp_path: Path) -> None:
    provider = f"pyotelfail{os.getpid()}"
    out = tmp_path / "dumps"
    out.mkdir()
    record = [
        usertrace_cli(), "record", "--flight-recorder=5s", "--after", "200ms",
        "--trigger", f"{provider}_otel_span:status_code==2", "-e", f"{provider}_*", "-o", str(out / "flight.data"),
        "--", sys.executable, str(APPS / "failing_span.py"),
    ]
    run = subprocess.run(record, env=environment(tmp_path, provider), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    dumps = sorted(out.glob("flight.*.data"))
    assert len(dumps) == 1, f"{dumps}\n{run.stderr}"
    spans = [e for e in dump_events(dumps[0]) if e["event"] == f"{provider}_otel_span"]
    status = {e["fields"]["name"]: e["fields"]["status_code"] for e in spans}
    assert status == {"ok 0": 1, "ok 1": 1, "ok 2": 1, "charge card": 2}, spans
