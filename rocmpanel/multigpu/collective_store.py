"""Saved collective runs: their own sqlite file, with a schema version and migrations.

``data/collective.sqlite3`` (the panel's data folder), opened through
:func:`rocmpanel.base.sqlite.connect` like the validation history: migrations under a
schema version, a damaged file moved aside and a new one started (:attr:`notice` says
so), the process-wide read-only mode honoured. The file is made by the first save
(listing a history that does not exist writes nothing). Every call opens the file: run
them off the GUI thread.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from rocmpanel.base import paths
from rocmpanel.base.sqlite import Migration, connect, recovery_notice
from rocmpanel.multigpu.collective import CollectiveRun, SizeResult

log = logging.getLogger(__name__)

WHAT = "collective test history"
FILE_NAME = "collective.sqlite3"

_SCHEMA_1 = """
CREATE TABLE collective_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    outcome TEXT NOT NULL,
    device TEXT NOT NULL,
    world_size INTEGER NOT NULL,
    backend TEXT NOT NULL,
    torch_version TEXT,
    hip_version TEXT,
    rccl_version TEXT,
    devices_json TEXT NOT NULL,
    where_text TEXT NOT NULL,
    python TEXT NOT NULL,
    min_bytes INTEGER NOT NULL,
    max_bytes INTEGER NOT NULL,
    skipped_json TEXT NOT NULL,
    error TEXT,
    cause TEXT,
    duration_s REAL NOT NULL
);
CREATE TABLE collective_sizes (
    run_id INTEGER NOT NULL REFERENCES collective_runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    count INTEGER NOT NULL,
    time_us REAL NOT NULL,
    algbw_gbs REAL NOT NULL,
    busbw_gbs REAL NOT NULL,
    iters INTEGER NOT NULL,
    PRIMARY KEY (run_id, position)
);
"""

MIGRATIONS = (Migration(1, "collective runs and their sizes", _SCHEMA_1),)

_RUN_COLUMNS = (
    "id, created_at, outcome, device, world_size, backend, torch_version, hip_version, "
    "rccl_version, devices_json, where_text, python, min_bytes, max_bytes, skipped_json, "
    "error, cause, duration_s"
)
_SIZE_COLUMNS = "run_id, position, bytes, count, time_us, algbw_gbs, busbw_gbs, iters"


def database_file() -> Path:
    """``collective.sqlite3`` in the panel's data folder."""
    return paths.data_dir() / FILE_NAME


def _placeholders(columns: str) -> str:
    return ", ".join("?" for _ in columns.split(","))


def _finite(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def _whole(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not a whole number")
    return value


def _optional_text(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{value!r} is not text")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not text")
    return value


def _run_from_row(row: sqlite3.Row, sizes: Sequence[sqlite3.Row]) -> CollectiveRun:
    """The run in ``row``; ValueError when a field is of the wrong type (sqlite keeps any
    value in any column)."""
    devices = json.loads(_text(row["devices_json"]))
    skipped = json.loads(_text(row["skipped_json"]))
    if not isinstance(devices, list) or not isinstance(skipped, list):
        raise ValueError("devices or skipped sizes are not lists")
    return CollectiveRun(
        id=_whole(row["id"]),
        created_at=_finite(row["created_at"]),
        outcome=_text(row["outcome"]),
        device=_text(row["device"]),
        world_size=_whole(row["world_size"]),
        backend=_text(row["backend"]),
        torch_version=_optional_text(row["torch_version"]),
        hip_version=_optional_text(row["hip_version"]),
        rccl_version=_optional_text(row["rccl_version"]),
        devices=tuple(str(d) for d in devices),
        where=_text(row["where_text"]),
        python=_text(row["python"]),
        min_bytes=_whole(row["min_bytes"]),
        max_bytes=_whole(row["max_bytes"]),
        skipped=tuple((int(b), str(r)) for b, r in skipped),
        error=_optional_text(row["error"]),
        cause=_optional_text(row["cause"]),
        duration_s=_finite(row["duration_s"]),
        sizes=tuple(
            SizeResult(
                bytes=_whole(s["bytes"]),
                count=_whole(s["count"]),
                time_us=_finite(s["time_us"]),
                algbw_gbs=_finite(s["algbw_gbs"]),
                busbw_gbs=_finite(s["busbw_gbs"]),
                iters=_whole(s["iters"]),
            )
            for s in sizes
        ),
    )


class CollectiveStore:
    """Saved collective runs; ``path`` defaults to ``data/collective.sqlite3``."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else database_file()

    @property
    def notice(self) -> str | None:
        """What was done about a damaged file in this process, for the user; else None."""
        return recovery_notice(self.path)

    def _nothing_saved(self) -> bool:
        return not os.path.lexists(self.path)

    def save(self, run: CollectiveRun) -> CollectiveRun:
        """Store ``run``; returns it with its new id."""
        with connect(self.path, MIGRATIONS, WHAT) as db:
            cur = db.execute(
                f"INSERT INTO collective_runs ({_RUN_COLUMNS}) "
                f"VALUES ({_placeholders(_RUN_COLUMNS)})",
                (
                    None,
                    run.created_at,
                    run.outcome,
                    run.device,
                    run.world_size,
                    run.backend,
                    run.torch_version,
                    run.hip_version,
                    run.rccl_version,
                    json.dumps(list(run.devices)),
                    run.where,
                    run.python,
                    run.min_bytes,
                    run.max_bytes,
                    json.dumps([list(s) for s in run.skipped]),
                    run.error,
                    run.cause,
                    run.duration_s,
                ),
            )
            run_id = int(cur.lastrowid or 0)
            db.executemany(
                f"INSERT INTO collective_sizes ({_SIZE_COLUMNS}) "
                f"VALUES ({_placeholders(_SIZE_COLUMNS)})",
                [
                    (run_id, i, s.bytes, s.count, s.time_us, s.algbw_gbs, s.busbw_gbs, s.iters)
                    for i, s in enumerate(run.sizes)
                ],
            )
        return replace(run, id=run_id)

    def _read(self, db: sqlite3.Connection, rows: Sequence[sqlite3.Row]) -> list[CollectiveRun]:
        runs = []
        for row in rows:
            sizes = db.execute(
                "SELECT * FROM collective_sizes WHERE run_id = ? ORDER BY position", (row["id"],)
            ).fetchall()
            try:
                runs.append(_run_from_row(row, sizes))
            except (ValueError, TypeError, RecursionError) as exc:
                # One damaged run must not hide the rest of the history.
                log.warning("Collective run #%s is damaged and left out: %s", row["id"], exc)
        return runs

    def list_runs(self, limit: int = 200) -> list[CollectiveRun]:
        """Newest first."""
        if self._nothing_saved():
            return []
        with connect(self.path, MIGRATIONS, WHAT) as db:
            rows = db.execute(
                f"SELECT {_RUN_COLUMNS} FROM collective_runs ORDER BY id DESC LIMIT ?", (limit,)
            ).fetchall()
            return self._read(db, rows)

    def get(self, run_id: int) -> CollectiveRun | None:
        if self._nothing_saved():
            return None
        with connect(self.path, MIGRATIONS, WHAT) as db:
            rows = db.execute(
                f"SELECT {_RUN_COLUMNS} FROM collective_runs WHERE id = ?", (run_id,)
            ).fetchall()
            runs = self._read(db, rows)
        return runs[0] if runs else None

    def delete(self, *run_ids: int) -> None:
        """Forget the runs ``run_ids`` (their sizes go with them)."""
        if self._nothing_saved():
            return
        with connect(self.path, MIGRATIONS, WHAT) as db:
            db.executemany("DELETE FROM collective_runs WHERE id = ?", [(i,) for i in run_ids])
