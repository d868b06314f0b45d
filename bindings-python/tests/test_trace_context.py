"""W3C trace context while nobody records: reading and writing headers,
and the current context passed on unchanged through spans not recorded."""

from __future__ import annotations

import asyncio
from typing import Dict

import pytest

import usertrace
from usertrace import TraceContext

pytestmark = pytest.mark.host

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_a_traceparent_reads_as_its_ids_and_flags() -> None:
    c = TraceContext.from_traceparent(TRACEPARENT, "vendor=x,other=y")
    assert c is not None
    assert (c.trace_id, c.span_id, c.sampled) == ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", True)
    assert (c.traceparent, c.tracestate) == (TRACEPARENT, "vendor=x,other=y")
    assert c == TraceContext.from_traceparent(TRACEPARENT, "vendor=x,other=y") and hash(c) == hash(TraceContext.from_traceparent(TRACEPARENT, "vendor=x,other=y"))


@pytest.mark.parametrize(
    "header",
    [
        "",
        "garbage",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # all-zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # all-zero span id
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  # upper case
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # version ff
        TRACEPARENT + "-" + "x" * 600,  # over-long
    ],
)
def test_a_bad_traceparent_is_no_context_and_never_raises(header: str) -> None:
    assert TraceContext.from_traceparent(header) is None
    assert usertrace.extract({"traceparent": header}) is None


def test_extract_matches_names_without_case_and_inject_writes_both_headers() -> None:
    c = usertrace.extract({"Content-Type": "text/plain", "TRACEPARENT": TRACEPARENT, "TraceState": "vendor=x"})
    assert c is not None and c.tracestate == "vendor=x"
    out: Dict[str, str] = {}
    c.inject(out)
    assert out == {"traceparent": TRACEPARENT, "tracestate": "vendor=x"}
    assert usertrace.extract({}) is None
    with pytest.raises(AttributeError):
        usertrace.extract(42)


def test_an_invalid_tracestate_is_dropped_and_the_traceparent_kept() -> None:
    c = TraceContext.from_traceparent(TRACEPARENT, "not a valid=list==")
    assert c is not None and c.tracestate is None


def test_spans_nobody_records_pass_the_callers_context_on_unchanged() -> None:
    # This suite's tracepoints stay disabled (no tracer): a service nobody
    # records must not cut the trace.
    provider = usertrace.Provider("pyctxhost")
    tp = provider.span("handle", n="u32")
    assert not tp.enabled
    incoming = TraceContext.from_traceparent(TRACEPARENT)
    span = tp.begin_in(incoming, 7)
    assert (span.id, span.open, span.context, span.traceparent) == (0, False, incoming, TRACEPARENT)
    assert tp.begin_in(None, 7).context is None
    with pytest.raises(TypeError):
        tp.begin_in("00-...", 7)  # type: ignore[arg-type]
    headers: Dict[str, str] = {}
    with usertrace.use_context(incoming):
        with usertrace.traced("handle", provider=provider):
            assert usertrace.current_context() == incoming
            usertrace.inject(headers)
    assert headers == {"traceparent": TRACEPARENT}
    assert usertrace.current_context() is None
    empty: Dict[str, str] = {}
    usertrace.inject(empty)
    assert empty == {}


def test_each_asyncio_task_has_its_own_current_context() -> None:
    a = TraceContext.from_traceparent("00-" + "a" * 32 + "-" + "1" * 16 + "-01")
    b = TraceContext.from_traceparent("00-" + "b" * 32 + "-" + "2" * 16 + "-01")

    async def handler(context: TraceContext) -> str:
        with usertrace.use_context(context):
            await asyncio.sleep(0.01)
            got = usertrace.current_context()
            assert got is not None
            return got.trace_id

    async def both() -> list[str]:
        assert a is not None and b is not None
        return list(await asyncio.gather(handler(a), handler(b)))

    assert asyncio.run(both()) == ["a" * 32, "b" * 32]
