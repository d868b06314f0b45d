"""With user_events (the guest kernel): events arrive with exact values."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import usertrace
from conftest import Ftrace, usertrace_cli, wait_for
from usertrace import ErrorKind, UsertraceError

pytestmark = pytest.mark.kernel

REPO = Path(__file__).resolve().parents[2]
# What a span begun without a parent writes after its id: nothing said of
# its trace (the core's span convention).
NO_TRACE = {"trace_id_hi": 0, "trace_id_lo": 0, "parent_span_id": 0}


def trace_of(fields: Dict[str, Any]) -> Dict[str, Any]:
    """A begin event's trace id fields (empty for an event that has none)."""
    return {k: fields[k] for k in ("trace_id_hi", "trace_id_lo") if k in fields}

ALL_TYPES = dict(
    a="u8", b="u16", c="u32", d="u64", e="i8", f="i16", g="i32", h="i64",
    i="bool", j="f32", k="f64", s="str", y="bytes", z="char[8]",
)


def test_enabled_follows_the_tracer(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    tp = provider.tracepoint("ev", x="u8")
    assert tp.registered and tp.registration_error is None and not tp.enabled
    ftrace.enable(tp)
    assert tp.enabled
    ftrace.disable(tp)
    assert not tp.enabled


@pytest.mark.parametrize(
    "values",
    [
        (255, 65535, 2**32 - 1, 2**64 - 1, -128, -32768, -(2**31), -(2**63), True, 1.5, -2.25, "héllo wörld", b"\x00\x01\xff", "abc"),
        (0, 1, 2, 3, 127, 32767, 2**31 - 1, 2**63 - 1, False, -0.0, 1e300, "", b"", b"12345678"),
    ],
)
def test_every_type_arrives_with_its_exact_value(
    provider: usertrace.Provider, ftrace: Ftrace, values: tuple
) -> None:
    tp = provider.tracepoint("all", ALL_TYPES)
    ftrace.enable(tp)
    tp.emit(*values)
    tp.emit(**dict(zip(ALL_TYPES, values)))
    events = ftrace.values(tp)
    z = values[13]
    expected = dict(zip(ALL_TYPES, values[:13] + (z.decode() if isinstance(z, bytes) else z,)))
    assert events == [expected, expected]
    assert str(events[0]["j"]) == str(values[9])


def test_lone_surrogates_arrive_as_replacement_characters(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    tp = provider.tracepoint("ev", s=str)
    ftrace.enable(tp)
    tp.emit("a\ud800b\udfffc")
    assert ftrace.events(tp) == [{"s": "a\ufffdb\ufffdc"}]


def test_emit_raises_the_same_errors_as_validate_when_enabled(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    tp = provider.tracepoint("ev", n="u8", s=str)
    ftrace.enable(tp)
    with pytest.raises(OverflowError, match="field n"):
        tp.emit(256, "x")
    with pytest.raises(TypeError, match="field s"):
        tp.emit(1, 2)
    with pytest.raises(ValueError, match="field s"):
        tp.emit(1, "a\0")
    assert ftrace.events(tp) == []


def test_the_same_name_with_other_fields_is_refused(provider: usertrace.Provider) -> None:
    keep = provider.tracepoint("ev", x="u8")
    with pytest.raises(UsertraceError) as e:
        provider.tracepoint("ev", x="u16")
    assert e.value.kind is ErrorKind.FIELDS_MISMATCH
    again = provider.tracepoint("ev", x="u8")
    assert keep.registered and again.registered


def test_a_forked_child_can_emit(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    tp = provider.tracepoint("ev", who=str, n="u32")
    ftrace.enable(tp)
    tp.emit("parent", 1)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            tp.emit("child", 2 if tp.enabled else 3)
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    tp.emit("parent", 4)
    assert ftrace.values(tp) == [
        {"who": "parent", "n": 1}, {"who": "child", "n": 2}, {"who": "parent", "n": 4},
    ]
    assert ftrace.pids(tp) == [os.getpid(), pid, os.getpid()]


def test_many_threads_emit_every_event_intact(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    tp = provider.tracepoint("ev", thread="u16", seq="u32", text=str)
    ftrace.enable(tp)
    threads, per_thread = 8, 200
    start = threading.Barrier(threads)

    def run(t: int) -> None:
        start.wait()
        for seq in range(per_thread):
            tp.emit(t, seq, f"t{t}-{seq}")

    workers = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    got = sorted((e["thread"], e["seq"], e["text"]) for e in ftrace.values(tp))
    assert got == [(t, s, f"t{t}-{s}") for t in range(threads) for s in range(per_thread)]


def test_garbage_collection_unregisters_before_the_memory_is_reused(
    provider: usertrace.Provider, ftrace: Ftrace
) -> None:
    # A second registration of the same event keeps it alive after doomed's.
    keeper = provider.tracepoint("doomed", x="u8")
    doomed = provider.tracepoint("doomed", x="u8")
    name = doomed.name
    ftrace.enable(doomed)
    assert doomed.enabled and keeper.enabled
    del doomed
    gc.collect()
    # The freed enable word's memory goes to the next allocations of its
    # size: new tracepoints (of an event nobody traces) and buffers.
    reused = [provider.tracepoint(f"reuse{i}", x="u8") for i in range(200)]
    buffers = [bytearray(64) for _ in range(2000)]
    for _ in range(3):  # the kernel would flip the old word on each change
        (ftrace.root / "events/user_events" / name / "enable").write_text("0")
        (ftrace.root / "events/user_events" / name / "enable").write_text("1")
    ftrace.enabled.remove(name)
    (ftrace.root / "events/user_events" / name / "enable").write_text("0")
    assert not any(tp.enabled for tp in reused)
    assert all(not any(b) for b in buffers)
    keeper.close()
    assert not keeper.enabled


def test_closing_the_provider_unregisters_at_once(ftrace: Ftrace) -> None:
    p = usertrace.Provider(f"ptclose{os.getpid()}")
    tp = p.tracepoint("ev", x="u8")
    ftrace.enable(tp)
    assert tp.enabled
    p.close()
    assert not tp.enabled and not tp.registered
    tp.emit(1)
    assert ftrace.events(tp) == []


def test_the_logging_handler_emits_each_record(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    import usertrace.logging

    log = logging.getLogger("usertrace.test.kernel")
    log.setLevel(logging.DEBUG)
    log.propagate = False
    handler = usertrace.logging.Handler(provider)
    log.addHandler(handler)
    try:
        log.debug("not traced")
        ftrace.enable(handler.tracepoint)
        line = sys._getframe().f_lineno + 1
        log.warning("hello %s", "wörld")
    finally:
        log.removeHandler(handler)
        handler.close()
    assert ftrace.values(handler.tracepoint) == [
        {"logger": "usertrace.test.kernel", "level": 30, "message": "hello wörld",
         "file": __file__, "line": line, "thread": "MainThread"},
    ]


def enable_span(ftrace: Ftrace, *tps: usertrace.SpanTracepoint) -> None:
    """Enables each span's begin event and its provider's two end events."""
    for tp in tps:
        ftrace.enable(tp)
    ftrace.enable(tps[0].end_event)
    ftrace.enable(tps[0].error_event)


def test_nested_spans_arrive_in_order_with_exact_values(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    outer = provider.span("outer", big="u64", neg="i64", text=str, ratio="f64")
    inner = provider.span("inner", n="i32", flag="bool")
    enable_span(ftrace, outer, inner)
    with outer.begin(2**63 + 5, -(2**63), "héllo ✓", -0.25) as o:
        with inner.begin(n=-7, flag=True) as i:
            assert i.open and i.id not in (0, o.id)
        assert not i.open and o.open
    assert not o.open
    end, tid = outer.end_event.name, threading.get_native_id()
    assert ftrace.sequence(outer, inner, outer.end_event, outer.error_event) == [
        (outer.name, tid, {"span_begin": o.id, **NO_TRACE, "big": 2**63 + 5, "neg": -(2**63), "text": "héllo ✓", "ratio": -0.25}),
        (inner.name, tid, {"span_begin": i.id, **NO_TRACE, "n": -7, "flag": True}),
        (end, tid, {"span_end": i.id}),
        (end, tid, {"span_end": o.id}),
    ]


def test_a_span_begun_on_one_thread_ends_on_another(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    tp = provider.span("handoff", who=str)
    enable_span(ftrace, tp)
    span = tp.begin("main")
    ender = threading.Thread(target=span.end)
    ender.start()
    ender.join()
    assert ender.native_id is not None and ender.native_id != threading.get_native_id()
    span.end()  # already ended on the other thread: writes nothing
    assert ftrace.sequence(tp, tp.end_event, tp.error_event) == [
        (tp.name, threading.get_native_id(), {"span_begin": span.id, **NO_TRACE, "who": "main"}),
        (tp.end_event.name, ender.native_id, {"span_end": span.id}),
    ]


def test_an_exception_ends_the_span_with_its_type_name_once(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    class Refused(Exception):
        pass

    tp = provider.span("work", n="u8")
    enable_span(ftrace, tp)
    with pytest.raises(KeyError):
        with tp.begin(1) as first:
            raise KeyError("x")
    with pytest.raises(Refused):
        with tp.begin(2) as second:
            raise Refused
    third = tp.begin(3)
    third.end(error="timed out: 5 s")
    third.end()
    fourth = tp.begin(4)
    del fourth  # garbage: ends then
    error, end = tp.error_event.name, tp.end_event.name
    events = [(name, fields) for name, _, fields in ftrace.sequence(tp, tp.end_event, tp.error_event)]
    ids = [fields["span_begin"] for name, fields in events if name == tp.name]
    assert events == [
        (tp.name, {"span_begin": first.id, **NO_TRACE, "n": 1}),
        (error, {"span_end": first.id, "error": "KeyError"}),
        (tp.name, {"span_begin": second.id, **NO_TRACE, "n": 2}),
        (error, {"span_end": second.id, "error": f"{__name__}.{Refused.__qualname__}"}),
        (tp.name, {"span_begin": third.id, **NO_TRACE, "n": 3}),
        (error, {"span_end": third.id, "error": "timed out: 5 s"}),
        (tp.name, {"span_begin": ids[3], **NO_TRACE, "n": 4}),
        (end, {"span_end": ids[3]}),
    ]
    assert len(set(ids)) == 4 and 0 not in ids


def test_traced_functions_blocks_and_coroutines_are_spans(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    @usertrace.traced(provider=provider)
    def work() -> int:
        with usertrace.traced("step.<inner>", provider=provider):
            return 1

    @usertrace.traced(provider=provider)
    async def coro() -> int:
        await asyncio.sleep(0)
        return 2

    @usertrace.traced("fails", provider=provider)
    def fails() -> None:
        raise ValueError("no")

    spans = [usertrace.traced(name, provider=provider).tracepoint for name in (work.__qualname__, "step.<inner>", coro.__qualname__, "fails")]
    assert all(spans)
    tps = [tp for tp in spans if tp is not None]
    enable_span(ftrace, *tps)
    assert work() == 1 and asyncio.run(coro()) == 2
    with pytest.raises(ValueError):
        fails()
    work_tp, step_tp, coro_tp, fails_tp = tps
    assert work_tp.event.endswith("_locals_work") and step_tp.event == "step_inner"
    events = [(name, fields) for name, _, fields in ftrace.sequence(*tps, tps[0].end_event, tps[0].error_event)]
    ids = [next(iter(fields.values())) for _, fields in events]
    end, error = tps[0].end_event.name, tps[0].error_event.name
    # Each outermost span starts a trace; the inner one continues it.
    traces = [trace_of(fields) for _, fields in events]
    work_trace = traces[0]
    assert events == [
        (work_tp.name, {"span_begin": ids[0], **work_trace, "parent_span_id": 0}),
        (step_tp.name, {"span_begin": ids[1], **work_trace, "parent_span_id": ids[0]}),
        (end, {"span_end": ids[1]}),
        (end, {"span_end": ids[0]}),
        (coro_tp.name, {"span_begin": ids[4], **traces[4], "parent_span_id": 0}),
        (end, {"span_end": ids[4]}),
        (fails_tp.name, {"span_begin": ids[6], **traces[6], "parent_span_id": 0}),
        (error, {"span_end": ids[6], "error": "ValueError"}),
    ]
    assert len({ids[0], ids[1], ids[4], ids[6]}) == 4
    assert len({tuple(traces[i].values()) for i in (0, 4, 6)}) == 3 and all(any(traces[i].values()) for i in (0, 4, 6))


def test_a_span_whose_end_event_nobody_traces_ends_silently(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    tp = provider.span("ev")
    ftrace.enable(tp)
    with tp.begin() as span:
        pass
    assert not span.open and span.id != 0
    assert ftrace.sequence(tp, tp.end_event) == [(tp.name, threading.get_native_id(), {"span_begin": span.id, **NO_TRACE})]


@pytest.mark.recorder
def test_spans_are_recorded_under_the_process_name(tmp_path: Path) -> None:
    # A fresh interpreter under `usertrace record`: every event of its spans,
    # with their values and ids, in order, under its command name and pid.
    cli = usertrace_cli()
    name = f"pyspan{os.getpid()}"
    ids_file = tmp_path / "ids.json"
    script = (
        "import asyncio, json, threading, usertrace\n"
        f"p = usertrace.Provider({name!r})\n"
        "req = p.span('request', id='u64', neg='i64', path=str, ratio='f64')\n"
        "@usertrace.traced(provider=p)\n"
        "async def fetch():\n"
        "    await asyncio.sleep(0)\n"
        "    raise TimeoutError\n"
        "with req.begin(2**64 - 2, -3, 'h\\u00e9llo \\u2713', 0.5) as outer:\n"
        "    try:\n"
        "        asyncio.run(fetch())\n"
        "    except TimeoutError:\n"
        "        pass\n"
        "    handed = req.begin(1, 0, '/other', -1.5)\n"
        "t = threading.Thread(target=handed.end)\n"
        "t.start(); t.join()\n"
        f"open({str(ids_file)!r}, 'w').write(json.dumps([outer.id, handed.id, t.native_id]))\n"
    )
    out = subprocess.run(
        [cli, "record", "--format", "json", "-e", f"{name}_*", "--", sys.executable, "-c", script],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    outer, handed, other_tid = json.loads(ids_file.read_text())
    events = recorded_events(out.stdout)
    pid = events[0]["pid"]
    assert pid != os.getpid()
    comm = os.path.basename(sys.executable)[:15]
    seen = [(e["event"], e["fields"]) for e in events]
    fetch_id = events[1]["fields"]["span_begin"]
    # `begin` says nothing of its trace; `traced` begins one (no context
    # was current), which the recorder nests in the span around it.
    fetch_trace = trace_of(events[1]["fields"])
    assert any(fetch_trace.values()), events[1]
    assert seen == [
        (f"{name}_request", {"span_begin": outer, **NO_TRACE, "id": 2**64 - 2, "neg": -3, "path": "héllo ✓", "ratio": 0.5}),
        (f"{name}_fetch", {"span_begin": fetch_id, **fetch_trace, "parent_span_id": 0}),
        (f"{name}_span_error", {"span_end": fetch_id, "error": "TimeoutError"}),
        (f"{name}_request", {"span_begin": handed, **NO_TRACE, "id": 1, "neg": 0, "path": "/other", "ratio": -1.5}),
        (f"{name}_span_end", {"span_end": outer}),
        (f"{name}_span_end", {"span_end": handed}),
    ], out.stdout
    assert len({outer, handed, fetch_id}) == 3 and 0 not in (outer, handed, fetch_id)
    assert all(e["pid"] == pid for e in events)
    assert [e["tid"] for e in events] == [pid] * 5 + [other_tid]
    assert all(e["comm"] == comm for e in events[:5])
    assert all(e["process"] == comm for e in events)


def test_record_sched_says_a_traced_sleep_was_blocked(tmp_path: Path) -> None:
    # The check for Python: a `time.sleep` inside `@traced`, under
    # `usertrace record --sched`, is a span that `usertrace report` calls
    # blocked for nearly all of its 300 ms and on a CPU for little of it.
    cli = usertrace_cli()
    name = f"pysched{os.getpid()}"
    jsonl = tmp_path / "sched.jsonl"
    script = (
        "import time, usertrace\n"
        f"p = usertrace.Provider({name!r})\n"
        "@usertrace.traced(provider=p)\n"
        "def nap():\n"
        "    time.sleep(0.3)\n"
        "t = time.monotonic_ns(); nap(); print('took', time.monotonic_ns() - t)\n"
    )
    out = subprocess.run(
        [cli, "record", "--sched", "-o", str(jsonl), "-e", f"{name}_*", "--", sys.executable, "-c", script],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    took = int(out.stdout.split()[-1])
    report = subprocess.run([cli, "report", "--format", "json", str(jsonl)], capture_output=True, text=True, check=True)
    spans = {s["name"]: s for s in json.loads(report.stdout)["spans"]}
    nap = spans[f"{name}_nap"]
    assert nap["count"] == 1
    assert took >= 300_000_000
    assert nap["blocked"]["total_ns"] >= 280_000_000, nap
    # On a CPU for a small part of it: the span's own begin and end. Not a
    # fixed bound: under emulation on a loaded host they took 31 ms (CI).
    # A sleep counted as on-CPU would be 300 ms here.
    assert nap["on_cpu"]["total_ns"] < nap["blocked"]["total_ns"] / 4, nap
    assert nap["on_cpu"]["total_ns"] + nap["runnable"]["total_ns"] + nap["blocked"]["total_ns"] <= took


def test_function_tracing_emits_entry_and_exit(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    def inner() -> int:
        return 1

    def outer() -> int:
        return inner() + 1

    tracer = usertrace.trace_functions(provider, include=lambda code: code.co_name in ("inner", "outer"))
    ftrace.enable(tracer.entry)
    ftrace.enable(tracer.exit)
    with tracer:
        outer()
    entries = [e["function"].rsplit(".", 1)[-1] for e in ftrace.events(tracer.entry)]
    exits = [e["function"].rsplit(".", 1)[-1] for e in ftrace.events(tracer.exit)]
    assert (entries, exits) == (["outer", "inner"], ["inner", "outer"])
    assert ftrace.events(tracer.entry)[0]["file"] == __file__


def test_perf_script_shows_the_exact_values(provider: usertrace.Provider, tmp_path: "os.PathLike[str]") -> None:
    tp = provider.tracepoint("perf", n="u32", neg="i64", flag="bool", text=str)
    data = os.path.join(str(tmp_path), "perf.data")
    perf = subprocess.Popen(
        ["perf", "record", "-q", "-a", "-e", f"user_events:{tp.name}", "-o", data],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        assert wait_for(lambda: tp.enabled, 30), "perf never attached"
        # perf opens its events disabled (which sets the bit) and enables them
        # after synthesizing /proc: give it time (see user-events-abi notes).
        time.sleep(3)
        tp.emit(4000000000, -5, True, "perf sees this")
        tp.emit(n=7, neg=0, flag=False, text="twice")
        time.sleep(0.5)
    finally:
        perf.send_signal(signal.SIGINT)
        _, err = perf.communicate(timeout=60)
    script = subprocess.run(["perf", "script", "-i", data, "-F", "pid,event,trace"], capture_output=True, text=True)
    assert script.returncode == 0, script.stderr
    lines = [l.split(None, 2) for l in script.stdout.splitlines() if tp.name in l]
    assert lines == [
        [str(os.getpid()), f"user_events:{tp.name}:", "n=4000000000 neg=-5 flag=1 text=perf sees this"],
        [str(os.getpid()), f"user_events:{tp.name}:", "n=7 neg=0 flag=0 text=twice"],
    ], (script.stdout, err)


@pytest.mark.recorder
def test_a_request_continues_its_callers_trace_and_hands_its_own_on(tmp_path: Path) -> None:
    # A handler under an incoming traceparent (with a tracestate): its
    # spans are in the caller's trace, parent by parent, and the header it
    # injects for its own outgoing call names its innermost span.
    cli = usertrace_cli()
    name = f"pyctx{os.getpid()}"
    out_file = tmp_path / "out.json"
    script = (
        "import json, usertrace\n"
        f"p = usertrace.Provider({name!r})\n"
        "incoming = usertrace.extract({'TraceParent': ' 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ',"
        " 'tracestate': 'vendor=x'})\n"
        "headers = {}\n"
        "with usertrace.use_context(incoming):\n"
        "    with usertrace.traced('handle', provider=p):\n"
        "        with usertrace.traced('query', provider=p):\n"
        "            usertrace.inject(headers)\n"
        "    after = usertrace.current_context()\n"
        f"open({str(out_file)!r}, 'w').write(json.dumps([headers, after.traceparent]))\n"
    )
    out = subprocess.run(
        [cli, "record", "--format", "json", "-e", f"{name}_*", "--", sys.executable, "-c", script],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    headers, after = json.loads(out_file.read_text())
    events = recorded_events(out.stdout)
    begins = [(e["event"], e["fields"]) for e in events if "span_begin" in e["fields"]]
    handle, query = (fields["span_begin"] for _, fields in begins)
    trace = {"trace_id_hi": 0x4BF92F3577B34DA6, "trace_id_lo": 0xA3CE929D0E0E4736}
    assert begins == [
        (f"{name}_handle", {"span_begin": handle, **trace, "parent_span_id": 0x00F067AA0BA902B7}),
        (f"{name}_query", {"span_begin": query, **trace, "parent_span_id": handle}),
    ], out.stdout
    assert headers == {"traceparent": f"00-4bf92f3577b34da6a3ce929d0e0e4736-{query:016x}-01", "tracestate": "vendor=x"}
    assert after == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "the caller's context is current again"


def recorded_events(json_lines: str) -> List[Dict[str, Any]]:
    """The event lines of ``usertrace record --format json`` (a line without
    ``type`` is an event; process, exit and lost lines are skipped)."""
    lines = [json.loads(line) for line in json_lines.splitlines() if line.strip()]
    return [line for line in lines if line.get("type", "event") == "event"]


@pytest.mark.recorder
def test_usertrace_record_shows_the_exact_values_under_the_process_name() -> None:
    # The recorder launches a fresh interpreter; its provider announces the
    # event on registration and waits for the recorder to attach, so the
    # one event it emits right away is recorded.
    cli = usertrace_cli()
    name = f"pyrec{os.getpid()}"
    script = (
        "import usertrace\n"
        f"tp = usertrace.Provider({name!r}).tracepoint('ev', n='u32', neg='i64', flag='bool',"
        " ratio='f64', text=str, blob=bytes)\n"
        "tp.emit(4000000000, -5, True, 0.25, 'h\\u00e9llo \\u2713', b'\\x00\\xff')\n"
    )
    out = subprocess.run(
        [cli, "record", "--format", "json", "-e", f"{name}_*", "--", sys.executable, "-c", script],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    events = recorded_events(out.stdout)
    assert len(events) == 1, (out.stdout, out.stderr)
    event = events[0]
    assert event["event"] == f"{name}_ev"
    assert event["comm"] == os.path.basename(sys.executable)[:15]
    assert event["pid"] == event["tid"] and event["pid"] != os.getpid()
    assert event["fields"] == {
        "n": 4000000000, "neg": -5, "flag": True, "ratio": 0.25, "text": "héllo ✓", "blob": "00ff",
    }


@pytest.mark.recorder
def test_threads_are_recorded_under_their_threading_names() -> None:
    # CPython before 3.14 keeps a Thread's name from the OS; the binding
    # gives it on the thread's first traced event, cut to the kernel's 15
    # bytes (3.14 and later name threads themselves, cut the same way). The
    # main thread keeps the program's name.
    cli = usertrace_cli()
    name = f"pythr{os.getpid()}"
    script = (
        "import threading, usertrace\n"
        f"provider = usertrace.Provider({name!r})\n"
        "tp = provider.tracepoint('ev', n='u32')\n"
        "span = provider.span('work', n='u32')\n"
        "tp.emit(0)\n"
        "def side(n):\n"
        "    tp.emit(n)\n"
        "    with span.begin(n):\n"
        "        pass\n"
        "for n, thread_name in ((1, 'hotl-side'), (2, 'a-very-long-thread-name')):\n"
        "    t = threading.Thread(target=side, args=(n,), name=thread_name)\n"
        "    t.start()\n"
        "    t.join()\n"
    )
    out = subprocess.run(
        [cli, "record", "--format", "json", "-e", f"{name}_*", "--", sys.executable, "-c", script],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    events = recorded_events(out.stdout)
    seen = [(e["event"].removeprefix(name + "_"), e["fields"].get("n"), e["comm"]) for e in events]
    main = os.path.basename(sys.executable)[:15]
    assert seen == [
        ("ev", 0, main),
        ("ev", 1, "hotl-side"),
        ("work", 1, "hotl-side"),
        ("span_end", None, "hotl-side"),
        ("ev", 2, "a-very-long-thr"),
        ("work", 2, "a-very-long-thr"),
        ("span_end", None, "a-very-long-thr"),
    ], (out.stdout, out.stderr)
    assert len({e["tid"] for e in events}) == 3
    assert all(e["process"] == main for e in events)
