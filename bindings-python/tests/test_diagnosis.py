"""``status()`` and ``transport()`` give the diagnosis ``usertrace status``
gives, word for word: the core makes it once, for every language (on this
host, whose kernel lacks user_events, that is what they say, not "mount
tracefs")."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Dict

import pytest

import usertrace
from conftest import usertrace_cli
from test_transport import transport_in_child

pytestmark = pytest.mark.host


def cli_status() -> Dict[str, Any]:
    """``usertrace status --format json``, with USERTRACE_TRANSPORT unset (the
    run-tests host run sets it) as for ``transport_in_child(None)``."""
    env = {k: v for k, v in os.environ.items() if k != "USERTRACE_TRANSPORT"}
    r = subprocess.run([usertrace_cli(), "status", "--format", "json"], capture_output=True, text=True, env=env)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def test_status_says_what_usertrace_status_says() -> None:
    cli = cli_status()["user_events"]
    status = usertrace.status()
    assert (status.availability.value, status.available, str(status)) == (cli["state"], cli["available"], cli["message"])


def test_transport_gives_the_reason_usertrace_status_gives() -> None:
    cli = cli_status()["transport"]
    choice = transport_in_child(None)
    assert (choice["kind"].lower(), choice["reason"]) == (cli["name"], cli["reason"])


def test_where_the_kernel_config_lacks_user_events_no_language_says_to_mount_tracefs() -> None:
    cli = cli_status()
    if cli["kernel_config"]["user_events"] not in ("not_set", "absent") or cli["user_events"]["available"]:
        pytest.skip(f"this host's kernel config does not deny user_events: {cli['kernel_config']}")
    status = usertrace.status()
    assert status.availability is usertrace.Availability.USER_EVENTS_MISSING
    assert "lacks user_events" in str(status) and "mount -t" not in str(status)
    assert "(user_events_missing)" in transport_in_child(None)["reason"]
