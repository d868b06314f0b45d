"""The stubs match the binary, and the package type-checks strictly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import usertrace

pytestmark = pytest.mark.host

ENV = dict(os.environ, MYPY_CACHE_DIR=f"/tmp/usertrace-mypy-{sys.version_info[0]}{sys.version_info[1]}")


def test_stubtest_finds_the_stubs_match_the_native_module() -> None:
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "usertrace._native"], capture_output=True, text=True, env=ENV, cwd="/tmp")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_package_passes_mypy_strict() -> None:
    package = Path(usertrace.__file__).parent
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "-p", "usertrace"], capture_output=True, text=True, env=ENV, cwd="/tmp")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_package_ships_py_typed_and_stubs() -> None:
    package = Path(usertrace.__file__).parent
    assert "site-packages" in package.parts, f"testing {package}, not the installed wheel"
    assert (package / "py.typed").exists() and (package / "_native.pyi").exists()
    assert sorted(usertrace.__all__) == sorted(set(usertrace.__all__))
    for name in usertrace.__all__:
        assert hasattr(usertrace, name), name
