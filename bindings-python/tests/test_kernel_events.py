"""With user_events (the guest kernel): events arrive with exact values."""

from __future__ import annotations

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

import pytest

import usertrace
from conftest import Ftrace, wait_for
from usertrace import ErrorKind, UsertraceError

pytestmark = pytest.mark.kernel

REPO = Path(__file__).resolve().parents[2]

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


def test_traced_emits_start_and_stop_with_a_duration(provider: usertrace.Provider, ftrace: Ftrace) -> None:
    @usertrace.traced(provider=provider)
    def work() -> None:
        time.sleep(0.01)

    from usertrace._traced import _span_tracepoints

    start, stop = _span_tracepoints(provider)
    ftrace.enable(start)
    ftrace.enable(stop)
    work()
    with pytest.raises(KeyError):
        with usertrace.traced("block", provider=provider):
            raise KeyError
    starts, stops = ftrace.values(start), ftrace.values(stop)
    assert [e["name"] for e in starts] == [work.__qualname__, "block"]
    assert [(e["name"], e["span"], e["error"]) for e in stops] == [
        (work.__qualname__, starts[0]["span"], False), ("block", starts[1]["span"], True),
    ]
    assert stops[0]["duration_ns"] >= 10_000_000  # type: ignore[operator]


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


def test_usertrace_record_shows_the_exact_values_under_the_process_name() -> None:
    # The recorder launches a fresh interpreter; its provider announces the
    # event on registration and waits for the recorder to attach, so the
    # one event it emits right away is recorded.
    cli = os.environ.get("USERTRACE_CLI") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", str(REPO / "target")), "debug", "usertrace"
    )
    assert os.access(cli, os.X_OK), f"build the CLI first (cargo build -p usertrace-cli): {cli}"
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
    events = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    assert len(events) == 1, (out.stdout, out.stderr)
    event = events[0]
    assert event["event"] == f"{name}_ev"
    assert event["comm"] == os.path.basename(sys.executable)[:15]
    assert event["pid"] == event["tid"] and event["pid"] != os.getpid()
    assert event["fields"] == {
        "n": 4000000000, "neg": -5, "flag": True, "ratio": 0.25, "text": "héllo ✓", "blob": "00ff",
    }
