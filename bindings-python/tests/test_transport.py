"""``usertrace.transport()`` says which way events go, as the core decides:
on the host (no user_events) auto takes shared memory; in the guest, user_events.

The core reads USERTRACE_TRANSPORT once per process, so each setting is
asked of a new interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Dict, Optional

import pytest

import usertrace
from usertrace import Availability, ErrorKind, Transport

# What a user would run: the choice, or the error, as JSON.
ASK = """
import json, usertrace
try:
    c = usertrace.transport()
    out = {"kind": c.kind.name, "reason": c.reason, "str": str(c), "type": type(c).__name__}
except usertrace.UsertraceError as e:
    out = {"error": type(e).__name__, "oserror": isinstance(e, OSError), "errkind": e.kind.name, "str": str(e)}
print(json.dumps(out))
"""


def transport_in_child(setting: Optional[str]) -> Dict[str, object]:
    """``usertrace.transport()`` in a new interpreter with USERTRACE_TRANSPORT
    set to ``setting``, or unset for None (the run-tests host run sets it)."""
    env = {k: v for k, v in os.environ.items() if k != "USERTRACE_TRANSPORT"}
    if setting is not None:
        env["USERTRACE_TRANSPORT"] = setting
    r = subprocess.run([sys.executable, "-c", ASK], capture_output=True, text=True, env=env, check=True)
    return json.loads(r.stdout)  # type: ignore[no-any-return]


@pytest.mark.host
def test_unset_takes_shared_memory_on_a_kernel_without_user_events() -> None:
    status = usertrace.status()
    assert status.availability in (Availability.TRACEFS_NOT_MOUNTED, Availability.USER_EVENTS_MISSING), status
    choice = transport_in_child(None)
    assert choice["type"] == "TransportChoice" and choice["kind"] == Transport.SHM.name
    assert choice["reason"] == (
        f"USERTRACE_TRANSPORT=auto: user_events is not available ({status.availability.value});"
        " events go through shared memory in /dev/shm instead"
    )
    assert choice["str"] == f"transport shm: {choice['reason']}"


@pytest.mark.host
def test_a_forced_transport_is_taken_and_named_as_the_reason() -> None:
    assert transport_in_child("user_events") == {
        "kind": "USER_EVENTS",
        "reason": "USERTRACE_TRANSPORT=user_events",
        "str": "transport user_events: USERTRACE_TRANSPORT=user_events",
        "type": "TransportChoice",
    }
    assert transport_in_child("shm")["kind"] == "SHM"
    assert transport_in_child("auto") == transport_in_child(None)


@pytest.mark.host
def test_an_invalid_setting_raises_usertrace_error_naming_the_variable_value_and_choices() -> None:
    assert transport_in_child("bogus") == {
        "error": "UsertraceError",
        "oserror": True,
        "errkind": ErrorKind.UNAVAILABLE.name,
        "str": "USERTRACE_TRANSPORT=bogus is not valid; use auto, user_events or shm, or unset it",
    }


@pytest.mark.host
def test_the_enum_and_the_choice_are_typed_values() -> None:
    assert [t.value for t in Transport] == ["user_events", "shm"]
    choice = usertrace.TransportChoice(Transport.SHM, "why", "transport shm: why")
    assert str(choice) == "transport shm: why"
    with pytest.raises(AttributeError):
        choice.kind = Transport.USER_EVENTS  # type: ignore[misc]


@pytest.mark.kernel
def test_unset_takes_user_events_where_the_kernel_has_them() -> None:
    choice = transport_in_child(None)
    assert choice["kind"] == Transport.USER_EVENTS.name, choice
    assert choice["reason"] == f"USERTRACE_TRANSPORT=auto: {usertrace.status()}"
    assert choice["str"] == f"transport user_events: {choice['reason']}"
