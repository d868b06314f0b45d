"""Test modes.

Host mode (default): tests marked ``kernel`` are deselected (they show as
"deselected" in the summary, never as passed or skipped). Kernel mode
(``--kernel`` or ``USERTRACE_REQUIRE_KERNEL=1``, set by ``run-tests.sh
guest``): tests marked ``host`` are deselected, and every ``kernel`` test
fails if user_events is unavailable.
"""

from __future__ import annotations

import itertools
import os
import re
import struct
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple, Union

import pytest

import usertrace


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--kernel",
        action="store_true",
        default=os.environ.get("USERTRACE_REQUIRE_KERNEL") == "1",
        help="run the tests that need user_events, and fail them without it",
    )
    parser.addoption(
        "--shm",
        action="store_true",
        default=False,
        help="run only the tests that need a recorder (marked `recorder`), on a host without user_events:"
        " the producers then take shared memory",
    )


def usertrace_cli() -> str:
    """The ``usertrace`` command the tests run: $USERTRACE_CLI, or the
    workspace's debug build (which run-tests.sh builds)."""
    repo = Path(__file__).resolve().parents[2]
    cli = os.environ.get("USERTRACE_CLI") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", str(repo / "target")), "debug", "usertrace"
    )
    assert os.access(cli, os.X_OK), f"build the CLI first (cargo build -p usertrace-cli): {cli}"
    return cli


def kernel_mode(config: pytest.Config) -> bool:
    return bool(config.getoption("--kernel"))


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    drop = "host" if kernel_mode(config) else "kernel"
    kept, deselected = [], []
    for item in items:
        if config.getoption("--shm"):
            keep = item.get_closest_marker("recorder") is not None
        else:
            keep = not item.get_closest_marker(drop)
        (kept if keep else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.fixture(autouse=True)
def _require_kernel(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("kernel") and not request.config.getoption("--shm"):
        status = usertrace.status()
        assert status.available, f"this test needs user_events: {status}"


_names = itertools.count()


@pytest.fixture
def provider() -> Iterator[usertrace.Provider]:
    """A provider whose name is unique to this test and process."""
    with usertrace.Provider(f"pt{os.getpid()}_{next(_names)}") as p:
        yield p


Value = Union[int, str]


class Ftrace:
    """ftrace's view of user events: enable, then read ``trace``."""

    def __init__(self) -> None:
        tracefs = usertrace.status().tracefs
        assert tracefs is not None
        self.root = Path(tracefs)
        self.enabled: List[str] = []

    def _event(self, name: str) -> Path:
        return self.root / "events" / "user_events" / name

    def enable(self, tp: usertrace.Tracepoint) -> None:
        (self._event(tp.name) / "enable").write_text("1")
        self.enabled.append(tp.name)

    def disable(self, tp: usertrace.Tracepoint) -> None:
        (self._event(tp.name) / "enable").write_text("0")
        self.enabled.remove(tp.name)

    def exists(self, name: str) -> bool:
        return self._event(name).exists()

    def clear(self) -> None:
        (self.root / "trace").write_text("")

    def lines(self, tp: usertrace.Tracepoint) -> List[str]:
        text = (self.root / "trace").read_bytes().decode("utf-8", "backslashreplace")
        marker = f" {tp.name}: "
        return [line.split(marker, 1)[1] for line in text.splitlines() if marker in line]

    def pids(self, tp: usertrace.Tracepoint) -> List[int]:
        text = (self.root / "trace").read_bytes().decode("utf-8", "backslashreplace")
        marker = f" {tp.name}: "
        return [int(re.match(r"\s*.*?-(\d+)\s", l).group(1)) for l in text.splitlines() if marker in l]  # type: ignore[union-attr]

    def events(self, tp: usertrace.Tracepoint) -> List[Dict[str, str]]:
        """Each event as {field: text as ftrace printed it}."""
        names = [n for n, _ in tp.fields]
        return [split_fields(line, names) for line in self.lines(tp)]

    def sequence(self, *tps: usertrace.Tracepoint) -> List[Tuple[str, int, Dict[str, object]]]:
        """The events of all of ``tps`` in the trace's order, each as
        (event name, thread id, {field: Python value})."""
        text = (self.root / "trace").read_bytes().decode("utf-8", "backslashreplace")
        out: List[Tuple[str, int, Dict[str, object]]] = []
        for line in text.splitlines():
            for tp in tps:
                marker = f" {tp.name}: "
                if marker in line:
                    head, rest = line.split(marker, 1)
                    tid = int(re.match(r"\s*.*?-(\d+)\s", head).group(1))  # type: ignore[union-attr]
                    types = dict(tp.fields)
                    texts = split_fields(rest, list(types))
                    out.append((tp.name, tid, {k: decode(types[k], v) for k, v in texts.items()}))
                    break
        return out

    def values(self, tp: usertrace.Tracepoint) -> List[Dict[str, object]]:
        """Each event as {field: Python value}, decoded by the field's type."""
        types = dict(tp.fields)
        return [{k: decode(types[k], v) for k, v in e.items()} for e in self.events(tp)]

    def cleanup(self) -> None:
        for name in list(self.enabled):
            try:
                (self._event(name) / "enable").write_text("0")
            except OSError:
                pass


def split_fields(line: str, names: List[str]) -> Dict[str, str]:
    """``a=1 b=x y`` as {field: text}, for fields ``names`` in order."""
    fields: Dict[str, str] = {}
    rest = line
    for i, name in enumerate(names):
        assert rest.startswith(f"{name}="), (line, name)
        rest = rest[len(name) + 1 :]
        if i + 1 < len(names):
            end = rest.find(f" {names[i + 1]}=")
            fields[name], rest = rest[:end], rest[end + 1 :]
        else:
            fields[name] = rest
    return fields


_SIZES = {"8": 1, "16": 2, "32": 4, "64": 8}


def decode(ty: str, text: str) -> object:
    """A value as ftrace prints it: ints as ``5``, ``'\\x7f'(127)`` or
    ``0xffffffff (-1)`` (hex, then the bits as signed), bools as ``(1)``,
    floats as their bits in hex, bytes as ``00,01,ff``."""
    if ty in ("f32", "f64"):
        return float_bits(text, 4 if ty == "f32" else 8)
    if ty == "bool":
        return bool(number(text))
    if ty == "bytes":
        return bytes(int(b, 16) for b in text.split(",")) if text else b""
    if ty[0] in "ui":
        size = _SIZES[ty[1:]]
        m = re.match(r"0x([0-9a-f]+)", text)
        v = int(m.group(1), 16) if m else number(text)
        v &= (1 << 8 * size) - 1
        if ty[0] == "i" and v >= 1 << (8 * size - 1):
            v -= 1 << 8 * size
        return v
    return text


def number(text: str) -> int:
    """The integer in ftrace's ``'\\x7f'(127)``, ``0x80.. (-9..)``, ``(1)`` or ``5``."""
    m = re.search(r"\((-?\d+)\)$", text)
    return int(m.group(1) if m else text)


def float_bits(text: str, size: int) -> float:
    """The float whose bits ftrace printed as ``0x3fc00000 (1069547520)``."""
    m = re.match(r"0x([0-9a-f]+)", text)
    assert m, text
    bits = int(m.group(1), 16)
    return struct.unpack("<f" if size == 4 else "<d", bits.to_bytes(size, "little"))[0]  # type: ignore[no-any-return]


@pytest.fixture
def ftrace() -> Iterator[Ftrace]:
    f = Ftrace()
    f.clear()
    yield f
    f.cleanup()


def wait_for(predicate: "object", timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False

