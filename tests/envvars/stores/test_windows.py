"""The Windows user store against FakeRegistry (tests/windows_fakes.py)."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.envvars.plan import EnvChange
from rocmpanel.envvars.store import EnvConflictError, make_stores
from rocmpanel.envvars.stores import windows
from rocmpanel.envvars.stores.windows import WindowsUserStore
from rocmpanel.envvars.transaction import apply_plans, undo_last

REG_SZ, REG_EXPAND_SZ, REG_DWORD = 1, 2, 4


ENV = "HKCU\\Environment"


@pytest.fixture(autouse=True)
def _forget_changed_names():
    """Writes here are remembered for the panel's jobs; leave none for other tests."""
    yield
    windows.forget_changes()


class DroppingRegistry:
    """Wraps a FakeRegistry whose writes are silently lost (a write that does not stick)."""

    def __init__(self, fake: Any) -> None:
        self._fake = fake

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fake, name)

    def SetValueEx(self, handle: Any, name: str, reserved: int, kind: int, value: Any) -> None:
        return None


USER_PATH = "%USERPROFILE%\\AppData\\Local\\Microsoft\\WindowsApps;C:\\tools"
MACHINE_PATH = "C:\\Windows\\system32;C:\\Windows;C:\\Program Files\\AMD\\ROCm\\6.4\\bin"


def _store(fake: Any, values: dict[str, tuple[Any, int]]) -> tuple[WindowsUserStore, list[int]]:
    fake.add_key(ENV)
    for name, (data, kind) in values.items():
        fake.set(ENV, name, data, kind)
    calls: list[int] = []
    store = WindowsUserStore(fake, broadcast=lambda: calls.append(1))
    return store, calls


def _apply(store: WindowsUserStore, *changes: EnvChange) -> None:
    apply_plans({store.key: store}, [store.plan(store.read(), changes)])


def test_path_stays_expandable_and_is_never_merged(monkeypatch, fake_registry) -> None:
    monkeypatch.setenv("PATH", MACHINE_PATH + ";" + USER_PATH.replace("%USERPROFILE%", "C:\\u"))
    fake = fake_registry
    store, calls = _store(fake, {"Path": (USER_PATH, REG_EXPAND_SZ), "TEMP": ("x", REG_EXPAND_SZ)})
    snapshot = store.read()
    assert snapshot.kinds["Path"] == "REG_EXPAND_SZ"
    _apply(store, EnvChange("PATH", snapshot.values["Path"] + ";C:\\new"))
    assert fake.values_of(ENV)["Path"] == (USER_PATH + ";C:\\new", REG_EXPAND_SZ)
    assert "system32" not in fake.values_of(ENV)["Path"][0]
    assert list(fake.values_of(ENV)) == ["Path", "TEMP"]  # edited in place, no second "PATH"
    assert calls == [1]
    assert fake.open_handles == 0


def test_expand_sz_kept_even_without_references_and_new_types_chosen(fake_registry) -> None:
    fake = fake_registry
    store, _ = _store(fake, {"MIOPEN_USER_DB_PATH": ("D:\\db", REG_EXPAND_SZ)})
    _apply(
        store,
        EnvChange("MIOPEN_USER_DB_PATH", "E:\\db"),
        EnvChange("MIOPEN_CUSTOM_CACHE_DIR", "%LOCALAPPDATA%\\miopen"),
        EnvChange("HIP_VISIBLE_DEVICES", "0"),
    )
    assert fake.values_of(ENV)["MIOPEN_USER_DB_PATH"] == ("E:\\db", REG_EXPAND_SZ)
    assert fake.values_of(ENV)["MIOPEN_CUSTOM_CACHE_DIR"][1] == REG_EXPAND_SZ
    assert fake.values_of(ENV)["HIP_VISIBLE_DEVICES"] == ("0", REG_SZ)


def test_long_path_is_not_truncated(fake_registry) -> None:
    entries = [f"C:\\Tools\\package-{i:04d}\\bin" for i in range(400)]
    long_path = ";".join(entries)
    assert len(long_path) > 8192
    fake = fake_registry
    store, _ = _store(fake, {"Path": (long_path, REG_EXPAND_SZ)})
    _apply(store, EnvChange("Path", long_path + ";C:\\rocm\\bin"))
    assert fake.values_of(ENV)["Path"][0].split(";") == [*entries, "C:\\rocm\\bin"]


def test_undo_restores_values_and_types_and_removes_new_ones(fake_registry) -> None:
    original = {"Path": (USER_PATH, REG_EXPAND_SZ), "OTHER": ("keep", REG_SZ), "N": (5, REG_DWORD)}
    fake = fake_registry
    store, calls = _store(fake, original)
    _apply(store, EnvChange("Path", "C:\\only"), EnvChange("HIP_VISIBLE_DEVICES", "1"))
    assert fake.values_of(ENV)["Path"] == ("C:\\only", REG_EXPAND_SZ)
    undo_last({store.key: store})
    assert fake.values_of(ENV) == original
    assert calls == [1, 1]


def test_unset_deletes_and_diff_is_readable(fake_registry) -> None:
    fake = fake_registry
    store, _ = _store(fake, {"Path": (USER_PATH, REG_EXPAND_SZ), "AMD_LOG_LEVEL": ("4", REG_SZ)})
    plan = store.plan(store.read(), [EnvChange("AMD_LOG_LEVEL", None), EnvChange("PATH", "C:\\a")])
    assert "-AMD_LOG_LEVEL (REG_SZ) = 4" in plan.diff
    assert "-    C:\\tools" in plan.diff and "+    C:\\a" in plan.diff
    apply_plans({store.key: store}, [plan])
    assert "AMD_LOG_LEVEL" not in fake.values_of(ENV)


def test_changed_in_registry_since_read_is_refused(fake_registry) -> None:
    fake = fake_registry
    store, calls = _store(fake, {"Path": (USER_PATH, REG_EXPAND_SZ)})
    plan = store.plan(store.read(), [EnvChange("Path", USER_PATH + ";C:\\x")])
    fake.set(ENV, "Path", USER_PATH + ";C:\\installer-added", REG_EXPAND_SZ)
    with pytest.raises(EnvConflictError):
        apply_plans({store.key: store}, [plan])
    assert fake.values_of(ENV)["Path"][0].endswith("installer-added")
    assert calls == []


def test_write_that_does_not_read_back_is_reported(fake_registry) -> None:
    fake = fake_registry
    _store(fake, {"A_VAR": ("1", REG_SZ)})
    store = WindowsUserStore(DroppingRegistry(fake), broadcast=lambda: None)
    with pytest.raises(PanelError, match="did not read back"):
        _apply(store, EnvChange("A_VAR", "2"))
    assert fake.values_of(ENV)["A_VAR"] == ("1", REG_SZ)


def test_invalid_values_never_reach_the_registry(fake_registry) -> None:
    fake = fake_registry
    store, _ = _store(fake, {})
    with pytest.raises(PanelError, match="Refused"):
        _apply(store, EnvChange("ROCR_VISIBLE_DEVICES", ""))
    assert fake.values_of(ENV) == {}


def test_never_runs_setx_or_any_program(monkeypatch, fake_registry) -> None:
    def forbidden(*args, **kwargs):
        raise AssertionError(f"started a program: {args}")

    monkeypatch.setattr(subprocess, "Popen", forbidden)
    fake = fake_registry
    store, _ = _store(fake, {"Path": (USER_PATH, REG_EXPAND_SZ)})
    _apply(store, EnvChange("Path", USER_PATH + ";C:\\y"))
    assert fake.values_of(ENV)["Path"][0].endswith("C:\\y")


def test_factory_on_windows(monkeypatch, fake_registry) -> None:
    stores = make_stores("windows", registry=fake_registry, broadcast=lambda: None)
    assert list(stores) == ["registry", "session"]
