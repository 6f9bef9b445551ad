"""Persistent environment stores: one interface, one module per platform, and the factory.

A store reads its variables into a :class:`StoreSnapshot`, plans changes purely
(``plan``), and is written only through ``transaction`` (one apply or undo at a time, under
the environment lock, with a write-ahead undo journal). A store's part in that:
``preflight`` (is what was read still there, can it be written), ``backup`` (save what the
plan replaces and return the undo record, before anything is touched), ``write``,
``state`` (has a record been written, is the store still as before, or neither: what
recovery after a crash needs), ``check_restore`` and ``restore`` (undo).

Every call here is synchronous and may be slow (file writes, registry writes, and on Windows
a WM_SETTINGCHANGE broadcast that waits on each top-level window): the GUI runs them through
``run_in_background``.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import shutil
import stat
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rocmpanel.base import paths, subproc
from rocmpanel.base.atomic import backup_bytes, resolved, write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import CONFIG_LIMIT, NotRegularFileError, TooLargeError, read_bytes
from rocmpanel.base.settings import EnvironmentSettings
from rocmpanel.envvars.catalogue import current_platform
from rocmpanel.envvars.plan import EnvChange, FilePlan, decode, plan_text_file, text_diff

log = logging.getLogger(__name__)

# The declared default of the env_backups_keep setting (the one place it is set).
KEEP_BACKUPS: int = EnvironmentSettings().backups_keep

# What :meth:`EnvStore.state` finds for an undo record.
WRITTEN = "written"  # the store holds what the record wrote
BEFORE = "before"  # the store holds what was there before the record's write
OTHER = "other"  # neither: changed by someone else since

SH_CHECK_TIMEOUT = 5.0


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
    keep: int = KEEP_BACKUPS

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
    def backup(self, plan: FilePlan, protect: Collection[str]) -> dict[str, Any]:
        """Save what ``plan`` replaces and return the undo record (JSON-serialisable),
        touching nothing of the store. ``protect``: backups an undo record still needs."""

    @abstractmethod
    def write(self, plan: FilePlan) -> None:
        """Replace the store's contents with the plan's (after :meth:`backup`)."""

    @abstractmethod
    def state(self, record: dict[str, Any]) -> str:
        """:data:`WRITTEN`, :data:`BEFORE` or :data:`OTHER`: what the store holds now,
        compared with what ``record`` wrote and what was there before it."""

    @abstractmethod
    def check_restore(self, record: dict[str, Any]) -> None:
        """Raise when ``record`` cannot be undone (the store changed since)."""

    @abstractmethod
    def restore(self, record: dict[str, Any]) -> None:
        """Put back what was there before the write ``record`` describes."""

    def before_restore(  # noqa: B027 - only file stores keep a copy of what undo replaces
        self, record: dict[str, Any], protect: Collection[str]
    ) -> None:
        """Save what an undo of ``record`` is about to replace."""

    def temp_places(self) -> list[tuple[Path, str]]:
        """(folder, file name) of each file whose temp files an interrupted write of this
        store may leave (``base.atomic.stale_temp_files``)."""
        return []

    def after_change(self) -> None:  # noqa: B027 - most stores have nothing to announce
        """Tell the system about a change (Windows broadcasts WM_SETTINGCHANGE)."""

    def notes(self) -> list[str]:
        """Things the user should know about this store on this computer."""
        return []


def read_limited(path: Path) -> bytes | None:
    """The bytes of a file rocmpanel edits or reads beside one (None = no file), through a
    bounded read: a FIFO, a device or a huge file is a PanelError saying what to do."""
    try:
        return read_bytes(path, CONFIG_LIMIT)
    except FileNotFoundError:
        return None
    except (NotRegularFileError, TooLargeError) as exc:
        reason = str(exc).replace(f"{path} ", "it ", 1)
        raise PanelError(
            f"Could not read {path}: {reason}. rocmpanel edits only regular files of a few "
            "MiB at most (or links to one): replace it with a regular file and try again; "
            "nothing was changed.",
            str(exc),
        ) from exc
    except OSError as exc:
        raise PanelError(_read_failure(path, exc), str(exc)) from exc


def _blocking_file(path: Path) -> Path | None:
    """The first folder on the way to ``path`` that is not a folder (a file, a device)."""
    for parent in reversed(path.parents):
        try:
            if parent.exists() and not parent.is_dir():
                return parent
        except OSError:
            return None
    return None


def _read_failure(path: Path, exc: OSError) -> str:
    """Why ``path`` could not be read, which path is at fault and what to do; nothing was
    changed (every read happens before any write)."""
    if exc.errno == errno.ENOTDIR:
        culprit = _blocking_file(path)
        if culprit is not None:
            return (
                f"Could not read {path}: {culprit} is a file, not a folder. Nothing was "
                f"changed. Move it aside (mv {culprit} {culprit}.bak) and try again."
            )
    if exc.errno == errno.ELOOP:
        return (
            f"Could not read {path}: it is a loop of symbolic links (or a chain too long to "
            f"follow). Nothing was changed. Replace the link with a regular file (rm {path}, "
            "then try again)."
        )
    if exc.errno == errno.EACCES:
        return (
            f"Could not read {path}: permission denied. Nothing was changed. Give yourself "
            f"read permission (chmod u+r {path}) and try again."
        )
    return (
        f"Could not read {path}: {exc.strerror or exc}. Nothing was changed; fix or move "
        "the file aside and try again."
    )


def damaged_store_error(store: EnvStore, snapshot: StoreSnapshot) -> PanelError:
    """The refusal to change a store whose contents could not be understood."""
    target = store.target()
    move = f" (mv {target} {target}.bad)" if store.platform == "linux" or "/" in target else ""
    return PanelError(
        f"{snapshot.problem}. Nothing was changed: fix the file, or move it aside{move} and "
        "try again.",
        snapshot.problem,
    )


def store_notes(stores: Iterable[EnvStore]) -> list[str]:
    """What the user should know about these stores on this computer (a later file wins,
    bash reads ~/.bash_profile instead of ~/.profile), one line each."""
    notes: list[str] = []
    for store in stores:
        try:
            notes += store.notes()
        except (PanelError, OSError, ValueError) as exc:
            log.info("Could not collect the notes of %s: %s", store.target(), exc)
    return notes


class FileEnvStore(EnvStore):
    """A store that is one text file, rendered by a pure function of ``formats``.

    A symlinked file is read and written through its link: the link's target is replaced
    (atomically, in its own folder) and the link stays a link.
    """

    def __init__(self, path: Path, keep: int = KEEP_BACKUPS) -> None:
        self.path = path
        self.keep = keep

    def target(self) -> str:
        return str(self.path)

    @abstractmethod
    def parse(self, text: str) -> dict[str, str]:
        """Variables in the file's text; ValueError when the text cannot be understood."""

    @abstractmethod
    def render(
        self,
        old: str | None,
        changes: Sequence[tuple[str, str | None]],
        references: Collection[str] = (),
    ) -> str | None:
        """The new text (None = still no file); ``references``: the names whose values
        keep their ``$NAME`` references."""

    def _read_raw(self) -> bytes | None:
        return read_limited(self.path)

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
            mode = None
        except OSError as exc:
            raise PanelError(f"Could not check {self.path}: {exc.strerror}.", str(exc)) from exc
        if mode is not None and not mode & stat.S_IWUSR:
            raise PanelError(
                f"{self.path} is read-only; nothing was changed. Make it writable "
                f"(chmod u+w {self.path}) or choose another store.",
                f"mode {stat.filemode(mode)}",
            )
        folder = resolved(self.path).parent
        while not folder.exists() and folder.parent != folder:
            folder = folder.parent
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PanelError(
                f"The folder {folder} is not writable, so {self.path} cannot be replaced; "
                "nothing was changed.",
                f"os.access({folder}, W_OK) is false",
            )

    def check_content(self, plan: FilePlan) -> None:
        """Raise PanelError when the new contents must not be written (checked under the
        lock, off the GUI thread)."""

    def preflight(self, plan: FilePlan) -> None:
        current = self._read_raw()
        if current != plan.before:
            raise EnvConflictError(
                f"{self.path} changed since rocmpanel read it; nothing was written. "
                "Reload and review the changes.",
                text_diff(decode(plan.before), decode(current), str(self.path)),
            )
        if plan.after is None:
            raise PanelError(f"Nothing to write to {self.path}.")
        self._check_writable()
        self.check_content(plan)

    def backup(self, plan: FilePlan, protect: Collection[str]) -> dict[str, Any]:
        backup = None
        if plan.before is not None:
            backup = backup_bytes(
                self.path, plan.before, paths.backups_dir(), self.keep, protect=protect
            )
        return {
            "store": self.key,
            "path": str(self.path),
            "backup": None if backup is None else str(backup),
            "before_sha256": sha256(plan.before),
            "written_sha256": sha256(plan.after),
        }

    def write(self, plan: FilePlan) -> None:
        if plan.after is None:
            raise PanelError(f"Nothing to write to {self.path}.")
        write_atomic(self.path, plan.after)

    def _before_sha(self, record: dict[str, Any]) -> str | None:
        if "before_sha256" in record:
            return record["before_sha256"]  # type: ignore[no-any-return]
        return sha256(self._read_backup(record))  # an entry of an older rocmpanel

    def state(self, record: dict[str, Any]) -> str:
        current = sha256(self._read_raw())
        if current == record.get("written_sha256"):
            return WRITTEN
        try:
            before = self._before_sha(record)
        except PanelError:
            return OTHER
        return BEFORE if current == before else OTHER

    def check_restore(self, record: dict[str, Any]) -> None:
        current = self._read_raw()
        if sha256(current) != record.get("written_sha256"):
            try:
                previous = self._read_backup(record)
            except PanelError:
                previous = None
            raise EnvConflictError(
                f"{self.path} changed after rocmpanel wrote it; undo would lose those "
                "changes, so nothing was restored.",
                text_diff(decode(previous), decode(current), str(self.path)),
            )
        self._backup_bytes(record)
        self._check_writable()

    def _read_backup(self, record: dict[str, Any]) -> bytes | None:
        """The backup's bytes as they are (None: the file did not exist before)."""
        backup = record.get("backup")
        if backup is None:
            return None
        try:
            return read_bytes(backup, CONFIG_LIMIT)
        except OSError as exc:
            raise PanelError(
                f"The backup {backup} needed to undo is gone; nothing was restored.", str(exc)
            ) from exc

    def _refuse_backup(self, backup: object, why: str) -> PanelError:
        return PanelError(
            f"The backup {backup} {why}, so nothing was restored and {self.path} was left as "
            f"it is. Set or unset the variables again instead (earlier copies are in "
            f"{paths.backups_dir()}).",
            why,
        )

    def _backup_bytes(self, record: dict[str, Any]) -> bytes | None:
        """The backup an undo or a roll back would write, checked: inside the backups
        folder, with the sha256 recorded when it was made, and acceptable content
        (:meth:`check_restored_content`). PanelError (nothing restored) otherwise."""
        backup = record.get("backup")
        expected = record.get("before_sha256")
        if backup is None:
            if expected is not None:
                raise self._refuse_backup(
                    "(none)", "is missing from the undo record although the file existed"
                )
            return None
        folder = paths.backups_dir().resolve()
        try:
            inside = Path(str(backup)).resolve().is_relative_to(folder)
        except (OSError, RuntimeError, ValueError):
            inside = False
        if not inside:
            raise self._refuse_backup(backup, f"is not in the backups folder {folder}")
        data = self._read_backup(record)
        if "before_sha256" in record and sha256(data) != expected:
            raise self._refuse_backup(
                backup,
                "does not match the checksum recorded when it was made (it was damaged or "
                "changed since)",
            )
        if data is not None:
            problem = self.check_restored_content(data)
            if problem is not None:
                raise self._refuse_backup(backup, problem)
        return data

    def check_restored_content(self, data: bytes) -> str | None:
        """Why ``data`` must not be restored into this store (None: it may)."""
        return None

    def before_restore(self, record: dict[str, Any], protect: Collection[str]) -> None:
        current = self._read_raw()
        if current is not None:
            backup_bytes(self.path, current, paths.backups_dir(), self.keep, protect=protect)

    def restore(self, record: dict[str, Any]) -> None:
        previous = self._backup_bytes(record)
        if previous is not None:
            write_atomic(self.path, previous)
            return
        target = resolved(self.path)  # a link to a file that did not exist stays a link
        try:
            target.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise PanelError(f"Could not remove {target}: {exc.strerror}.", str(exc)) from exc

    def temp_places(self) -> list[tuple[Path, str]]:
        real = resolved(self.path)
        places = [(self.path.parent, self.path.name)]
        return places if real == self.path else [*places, (real.parent, real.name)]


def shell_syntax_problem(text: bytes, label: str) -> str | None:
    """What ``sh -n`` says is wrong with ``text`` (a shell script, given on stdin: no temp
    file), or None when it parses, when there is no sh (Windows: logged) or when sh does not
    answer in time (logged)."""
    sh = shutil.which("sh")
    if sh is None:
        log.info("No sh found: %s was not checked with sh -n.", label)
        return None
    try:
        done = subproc.run(
            [sh, "-n"],
            input=text,
            capture_output=True,
            timeout=SH_CHECK_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        log.warning("sh -n took over %g s: %s was not checked.", SH_CHECK_TIMEOUT, label)
        return None
    except OSError as exc:
        log.warning("sh -n could not run (%s): %s was not checked.", exc, label)
        return None
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip()
    first = said.splitlines()[0] if said else f"sh -n exited with status {done.returncode}"
    return f"{label}: {first.removeprefix(sh + ': ').removeprefix('sh: ')}"


@dataclass(frozen=True)
class ApplyResult:
    """What an apply or undo changed, in words; ``notes``: what recovery or the journal
    did on the way (one line each); ``diff``: the changes written."""

    targets: tuple[str, ...]
    message: str
    notes: tuple[str, ...] = ()
    diff: str = ""


@dataclass(frozen=True)
class StoresRead:
    """Every store read once: a snapshot per store (a failed read gives an empty snapshot
    whose ``problem`` says why), the errors of the reads that failed, ``notes`` (what
    recovery did before the read) and ``about``: what the user should know about the stores
    on this computer (:func:`store_notes`: ~/.bash_profile is read instead of ~/.profile)."""

    snapshots: Mapping[str, StoreSnapshot]
    errors: tuple[PanelError, ...] = ()
    notes: tuple[str, ...] = ()
    about: tuple[str, ...] = ()


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
    return StoresRead(snapshots, tuple(errors), about=tuple(store_notes(stores.values())))


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
