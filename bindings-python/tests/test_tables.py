"""The Python enums are the core's code tables, exactly: a renumbering or a
new kind on either side fails here."""

from __future__ import annotations

import usertrace
from usertrace import Availability, ErrorKind, _native


def test_error_kinds_are_the_cores() -> None:
    assert [(k.name, k.value) for k in ErrorKind] == list(_native.ERROR_KINDS)


def test_availabilities_are_the_cores_in_code_order() -> None:
    codes = [code for _, code in _native.AVAILABILITIES]
    assert codes == list(range(len(codes)))
    assert [a.value for a in Availability] == [name for name, _ in _native.AVAILABILITIES]
    assert [a.name for a in Availability] == [name.upper() for name, _ in _native.AVAILABILITIES]


def test_every_field_type_of_the_core_is_declared_by_its_name(provider: usertrace.Provider) -> None:
    names = [name.replace("[N]", "[8]") for name, _ in _native.FIELD_TYPES]
    assert [code for _, code in _native.FIELD_TYPES] == list(range(1, len(names) + 1))
    tp = provider.tracepoint("all", [(f"f{i}", name) for i, name in enumerate(names)])
    assert [ty for _, ty in tp.fields] == names


def test_python_types_map_to_core_field_types(provider: usertrace.Provider) -> None:
    core = {name for name, _ in _native.FIELD_TYPES}
    tp = provider.tracepoint("py", a=int, b=float, c=bool, d=str, e=bytes)
    assert {ty for _, ty in tp.fields} <= core
