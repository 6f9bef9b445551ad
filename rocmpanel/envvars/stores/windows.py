"""Windows store: the user's variables in ``HKCU\\Environment``.

Written through a small winreg-like interface (the real ``winreg`` module in production, a
test double on Linux). The rules that ``setx`` breaks are kept here: the user Path is edited
as it is stored, never merged with the machine Path (the process's PATH is machine + user);
values are never cut; a REG_EXPAND_SZ value stays expandable (and a value holding
``%NAME%`` becomes one); after a change WM_SETTINGCHANGE "Environment" is broadcast so that
programs Explorer starts from then on see it. Every write is read back.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any, Protocol

from rocmpanel.base import paths
from rocmpanel.base.atomic import backup_bytes
from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import CONFIG_LIMIT, read_bytes
from rocmpanel.envvars.catalogue import load_catalogue
from rocmpanel.envvars.plan import EnvChange, FilePlan, check_changes, text_diff
from rocmpanel.envvars.store import (
    BEFORE,
    KEEP_BACKUPS,
    OTHER,
    WRITTEN,
    EnvConflictError,
    EnvStore,
    StoreSnapshot,
    sha256,
)

KEY_PATH = "Environment"
TARGET = "HKCU\\Environment"
_EXPAND_RE = re.compile(r"%[^%;]+%")

Values = dict[str, tuple[str, int]]  # name -> (data, REG_* type)


class WinregLike(Protocol):
    """The part of ``winreg`` this store uses."""

    HKEY_CURRENT_USER: Any
    KEY_READ: int
    KEY_SET_VALUE: int
    REG_SZ: int
    REG_EXPAND_SZ: int

    def OpenKey(self, key: Any, sub_key: str, reserved: int = 0, access: int = 0) -> Any: ...
    def EnumValue(self, key: Any, index: int) -> tuple[str, Any, int]: ...
    def QueryValueEx(self, key: Any, name: str) -> tuple[Any, int]: ...
    def SetValueEx(self, key: Any, name: str, reserved: int, type: int, value: Any) -> None: ...
    def DeleteValue(self, key: Any, name: str) -> None: ...
    def CloseKey(self, key: Any) -> None: ...


def broadcast_environment_change() -> None:
    """SendMessageTimeout(HWND_BROADCAST, WM_SETTINGCHANGE, 0, "Environment") on Windows."""
    if sys.platform != "win32":
        return
    import ctypes
    from ctypes import wintypes

    result = wintypes.DWORD()
    ctypes.windll.user32.SendMessageTimeoutW(  # type: ignore[attr-defined,unused-ignore]
        0xFFFF, 0x001A, 0, "Environment", 0x0002, 5000, ctypes.byref(result)
    )


class WindowsUserStore(EnvStore):
    """User environment variables in the registry (not the machine ones: those need admin)."""

    key = "registry"
    label = "Windows user"
    help = (
        "HKCU\\Environment: your user variables; programs started after the change see "
        "them. The machine Path is not touched and not copied."
    )
    platform = "windows"

    def __init__(
        self,
        registry: WinregLike | None = None,
        broadcast: Callable[[], None] | None = None,
        keep: int = KEEP_BACKUPS,
    ) -> None:
        self.keep = keep
        if registry is None:
            import winreg  # type: ignore[import-not-found,unused-ignore]

            registry = winreg  # type: ignore[assignment,unused-ignore]
        self.reg: WinregLike = registry  # type: ignore[assignment]
        self.broadcast = broadcast or broadcast_environment_change

    def target(self) -> str:
        return TARGET

    # ---- registry access ------------------------------------------------------------------

    def _open(self, write: bool) -> Any:
        access = self.reg.KEY_READ | (self.reg.KEY_SET_VALUE if write else 0)
        try:
            return self.reg.OpenKey(self.reg.HKEY_CURRENT_USER, KEY_PATH, 0, access)
        except OSError as exc:
            raise PanelError(f"Could not open {TARGET}: {exc.strerror or exc}.", str(exc)) from exc

    def _read_values(self) -> Values:
        handle = self._open(write=False)
        values: Values = {}
        try:
            index = 0
            while True:
                try:
                    name, data, kind = self.reg.EnumValue(handle, index)
                except OSError:
                    break  # ERROR_NO_MORE_ITEMS
                if kind in (self.reg.REG_SZ, self.reg.REG_EXPAND_SZ) and isinstance(data, str):
                    values[name] = (data, kind)
                index += 1
        finally:
            self.reg.CloseKey(handle)
        return values

    def _kind_name(self, kind: int) -> str:
        return "REG_EXPAND_SZ" if kind == self.reg.REG_EXPAND_SZ else "REG_SZ"

    @staticmethod
    def _canonical(values: Values) -> bytes:
        data = {name: [data, kind] for name, (data, kind) in sorted(values.items())}
        return json.dumps(data, sort_keys=True).encode("utf-8", "surrogatepass")

    @staticmethod
    def _actual_name(values: Values, name: str) -> str:
        """Registry names are case-insensitive: PATH edits the existing "Path"."""
        for existing in values:
            if existing.upper() == name.upper():
                return existing
        return name

    def read(self) -> StoreSnapshot:
        values = self._read_values()
        return StoreSnapshot(
            self.key,
            TARGET,
            {name: data for name, (data, _) in values.items()},
            self._canonical(values),
            kinds={name: self._kind_name(kind) for name, (_, kind) in values.items()},
        )

    # ---- planning ---------------------------------------------------------------------------

    def _render(self, values: Values) -> str:
        lines = []
        for name, (data, kind) in sorted(values.items(), key=lambda item: item[0].upper()):
            info = load_catalogue().lookup(name.upper())
            if info is not None and info.is_list:
                lines.append(f"{name} ({self._kind_name(kind)}):\n")
                lines += [f"    {entry}\n" for entry in data.split(";")]
            else:
                lines.append(f"{name} ({self._kind_name(kind)}) = {data}\n")
        return "".join(lines)

    def _new_values(self, before: Values, changes: Iterable[EnvChange]) -> Values:
        after = dict(before)
        for change in changes:
            name = self._actual_name(after, change.name)
            if change.value is None:
                after.pop(name, None)
                continue
            old_kind = after.get(name, ("", self.reg.REG_SZ))[1]
            expandable = old_kind == self.reg.REG_EXPAND_SZ or _EXPAND_RE.search(change.value)
            after[name] = (change.value, self.reg.REG_EXPAND_SZ if expandable else self.reg.REG_SZ)
        return after

    def plan(self, snapshot: StoreSnapshot, changes: Iterable[EnvChange]) -> FilePlan:
        merged = check_changes(changes, "windows")
        before = self._values_from(snapshot.raw)
        after = self._new_values(before, merged)
        raw_after = self._canonical(after)
        diff = text_diff(self._render(before), self._render(after), TARGET)
        return FilePlan(self.key, TARGET, snapshot.raw, raw_after, merged, diff)

    @staticmethod
    def _values_from(raw: bytes | None) -> Values:
        if raw is None:
            return {}
        data = json.loads(raw.decode("utf-8", "surrogatepass"))
        return {name: (value[0], int(value[1])) for name, value in data.items()}

    # ---- writing ----------------------------------------------------------------------------

    def _touched(self, plan: FilePlan) -> dict[str, tuple[str, int] | None]:
        before, after = self._values_from(plan.before), self._values_from(plan.after)
        names = {n for n in set(before) | set(after) if before.get(n) != after.get(n)}
        return {name: after.get(name) for name in sorted(names)}

    def preflight(self, plan: FilePlan) -> None:
        before = self._values_from(plan.before)
        current = self._read_values()
        for name in self._touched(plan):
            if current.get(name) != before.get(name):
                raise EnvConflictError(
                    f"{TARGET}\\{name} changed since rocmpanel read it; nothing was written. "
                    "Reload and review the changes.",
                    text_diff(self._render(before), self._render(current), TARGET),
                )

    def _set_all(self, values: dict[str, tuple[str, int] | None]) -> None:
        handle = self._open(write=True)
        try:
            for name, value in values.items():
                try:
                    if value is None:
                        self.reg.DeleteValue(handle, name)
                    else:
                        self.reg.SetValueEx(handle, name, 0, value[1], value[0])
                except FileNotFoundError:
                    continue  # deleting a value that is already gone
                except OSError as exc:
                    raise PanelError(
                        f"Could not write {TARGET}\\{name}: {exc.strerror or exc}.", str(exc)
                    ) from exc
        finally:
            self.reg.CloseKey(handle)
        current = self._read_values()
        for name, value in values.items():
            if current.get(name) != value:
                raise PanelError(
                    f"{TARGET}\\{name} did not read back as written.",
                    f"wrote {value!r}, read {current.get(name)!r}",
                )

    def backup(self, plan: FilePlan, protect: Collection[str]) -> dict[str, Any]:
        before = self._values_from(plan.before)
        touched = self._touched(plan)
        previous = {name: before.get(name) for name in touched}
        data = json.dumps(previous, indent=2).encode("utf-8", "surrogatepass")
        backup = backup_bytes(
            Path("HKCU/Environment"),
            data,
            paths.backups_dir(),
            self.keep,
            protect=protect,
            suffix=".json",
        )
        return {
            "store": self.key,
            "path": TARGET,
            "backup": str(backup),
            "written": {name: None if v is None else list(v) for name, v in touched.items()},
            "before_sha256": sha256(plan.before),
            "written_sha256": sha256(plan.after),
        }

    def write(self, plan: FilePlan) -> None:
        before = self._values_from(plan.before)
        touched = self._touched(plan)
        try:
            self._set_all(touched)
        except PanelError:
            self._set_all({name: before.get(name) for name in touched})
            raise

    def _load_backup(self, record: dict[str, Any]) -> dict[str, tuple[str, int] | None]:
        folder = paths.backups_dir().resolve()
        try:
            inside = Path(str(record["backup"])).resolve().is_relative_to(folder)
        except (OSError, RuntimeError, ValueError):
            inside = False
        if not inside:
            raise PanelError(
                f"The backup {record['backup']} is not in the backups folder {folder}, so "
                "nothing was restored. Change the variables with `rocmpanel env set` / "
                "`rocmpanel env unset` instead.",
                "backup outside the backups folder",
            )
        try:
            raw = read_bytes(record["backup"], CONFIG_LIMIT)
            data = json.loads(raw.decode("utf-8", "surrogatepass"))
            return {name: None if v is None else (v[0], int(v[1])) for name, v in data.items()}
        except (OSError, ValueError, TypeError, AttributeError, IndexError) as exc:
            raise PanelError(
                f"The backup {record['backup']} needed to undo is gone or damaged; nothing was "
                "restored.",
                str(exc),
            ) from exc

    @staticmethod
    def _written(record: dict[str, Any]) -> dict[str, tuple[str, int] | None]:
        return {
            name: None if value is None else (value[0], int(value[1]))
            for name, value in record["written"].items()
        }

    def state(self, record: dict[str, Any]) -> str:
        current = self._read_values()
        written = self._written(record)
        if all(current.get(name) == value for name, value in written.items()):
            return WRITTEN
        try:
            previous = self._load_backup(record)
        except PanelError:
            return OTHER
        if all(current.get(name) == previous.get(name) for name in written):
            return BEFORE
        return OTHER

    def check_restore(self, record: dict[str, Any]) -> None:
        current = self._read_values()
        for name, expected in self._written(record).items():
            if current.get(name) != expected:
                raise EnvConflictError(
                    f"{TARGET}\\{name} changed after rocmpanel wrote it; nothing was restored.",
                    f"expected {expected!r}, found {current.get(name)!r}",
                )
        self._load_backup(record)

    def restore(self, record: dict[str, Any]) -> None:
        self._set_all(self._load_backup(record))

    def after_change(self) -> None:
        self.broadcast()
