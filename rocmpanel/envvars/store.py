"""Persistent environment stores: one interface, one module per platform, and the factory.

A store reads its variables into a :class:`StoreSnapshot`, plans changes purely
(``core.env_plan``), and writes a plan only when what it read is still what is there. Every
write is backed up first and recorded in the undo journal; :func:`apply_plans` writes
several stores as one step (all or none) and :func:`undo_last` restores the exact previous
bytes (or registry values) of the last apply.

Every call here is synchronous and may be slow (file writes, registry writes, and on Windows
a WM_SETTINGCHANGE broadcast that waits on each top-level window): the GUI runs them through
``run_in_background``. One lock serialises applies and undos within the process, so a
background apply never interleaves with another one.
"""

from __future__ import annotations

import hashlib
import stat
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rocmpanel.base import paths
from rocmpanel.base.atomic import backup_file, write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import EnvironmentSettings
from rocmpanel.envvars import journal as env_journal
from rocmpanel.envvars.catalogue import current_platform
from rocmpanel.envvars.plan import EnvChange, FilePlan, decode, plan_text_file, text_diff

# The declared default of the env_backups_keep setting (the one place it is set).
KEEP_BACKUPS: int = EnvironmentSettings().backups_keep

# Held for a whole apply or undo: preflight, writes, journal and broadcast are one step.
_WRITE_LOCK = threading.RLock()


class EnvConflictError(PanelError):
    """The store changed since it was read; ``diff`` shows how. Reload and review."""

    def __init__(self, message: str, diff: str) -> None:
        super().__init__(message, diff)
        self.diff = diff


@dataclass(frozen=True)
class StoreSnapshot:
    """What a store held when read. ``raw`` is the file's bytes (None = no file);
    ``problem`` is set when the contents could not be understood (nothing can be planned)."""

    store: str
    target: str
    values: Mapping[str, str]
    raw: bytes | None
    problem: str = ""
    kinds: Mapping[str, str] = field(default_factory=dict)


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class EnvStore(ABC):
    """Where variables persist. ``key`` is the CLI's ``--store`` name."""

    key: ClassVar[str]
    label: ClassVar[str]
    help: ClassVar[str]
    persistent: ClassVar[bool] = True
    platform: str = "linux"

    @abstractmethod
    def target(self) -> str:
        """The file or registry key, for messages."""

    @abstractmethod
    def read(self) -> StoreSnapshot: ...

    @abstractmethod
    def plan(self, snapshot: StoreSnapshot, changes: Iterable[EnvChange]) -> FilePlan: ...

    @abstractmethod
    def preflight(self, plan: FilePlan) -> None:
        """Raise (EnvConflictError, PanelError) when ``plan`` cannot be written now."""

    @abstractmethod
    def write(self, plan: FilePlan) -> dict[str, Any]:
        """Back up, write, and return the undo record (JSON-serialisable)."""

    @abstractmethod
    def check_restore(self, record: dict[str, Any]) -> None:
        """Raise when ``record`` cannot be undone (the store changed since)."""

    @abstractmethod
    def restore(self, record: dict[str, Any]) -> None:
        """Put back what was there before the write ``record`` describes."""

    def after_change(self) -> None:  # noqa: B027 - most stores have nothing to announce
        """Tell the system about a change (Windows broadcasts WM_SETTINGCHANGE)."""

    def notes(self) -> list[str]:
        """Things the user should know about this store on this computer."""
        return []


class FileEnvStore(EnvStore):
    """A store that is one text file, rendered by a pure function of ``core``."""

    def __init__(self, path: Path, keep: int = KEEP_BACKUPS) -> None:
        self.path = path
        self.keep = keep

    def target(self) -> str:
        return str(self.path)

    @abstractmethod
    def parse(self, text: str) -> dict[str, str]:
        """Variables in the file's text; ValueError when the text cannot be understood."""

    @abstractmethod
    def render(self, old: str | None, changes: Sequence[tuple[str, str | None]]) -> str | None:
        """The new text (None = still no file)."""

    def _read_raw(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise PanelError(
                f"Could not read {self.path}: {exc.strerror or exc}.", str(exc)
            ) from exc

    def read(self) -> StoreSnapshot:
        raw = self._read_raw()
        try:
            values = self.parse(decode(raw) or "") if raw is not None else {}
        except ValueError as exc:
            return StoreSnapshot(self.key, self.target(), {}, raw, f"{self.path}: {exc}")
        return StoreSnapshot(self.key, self.target(), values, raw)

    def plan(self, snapshot: StoreSnapshot, changes: Iterable[EnvChange]) -> FilePlan:
        return plan_text_file(
            self.key, self.target(), snapshot.raw, changes, self.render, self.platform
        )

    def _check_writable(self) -> None:
        try:
            mode = self.path.stat().st_mode
        except FileNotFoundError:
            return
        except OSError as exc:
            raise PanelError(f"Could not check {self.path}: {exc.strerror}.", str(exc)) from exc
        if not mode & stat.S_IWUSR:
            raise PanelError(
                f"{self.path} is read-only; nothing was changed. Make it writable "
                f"(chmod u+w {self.path}) or choose another store.",
                f"mode {stat.filemode(mode)}",
            )

    def preflight(self, plan: FilePlan) -> None:
        current = self._read_raw()
        if current != plan.before:
            raise EnvConflictError(
                f"{self.path} changed since rocmpanel read it; nothing was written. "
                "Reload and review the changes.",
                text_diff(decode(plan.before), decode(current), str(self.path)),
            )
        self._check_writable()

    def write(self, plan: FilePlan) -> dict[str, Any]:
        self.preflight(plan)
        backup = backup_file(self.path, paths.backups_dir(), keep=self.keep)
        if plan.after is None:
            raise PanelError(f"Nothing to write to {self.path}.")
        write_atomic(self.path, plan.after)
        return {
            "store": self.key,
            "path": str(self.path),
            "backup": None if backup is None else str(backup),
            "written_sha256": sha256(plan.after),
        }

    def check_restore(self, record: dict[str, Any]) -> None:
        current = self._read_raw()
        if sha256(current) != record.get("written_sha256"):
            previous = self._backup_bytes(record)
            raise EnvConflictError(
                f"{self.path} changed after rocmpanel wrote it; undo would lose those "
                "changes, so nothing was restored.",
                text_diff(decode(previous), decode(current), str(self.path)),
            )
        self._backup_bytes(record)
        self._check_writable()

    def _backup_bytes(self, record: dict[str, Any]) -> bytes | None:
        backup = record.get("backup")
        if backup is None:
            return None
        try:
            return Path(backup).read_bytes()
        except OSError as exc:
            raise PanelError(
                f"The backup {backup} needed to undo is gone; nothing was restored.", str(exc)
            ) from exc

    def restore(self, record: dict[str, Any]) -> None:
        previous = self._backup_bytes(record)
        backup_file(self.path, paths.backups_dir(), keep=self.keep)
        if previous is None:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise PanelError(
                    f"Could not remove {self.path}: {exc.strerror}.", str(exc)
                ) from exc
        else:
            write_atomic(self.path, previous)


@dataclass(frozen=True)
class ApplyResult:
    """What an apply or undo changed, in words."""

    targets: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class StoresRead:
    """Every store read once: a snapshot per store (a failed read gives an empty snapshot
    whose ``problem`` says why) and the errors of the reads that failed."""

    snapshots: Mapping[str, StoreSnapshot]
    errors: tuple[PanelError, ...] = ()


def read_stores(stores: Mapping[str, EnvStore]) -> StoresRead:
    """Read every store; a store that cannot be read does not stop the others."""
    snapshots: dict[str, StoreSnapshot] = {}
    errors: list[PanelError] = []
    for key, store in stores.items():
        try:
            snapshots[key] = store.read()
        except PanelError as exc:
            errors.append(exc)
            snapshots[key] = StoreSnapshot(key, store.target(), {}, None, exc.message)
    return StoresRead(snapshots, tuple(errors))


def apply_plans(stores: Mapping[str, EnvStore], plans: Sequence[FilePlan]) -> ApplyResult:
    """Write every changed plan, or none: a failure restores the stores already written."""
    with _WRITE_LOCK:
        return _apply_plans(stores, plans)


def _apply_plans(stores: Mapping[str, EnvStore], plans: Sequence[FilePlan]) -> ApplyResult:
    todo = [plan for plan in plans if plan.changed]
    if not todo:
        return ApplyResult((), "Nothing to change.")
    for plan in todo:
        stores[plan.store].preflight(plan)
    records: list[dict[str, Any]] = []
    try:
        for plan in todo:
            records.append(stores[plan.store].write(plan))
    except PanelError as exc:
        failures = _restore_all(stores, records)
        if failures:
            raise PanelError(
                exc.message
                + " Restoring the stores already written also failed: "
                + " ".join(failures),
                exc.detail,
            ) from exc
        if records:
            exc.message += " The stores already written were restored; nothing changed."
        raise
    changes = sorted({c.describe() for plan in todo for c in plan.changes})
    entry = {"time": time.strftime("%Y-%m-%d %H:%M:%S"), "summary": "; ".join(changes)}
    try:
        env_journal.push({**entry, "records": records})
    except PanelError as exc:
        failures = _restore_all(stores, records)
        raise PanelError(
            f"The undo record could not be saved ({exc.message}); "
            + ("the changes were rolled back." if not failures else " ".join(failures)),
            exc.detail,
        ) from exc
    for plan in todo:
        stores[plan.store].after_change()
    targets = tuple(plan.target for plan in todo)
    return ApplyResult(targets, "Wrote " + ", ".join(targets) + ".")


def _restore_all(stores: Mapping[str, EnvStore], records: Sequence[dict[str, Any]]) -> list[str]:
    failures = []
    for record in reversed(records):
        try:
            stores[record["store"]].restore(record)
        except PanelError as exc:
            failures.append(exc.message)
    return failures


def undo_last(stores: Mapping[str, EnvStore]) -> ApplyResult:
    """Restore what the last apply replaced; the journal entry is dropped only on success."""
    with _WRITE_LOCK:
        return _undo_last(stores)


def _undo_last(stores: Mapping[str, EnvStore]) -> ApplyResult:
    entry = env_journal.peek()
    if entry is None:
        raise PanelError("There is no apply to undo.")
    records = entry["records"]
    for record in records:
        if record["store"] not in stores:
            raise PanelError(
                f"The last apply wrote the {record['store']} store, which is not available "
                "here; nothing was restored."
            )
        stores[record["store"]].check_restore(record)
    failures = _restore_all(stores, records)
    if failures:
        raise PanelError("Undo failed: " + " ".join(failures))
    env_journal.pop()
    for record in records:
        stores[record["store"]].after_change()
    targets = tuple(str(record.get("path", record["store"])) for record in records)
    return ApplyResult(targets, f"Undid {entry.get('summary', 'the last apply')}.")


def _backups_keep() -> int:
    """The ``env_backups_keep`` setting (the default when settings cannot be read)."""
    from rocmpanel.base.settings import Settings

    try:
        return Settings.load().environment.backups_keep
    except (PanelError, KeyError, ValueError):
        return KEEP_BACKUPS


def make_stores(
    platform: str | None = None,
    home: Path | None = None,
    registry: Any = None,
    broadcast: Callable[[], None] | None = None,
    keep: int | None = None,
) -> dict[str, EnvStore]:
    """The stores of this platform by key, persistent ones first, then the session store.

    ``keep``: backups kept per store (default: the ``env_backups_keep`` setting, read from
    disk; the GUI passes the value it already holds).
    """
    from rocmpanel.envvars.stores.session import SessionStore

    platform = platform or current_platform()
    keep = _backups_keep() if keep is None else keep
    stores: list[EnvStore] = []
    if platform == "windows":
        from rocmpanel.envvars.stores.windows import WindowsUserStore

        stores.append(WindowsUserStore(registry, broadcast, keep))
    else:
        from rocmpanel.envvars.stores.linux import EnvironmentDStore, ProfileStore

        base = home if home is not None else Path.home()
        stores += [EnvironmentDStore(base, keep), ProfileStore(base, keep)]
    stores.append(SessionStore(keep=keep))
    return {store.key: store for store in stores}
