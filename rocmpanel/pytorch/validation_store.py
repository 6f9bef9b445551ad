"""Validation runs as typed records, and their sqlite store (tables ``validation_*``).

A run comes from the validate worker's result, or, when the worker died, from the checks it
had already reported plus one failed ``crash`` check carrying the error output.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rocmpanel.base import paths

STATUSES = ("pass", "fail", "skip")


@dataclass(frozen=True)
class CheckResult:
    """One check of a run: its status, the measured figure, and a fix id on failure."""

    id: str
    name: str
    status: str
    figure: str = ""
    value: float | None = None
    unit: str | None = None
    detail: str = ""
    fix_id: str | None = None
    error: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        status = str(data.get("status", "fail"))
        value = data.get("value")
        return cls(
            id=str(data.get("id", "?")),
            name=str(data.get("name", data.get("id", "?"))),
            status=status if status in STATUSES else "fail",
            figure=str(data.get("figure") or ""),
            value=float(value) if isinstance(value, (int, float)) else None,
            unit=data.get("unit") if isinstance(data.get("unit"), str) else None,
            detail=str(data.get("detail") or ""),
            fix_id=data.get("fix_id") if isinstance(data.get("fix_id"), str) else None,
            error=data.get("error") if isinstance(data.get("error"), str) else None,
        )


@dataclass(frozen=True)
class ValidationRun:
    """A whole run of the suite in one Python."""

    created_at: float
    python: str
    checks: tuple[CheckResult, ...]
    env_name: str | None = None
    torch_version: str | None = None
    build: str | None = None  # "rocm", "cuda", "cpu", or None when torch did not import
    device_name: str | None = None
    gfx: str | None = None  # the detected gfx the suite checked against
    gcn_arch: str | None = None
    os: str = "linux"
    outcome: str = "completed"  # "completed", or why the run ended early
    id: int | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(1 for c in self.checks if c.status == s) for s in STATUSES}

    @property
    def verdict(self) -> str:
        counts = self.counts
        if self.outcome != "completed":
            return "incomplete"
        return "fail" if counts["fail"] else "pass"

    def check(self, check_id: str) -> CheckResult | None:
        return next((c for c in self.checks if c.id == check_id), None)

    @classmethod
    def from_result(
        cls,
        data: Mapping[str, Any],
        *,
        env_name: str | None = None,
        python: str | None = None,
        gfx: str | None = None,
    ) -> ValidationRun:
        """A run from the worker's result payload."""
        checks = tuple(CheckResult.from_dict(c) for c in data.get("checks") or ())
        return cls(
            created_at=float(data.get("started_at") or time.time()),
            python=str(python or data.get("python") or "?"),
            checks=checks,
            env_name=env_name,
            torch_version=data.get("torch_version"),
            build=data.get("build"),
            device_name=data.get("device_name"),
            gfx=gfx or data.get("expected_gfx"),
            gcn_arch=data.get("gcn_arch"),
            os=str(data.get("system") or "linux"),
            info={k: v for k, v in data.items() if k != "checks"},
        )

    @classmethod
    def from_partial(
        cls,
        checks: Sequence[Mapping[str, Any]],
        outcome: str,
        error_text: str,
        *,
        python: str,
        env_name: str | None = None,
        gfx: str | None = None,
    ) -> ValidationRun:
        """The checks a dead or cancelled worker got through, plus one for how it ended."""
        done = [CheckResult.from_dict(c) for c in checks]
        done.append(
            CheckResult(
                "crash", "Suite finished", "fail", outcome, detail=error_text, error=error_text
            )
        )
        return cls(time.time(), python, tuple(done), env_name=env_name, gfx=gfx, outcome=outcome)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS validation_runs (
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
CREATE TABLE IF NOT EXISTS validation_checks (
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

_RUN_COLUMNS = (
    "id, created_at, python, env_name, torch_version, build, device_name, gfx, gcn_arch, os, "
    "outcome, info_json"
)


class ValidationStore:
    """Saved validation runs in the panel's sqlite database."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else paths.database_file()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=10)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.executescript(_SCHEMA)
        return conn

    def save(self, run: ValidationRun) -> ValidationRun:
        """Store ``run``; returns it with its new id."""
        conn = self._connect()
        try:
            with conn:
                cur = conn.execute(
                    "INSERT INTO validation_runs (created_at, python, env_name, torch_version, "
                    "build, device_name, gfx, gcn_arch, os, outcome, info_json) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
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
                    ),
                )
                run_id = int(cur.lastrowid or 0)
                conn.executemany(
                    "INSERT INTO validation_checks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            run_id,
                            i,
                            c.id,
                            c.name,
                            c.status,
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
        finally:
            conn.close()
        return replace(run, id=run_id)

    def _runs(
        self, rows: Iterable[tuple[Any, ...]], conn: sqlite3.Connection
    ) -> list[ValidationRun]:
        runs = []
        for row in rows:
            checks = conn.execute(
                "SELECT check_id, name, status, figure, value, unit, detail, fix_id, error "
                "FROM validation_checks WHERE run_id = ? ORDER BY position",
                (row[0],),
            ).fetchall()
            try:
                info = json.loads(row[11])
            except ValueError:
                info = {}
            runs.append(
                ValidationRun(
                    id=int(row[0]),
                    created_at=float(row[1]),
                    python=row[2],
                    env_name=row[3],
                    torch_version=row[4],
                    build=row[5],
                    device_name=row[6],
                    gfx=row[7],
                    gcn_arch=row[8],
                    os=row[9],
                    outcome=row[10],
                    info=info if isinstance(info, dict) else {},
                    checks=tuple(CheckResult(*c) for c in checks),
                )
            )
        return runs

    def list_runs(self, limit: int = 200) -> list[ValidationRun]:
        """Newest first."""
        conn = self._connect()
        try:
            rows = conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM validation_runs ORDER BY id DESC LIMIT ?", (limit,)
            ).fetchall()
            return self._runs(rows, conn)
        finally:
            conn.close()

    def get(self, run_id: int) -> ValidationRun | None:
        conn = self._connect()
        try:
            rows = conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM validation_runs WHERE id = ?", (run_id,)
            ).fetchall()
            runs = self._runs(rows, conn)
        finally:
            conn.close()
        return runs[0] if runs else None

    def delete(self, run_id: int) -> None:
        conn = self._connect()
        try:
            with conn:
                conn.execute("DELETE FROM validation_runs WHERE id = ?", (run_id,))
        finally:
            conn.close()
