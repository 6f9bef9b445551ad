"""The Windows user store against a test double of the winreg functions it uses."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.envvars.plan import EnvChange
from rocmpanel.envvars.store import EnvConflictError, make_stores
from rocmpanel.envvars.stores.windows import WindowsUserStore
from rocmpanel.envvars.transaction import apply_plans, undo_last

REG_SZ, REG_EXPAND_SZ, REG_DWORD = 1, 2, 4


class FakeWinreg:
    """HKCU\\Environment in memory, with winreg's names, signatures and errors."""

    HKEY_CURRENT_USER = object()
    KEY_READ = 0x20019
    KEY_SET_VALUE = 0x0002
    REG_SZ = REG_SZ
    REG_EXPAND_SZ = REG_EXPAND_SZ

    def __init__(self, values: dict[str, tuple[Any, int]]) -> None:
        self.values = dict(values)
        self.open_handles = 0
        self.drop_writes = False

    def _find(self, name: str) -> str | None:
        return next((n for n in self.values if n.upper() == name.upper()), None)

    def OpenKey(self, key, sub_key, reserved=0, access=0):
        assert key is self.HKEY_CURRENT_USER and sub_key == "Environment"
        self.open_handles += 1
        return {"write": bool(access & self.KEY_SET_VALUE)}

    def CloseKey(self, handle):
        self.open_handles -= 1

    def EnumValue(self, handle, index):
        items = list(self.values.items())
        if index >= len(items):
            raise OSError(259, "No more data is available")
        name, (data, kind) = items[index]
        return name, data, kind

    def QueryValueEx(self, handle, name):
        found = self._find(name)
        if found is None:
            raise FileNotFoundError(2, "The system cannot find the file specified")
        return self.values[found]

    def SetValueEx(self, handle, name, reserved, kind, value):
        if not handle["write"]:
            raise PermissionError(5, "Access is denied")
        if self.drop_writes:
            return
        found = self._find(name) or name
        self.values[found] = (value, kind)

    def DeleteValue(self, handle, name):
        if not handle["write"]:
            raise PermissionError(5, "Access is denied")
        found = self._find(name)
        if found is None:
            raise FileNotFoundError(2, "The system cannot find the file specified")
        del self.values[found]


USER_PATH = "%USERPROFILE%\\AppData\\Local\\Microsoft\\WindowsApps;C:\\tools"
MACHINE_PATH = "C:\\Windows\\system32;C:\\Windows;C:\\Program Files\\AMD\\ROCm\\6.4\\bin"


def _store(values: dict[str, tuple[Any, int]]) -> tuple[WindowsUserStore, FakeWinreg, list[int]]:
    fake = FakeWinreg(values)
    calls: list[int] = []
    store = WindowsUserStore(fake, broadcast=lambda: calls.append(1))
    return store, fake, calls


def _apply(store: WindowsUserStore, *changes: EnvChange) -> None:
    apply_plans({store.key: store}, [store.plan(store.read(), changes)])


def test_path_stays_expandable_and_is_never_merged(monkeypatch) -> None:
    monkeypatch.setenv("PATH", MACHINE_PATH + ";" + USER_PATH.replace("%USERPROFILE%", "C:\\u"))
    store, fake, calls = _store({"Path": (USER_PATH, REG_EXPAND_SZ), "TEMP": ("x", REG_EXPAND_SZ)})
    snapshot = store.read()
    assert snapshot.kinds["Path"] == "REG_EXPAND_SZ"
    _apply(store, EnvChange("PATH", snapshot.values["Path"] + ";C:\\new"))
    assert fake.values["Path"] == (USER_PATH + ";C:\\new", REG_EXPAND_SZ)
    assert "system32" not in fake.values["Path"][0]
    assert list(fake.values) == ["Path", "TEMP"]  # edited in place, no second "PATH"
    assert calls == [1]
    assert fake.open_handles == 0


def test_expand_sz_kept_even_without_references_and_new_types_chosen() -> None:
    store, fake, _ = _store({"MIOPEN_USER_DB_PATH": ("D:\\db", REG_EXPAND_SZ)})
    _apply(
        store,
        EnvChange("MIOPEN_USER_DB_PATH", "E:\\db"),
        EnvChange("MIOPEN_CUSTOM_CACHE_DIR", "%LOCALAPPDATA%\\miopen"),
        EnvChange("HIP_VISIBLE_DEVICES", "0"),
    )
    assert fake.values["MIOPEN_USER_DB_PATH"] == ("E:\\db", REG_EXPAND_SZ)
    assert fake.values["MIOPEN_CUSTOM_CACHE_DIR"][1] == REG_EXPAND_SZ
    assert fake.values["HIP_VISIBLE_DEVICES"] == ("0", REG_SZ)


def test_long_path_is_not_truncated() -> None:
    entries = [f"C:\\Tools\\package-{i:04d}\\bin" for i in range(400)]
    long_path = ";".join(entries)
    assert len(long_path) > 8192
    store, fake, _ = _store({"Path": (long_path, REG_EXPAND_SZ)})
    _apply(store, EnvChange("Path", long_path + ";C:\\rocm\\bin"))
    assert fake.values["Path"][0].split(";") == [*entries, "C:\\rocm\\bin"]


def test_undo_restores_values_and_types_and_removes_new_ones() -> None:
    original = {"Path": (USER_PATH, REG_EXPAND_SZ), "OTHER": ("keep", REG_SZ), "N": (5, REG_DWORD)}
    store, fake, calls = _store(original)
    _apply(store, EnvChange("Path", "C:\\only"), EnvChange("HIP_VISIBLE_DEVICES", "1"))
    assert fake.values["Path"] == ("C:\\only", REG_EXPAND_SZ)
    undo_last({store.key: store})
    assert fake.values == original
    assert calls == [1, 1]


def test_unset_deletes_and_diff_is_readable() -> None:
    store, fake, _ = _store({"Path": (USER_PATH, REG_EXPAND_SZ), "AMD_LOG_LEVEL": ("4", REG_SZ)})
    plan = store.plan(store.read(), [EnvChange("AMD_LOG_LEVEL", None), EnvChange("PATH", "C:\\a")])
    assert "-AMD_LOG_LEVEL (REG_SZ) = 4" in plan.diff
    assert "-    C:\\tools" in plan.diff and "+    C:\\a" in plan.diff
    apply_plans({store.key: store}, [plan])
    assert "AMD_LOG_LEVEL" not in fake.values


def test_changed_in_registry_since_read_is_refused() -> None:
    store, fake, calls = _store({"Path": (USER_PATH, REG_EXPAND_SZ)})
    plan = store.plan(store.read(), [EnvChange("Path", USER_PATH + ";C:\\x")])
    fake.values["Path"] = (USER_PATH + ";C:\\installer-added", REG_EXPAND_SZ)
    with pytest.raises(EnvConflictError):
        apply_plans({store.key: store}, [plan])
    assert fake.values["Path"][0].endswith("installer-added")
    assert calls == []


def test_write_that_does_not_read_back_is_reported() -> None:
    store, fake, _ = _store({"A_VAR": ("1", REG_SZ)})
    fake.drop_writes = True
    with pytest.raises(PanelError, match="did not read back"):
        _apply(store, EnvChange("A_VAR", "2"))
    assert fake.values["A_VAR"] == ("1", REG_SZ)


def test_invalid_values_never_reach_the_registry() -> None:
    store, fake, _ = _store({})
    with pytest.raises(PanelError, match="Refused"):
        _apply(store, EnvChange("ROCR_VISIBLE_DEVICES", ""))
    assert fake.values == {}


def test_never_runs_setx_or_any_program(monkeypatch) -> None:
    def forbidden(*args, **kwargs):
        raise AssertionError(f"started a program: {args}")

    monkeypatch.setattr(subprocess, "Popen", forbidden)
    store, fake, _ = _store({"Path": (USER_PATH, REG_EXPAND_SZ)})
    _apply(store, EnvChange("Path", USER_PATH + ";C:\\y"))
    assert fake.values["Path"][0].endswith("C:\\y")


def test_factory_on_windows(monkeypatch) -> None:
    fake = FakeWinreg({})
    stores = make_stores("windows", registry=fake, broadcast=lambda: None)
    assert list(stores) == ["registry", "session"]
