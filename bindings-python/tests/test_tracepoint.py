"""Declaring tracepoints and checking values: the same with or without user_events."""

from __future__ import annotations

import gc
import weakref

import pytest

import usertrace
from usertrace import ErrorKind, UsertraceError

ALL_TYPES = dict(
    a="u8", b="u16", c="u32", d="u64", e="i8", f="i16", g="i32", h="i64",
    i="bool", j="f32", k="f64", s="str", y="bytes", z="char[8]",
)


def test_fields_keep_their_order_and_types(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", [("first", int)], second=float, third=bool, fourth=str, fifth=bytes)
    assert tp.fields == [("first", "i64"), ("second", "f64"), ("third", "bool"), ("fourth", "str"), ("fifth", "bytes")]
    assert tp.name == f"{provider.name}_ev"
    assert tp.provider == provider.name and tp.event == "ev"
    assert tp.format == f"{tp.name} s64 first;struct f64 second 8;unsigned char third;__rel_loc char[] fourth;__rel_loc u8[] fifth"


def test_a_field_may_be_called_name_or_fields(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", name=str, fields="u8")
    assert tp.fields == [("name", "str"), ("fields", "u8")]


def test_every_type_is_accepted(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("all", ALL_TYPES)
    tp.validate(255, 65535, 2**32 - 1, 2**64 - 1, -128, -32768, -(2**31), -(2**63), True, 1.5, -2.25, "s", b"y", "z")
    tp.validate(0, 0, 0, 0, 127, 32767, 2**31 - 1, 2**63 - 1, False, 0, 3, "", bytearray(b"\0"), b"12345678")


@pytest.mark.parametrize(
    "ty, low, high",
    [("u8", 0, 255), ("u16", 0, 65535), ("u32", 0, 2**32 - 1), ("u64", 0, 2**64 - 1),
     ("i8", -128, 127), ("i16", -32768, 32767), ("i32", -(2**31), 2**31 - 1), ("i64", -(2**63), 2**63 - 1)],
)
def test_an_int_out_of_range_raises_overflow_error_naming_the_field(
    provider: usertrace.Provider, ty: str, low: int, high: int
) -> None:
    tp = provider.tracepoint("ev", count=ty)
    tp.validate(low)
    tp.validate(count=high)
    for bad in (low - 1, high + 1):
        with pytest.raises(OverflowError, match=f"field count of event {tp.name} is {ty}"):
            tp.validate(bad)


@pytest.mark.parametrize(
    "ty, bad",
    [("u32", "1"), ("i64", 1.0), ("u8", None), ("bool", 1), ("f64", "1.0"), ("str", b"x"), ("bytes", "x"), ("char[4]", 3)],
)
def test_a_wrong_type_raises_type_error_naming_the_field(provider: usertrace.Provider, ty: str, bad: object) -> None:
    tp = provider.tracepoint("ev", value=ty)
    with pytest.raises(TypeError, match=f"field value of event {tp.name} is {ty.replace('[', '.')}"):
        tp.validate(bad)


def test_an_f32_beyond_its_range_overflows_but_infinity_does_not(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", x="f32")
    tp.validate(float("inf"))
    tp.validate(float("nan"))
    with pytest.raises(OverflowError, match="field x"):
        tp.validate(1e39)


def test_lone_surrogates_are_replaced_not_refused(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", s=str)
    tp.validate("a\ud800b\udfff")  # documented: each becomes U+FFFD


def test_a_nul_in_a_str_field_raises_value_error(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", s=str)
    with pytest.raises(ValueError, match="field s"):
        tp.validate("a\0b")


def test_a_value_longer_than_its_char_array_raises_value_error(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", tag="char[4]")
    tp.validate("abcd")
    with pytest.raises(ValueError, match="field tag"):
        tp.validate("abcde")


def test_positional_and_keyword_values_are_matched_to_fields(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", a="u8", b=str)
    tp.validate(1, "x")
    tp.validate(1, b="x")
    tp.validate(b="x", a=1)
    with pytest.raises(TypeError, match="missing value for field b"):
        tp.validate(1)
    with pytest.raises(TypeError, match="has no field c"):
        tp.validate(1, "x", c=3)
    with pytest.raises(TypeError, match="field a .* by position and by keyword"):
        tp.validate(1, b="x", a=2)
    with pytest.raises(TypeError, match="2 fields"):
        tp.validate(1, "x", 3)


def test_keywords_built_at_run_time_match_their_fields(provider: usertrace.Provider) -> None:
    # Call sites pass interned names, matched by identity; these are new
    # strings, matched by their text.
    tp = provider.tracepoint("ev", alpha="u8", beta=str)
    a, b = "".join(["al", "pha"]), "".join(["be", "ta"])
    tp.validate(**{a: 1, b: "x"})
    tp.validate(1, **{b: "x"})

    class Key(str):
        pass

    tp.validate(**{Key("alpha"): 1, Key("beta"): "x"})
    with pytest.raises(TypeError, match="field beta of event .* is str, but a value of type int"):
        tp.validate(**{a: 1, b: 2})
    with pytest.raises(TypeError, match="has no field gamma"):
        tp.validate(1, "x", **{"".join(["gam", "ma"]): 3})


def test_emit_validate_and_begin_belong_to_their_classes(provider: usertrace.Provider) -> None:
    import inspect

    span = provider.span("sp", n="u8")
    for cls, method in [(usertrace.Tracepoint, "emit"), (usertrace.Tracepoint, "validate"),
                        (usertrace.SpanTracepoint, "begin"), (usertrace.SpanTracepoint, "validate")]:
        with pytest.raises(TypeError):
            getattr(cls, method)(object(), 1)
        assert str(inspect.signature(getattr(cls, method))) == "(self, /, *args, **kwargs)"
    with pytest.raises(TypeError):
        usertrace.SpanTracepoint.begin(provider.tracepoint("plain"))
    # A span's begin event is a Tracepoint: its id and trace context, then n.
    usertrace.Tracepoint.validate(span, 0, 0, 0, 0, 1)


@pytest.mark.parametrize("bad", ["", "a b", "a:b", "ünï", "a-b"])
def test_bad_names_raise_usertrace_error_with_its_kind(bad: str) -> None:
    with pytest.raises(UsertraceError) as provider_error:
        usertrace.Provider(bad)
    assert provider_error.value.kind is ErrorKind.INVALID_NAME
    assert isinstance(provider_error.value, OSError)
    p = usertrace.Provider("ok")
    with pytest.raises(UsertraceError, match="invalid event name"):
        p.tracepoint(bad)
    with pytest.raises(UsertraceError, match="invalid field name"):
        p.tracepoint("ev", [(bad, "u8")])


def test_unknown_types_and_too_many_fields_are_refused(provider: usertrace.Provider) -> None:
    with pytest.raises(UsertraceError, match='field x of event .*_ev has unknown type "u128"') as e:
        provider.tracepoint("ev", x="u128")
    assert e.value.kind is ErrorKind.UNKNOWN_FIELD_TYPE
    with pytest.raises(TypeError, match="not <class 'list'>"):
        provider.tracepoint("ev", x=list)  # type: ignore[arg-type]
    with pytest.raises(UsertraceError) as e:
        provider.tracepoint("ev", [(f"f{i}", "u8") for i in range(usertrace.MAX_FIELDS + 1)])
    assert e.value.kind is ErrorKind.TOO_MANY_FIELDS


@pytest.mark.parametrize(
    "fields, kind",
    [([("x", "u8"), ("x", "u16")], ErrorKind.DUPLICATE_FIELD),
     ([("c", "char[0]")], ErrorKind.EMPTY_CHAR_ARRAY),
     ([("c", "char[1025]")], ErrorKind.INVALID_FORMAT),
     ([("c", "char[-1]")], ErrorKind.UNKNOWN_FIELD_TYPE),
     ([(f"field_with_a_long_name_{i:02}", "str") for i in range(20)], ErrorKind.INVALID_FORMAT)],
)
def test_bad_definitions_raise_the_cores_kind(
    provider: usertrace.Provider, fields: "list[tuple[str, str]]", kind: ErrorKind
) -> None:
    with pytest.raises(UsertraceError) as e:
        provider.tracepoint("ev", fields)
    assert e.value.kind is kind
    provider.tracepoint("ok", [("c", "char[1024]")])


def test_validate_refuses_an_event_too_large_for_perf(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", blob=bytes)
    tp.validate(bytes(8180))  # 4 bytes of __rel_loc + 8180 = perf's 8184
    with pytest.raises(UsertraceError, match="perf records at most 8184") as e:
        tp.validate(bytes(9000))
    assert e.value.kind is ErrorKind.PAYLOAD_TOO_LARGE
    with pytest.raises(UsertraceError) as e:
        tp.validate(bytes(8181))
    assert e.value.kind is ErrorKind.PAYLOAD_TOO_LARGE


def test_close_is_final_and_idempotent(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", x="u8")
    tp.close()
    tp.close()
    assert tp.closed and not tp.enabled and not tp.registered
    tp.emit(1)
    with pytest.raises(ValueError, match="closed"):
        tp.register()
    assert "closed" in repr(tp)


def test_closing_a_provider_closes_its_tracepoints() -> None:
    with usertrace.Provider("pyclose") as p:
        tps = [p.tracepoint(f"ev{i}", x="u8") for i in range(3)]
        assert set(p.tracepoints) == set(tps)
    assert p.closed and all(tp.closed for tp in tps)
    with pytest.raises(ValueError, match="closed"):
        p.tracepoint("late")


def test_a_provider_does_not_keep_its_tracepoints_alive(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev", x="u8")
    ref = weakref.ref(tp)
    del tp
    gc.collect()
    assert ref() is None
    assert provider.tracepoints == []


def test_enabled_is_a_bool_and_read_only(provider: usertrace.Provider) -> None:
    tp = provider.tracepoint("ev")
    assert type(tp.enabled) is bool
    with pytest.raises(AttributeError):
        tp.enabled = True  # type: ignore[misc]
    descriptor = type(tp).__dict__["enabled"]
    with pytest.raises(TypeError):
        descriptor.__get__(object())


def test_errors_pickle_with_their_kind() -> None:
    import pickle

    e = UsertraceError("boom", ErrorKind.KERNEL, 5)
    back = pickle.loads(pickle.dumps(e))
    assert (str(back), back.kind, back.errno) == ("boom", ErrorKind.KERNEL, 5)


def test_default_provider_is_shared_and_named_by_the_environment() -> None:
    assert usertrace.default_provider() is usertrace.default_provider()
    assert usertrace.default_provider().name == "python"
