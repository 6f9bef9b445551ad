"""Windows store: the user's variables in ``HKCU\\Environment``.

Written through a small winreg-like interface (the real ``winreg`` module in production, a
test double on Linux). The rules that ``setx`` breaks are kept here: the user Path is edited
as it is stored, never merged with the machine Path (the process's PATH is machine + user);
values are never cut; a REG_EXPAND_SZ value stays expandable (and a value holding
``%NAME%`` becomes one); after a change WM_SETTINGCHANGE "Environment" is broadcast, in a
background thread, so that programs Explorer starts from then on see it (programs already
running, open terminals and the panel itself do not). Every write is read back. The names
written are remembered so that the panel's own jobs get their new values
(:func:`fresh_values`, used by ``jobs.job_env``).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from rocmpanel.base import paths, registry
from rocmpanel.base.atomic import backup_bytes
from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import CONFIG_LIMIT, read_bytes
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.registry import RegistryLike, find_name
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
# Said after every apply or undo that wrote TARGET (WM_SETTINGCHANGE reaches Explorer, which
# rebuilds the environment it gives to the programs it starts; nothing else is updated).
APPLY_NOTE = QT_TRANSLATE_NOOP(
    "windows",
    "Only programs that Explorer starts from now on see the new values (a terminal opened "
    "from the Start menu, say); terminals and programs already open, and rocmpanel itself, "
    "keep the old ones until restarted. rocmpanel's own jobs get the new values.",
)
_EXPAND_RE = re.compile(r"%[^%;]+%")
log = logging.getLogger(__name__)

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


# What SendMessageTimeoutW gets: learn.microsoft.com/en-us/windows/win32/api/winuser/
# nf-winuser-sendmessagetimeoutw (HWND_BROADCAST = 0xFFFF, SMTO_ABORTIFHUNG = 0x0002;
# "each window can use the full time-out period", so a broadcast can take the timeout times
# the number of windows that do not answer) and WM_SETTINGCHANGE = 0x001A, wParam 0 when an
# application sends it (learn.microsoft.com/en-us/windows/win32/winmsg/wm-settingchange),
# lParam the string "Environment" (learn.microsoft.com/en-us/windows/win32/procthread/
# environment-variables).
HWND_BROADCAST = 0xFFFF
WM_SETTINGCHANGE = 0x001A
SMTO_ABORTIFHUNG = 0x0002
BROADCAST_TIMEOUT_MS = 5000
BROADCAST_THREAD = "rocmpanel-env-broadcast"


def _user32() -> Any:
    """user32.dll, loaded privately so the argtypes set here touch no other caller's."""
    import ctypes

    return ctypes.WinDLL("user32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]


def _send_setting_change(user32: Any, timeout_ms: int) -> None:
    """SendMessageTimeoutW(HWND_BROADCAST, WM_SETTINGCHANGE, 0, "Environment", ...) with
    its declared types: the last argument is a PDWORD_PTR (pointer-sized), the string goes
    in as an LPARAM holding its address, and the result is an LRESULT."""
    import ctypes
    from ctypes import wintypes

    send = user32.SendMessageTimeoutW
    send.argtypes = [
        wintypes.HWND,
        wintypes.UINT,
        wintypes.WPARAM,
        wintypes.LPARAM,
        wintypes.UINT,
        wintypes.UINT,
        ctypes.POINTER(ctypes.c_size_t),  # PDWORD_PTR: DWORD_PTR is ULONG_PTR
    ]
    send.restype = wintypes.LPARAM  # LRESULT is LONG_PTR
    area = ctypes.create_unicode_buffer("Environment")  # alive until the call returns
    result = ctypes.c_size_t()
    send(
        HWND_BROADCAST,
        WM_SETTINGCHANGE,
        0,
        ctypes.addressof(area),
        SMTO_ABORTIFHUNG,
        timeout_ms,
        ctypes.byref(result),
    )


def broadcast_environment_change(
    user32: Any = None,
    platform: str = sys.platform,
    timeout_ms: int = BROADCAST_TIMEOUT_MS,
) -> threading.Thread | None:
    """Tell every top-level window (Explorer above all) that the user environment changed,
    in a background thread, and return that thread (None off Windows).

    The broadcast may wait ``timeout_ms`` for each window that is slow to answer, so it
    never runs on the caller's thread: apply and undo return at once. The thread is not a
    daemon: Python lets it finish before the process exits, so ``rocmpanel env set`` still
    tells Explorer before it ends (it waits only as long as the windows take to answer).
    ``user32``: the DLL (a fake in tests)."""
    if platform != "win32":
        return None

    def send() -> None:
        try:
            _send_setting_change(user32 if user32 is not None else _user32(), timeout_ms)
        except (OSError, AttributeError, TypeError, ValueError) as exc:
            log.warning("Could not announce the environment change to other programs: %s", exc)

    thread = threading.Thread(target=send, name=BROADCAST_THREAD, daemon=False)
    thread.start()
    return thread


# ---- what a freshly started program gets ------------------------------------------------

MACHINE_KEY = "SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"
# The user value of these is appended to the machine value instead of replacing it
# (devblogs.microsoft.com/oldnewthing/20231212-00/?p=109137: Path, and the vestigial LibPath
# and Os2LibPath).
APPENDED = frozenset({"PATH", "LIBPATH", "OS2LIBPATH"})
# Set after the user variables at logon, so a user REG_EXPAND_SZ value cannot use them
# (same article: "Account environment variables" come last).
SET_AFTER_USER = ("USERDNSDOMAIN", "USERDOMAIN", "USERNAME")
# Windows' limit for one variable's value (learn.microsoft.com/en-us/windows/win32/api/
# processenv/nf-processenv-setenvironmentvariablew: "32,767 characters").
VALUE_LIMIT = 32_767
# Warn when machine Path + ";" + user Path passes this: 2,767 characters (about 25 more
# folders of ~100 characters) before the limit, room for what logon expansion adds
# (%USERPROFILE% -> C:\Users\<name>) and for the folders installers append.
PATH_WARN_AT = 30_000
_PERCENT_RE = re.compile(r"%([^%]+)%")

# Names a WindowsUserStore of this process wrote or restored in HKCU\Environment (upper
# case -> as written); the panel's jobs get their new values (:func:`fresh_values`).
_changed: dict[str, str] = {}
_changed_lock = threading.Lock()


def _note_changed(names: Iterable[str]) -> None:
    with _changed_lock:
        for name in names:
            _changed[name.upper()] = name


def changed_names() -> list[str]:
    """The names this process changed in HKCU\\Environment, in the order first changed."""
    with _changed_lock:
        return list(_changed.values())


def forget_changes() -> None:
    """Forget :func:`changed_names` (tests; a fresh process starts empty)."""
    with _changed_lock:
        _changed.clear()


def expand_percent(text: str, environ: Mapping[str, str]) -> str:
    """``%NAME%`` replaced from ``environ``, names compared case-insensitively, an unknown
    ``%NAME%`` left as it is: what ExpandEnvironmentStrings does (learn.microsoft.com/en-us/
    windows/win32/api/processenv/nf-processenv-expandenvironmentstringsw)."""
    upper = {name.upper(): value for name, value in environ.items()}

    def one(match: re.Match[str]) -> str:
        return upper.get(match.group(1).upper(), match.group(0))

    return _PERCENT_RE.sub(one, text)


def _strings(values: Mapping[str, tuple[Any, int]], reg: Any) -> Values:
    """The REG_SZ and REG_EXPAND_SZ values only (what becomes an environment variable)."""
    kinds = (reg.REG_SZ, reg.REG_EXPAND_SZ)
    return {n: (d, k) for n, (d, k) in values.items() if k in kinds and isinstance(d, str)}


class EnvRegistry(RegistryLike, Protocol):
    """What :func:`fresh_values` reads with (``winreg``, or a FakeRegistry in tests)."""

    REG_SZ: int
    REG_EXPAND_SZ: int


def fresh_values(
    names: Iterable[str],
    reg: EnvRegistry,
    expand: Callable[[str], str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str | None]:
    """For each of ``names``, the value a program Explorer starts now would get (None: it
    would not have the variable), built as logon builds it: the user value replaces the
    machine one, except that the user Path is appended to the machine Path; REG_EXPAND_SZ
    values are expanded.

    ``expand``: the expander (default :func:`expand_percent` against ``environ``, this
    process's environment by default, overlaid with the machine and user REG_SZ values,
    which logon sets before it expands the user REG_EXPAND_SZ ones).
    """
    user = _strings(registry.read_values(reg, "HKCU", KEY_PATH), reg)
    machine = _strings(registry.read_values(reg, "HKLM", MACHINE_KEY), reg)
    if expand is None:
        base = dict(os.environ if environ is None else environ)
        for values in (machine, user):
            base.update({n: d for n, (d, k) in values.items() if k == reg.REG_SZ})
        expand = functools.partial(expand_percent, environ=base)

    def value(values: Values, name: str) -> tuple[str, str] | None:
        found = find_name(values, name)
        if found is None:
            return None
        data, kind = values[found]
        return found, expand(data) if kind == reg.REG_EXPAND_SZ else data

    out: dict[str, str | None] = {}
    for name in names:
        mine, system = value(user, name), value(machine, name)
        key = (mine or system or (name, ""))[0]
        if name.upper() in APPENDED:
            parts = [found[1] for found in (system, mine) if found is not None and found[1]]
            out[key] = ";".join(parts) if parts else None
        else:
            out[key] = mine[1] if mine is not None else system[1] if system is not None else None
    return out


# ---- warnings shown with a plan -------------------------------------------------------


def expansion_warnings(after: Values, changed: Iterable[str], reg: Any) -> list[str]:
    """What in the changed user REG_EXPAND_SZ values will not expand when Windows builds a
    new program's environment. Logon expands a user REG_EXPAND_SZ value against what was
    set before it: the machine variables, USERPROFILE, APPDATA, LOCALAPPDATA and the like,
    and the user REG_SZ values; not against another user REG_EXPAND_SZ value (the result
    is unspecified) nor USERNAME, USERDOMAIN, USERDNSDOMAIN, which are set after them
    (devblogs.microsoft.com/oldnewthing/20231212-00/?p=109137). %USERPROFILE% in the user
    Path works: Windows' own default user Path uses it."""
    warnings: list[str] = []
    for name in changed:
        entry = after.get(name)
        if entry is None or entry[1] != reg.REG_EXPAND_SZ:
            continue
        seen: set[str] = set()
        for ref in _PERCENT_RE.findall(entry[0]):
            if ref.upper() in seen or ref.upper() == name.upper():
                continue
            seen.add(ref.upper())
            if ref.upper() in SET_AFTER_USER:
                warnings.append(
                    translate(
                        "windows",
                        "{name}: %{ref}% may stay unexpanded in programs Windows starts: "
                        "Windows sets {upper} after your user variables. Write the value "
                        "out instead.",
                    ).format(name=name, ref=ref, upper=ref.upper())
                )
                continue
            other = find_name(after, ref)
            if other is not None and after[other][1] == reg.REG_EXPAND_SZ:
                warnings.append(
                    translate(
                        "windows",
                        "{name}: %{ref}% refers to your user variable {other}, which itself "
                        "holds %...% references; Windows may expand it to its old value or not "
                        "at all. Write {other}'s value out in {name} instead.",
                    ).format(name=name, ref=ref, other=other)
                )
    return warnings


def path_length_warning(user_path: str | None, machine_path: str | None) -> str | None:
    """A warning when machine Path + ";" + user Path (what programs get) passes
    :data:`PATH_WARN_AT` characters; None below it."""
    parts = [part for part in (machine_path, user_path) if part]
    total = len(";".join(parts))
    if total <= PATH_WARN_AT:
        return None
    machine, user = len(machine_path or ""), len(user_path or "")
    if total > VALUE_LIMIT:
        what = translate(
            "windows", "over Windows' limit of {limit} characters for one variable"
        ).format(limit=f"{VALUE_LIMIT:,}")
    else:
        what = translate("windows", "{left} characters below Windows' limit of {limit}").format(
            left=f"{VALUE_LIMIT - total:,}", limit=f"{VALUE_LIMIT:,}"
        )
    return translate(
        "windows",
        "Path: programs get the machine Path ({machine} characters) and your user Path "
        "({user}) joined, {total} characters, {what}; past it programs may not find "
        "what is on it. Remove folders you no longer need from your user Path.",
    ).format(machine=f"{machine:,}", user=f"{user:,}", total=f"{total:,}", what=what)


class WindowsUserStore(EnvStore):
    """User environment variables in the registry (not the machine ones: those need admin)."""

    key = "registry"
    label = QT_TRANSLATE_NOOP("stores", "Windows user")
    help = QT_TRANSLATE_NOOP(
        "stores",
        "HKCU\\Environment: your user variables. After a change only programs that Explorer "
        "starts from then on see the new values (a terminal opened from the Start menu, say): "
        "terminals and programs already open, and rocmpanel itself, keep the old ones until "
        "restarted. rocmpanel's own jobs get the new values. The machine Path is not "
        "touched and not copied.",
    )
    platform = "windows"

    def __init__(
        self,
        registry: WinregLike | None = None,
        broadcast: Callable[[], object] | None = None,
        keep: int = KEEP_BACKUPS,
    ) -> None:
        self.keep = keep
        if registry is None:
            import winreg  # type: ignore[import-not-found,unused-ignore]

            registry = winreg  # type: ignore[assignment,unused-ignore]
        self.reg: WinregLike = registry  # type: ignore[assignment]
        self.broadcast: Callable[[], object] = broadcast or broadcast_environment_change

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
            name = find_name(after, change.name) or change.name  # PATH edits "Path"
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
        changed = [n for n in after if before.get(n) != after.get(n)]
        warnings = self._warnings(after, changed)
        return FilePlan(self.key, TARGET, snapshot.raw, raw_after, merged, diff, warnings)

    def _warnings(self, after: Values, changed: list[str]) -> tuple[str, ...]:
        """What may not work as the user expects in a plan (shown, never refused)."""
        warnings = expansion_warnings(after, changed, self.reg)
        if any(name.upper() == "PATH" for name in changed):
            machine = _strings(registry.read_values(self._reader(), "HKLM", MACHINE_KEY), self.reg)
            found = find_name(machine, "Path")
            user = after.get(find_name(after, "Path") or "Path")
            warning = path_length_warning(
                user[0] if user else None, machine[found][0] if found else None
            )
            warnings += [warning] if warning else []
        return tuple(warnings)

    def _reader(self) -> RegistryLike:
        """The registry as base.registry reads it (winreg has HKEY_LOCAL_MACHINE too)."""
        return self.reg  # type: ignore[return-value]

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
        _note_changed(touched)
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
        previous = self._load_backup(record)
        _note_changed(previous)
        self._set_all(previous)

    def after_change(self) -> None:
        self.broadcast()
