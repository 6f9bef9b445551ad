"""sqlite databases with a schema version (``PRAGMA user_version``), migrations, and
recovery from a damaged file.

Each store owns one database file and an ordered list of migrations; :func:`connect`
brings the file up to the newest version before handing out a connection. Migrations run
under ``BEGIN IMMEDIATE``, so two processes opening an old file at once migrate it once.

The first open of a file in a process checks it (``PRAGMA quick_check``, and that the tables
the migrations make have their columns). A file that is damaged (truncated, garbage, a
database whose tables are not ours) or that is no file at all (a FIFO, a folder) is moved
aside as ``<name>.corrupt-<YYYYmmdd-HHMMSS>`` with its ``-journal``/``-wal``/``-shm``, a new
one is made, and :func:`recovery_notice` says so, once per process, for the store to tell
the user; nothing is deleted. An empty file is a new database (sqlite's own rule). A file
written by a newer rocmpanel (a version this one does not know) is NOT damaged: it is left
as it is and refused with a PanelError that says so. Other failures (locked, read-only,
disk full) are PanelErrors that name the file and what to do.

:func:`set_read_only` turns on a process-wide read-only mode (the smoke test, which must not
write the user's files): files are opened with ``file:...?mode=ro`` URIs and never created,
migrated, or moved aside. A damaged file is then a PanelError that says what is wrong and
that it was left as it is; a missing file, or one at an older schema, is read through an
in-memory copy that the migrations bring up to date (what the user would see; writes to it
are dropped at close).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError

log = logging.getLogger(__name__)

CORRUPT_TAG = "corrupt"  # a damaged file is kept as <name>.corrupt-<time>
SIDE_FILES = ("-journal", "-wal", "-shm")  # what sqlite keeps beside a database
SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every database file


@dataclass(frozen=True)
class Migration:
    """Brings a database from ``version - 1`` to ``version``: SQL text or a function.

    The tables and columns a database must have are learnt from the SQL migrations; a
    function migration moves data and must not change the schema."""

    version: int
    description: str
    apply: str | Callable[[sqlite3.Connection], None]


_ready: set[tuple[str, int]] = set()  # (file, version) checked and migrated in this process
_notices: dict[str, str] = {}  # file -> what its recovery in this process did
_lock = threading.Lock()
_schemas: dict[tuple[tuple[str, ...], int], dict[str, set[str]]] = {}
_read_only = False  # see set_read_only
_checked_ro: dict[tuple[str, int], str | None] = {}  # read-only mode: (file, version) -> problem


def set_read_only(on: bool = True) -> None:
    """Process-wide: open every database read-only, never create, migrate or move one
    aside (the smoke test). See the module's docstring."""
    global _read_only
    with _lock:
        _read_only = on
        _checked_ro.clear()


def read_only() -> bool:
    """Whether :func:`set_read_only` is on."""
    return _read_only


def _ro_uri(path: Path) -> str:
    return Path(os.path.abspath(path)).as_uri() + "?mode=ro"


def latest_version(migrations: Sequence[Migration]) -> int:
    return migrations[-1].version if migrations else 0


def schema_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _key(path: Path) -> str:
    return os.path.abspath(path)


def recovery_notice(path: Path) -> str | None:
    """What happened to the damaged file at ``path`` in this process (moved aside, a new
    one made), for the store's user; None when it was not damaged."""
    return _notices.get(_key(path))


def migrate(db: sqlite3.Connection, migrations: Sequence[Migration], what: str) -> int:
    """Apply the migrations ``db`` lacks, each in its own transaction; the new version."""
    expected = [m.version for m in migrations]
    if expected != list(range(1, len(migrations) + 1)):
        raise ValueError(f"{what}: migrations must be numbered 1, 2, 3, ... ({expected})")
    latest = latest_version(migrations)
    for migration in migrations:
        db.execute("BEGIN IMMEDIATE")  # one migrator at a time, across processes
        try:
            current = schema_version(db)
            if current > latest:
                raise _newer(what, _db_path(db), current, latest)
            if current >= migration.version:
                db.execute("COMMIT")
                continue
            if isinstance(migration.apply, str):
                for statement in _statements(migration.apply):
                    db.execute(statement)
            else:
                migration.apply(db)
            db.execute(f"PRAGMA user_version = {int(migration.version)}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    return schema_version(db)


def _db_path(db: sqlite3.Connection) -> str:
    row = db.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row is not None and row[2] else "(memory)"


def _newer(what: str, where: object, found: int, latest: int) -> PanelError:
    return PanelError(
        f"The {what} at {where} was made by a newer rocmpanel (schema {found}; this version "
        f"knows up to {latest}). It is left as it is: update rocmpanel to use it.",
        f"PRAGMA user_version = {found}",
    )


def _statements(script: str) -> Iterator[str]:
    """The statements of a migration script (executescript would commit on its own)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()


# -- checking a file --------------------------------------------------------------------------
def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Whether sqlite said the file is not a database or is corrupt (not: locked,
    read-only, full, an SQL error)."""
    name = getattr(exc, "sqlite_errorname", None)  # Python 3.11+
    if isinstance(name, str):
        return name == "SQLITE_NOTADB" or name.startswith("SQLITE_CORRUPT")
    return type(exc) is sqlite3.DatabaseError  # what both map to before 3.11


def _expected_schema(migrations: Sequence[Migration], version: int) -> dict[str, set[str]]:
    """Table -> columns that a file at ``version`` has, from the SQL migrations up to it."""
    scripts = tuple(
        m.apply for m in migrations if m.version <= version and isinstance(m.apply, str)
    )
    key = (scripts, version)
    found = _schemas.get(key)
    if found is None:
        with closing(sqlite3.connect(":memory:")) as mem:
            for script in scripts:
                for statement in _statements(script):
                    mem.execute(statement)
            found = _tables(mem)
        _schemas[key] = found
    return found


def _tables(db: sqlite3.Connection) -> dict[str, set[str]]:
    names = [
        str(row[0])
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    return {
        name: {str(col[1]) for col in db.execute(f'PRAGMA table_info("{name}")')} for name in names
    }


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _damage(
    path: Path, migrations: Sequence[Migration], timeout: float, *, read_only: bool = False
) -> str | None:
    """Why the file at ``path`` cannot be used as this store's database (to end a
    sentence that starts with its path), or None when it can (or does not exist yet)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(mode):
        return f"is {_kind(mode)}, not a database file"
    # Judged before sqlite opens it: opening a file that is not a database would make sqlite
    # delete the journal or write-ahead log beside it, which are kept aside with it instead.
    with open(path, "rb") as handle:
        header = handle.read(len(SQLITE_HEADER))
    if header and header != SQLITE_HEADER[: len(header)]:
        return "is not a database (it does not start with sqlite's header)"
    try:
        target = _ro_uri(path) if read_only else str(path)
        opened = sqlite3.connect(target, timeout=timeout, isolation_level=None, uri=read_only)
        with closing(opened) as db:
            rows = [str(row[0]) for row in db.execute("PRAGMA quick_check(5)")]
            if rows != ["ok"]:
                return f"is damaged (sqlite's check says: {'; '.join(rows)})"
            version = schema_version(db)
            latest = latest_version(migrations)
            if version > latest:
                return None  # a newer rocmpanel's: refused by migrate(), never moved aside
            present = _tables(db)
    except sqlite3.DatabaseError as exc:
        if _is_damage(exc):
            return f"is not a readable database ({exc})"
        raise
    expected = _expected_schema(migrations, version)
    if version == 0:  # only the tables the first migration would make are ours to check
        expected = {
            name: columns
            for name, columns in _expected_schema(migrations, 1).items()
            if name in present
        }
    for name, columns in expected.items():
        if name not in present:
            return f"lacks the table {name} that rocmpanel keeps there"
        missing = sorted(columns - present[name])
        if missing:
            return (
                f"has a table {name} that rocmpanel did not make (no column {', '.join(missing)})"
            )
    return None


def _move_aside(path: Path, what: str, problem: str, identity: tuple[int, int] | None) -> None:
    """Rename the damaged file (and its side files) to ``<name>.corrupt-<time>``; record
    and log the notice. ``identity`` (device, inode) is the file found damaged: when the
    path holds another file by now, another process already recovered it."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return
    if identity is not None and (now.st_dev, now.st_ino) != identity:
        return
    target = paths.aside(path, CORRUPT_TAG)
    try:
        os.rename(path, target)
    except OSError as exc:
        raise PanelError(
            f"The {what} at {path} {problem}, and it could not be moved aside "
            f"({exc.strerror or exc}). Move or delete it by hand; rocmpanel then starts a "
            "new one.",
            str(exc),
        ) from exc
    for suffix in SIDE_FILES:
        side = Path(f"{path}{suffix}")
        if os.path.lexists(side):
            try:
                os.rename(side, f"{target}{suffix}")
            except OSError as exc:  # a stale journal would be applied to the new file
                raise PanelError(
                    f"The {what} at {path} {problem}; it was moved to {target.name}, but "
                    f"{side.name} could not be ({exc.strerror or exc}). Move it away by hand.",
                    str(exc),
                ) from exc
    notice = (
        f"The {what} at {path} {problem}. It was moved to {target.name} (kept as it was) and "
        f"a new, empty {what} was started."
    )
    _notices[_key(path)] = notice
    log.info("%s", notice)  # at info: the store's user shows the notice itself


def _prepare(path: Path, migrations: Sequence[Migration], what: str, timeout: float) -> None:
    """Once per file and process: check it, move it aside when damaged, migrate it."""
    key = (_key(path), latest_version(migrations))
    with _lock:
        if key in _ready:
            return
        for _attempt in range(2):  # a second time: a file damaged beyond what the check saw
            try:
                identity = os.stat(path)
            except FileNotFoundError:
                found: tuple[int, int] | None = None
            else:
                found = (identity.st_dev, identity.st_ino)
            problem = _damage(path, migrations, timeout)
            if problem is not None:
                _move_aside(path, what, problem, found)
            try:
                with closing(sqlite3.connect(path, timeout=timeout, isolation_level=None)) as db:
                    migrate(db, migrations, what)
            except sqlite3.DatabaseError as exc:
                if not _is_damage(exc) or _attempt:
                    raise
                continue
            _ready.add(key)
            return


def _open_read_only(
    path: Path, migrations: Sequence[Migration], what: str, timeout: float
) -> sqlite3.Connection:
    """Read-only mode's connection: the file itself (``mode=ro``) when it is at the newest
    schema; an in-memory copy brought up to date when it is missing or older. A damaged
    file is a PanelError and is left as it is."""
    latest = latest_version(migrations)
    key = (_key(path), latest)
    if not os.path.lexists(path):
        memory = sqlite3.connect(":memory:", isolation_level=None)
        migrate(memory, migrations, what)
        return memory
    with _lock:
        if key not in _checked_ro:
            _checked_ro[key] = _damage(path, migrations, timeout, read_only=True)
        problem = _checked_ro[key]
    if problem is not None:
        raise PanelError(
            f"The {what} at {path} {problem}. It was left as it is: rocmpanel runs read-only "
            "now (the smoke test), and moves it aside at the next normal start.",
        )
    db = sqlite3.connect(_ro_uri(path), timeout=timeout, isolation_level=None, uri=True)
    version = schema_version(db)
    if version > latest:
        db.close()
        raise _newer(what, path, version, latest)
    if version < latest:
        memory = sqlite3.connect(":memory:", isolation_level=None)
        try:
            db.backup(memory)
        finally:
            db.close()
        migrate(memory, migrations, what)
        return memory
    return db


def _message(what: str, path: Path, exc: sqlite3.Error) -> str:
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    text = str(exc).lower()
    if _read_only and (name.startswith("SQLITE_READONLY") or "readonly" in text):
        return (
            f"The {what} at {path} is not written: rocmpanel runs read-only now (the smoke test)."
        )
    if name.startswith("SQLITE_READONLY") or "readonly" in text:
        return (
            f"The {what} at {path} cannot be written: the file or its folder is read-only. "
            "Check their permissions."
        )
    if name.startswith("SQLITE_BUSY") or "locked" in text:
        return f"The {what} at {path} is in use by another program. Try again in a moment."
    if name.startswith("SQLITE_FULL") or "full" in text:
        return f"The {what} at {path} could not be written: the disk is full."
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
        return f"The {what} at {path} could not be opened. Check the folder's permissions."
    if isinstance(exc, sqlite3.DatabaseError) and _is_damage(exc):
        return (
            f"The {what} at {path} is damaged. rocmpanel checks it again (and starts a new "
            "one, keeping the old file) the next time it is opened."
        )
    return f"The {what} at {path} could not be read or written."


@contextmanager
def connect(
    path: Path, migrations: Sequence[Migration], what: str, *, timeout: float = 10.0
) -> Iterator[sqlite3.Connection]:
    """A connection to ``path`` at the newest schema, in one transaction (committed on
    success, rolled back on an exception), closed afterwards. ``what`` names the store in
    messages ("chat history")."""
    try:
        if _read_only:
            opened = _open_read_only(path, migrations, what, timeout)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            _prepare(path, migrations, what, timeout)
            opened = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        with closing(opened) as db:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA foreign_keys = ON")
            if schema_version(db) != latest_version(migrations):  # e.g. deleted since
                migrate(db, migrations, what)
            db.execute("BEGIN")
            try:
                yield db
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            if db.in_transaction:
                db.execute("COMMIT")
    except sqlite3.Error as exc:
        if isinstance(exc, sqlite3.DatabaseError) and _is_damage(exc):
            with _lock:  # damaged since it was checked: check (and recover) at the next open
                _ready.discard((_key(path), latest_version(migrations)))
                _checked_ro.pop((_key(path), latest_version(migrations)), None)
        raise PanelError(_message(what, path, exc), str(exc)) from exc
    except OSError as exc:
        raise PanelError(
            f"The {what} at {path} could not be opened: {exc.strerror or exc}.", str(exc)
        ) from exc
