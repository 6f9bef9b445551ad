"""Reading the Windows registry through a small ``winreg``-like seam.

The real ``winreg`` module is used on Windows; tests pass ``tests/windows_fakes.py``'s
``FakeRegistry``, which keeps keys in memory with winreg's names, errors and
case-insensitive lookups, so the logic that reads the registry runs on Linux. Reads never
raise: a key or value that is missing or cannot be read is None (or empty).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable
from typing import Any, Protocol


class RegistryLike(Protocol):
    """The part of ``winreg`` the panel reads with."""

    HKEY_CURRENT_USER: Any
    HKEY_LOCAL_MACHINE: Any
    KEY_READ: int

    def OpenKey(self, key: Any, sub_key: str, reserved: int = 0, access: int = 0) -> Any: ...
    def EnumKey(self, key: Any, index: int) -> str: ...
    def EnumValue(self, key: Any, index: int) -> tuple[str, Any, int]: ...
    def QueryValueEx(self, key: Any, name: str) -> tuple[Any, int]: ...
    def CloseKey(self, key: Any) -> None: ...


HIVES = {"HKLM": "HKEY_LOCAL_MACHINE", "HKCU": "HKEY_CURRENT_USER"}


def find_name(names: Iterable[str], name: str) -> str | None:
    """The one of ``names`` that Windows takes for ``name``: registry value names and
    environment variable names compare case-insensitively (upper-cased, as Windows and
    cpython do), so "PATH" finds "Path". None when there is none."""
    wanted = name.upper()
    return next((n for n in names if n.upper() == wanted), None)


def open_registry(platform: str = sys.platform) -> RegistryLike | None:
    """The real ``winreg`` on Windows, None elsewhere."""
    if platform != "win32":
        return None
    import winreg  # type: ignore[import-not-found,unused-ignore]

    return winreg  # type: ignore[return-value,unused-ignore]


def _open(reg: RegistryLike, hive: str, subkey: str) -> Any | None:
    try:
        return reg.OpenKey(getattr(reg, HIVES[hive]), subkey, 0, reg.KEY_READ)
    except OSError:
        return None


def read_value(reg: RegistryLike, hive: str, subkey: str, name: str) -> Any | None:
    """The data of ``hive\\subkey`` value ``name`` ("HKLM" or "HKCU"), or None."""
    handle = _open(reg, hive, subkey)
    if handle is None:
        return None
    try:
        return reg.QueryValueEx(handle, name)[0]
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            reg.CloseKey(handle)


def read_values(reg: RegistryLike, hive: str, subkey: str) -> dict[str, tuple[Any, int]]:
    """Every value of a key: name -> (data, REG_* type); empty when the key is missing."""
    handle = _open(reg, hive, subkey)
    if handle is None:
        return {}
    out: dict[str, tuple[Any, int]] = {}
    try:
        index = 0
        while True:
            try:
                name, data, kind = reg.EnumValue(handle, index)
            except OSError:
                return out  # ERROR_NO_MORE_ITEMS
            out[name] = (data, kind)
            index += 1
    finally:
        with contextlib.suppress(OSError):
            reg.CloseKey(handle)


def subkeys(reg: RegistryLike, hive: str, subkey: str) -> list[str]:
    """The names of a key's subkeys; empty when the key is missing."""
    handle = _open(reg, hive, subkey)
    if handle is None:
        return []
    names: list[str] = []
    try:
        index = 0
        while True:
            try:
                names.append(reg.EnumKey(handle, index))
            except OSError:
                return names
            index += 1
    finally:
        with contextlib.suppress(OSError):
            reg.CloseKey(handle)
