"""Schema versions and migrations of the panel's sqlite stores."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.base.sqlite import Migration, connect, recovery_notice, schema_version

V1 = Migration(1, "notes table", "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);")
V2 = Migration(2, "notes get a date", "ALTER TABLE notes ADD COLUMN created REAL DEFAULT 0;")


def test_a_new_file_gets_the_newest_schema(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    with connect(path, [V1, V2], "notes") as db:
        db.execute("INSERT INTO notes (text, created) VALUES ('x', 1.5)")
        assert schema_version(db) == 2
    with closing_db(path) as raw:
        assert raw.execute("SELECT text, created FROM notes").fetchall() == [("x", 1.5)]


def test_an_old_file_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with connect(path, [V1], "notes") as db:
        db.execute("INSERT INTO notes (text) VALUES ('kept')")
    with connect(path, [V1, V2], "notes") as db:
        rows = db.execute("SELECT text, created FROM notes").fetchall()
        assert [tuple(r) for r in rows] == [("kept", 0)]
        assert schema_version(db) == 2


def test_a_failed_migration_leaves_the_old_version(tmp_path: Path) -> None:
    path = tmp_path / "f.sqlite3"
    with connect(path, [V1], "notes") as db:
        db.execute("INSERT INTO notes (text) VALUES ('kept')")
    broken = Migration(
        2, "broken", "ALTER TABLE notes ADD COLUMN a REAL;\nSELECT nope FROM nowhere;"
    )
    with pytest.raises(PanelError), connect(path, [V1, broken], "notes"):
        pass
    with closing_db(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
        columns = [r[1] for r in raw.execute("PRAGMA table_info(notes)")]
        assert columns == ["id", "text"]  # the half-applied step was rolled back


def test_a_newer_file_is_refused_not_changed(tmp_path: Path) -> None:
    path = tmp_path / "n.sqlite3"
    with connect(path, [V1, V2], "notes"):
        pass
    before = path.read_bytes()
    with pytest.raises(PanelError, match="made by a newer rocmpanel"), connect(path, [V1], "notes"):
        pass
    assert path.read_bytes() == before
    assert list(tmp_path.glob("*.corrupt-*")) == []


def test_garbage_is_moved_aside_and_a_new_file_made(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite3"
    garbage = b"this is not a database" * 100
    path.write_bytes(garbage)
    with connect(path, [V1], "notes") as db:
        db.execute("INSERT INTO notes (text) VALUES ('new')")
    (kept,) = tmp_path.glob("g.sqlite3.corrupt-*")
    assert kept.read_bytes() == garbage
    notice = recovery_notice(path)
    assert notice == (
        f"The notes at {path} is not a database (it does not start with sqlite's header). It "
        f"was moved to {kept.name} (kept as it was) and a new, empty notes was started."
    )
    with closing_db(path) as raw:
        assert raw.execute("SELECT text FROM notes").fetchall() == [("new",)]


def test_a_file_is_checked_once_per_process(tmp_path: Path, monkeypatch) -> None:
    from rocmpanel.base import sqlite as module

    path = tmp_path / "once.sqlite3"
    checks: list[Path] = []
    real = module._damage
    monkeypatch.setattr(module, "_damage", lambda p, m, t: checks.append(p) or real(p, m, t))
    for _ in range(3):
        with connect(path, [V1], "notes"):
            pass
    assert checks == [path]
    assert recovery_notice(path) is None


def test_damage_found_later_is_recovered_at_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "later.sqlite3"
    with connect(path, [V1], "notes") as db:
        db.execute("INSERT INTO notes (text) VALUES ('x')")
    path.write_bytes(b"\0" * 50 + b"garbage" * 200)  # damaged after the first check
    with pytest.raises(PanelError) as caught, connect(path, [V1], "notes") as db:
        db.execute("SELECT * FROM notes").fetchall()
    assert caught.value.message == (
        f"The notes at {path} is damaged. rocmpanel checks it again (and starts a new one, "
        "keeping the old file) the next time it is opened."
    )
    with connect(path, [V1], "notes") as db:
        assert db.execute("SELECT count(*) FROM notes").fetchone()[0] == 0
    assert len(list(tmp_path.glob("later.sqlite3.corrupt-*"))) == 1


def test_side_files_go_aside_with_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    path.write_bytes(b"garbage" * 100)
    Path(f"{path}-wal").write_bytes(b"a stale write-ahead log")
    Path(f"{path}-shm").write_bytes(b"its index")
    with connect(path, [V1], "notes"):
        pass
    (kept,) = tmp_path.glob("s.sqlite3.corrupt-*[0-9]")
    assert Path(f"{kept}-wal").read_bytes() == b"a stale write-ahead log"
    assert Path(f"{kept}-shm").read_bytes() == b"its index"
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()


def test_a_locked_file_is_a_clear_error_not_damage(tmp_path: Path) -> None:
    path = tmp_path / "busy.sqlite3"
    with connect(path, [V1], "notes"):
        pass
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with (
            pytest.raises(PanelError, match="is in use by another program"),
            connect(path, [V1], "notes", timeout=0.1) as db,
        ):
            db.execute("INSERT INTO notes (text) VALUES ('x')")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert list(tmp_path.glob("*.corrupt-*")) == []


def test_concurrent_first_opens_migrate_once(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            with connect(path, [V1, V2], "notes") as db:
                db.execute("INSERT INTO notes (text) VALUES ('t')")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with closing_db(path) as raw:
        assert raw.execute("SELECT count(*) FROM notes").fetchone()[0] == 8


class closing_db:
    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)

    def __enter__(self) -> sqlite3.Connection:
        return self.db

    def __exit__(self, *exc: object) -> None:
        self.db.close()
