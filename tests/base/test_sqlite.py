"""Schema versions and migrations of the panel's sqlite stores."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.base.sqlite import Migration, connect, schema_version

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
    with pytest.raises(PanelError, match="newer rocmpanel"), connect(path, [V1], "notes"):
        pass


def test_garbage_is_a_panel_error(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(PanelError, match="could not be read"), connect(path, [V1], "notes"):
        pass


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
