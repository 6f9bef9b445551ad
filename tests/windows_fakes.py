"""Test doubles for the Windows seams, shared by the tests that run Windows logic on Linux.

``FakeRegistry`` is the part of ``winreg`` rocmpanel uses, in memory: hives, keys and
values with winreg's constants, signatures and errors (FileNotFoundError for a missing key
or value, OSError 259 at the end of an enumeration, PermissionError for a write through a
read-only handle), and Windows' case-insensitive key and value names. Tests get it from
the ``fake_registry`` fixture, or the module from ``windows_fakes`` (tests/conftest.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

REG_SZ, REG_EXPAND_SZ, REG_BINARY, REG_DWORD, REG_MULTI_SZ, REG_QWORD = 1, 2, 3, 4, 7, 11


class _Hive:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


@dataclass
class _Key:
    values: dict[str, tuple[Any, int]] = field(default_factory=dict)
    children: dict[str, _Key] = field(default_factory=dict)


class _Handle:
    def __init__(self, key: _Key, path: str, write: bool) -> None:
        self.key, self.path, self.write, self.closed = key, path, write, False

    def __enter__(self) -> _Handle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed = True

    def Close(self) -> None:
        self.closed = True


def _find(mapping: dict[str, Any], name: str) -> str | None:
    return next((n for n in mapping if n.upper() == name.upper()), None)


class FakeRegistry:
    """An in-memory registry with ``winreg``'s interface."""

    HKEY_CURRENT_USER = _Hive("HKEY_CURRENT_USER")
    HKEY_LOCAL_MACHINE = _Hive("HKEY_LOCAL_MACHINE")
    KEY_READ = 0x20019
    KEY_SET_VALUE = 0x0002
    KEY_WOW64_64KEY = 0x0100
    REG_SZ, REG_EXPAND_SZ, REG_BINARY = REG_SZ, REG_EXPAND_SZ, REG_BINARY
    REG_DWORD, REG_MULTI_SZ, REG_QWORD = REG_DWORD, REG_MULTI_SZ, REG_QWORD

    def __init__(self) -> None:
        self._roots = {self.HKEY_CURRENT_USER: _Key(), self.HKEY_LOCAL_MACHINE: _Key()}
        self.open_handles = 0
        self.reads = 0  # QueryValueEx and EnumValue calls

    # -- building the tree (tests) --------------------------------------------------------
    def set(self, path: str, name: str, data: Any, kind: int = REG_SZ) -> FakeRegistry:
        """Create ``path`` ("HKLM\\SYSTEM\\...", "HKCU\\Environment") and set one value."""
        key = self._key(path, create=True)
        assert key is not None
        existing = _find(key.values, name)
        key.values[existing or name] = (data, kind)
        return self

    def add_key(self, path: str) -> FakeRegistry:
        self._key(path, create=True)
        return self

    def values_of(self, path: str) -> dict[str, tuple[Any, int]]:
        key = self._key(path, create=False)
        return dict(key.values) if key else {}

    def _key(self, path: str, *, create: bool) -> _Key | None:
        hive, _, rest = path.partition("\\")
        root = {"HKCU": self.HKEY_CURRENT_USER, "HKLM": self.HKEY_LOCAL_MACHINE}[hive]
        return self._walk(self._roots[root], rest, create=create)

    @staticmethod
    def _walk(key: _Key, sub_key: str, *, create: bool) -> _Key | None:
        for part in [p for p in sub_key.split("\\") if p]:
            found = _find(key.children, part)
            if found is None:
                if not create:
                    return None
                key.children[part] = _Key()
                found = part
            key = key.children[found]
        return key

    # -- winreg's functions ---------------------------------------------------------------
    def OpenKey(self, key: Any, sub_key: str, reserved: int = 0, access: int = 0) -> _Handle:
        if isinstance(key, _Handle):
            base, path = key.key, f"{key.path}\\{sub_key}"
        else:
            base, path = self._roots[key], f"{key}\\{sub_key}"
        found = self._walk(base, sub_key, create=False)
        if found is None:
            raise FileNotFoundError(2, "The system cannot find the file specified")
        self.open_handles += 1
        return _Handle(found, path, bool(access & self.KEY_SET_VALUE))

    OpenKeyEx = OpenKey

    def CloseKey(self, handle: _Handle) -> None:
        if not handle.closed:
            handle.closed = True
            self.open_handles -= 1

    def EnumKey(self, handle: _Handle, index: int) -> str:
        names = list(handle.key.children)
        if index >= len(names):
            raise OSError(259, "No more data is available")
        return names[index]

    def EnumValue(self, handle: _Handle, index: int) -> tuple[str, Any, int]:
        self.reads += 1
        items = list(handle.key.values.items())
        if index >= len(items):
            raise OSError(259, "No more data is available")
        name, (data, kind) = items[index]
        return name, data, kind

    def QueryValueEx(self, handle: _Handle, name: str) -> tuple[Any, int]:
        self.reads += 1
        found = _find(handle.key.values, name)
        if found is None:
            raise FileNotFoundError(2, "The system cannot find the file specified")
        return handle.key.values[found]

    def SetValueEx(self, handle: _Handle, name: str, reserved: int, kind: int, value: Any) -> None:
        if not handle.write:
            raise PermissionError(5, "Access is denied")
        found = _find(handle.key.values, name) or name
        handle.key.values[found] = (value, kind)

    def DeleteValue(self, handle: _Handle, name: str) -> None:
        if not handle.write:
            raise PermissionError(5, "Access is denied")
        found = _find(handle.key.values, name)
        if found is None:
            raise FileNotFoundError(2, "The system cannot find the file specified")
        del handle.key.values[found]
