"""The installed distribution carries its version, licences and links."""

from __future__ import annotations

import re
from importlib.metadata import distribution, version
from pathlib import Path

import pytest

import usertrace

pytestmark = pytest.mark.host

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_the_installed_distributions() -> None:
    assert usertrace.__version__ == version("usertrace")


def test_version_is_the_cargo_workspaces() -> None:
    cargo = (ROOT / "Cargo.toml").read_text()
    m = re.search(r'^\[workspace\.package\][^\[]*?^version = "([^"]+)"', cargo, re.M | re.S)
    assert m, "no [workspace.package] version in Cargo.toml"
    assert usertrace.__version__ == m.group(1)


def test_the_wheel_ships_both_licences() -> None:
    dist = distribution("usertrace")
    names = {Path(str(f)).name for f in dist.files or []}
    assert {"LICENSE-MIT", "LICENSE-APACHE"} <= names, sorted(names)
    for name in ("LICENSE-MIT", "LICENSE-APACHE"):
        shipped = next(f for f in dist.files or [] if Path(str(f)).name == name)
        assert Path(str(shipped.locate())).read_text() == (ROOT / name).read_text()


def test_the_metadata_names_the_licence_and_the_repository() -> None:
    meta = distribution("usertrace").metadata
    assert meta["License-Expression"] == "MIT OR Apache-2.0"
    urls = meta.get_all("Project-URL") or []
    assert any(u.endswith("https://github.com/usertrace/usertrace") for u in urls), urls
