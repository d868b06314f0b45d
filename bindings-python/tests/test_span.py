"""Declaring spans, naming them and checking their values: the same with or
without user_events."""

from __future__ import annotations

import pytest

import usertrace
from usertrace import ErrorKind, Span, SpanTracepoint, Tracepoint, UsertraceError


def test_a_span_is_a_begin_event_whose_first_field_is_its_id(provider: usertrace.Provider) -> None:
    tp = provider.span("handle", request_id="u64", path=str)
    assert isinstance(tp, SpanTracepoint) and isinstance(tp, Tracepoint)
    assert tp.name == f"{provider.name}_handle" and tp.event == "handle"
    leading = [("span_begin", "u64"), ("trace_id_hi", "u64"), ("trace_id_lo", "u64"), ("parent_span_id", "u64")]
    assert tp.fields == leading + [("request_id", "u64"), ("path", "str")]
    assert tp.format == (
        f"{tp.name} u64 span_begin;u64 trace_id_hi;u64 trace_id_lo;u64 parent_span_id;u64 request_id;__rel_loc char[] path"
    )


def test_the_provider_ends_its_spans_with_two_events_declared_once(provider: usertrace.Provider) -> None:
    first, second = provider.span("a"), provider.span("b", [("n", "u8")])
    end, error = first.end_event, first.error_event
    assert (end.name, end.fields) == (f"{provider.name}_span_end", [("span_end", "u64")])
    assert (error.name, error.fields) == (f"{provider.name}_span_error", [("span_end", "u64"), ("error", "str")])
    assert second.end_event is end and second.error_event is error
    assert sorted(tp.name for tp in provider.tracepoints) == sorted(
        [first.name, second.name, end.name, error.name]
    )


def test_closing_the_provider_closes_its_spans_and_their_end_events(provider: usertrace.Provider) -> None:
    tp = provider.span("a")
    provider.close()
    assert tp.closed and tp.end_event.closed and tp.error_event.closed
    with pytest.raises(ValueError, match="closed"):
        provider.span("b")


@pytest.mark.parametrize(
    "name, event",
    [
        ("handle", "handle"),
        ("Foo.bar", "Foo_bar"),
        ("outer.<locals>.inner", "outer_locals_inner"),
        ("<lambda>", "lambda"),
        ("my block", "my_block"),
        ("a_.b", "a__b"),
        ("héllo", "h_llo"),
    ],
)
def test_span_names_map_to_event_names_by_the_cores_rule(name: str, event: str) -> None:
    assert usertrace.span_event_name(name) == event


@pytest.mark.parametrize("name", ["", "...", "<>", "é"])
def test_a_span_name_with_nothing_to_keep_is_refused(name: str) -> None:
    with pytest.raises(UsertraceError) as e:
        usertrace.span_event_name(name)
    assert e.value.kind is ErrorKind.INVALID_NAME and "span name" in str(e.value)


def test_traced_names_the_event_after_the_function(provider: usertrace.Provider) -> None:
    class Service:
        @usertrace.traced(provider=provider)
        def handle(self) -> int:
            return 1

    qualname = Service.handle.__qualname__
    assert qualname.endswith("<locals>.Service.handle")
    assert Service().handle() == 1
    events = {tp.event for tp in provider.tracepoints}
    assert usertrace.span_event_name(qualname) in events
    assert usertrace.span_event_name(qualname).endswith("_locals_Service_handle")
    block = usertrace.traced("block.<x>", provider=provider)
    assert block.name == "block.<x>" and block.tracepoint is not None
    assert block.tracepoint.name == f"{provider.name}_block_x"


def test_traced_with_one_name_is_one_object(provider: usertrace.Provider) -> None:
    assert usertrace.traced("x", provider=provider) is usertrace.traced("x", provider=provider)
    assert usertrace.traced("y", provider=provider) is not usertrace.traced("x", provider=provider)


def test_a_traced_block_needs_a_name(provider: usertrace.Provider) -> None:
    with pytest.raises(TypeError, match="needs a name"):
        with usertrace.traced(provider=provider):
            pass


def test_a_bad_span_definition_raises_the_cores_error(provider: usertrace.Provider) -> None:
    cases = [
        (lambda: provider.span("bad name"), ErrorKind.INVALID_NAME),
        (lambda: provider.span("ev", x="u9"), ErrorKind.UNKNOWN_FIELD_TYPE),
        (lambda: provider.span("ev", span_begin="u64"), ErrorKind.DUPLICATE_FIELD),
        (lambda: provider.span("ev", [(f"f{i}", "u8") for i in range(usertrace.MAX_FIELDS)]), ErrorKind.TOO_MANY_FIELDS),
    ]
    for make, kind in cases:
        with pytest.raises(UsertraceError) as e:
            make()
        assert e.value.kind is kind, e.value
    with pytest.raises(TypeError, match="field x of event ev: a type is"):
        provider.span("ev", x=list)  # type: ignore[arg-type]


def test_validate_checks_the_spans_own_fields(provider: usertrace.Provider) -> None:
    tp = provider.span("ev", n="u64", neg="i8", s=str)
    tp.validate(2**64 - 1, -128, "héllo")
    tp.validate(n=0, neg=127, s="")
    with pytest.raises(OverflowError, match=f"field n of event {tp.name} is u64"):
        tp.validate(-1, 0, "")
    with pytest.raises(OverflowError, match="field neg"):
        tp.validate(0, 128, "")
    with pytest.raises(TypeError, match="field s"):
        tp.validate(0, 0, b"x")
    with pytest.raises(ValueError, match="field s"):
        tp.validate(0, 0, "a\0b")
    with pytest.raises(TypeError, match=r"missing value for field s of event .* \(fields: n, neg, s\)"):
        tp.validate(0, 0)
    with pytest.raises(TypeError, match="has 3 fields"):
        tp.validate(0, 0, "", 1)
    with pytest.raises(TypeError, match="no field span_begin"):
        tp.validate(0, 0, "", span_begin=1)


def test_the_end_events_must_be_the_providers_own(provider: usertrace.Provider) -> None:
    end = Tracepoint.span_end(provider.name)
    error = Tracepoint.span_error(provider.name)
    with pytest.raises(ValueError, match=f"error must be the event {provider.name}_span_error"):
        SpanTracepoint(provider.name, "ev", [], end, end)
    with pytest.raises(ValueError, match=f"end must be the event {provider.name}_span_end"):
        SpanTracepoint(provider.name, "ev", [], Tracepoint.span_end("other"), error)
    tp = SpanTracepoint(provider.name, "ev", [("n", "u8")], end, error)
    assert tp.end_event is end and tp.error_event is error


def test_a_span_cannot_be_made_directly() -> None:
    with pytest.raises(TypeError):
        Span()  # type: ignore[call-arg]
