"""`harness/demo` runs here, without the guest, through shared memory.

The README's demo on a kernel without user_events (ours): the four
programs find no user_events, write their events into /dev/shm, and the
recording reads them with the scheduler's view. USERTRACE_TRANSPORT=shm
makes the run take this route on a kernel with user_events too. What is
checked is what someone running the demo would look at: the route it says
it took, every request through all four languages under each program's
own name, the spans nested across the four processes in one time order,
and the report's view of each span.

Run by harness/test-all after `harness/demo --build-only`, with the demo's
own venv (it has pytest): `python -m pytest harness/tests`.
"""

import collections
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OUT = Path("/tmp/usertrace-demo")
REQUESTS = 5

# Each language's span: its process name, the event that begins it and the
# one that ends it.
SPANS = [
    ("demo-front", "demo_request", "demo_span_end"),
    ("service", "demo_c_handle", "demo_c_span_end"),
    ("python", "demo_py_work", "demo_py_span_end"),
    ("java", "demo_java_lookup", "demo_java_span_end"),
]


@pytest.fixture(scope="module")
def demo():
    env = dict(os.environ, USERTRACE_TRANSPORT="shm")
    run = subprocess.run(
        [str(ROOT / "harness/demo"), str(REQUESTS)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
    events = []
    for line in (OUT / "demo.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "event":
            events.append(record)
    return run, events


def test_it_says_it_records_here_through_shared_memory(demo):
    run, _ = demo
    assert "so the programs write their events into shared memory" in run.stderr, run.stderr
    assert "recording in the guest kernel" not in run.stderr, run.stderr
    assert re.search(rf"usertrace record: \d+ events, 0 lost", run.stderr), run.stderr


def test_every_request_goes_through_all_four_languages_under_their_names(demo):
    _, events = demo
    counts = collections.Counter((e["process"], e["event"]) for e in events if e["event"].startswith("demo_"))
    assert counts == {
        ("demo-front", "demo_started"): 1,
        ("demo-front", "demo_request"): REQUESTS,
        ("demo-front", "demo_reply"): REQUESTS,
        ("demo-front", "demo_span_end"): REQUESTS,
        ("service", "demo_c_handle"): REQUESTS,
        ("service", "demo_c_parse"): REQUESTS,
        ("service", "demo_c_route"): REQUESTS,
        # demo_c_handle's end and demo_c_parse's.
        ("service", "demo_c_span_end"): 2 * REQUESTS,
        ("python", "demo_py_work"): REQUESTS,
        ("python", "demo_py_cache"): REQUESTS,
        ("python", "demo_py_checksum"): REQUESTS,
        ("python", "demo_py_span_end"): 2 * REQUESTS,
        ("java", "demo_java_lookup"): REQUESTS,
        ("java", "demo_java_found"): REQUESTS,
        ("java", "demo_java_span_end"): REQUESTS,
    }
    replies = [e["fields"] for e in events if e["event"] == "demo_reply"]
    assert [r["request_id"] for r in replies] == list(range(1, REQUESTS + 1))
    # Lookup answers a path under /api with an error, and any other with its
    # hit count; the front says which it got.
    paths = {e["fields"]["request_id"]: e["fields"]["path"] for e in events if e["event"] == "demo_request"}
    for reply in replies:
        failing = paths[reply["request_id"]].startswith("/api")
        assert reply["ok"] is not failing, reply
        assert re.fullmatch(r"error:unavailable/[0-9a-f]{8}" if failing else r"ok:\d+/[0-9a-f]{8}", reply["result"]), reply
    assert any(p.startswith("/api") for p in paths.values()) and not all(p.startswith("/api") for p in paths.values())
    # The scheduler's view came with it: the four programs' switches.
    switched = {e["fields"]["next_comm"] for e in events if e["event"] == "sched_switch"}
    assert {"demo-front", "service"} <= switched, switched


def test_each_request_s_spans_nest_across_the_four_processes_in_one_time_order(demo):
    _, events = demo
    times = [e["time_ns"] for e in events]
    assert times == sorted(times)
    for request_id in range(1, REQUESTS + 1):
        begins, ends = [], []
        for process, begin_event, end_event in SPANS:
            begin = next(
                e for e in events if e["event"] == begin_event and e["fields"]["request_id"] == request_id
            )
            assert begin["process"] == process
            span = begin["fields"]["span_begin"]
            end = next(e for e in events if e["event"] == end_event and e["fields"]["span_end"] == span)
            assert end["pid"] == begin["pid"]
            begins.append(begin["time_ns"])
            ends.append(end["time_ns"])
        # front ⊃ service ⊃ worker ⊃ lookup: each begins after the one that
        # called it and ends before it.
        assert begins == sorted(begins), (request_id, begins)
        assert ends == sorted(ends, reverse=True), (request_id, ends)
        assert begins[-1] < ends[-1]


def test_each_request_is_one_trace_across_the_four_services(demo):
    _, events = demo
    for request_id in range(1, REQUESTS + 1):
        begins = [
            next(e for e in events if e["event"] == begin_event and e["fields"]["request_id"] == request_id)["fields"]
            for _, begin_event, _ in SPANS
        ]
        trace = (begins[0]["trace_id_hi"], begins[0]["trace_id_lo"])
        assert trace != (0, 0) and begins[0]["parent_span_id"] == 0, begins[0]
        for caller, callee in zip(begins, begins[1:]):
            assert (callee["trace_id_hi"], callee["trace_id_lo"]) == trace, (request_id, begins)
            assert callee["parent_span_id"] == caller["span_begin"], (request_id, begins)


def test_each_program_is_the_service_its_environment_names(demo):
    services = {}
    for line in (OUT / "demo.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "process" and "resource" in record:
            services[record["resource"]["service.name"]] = Path(record["executable"]).name
    assert set(services) == {"demo-front", "demo-c", "demo-py", "demo-java"}, services
    assert (services["demo-front"], services["demo-c"], services["demo-java"]) == ("demo-front", "service", "java")


def test_the_report_says_where_each_language_s_span_spent_its_time(demo):
    run, _ = demo
    for _, begin_event, _ in SPANS:
        block = re.search(rf"^span {begin_event}: (\d+) finished;.*\n((?:  .*\n)+)", run.stdout, re.M)
        assert block, f"no span {begin_event} in the report:\n{run.stdout}"
        assert int(block[1]) == REQUESTS
        lines = block[2]
        for state in ("on-CPU", "runnable", "blocked"):
            assert re.search(rf"^  {state} +p50 ", lines, re.M), f"{begin_event} has no {state} line:\n{lines}"
    assert (OUT / "demo.pftrace").stat().st_size > 0


def test_the_report_counts_each_request_once_from_the_front_s_root_span(demo):
    # One trace per request, begun by the front's span, whatever the other
    # three languages did inside it.
    run, _ = demo
    requests = re.findall(r"^  (\S+) in (.+): (\d+) finished;", run.stdout, re.M)
    assert requests == [("demo_request", "demo-front", str(REQUESTS))], run.stdout
