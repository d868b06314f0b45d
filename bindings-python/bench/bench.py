"""Benchmarks of the Python binding (not tests): run in the guest kernel,
where user_events exists, in one run:

    bindings-python/run-tests.sh build
    harness/in-guest '/tmp/usertrace-python/311/bin/python bindings-python/bench/bench.py'

Under qemu without KVM absolute times are inflated: compare the ratios,
each to the first row of its table. The rows of a table take turns
(BENCH_ROUNDS rounds of BENCH_NUMBER loops each; the enabled tables a
quarter as many loops), so that a stretch of host load falls on a row and
its baseline alike.

Disabled: `tp.enabled` vs a plain attribute read, beside CPython's own C
getter (`int.real`), a `__slots__` read and a disabled `logging.debug`; a
span's begin and end vs two `tp.enabled` checks, and a `@traced` call vs
the undecorated call. Enabled (ftrace attached): `tp.emit` by position
and by keyword vs a raw `os.writev` to user_events_data of the same event
layout, registered by hand; a span's begin and end vs two such writevs.
"""

from __future__ import annotations

import ctypes
import fcntl
import logging
import os
import struct
import sys
import timeit
from typing import Callable, Dict, List, Tuple

import usertrace

DIAG_IOCSREG = 0xC0082A00
DIAG_IOCSUNREG = 0x40082A02
NUMBER = int(os.environ.get("BENCH_NUMBER", "200000"))


ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))


def measure(rows: List[Tuple[str, str]], ns: Dict[str, object], number: int = NUMBER) -> List[Tuple[str, float]]:
    """Each row's best time per statement, in ns. The rows take turns, one
    timing each per round, so that a stretch of load on the host (which
    under emulation slows everything several-fold) falls on all of them,
    not on whichever row ran then."""
    timers = [timeit.Timer(stmt, globals=ns) for _, stmt in rows]
    best = [float("inf")] * len(rows)
    for _ in range(ROUNDS):
        for i, timer in enumerate(timers):
            best[i] = min(best[i], timer.timeit(number) / number * 1e9)
    return [(name, t) for (name, _), t in zip(rows, best)]


class Plain:
    def __init__(self) -> None:
        self.enabled = False


class Slotted:
    __slots__ = ("enabled",)

    def __init__(self) -> None:
        self.enabled = False


def report(title: str, rows: List[Tuple[str, float]]) -> None:
    """Prints the rows with their ratios to the first, the baseline."""
    print(f"\n{title}")
    base = rows[0][1]
    for name, ns in rows:
        print(f"  {name:<46} {ns:9.1f} ns   {ns / base:5.2f}x")


def main() -> None:
    status = usertrace.status()
    print(f"Python {sys.version.split()[0]}, {os.uname().release}: {status}")
    provider = usertrace.Provider("bench")
    tp = provider.tracepoint("ev", a="u32", b="u64")
    plain = Plain()
    slotted = Slotted()
    number = 7
    log = logging.getLogger("bench")
    log.setLevel(logging.WARNING)
    span = provider.span("span", a="u32", b="u64")

    def call() -> None:
        pass

    traced_call = usertrace.traced("call", provider=provider)(call)
    block = usertrace.traced("block", provider=provider)
    ns: Dict[str, object] = {
        "tp": tp, "plain": plain, "slotted": slotted, "number": number, "log": log, "span": span,
        "call": call, "traced_call": traced_call, "block": block,
    }

    report("Disabled (ratios to a plain attribute read)", measure([
        ("plain attribute read: plain.enabled", "plain.enabled"),
        ("tp.enabled (disabled)", "tp.enabled"),
        # The floor for an attribute a C type computes: CPython's own getter
        # (3.11+ specialises stored attributes, plain and __slots__, only).
        ("number.real  (int's own C getter)", "number.real"),
        ("slotted.enabled  (__slots__ attribute)", "slotted.enabled"),
        ("if tp.enabled: tp.emit(1, 2)  (disabled)", "if tp.enabled: tp.emit(1, 2)"),
        ("tp.emit(1, 2)  (disabled, unguarded)", "tp.emit(1, 2)"),
        ("log.debug('x %s', 1)  (level WARNING)", "log.debug('x %s', 1)"),
    ], ns))
    report("Disabled spans (ratios to two tp.enabled checks)", measure([
        ("two checks: tp.enabled; tp.enabled", "tp.enabled\ntp.enabled"),
        ("with span.begin(1, 2): pass", "with span.begin(1, 2): pass"),
        ("span.begin(1, 2).end()", "span.begin(1, 2).end()"),
        ("with block: pass  (traced('block'))", "with block: pass"),
    ], ns))
    report("Disabled @traced (ratio to the undecorated call)", measure([
        ("call()  (undecorated)", "call()"),
        ("traced_call()  (@traced, disabled)", "traced_call()"),
    ], ns))

    if not status.available:
        print("\nuser_events unavailable: enabled benchmarks skipped")
        return
    assert status.tracefs is not None
    events = os.path.join(status.tracefs, "events", "user_events")

    # The same layout registered by hand: u32 a; u64 b.
    fd = os.open(os.path.join(status.tracefs, "user_events_data"), os.O_RDWR | os.O_CLOEXEC)
    word = ctypes.c_uint64(0)  # 8 bytes: the kernel sets bits in the containing long
    name = ctypes.create_string_buffer(b"bench_raw u32 a;u64 b")
    reg = bytearray(struct.pack("<IBBHQQI", 28, 0, 4, 0, ctypes.addressof(word), ctypes.addressof(name), 0))
    fcntl.ioctl(fd, DIAG_IOCSREG, reg, True)
    index = struct.pack("<I", struct.unpack_from("<I", reg, 24)[0])
    writev: Callable[..., int] = os.writev
    ns.update(fd=fd, index=index, pack=struct.pack, writev=writev, word=word)

    enabled = ("bench_ev", "bench_raw", "bench_span", "bench_span_end")
    for event in enabled:
        with open(os.path.join(events, event, "enable"), "w") as f:
            f.write("1")
    assert tp.enabled and span.enabled and span.end_event.enabled and word.value
    try:
        n = NUMBER // 4
        raw = "writev(fd, [index, pack('<IQ', 1, 2)])"
        report("Enabled, ftrace attached (ratios to a raw os.writev)", measure([
            ("raw os.writev(fd, [index, struct.pack(..)])", raw),
            ("tp.emit(1, 2)", "tp.emit(1, 2)"),
            ("if tp.enabled: tp.emit(1, 2)", "if tp.enabled: tp.emit(1, 2)"),
            ("tp.emit(a=1, b=2)", "tp.emit(a=1, b=2)"),
        ], ns, n))
        report("Enabled span, ftrace attached (ratios to two raw os.writev)", measure([
            ("two raw os.writev(fd, [index, struct.pack(..)])", f"{raw}\n{raw}"),
            ("with span.begin(1, 2): pass", "with span.begin(1, 2): pass"),
        ], ns, n))
    finally:
        for event in enabled:
            with open(os.path.join(events, event, "enable"), "w") as f:
                f.write("0")
        unreg = struct.pack("<IBBHQ", 16, 0, 0, 0, ctypes.addressof(word))
        fcntl.ioctl(fd, DIAG_IOCSUNREG, unreg)
        os.close(fd)
        with open(os.path.join(status.tracefs, "trace"), "w") as f:
            f.write("")
        provider.close()


if __name__ == "__main__":
    main()
