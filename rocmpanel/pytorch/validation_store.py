"""Saved validation runs: their own sqlite file, with a schema version and migrations.

``data/validation.sqlite3`` (``paths.validation_database_file``), opened through
:func:`rocmpanel.base.sqlite.connect`. Up to 0.x the runs lived in tables ``validation_*``
of the shared ``data/rocmpanel.sqlite3`` without a version; when the new file is created,
migration 2 copies those runs over (ids kept, the old file only read), so a user's history
survives the move. The file is made by the first save (reading a history that does not
exist yet writes nothing); a damaged one is moved aside and a new one started
(:mod:`rocmpanel.base.sqlite`), which :attr:`ValidationStore.notice` then says. Every call
opens the file: run them off the GUI thread.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import replace
from functools import partial
from pathlib import Path

from rocmpanel.base import paths
from rocmpanel.base.enums import CheckStatus
from rocmpanel.base.sqlite import Migration, connect, recovery_notice
from rocmpanel.pytorch.validation_run import NO_PRESET, CheckResult, ValidationRun

log = logging.getLogger(__name__)

WHAT = "validation history"

# Version 1 is the schema the shared file had (without its IF NOT EXISTS).
_SCHEMA_1 = """
CREATE TABLE validation_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    python TEXT NOT NULL,
    env_name TEXT,
    torch_version TEXT,
    build TEXT,
    device_name TEXT,
    gfx TEXT,
    gcn_arch TEXT,
    os TEXT NOT NULL,
    outcome TEXT NOT NULL,
    info_json TEXT NOT NULL
);
CREATE TABLE validation_checks (
    run_id INTEGER NOT NULL REFERENCES validation_runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    check_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    figure TEXT NOT NULL,
    value REAL,
    unit TEXT,
    detail TEXT NOT NULL,
    fix_id TEXT,
    error TEXT,
    PRIMARY KEY (run_id, position)
);
"""

# The run columns of schema 1 (what migration 2 copies from the shared file)...
_RUN_COLUMNS_1 = (
    "id, created_at, python, env_name, torch_version, build, device_name, gfx, gcn_arch, os, "
    "outcome, info_json"
)
# ... and of the current schema (migration 3 added the preset; older runs read "none").
_RUN_COLUMNS = _RUN_COLUMNS_1 + ", preset"

_SCHEMA_3 = f"ALTER TABLE validation_runs ADD COLUMN preset TEXT NOT NULL DEFAULT '{NO_PRESET}';"
_CHECK_COLUMNS = (
    "run_id, position, check_id, name, status, figure, value, unit, detail, fix_id, error"
)


def _placeholders(columns: str) -> str:
    return ", ".join("?" for _ in columns.split(","))


def _copy_legacy_runs(legacy: Path | None, db: sqlite3.Connection) -> None:
    """Migration 2: the runs of the shared pre-versioning file, if it has any."""
    if legacy is None or not legacy.is_file():
        return
    try:
        uri = legacy.resolve().as_uri() + "?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=10)) as old:
            tables = {
                row[0] for row in old.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            if "validation_runs" not in tables:
                return
            runs = old.execute(
                f"SELECT {_RUN_COLUMNS_1} FROM validation_runs ORDER BY id"
            ).fetchall()
            checks = (
                old.execute(f"SELECT {_CHECK_COLUMNS} FROM validation_checks").fetchall()
                if "validation_checks" in tables
                else []
            )
    except sqlite3.DatabaseError as exc:  # an unreadable old file must not block the new one
        log.warning("Could not carry over the validation runs of %s: %s", legacy, exc)
        return
    ids = {row[0] for row in runs}
    db.executemany(
        f"INSERT INTO validation_runs ({_RUN_COLUMNS_1}) VALUES ({_placeholders(_RUN_COLUMNS_1)})",
        runs,
    )
    db.executemany(
        f"INSERT INTO validation_checks ({_CHECK_COLUMNS}) "
        f"VALUES ({_placeholders(_CHECK_COLUMNS)})",
        [row for row in checks if row[0] in ids],
    )
    log.info("Carried over %d validation run(s) from %s", len(runs), legacy)


def migrations(legacy: Path | None) -> tuple[Migration, ...]:
    """The store's migrations; ``legacy`` is the shared file whose runs migration 2 copies."""
    return (
        Migration(1, "validation runs and their checks", _SCHEMA_1),
        Migration(2, "runs of the shared rocmpanel.sqlite3", partial(_copy_legacy_runs, legacy)),
        Migration(3, "the tuning preset each run ran under", _SCHEMA_3),
    )


_OPTIONAL_TEXT = ("env_name", "torch_version", "build", "device_name", "gfx", "gcn_arch")
_CHECK_TEXT = ("check_id", "name", "status", "figure", "detail")
_CHECK_OPTIONAL_TEXT = ("unit", "fix_id", "error")


def _shown(value: object) -> str:
    """A stored value as a few characters for a message."""
    if isinstance(value, bytes):
        return f"{len(value)} byte{'' if len(value) == 1 else 's'} of binary data"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _row_problem(row: sqlite3.Row, checks: Sequence[sqlite3.Row]) -> str | None:
    """What makes a stored run unreadable (a field of the wrong type: sqlite keeps any
    value in any column), or None."""
    created = row["created_at"]
    if isinstance(created, bool) or not isinstance(created, (int, float)):
        return f"created_at is {_shown(created)}, not a time"
    if not math.isfinite(created) or not -1e11 < created < 1e11:
        return f"created_at is {_shown(created)}, not a time"
    for key in ("python", "os", "outcome", "info_json", "preset"):
        if not isinstance(row[key], str):
            return f"{key} is {_shown(row[key])}, not text"
    for key in _OPTIONAL_TEXT:
        if row[key] is not None and not isinstance(row[key], str):
            return f"{key} is {_shown(row[key])}, not text"
    for check in checks:
        where = f"check {check['position']!r}"
        for key in _CHECK_TEXT:
            if not isinstance(check[key], str):
                return f"{where}: {key} is {_shown(check[key])}, not text"
        for key in _CHECK_OPTIONAL_TEXT:
            if check[key] is not None and not isinstance(check[key], str):
                return f"{where}: {key} is {_shown(check[key])}, not text"
        value = check["value"]
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            return f"{where}: value is {_shown(value)}, not a number"
    return None


def _run_from_row(row: sqlite3.Row, checks: Sequence[sqlite3.Row]) -> ValidationRun:
    """The run stored in ``row``; one marked damaged (:attr:`ValidationRun.damaged`) when a
    field cannot be read, so the rest of the history still lists."""
    problem = _row_problem(row, checks)
    if problem is not None:
        log.info("Validation run #%s is damaged: %s", row["id"], problem)
        return ValidationRun.damaged_run(int(row["id"]), problem)
    try:
        info = json.loads(row["info_json"])
    except (ValueError, RecursionError):
        info = {}
    return ValidationRun(
        id=int(row["id"]),
        created_at=float(row["created_at"]),
        python=row["python"],
        env_name=row["env_name"],
        torch_version=row["torch_version"],
        build=row["build"],
        device_name=row["device_name"],
        gfx=row["gfx"],
        gcn_arch=row["gcn_arch"],
        os=row["os"],
        outcome=row["outcome"],
        info=info if isinstance(info, dict) else {},
        preset=row["preset"],
        checks=tuple(
            CheckResult(
                id=c["check_id"],
                name=c["name"],
                status=CheckStatus.parse(c["status"]),
                figure=c["figure"],
                value=None if c["value"] is None else float(c["value"]),
                unit=c["unit"],
                detail=c["detail"],
                fix_id=c["fix_id"],
                error=c["error"],
            )
            for c in checks
        ),
    )


class ValidationStore:
    """Saved validation runs. ``path`` defaults to the panel's validation file; ``legacy``
    (default: the shared file, for the default path only) is where old runs are copied from."""

    def __init__(self, path: Path | None = None, *, legacy: Path | None = None) -> None:
        if path is None:
            path = paths.validation_database_file()
            legacy = legacy if legacy is not None else paths.database_file()
        self.path = path
        self._legacy = legacy
        self._migrations = migrations(legacy)

    @property
    def notice(self) -> str | None:
        """What was done about a damaged file in this process (moved aside, a new one
        started), for the user; None when nothing was."""
        return recovery_notice(self.path)

    def _nothing_saved(self) -> bool:
        """No file yet and no old runs to carry over: reading need not create one (the
        file is made by the first save, so opening the tab writes nothing)."""
        return not os.path.lexists(self.path) and not (
            self._legacy is not None and self._legacy.is_file()
        )

    def save(self, run: ValidationRun) -> ValidationRun:
        """Store ``run``; returns it with its new id."""
        with connect(self.path, self._migrations, WHAT) as db:
            cur = db.execute(
                f"INSERT INTO validation_runs ({_RUN_COLUMNS}) "
                f"VALUES ({_placeholders(_RUN_COLUMNS)})",
                (
                    None,
                    run.created_at,
                    run.python,
                    run.env_name,
                    run.torch_version,
                    run.build,
                    run.device_name,
                    run.gfx,
                    run.gcn_arch,
                    run.os,
                    run.outcome,
                    json.dumps(dict(run.info), default=str),
                    run.preset,
                ),
            )
            run_id = int(cur.lastrowid or 0)
            db.executemany(
                f"INSERT INTO validation_checks ({_CHECK_COLUMNS}) "
                f"VALUES ({_placeholders(_CHECK_COLUMNS)})",
                [
                    (
                        run_id,
                        i,
                        c.id,
                        c.name,
                        c.status.value,
                        c.figure,
                        c.value,
                        c.unit,
                        c.detail,
                        c.fix_id,
                        c.error,
                    )
                    for i, c in enumerate(run.checks)
                ],
            )
        return replace(run, id=run_id)

    def _read(self, db: sqlite3.Connection, rows: Sequence[sqlite3.Row]) -> list[ValidationRun]:
        runs = []
        for row in rows:
            checks = db.execute(
                "SELECT * FROM validation_checks WHERE run_id = ? ORDER BY position", (row["id"],)
            ).fetchall()
            runs.append(_run_from_row(row, checks))
        return runs

    def list_runs(self, limit: int = 200) -> list[ValidationRun]:
        """Newest first."""
        if self._nothing_saved():
            return []
        with connect(self.path, self._migrations, WHAT) as db:
            rows = db.execute(
                f"SELECT {_RUN_COLUMNS} FROM validation_runs ORDER BY id DESC LIMIT ?", (limit,)
            ).fetchall()
            return self._read(db, rows)

    def get(self, run_id: int) -> ValidationRun | None:
        if self._nothing_saved():
            return None
        with connect(self.path, self._migrations, WHAT) as db:
            rows = db.execute(
                f"SELECT {_RUN_COLUMNS} FROM validation_runs WHERE id = ?", (run_id,)
            ).fetchall()
            runs = self._read(db, rows)
        return runs[0] if runs else None

    def delete(self, *run_ids: int) -> None:
        """Forget the runs ``run_ids`` (their checks go with them)."""
        if self._nothing_saved():
            return
        with connect(self.path, self._migrations, WHAT) as db:
            db.executemany("DELETE FROM validation_runs WHERE id = ?", [(i,) for i in run_ids])
