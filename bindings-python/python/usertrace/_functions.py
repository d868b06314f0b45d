"""Opt-in tracing of every Python function's entry and exit.

On Python 3.12 and later this uses ``sys.monitoring`` (PEP 669), which covers
every thread and costs nothing in code that ``include`` rejects. Before 3.12
it uses ``sys.setprofile`` and ``threading.setprofile``: the thread that calls
``start()`` and threads started after it, not threads already running.
"""

from __future__ import annotations

import sys
import threading
from types import CodeType, FrameType, TracebackType
from typing import Any, Callable, Dict, Optional, Type

from ._provider import Provider, default_provider

__all__ = ["FunctionTracer", "trace_functions"]

_MONITORING = sys.version_info >= (3, 12)


def _qualname(code: CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)


class FunctionTracer:
    """Emits ``func_entry(function, file, line)`` when a Python function
    starts or resumes, and ``func_exit(function, file, line)`` when it
    returns, yields or unwinds. ``line`` is the function's first line.
    ``include(code)`` picks which functions count (default: all); it is
    asked once per code object. Use as a context manager or with
    ``start()``/``stop()``. Only one tracer can run at a time."""

    _running: Optional[FunctionTracer] = None
    _running_lock = threading.Lock()

    def __init__(
        self,
        provider: Optional[Provider] = None,
        *,
        include: Optional[Callable[[CodeType], bool]] = None,
    ) -> None:
        provider = provider or default_provider()
        self.entry = provider.tracepoint("func_entry", function=str, file=str, line="u32")
        self.exit = provider.tracepoint("func_exit", function=str, file=str, line="u32")
        self._include = include
        self._included: Dict[CodeType, bool] = {}

    def _wanted(self, code: CodeType) -> bool:
        if self._include is None:
            return True
        wanted = self._included.get(code)
        if wanted is None:
            wanted = self._included[code] = bool(self._include(code))
        return wanted

    @property
    def running(self) -> bool:
        return FunctionTracer._running is self

    def start(self) -> None:
        with FunctionTracer._running_lock:
            if FunctionTracer._running is not None:
                raise RuntimeError("a usertrace FunctionTracer is already running")
            if _MONITORING:
                self._start_monitoring()
            else:
                sys.setprofile(self._profile)
                threading.setprofile(self._profile)
            FunctionTracer._running = self

    def stop(self) -> None:
        with FunctionTracer._running_lock:
            if FunctionTracer._running is not self:
                return
            if _MONITORING:
                self._stop_monitoring()
            else:
                sys.setprofile(None)
                threading.setprofile(None)
            FunctionTracer._running = None

    def __enter__(self) -> FunctionTracer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.stop()

    # sys.setprofile (before 3.12)

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            tp = self.entry
        elif event == "return":
            tp = self.exit
        else:
            return
        if tp.enabled:
            code = frame.f_code
            if self._wanted(code):
                tp.emit(_qualname(code), code.co_filename, code.co_firstlineno)

    # sys.monitoring (3.12 and later)

    def _start_monitoring(self) -> None:
        mon = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
        for tool in (mon.PROFILER_ID, 3, 4, 5):
            if mon.get_tool(tool) is None:
                break
        else:
            raise RuntimeError("no free sys.monitoring tool id for usertrace")
        mon.use_tool_id(tool, "usertrace")
        self._tool = tool
        events = mon.events
        disable = mon.DISABLE

        def entered(code: CodeType, offset: int) -> Any:
            if not self._wanted(code):
                return disable
            if self.entry.enabled:
                self.entry.emit(_qualname(code), code.co_filename, code.co_firstlineno)
            return None

        def left(code: CodeType, offset: int, value: object) -> Any:
            if not self._wanted(code):
                return disable
            if self.exit.enabled:
                self.exit.emit(_qualname(code), code.co_filename, code.co_firstlineno)
            return None

        def unwound(code: CodeType, offset: int, exc: BaseException) -> None:
            # PY_UNWIND is a global event: it cannot be disabled per code.
            if self.exit.enabled and self._wanted(code):
                self.exit.emit(_qualname(code), code.co_filename, code.co_firstlineno)

        mon.register_callback(tool, events.PY_START, entered)
        mon.register_callback(tool, events.PY_RESUME, entered)
        mon.register_callback(tool, events.PY_RETURN, left)
        mon.register_callback(tool, events.PY_YIELD, left)
        mon.register_callback(tool, events.PY_UNWIND, unwound)
        mon.set_events(
            tool,
            events.PY_START | events.PY_RESUME | events.PY_RETURN | events.PY_YIELD | events.PY_UNWIND,
        )

    def _stop_monitoring(self) -> None:
        mon = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
        mon.set_events(self._tool, 0)
        for event in (
            mon.events.PY_START,
            mon.events.PY_RESUME,
            mon.events.PY_RETURN,
            mon.events.PY_YIELD,
            mon.events.PY_UNWIND,
        ):
            mon.register_callback(self._tool, event, None)
        mon.free_tool_id(self._tool)
        # Code locations that returned DISABLE are re-armed for the next tool.
        mon.restart_events()


def trace_functions(
    provider: Optional[Provider] = None, *, include: Optional[Callable[[CodeType], bool]] = None
) -> FunctionTracer:
    """A ``FunctionTracer``, not yet started: ``with trace_functions(): ...``."""
    return FunctionTracer(provider, include=include)
