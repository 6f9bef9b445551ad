"""sqlite databases with a schema version (``PRAGMA user_version``) and migrations.

Each store owns one database file and an ordered list of migrations; :func:`connect`
brings the file up to the newest version before handing out a connection. Migrations run
under ``BEGIN IMMEDIATE``, so two processes opening an old file at once migrate it once.
A file written by a newer rocmpanel (a version this one does not know) is refused rather
than changed, and a file that is not a database is reported as a PanelError.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from rocmpanel.base.errors import PanelError


@dataclass(frozen=True)
class Migration:
    """Brings a database from ``version - 1`` to ``version``: SQL text or a function."""

    version: int
    description: str
    apply: str | Callable[[sqlite3.Connection], None]


_migrated: set[tuple[str, int]] = set()
_lock = threading.Lock()


def latest_version(migrations: Sequence[Migration]) -> int:
    return migrations[-1].version if migrations else 0


def schema_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


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
                raise PanelError(
                    f"The {what} was written by a newer rocmpanel (schema {current}, this "
                    f"version knows up to {latest}). Update rocmpanel to use it.",
                    str(db),
                )
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


@contextmanager
def connect(
    path: Path, migrations: Sequence[Migration], what: str, *, timeout: float = 10.0
) -> Iterator[sqlite3.Connection]:
    """A connection to ``path`` at the newest schema, in one transaction (committed on
    success, rolled back on an exception), closed afterwards. ``what`` names the store in
    messages ("chat history")."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(path, timeout=timeout, isolation_level=None)) as db:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA foreign_keys = ON")
            key = (str(path.resolve()), latest_version(migrations))
            with _lock:
                if key not in _migrated or schema_version(db) != key[1]:
                    migrate(db, migrations, what)
                    _migrated.add(key)
            db.execute("BEGIN")
            try:
                yield db
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            if db.in_transaction:
                db.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise PanelError(f"The {what} at {path} could not be read.", str(exc)) from exc
    except OSError as exc:
        raise PanelError(f"The {what} at {path} could not be opened.", str(exc)) from exc
