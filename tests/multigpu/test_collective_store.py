"""Saved collective runs: round trip, order, delete, a damaged file and a damaged row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.base.sqlite import set_read_only
from rocmpanel.multigpu.collective import CollectiveRun, SizeResult
from rocmpanel.multigpu.collective_store import CollectiveStore, database_file


def a_run(when: float = 1.0, **changes: object) -> CollectiveRun:
    fields: dict[str, object] = {
        "created_at": when,
        "outcome": "done",
        "device": "cpu",
        "world_size": 2,
        "backend": "gloo",
        "torch_version": "2.13.0+cpu",
        "devices": ("CPU", "CPU"),
        "where": "CPU",
        "python": "/venv/bin/python",
        "sizes": (
            SizeResult(1024, 256, 1000.0, 0.001, 0.001, 20),
            SizeResult(4096, 1024, 900.0, 0.0045, 0.0045, 20),
        ),
        "skipped": ((1 << 30, "needs about 3 GiB"),),
        "duration_s": 3.5,
    }
    fields.update(changes)
    return CollectiveRun(**fields)  # type: ignore[arg-type]


def test_the_file_lives_in_the_data_folder() -> None:
    assert database_file() == paths.data_dir() / "collective.sqlite3"
    assert CollectiveStore().path == database_file()


def test_runs_round_trip_newest_first(tmp_path: Path) -> None:
    store = CollectiveStore(tmp_path / "c.sqlite3")
    assert store.list_runs() == [] and not store.path.exists()  # reading writes nothing
    first = store.save(a_run(1.0))
    failed = store.save(
        a_run(2.0, outcome="failed", sizes=(), error="boom", cause="Out of memory.", skipped=())
    )
    assert (first.id, failed.id) == (1, 2)
    runs = store.list_runs()
    assert [r.id for r in runs] == [2, 1]
    assert runs[1] == first
    assert runs[0].cause == "Out of memory." and runs[0].sizes == ()
    assert store.get(1) == first and store.get(99) is None
    store.delete(1)
    assert [r.id for r in store.list_runs()] == [2]


def test_a_damaged_file_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    store = CollectiveStore(path)
    assert store.list_runs() == []
    assert store.notice is not None and "moved" in store.notice.lower()
    aside = [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not")
    assert store.save(a_run()).id == 1


def test_a_damaged_row_is_left_out_not_fatal(tmp_path: Path) -> None:
    store = CollectiveStore(tmp_path / "c.sqlite3")
    store.save(a_run(1.0))
    store.save(a_run(2.0))
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE collective_runs SET world_size = 'two' WHERE id = 1")
    assert [r.id for r in store.list_runs()] == [2]


def test_read_only_mode_never_creates_the_file(tmp_path: Path) -> None:
    store = CollectiveStore(tmp_path / "c.sqlite3")
    set_read_only(True)
    try:
        assert store.list_runs() == []
        assert not store.path.exists()
    finally:
        set_read_only(False)


def test_a_newer_schema_is_refused_not_overwritten(tmp_path: Path) -> None:
    store = CollectiveStore(tmp_path / "c.sqlite3")
    store.save(a_run())
    with sqlite3.connect(store.path) as db:
        db.execute("PRAGMA user_version = 99")
    fresh = CollectiveStore(tmp_path / "c.sqlite3")
    with pytest.raises(PanelError):
        fresh.save(a_run())
    assert store.path.exists()
