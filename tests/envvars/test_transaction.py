"""The write-ahead journal, recovery of interrupted applies and undos, and the lock."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.envvars import journal, lock
from rocmpanel.envvars.plan import EnvChange, FilePlan
from rocmpanel.envvars.store import EnvStore, sha256
from rocmpanel.envvars.stores.linux import EnvironmentDStore, ProfileStore
from rocmpanel.envvars.transaction import (
    apply_changes,
    apply_plans,
    recover,
    recover_and_read,
    undo_last,
)

PROFILE = b"# mine\nexport EDITOR=vi\n"
ENVD = b"MIOPEN_FIND_MODE=FAST\n"


@pytest.fixture
def stores(tmp_path: Path) -> dict[str, EnvStore]:
    made: dict[str, EnvStore] = {
        "environment.d": EnvironmentDStore(tmp_path, 20),
        "profile": ProfileStore(tmp_path, 20),
    }
    (tmp_path / ".profile").write_bytes(PROFILE)
    envd = made["environment.d"].path  # type: ignore[attr-defined]
    envd.parent.mkdir(parents=True)
    envd.write_bytes(ENVD)
    return made


def _raw(store: EnvStore) -> bytes | None:
    path: Path = store.path  # type: ignore[attr-defined]
    return path.read_bytes() if path.exists() else None


def _interrupted(
    stores: dict[str, EnvStore], change: EnvChange, written: tuple[str, ...]
) -> list[FilePlan]:
    """An apply killed after its pending entry and the writes of ``written`` only."""
    plans = [store.plan(store.read(), [change]) for store in stores.values()]
    records = [stores[plan.store].backup(plan, set()) for plan in plans]
    entry = {"id": "t", "state": "pending", "summary": change.describe(), "records": records}
    journal.save([*journal.load(), entry])
    for plan in plans:
        if plan.store in written:
            stores[plan.store].write(plan)
    return plans


def test_pending_entry_with_nothing_written_is_dropped(stores) -> None:
    _interrupted(stores, EnvChange("A_VAR", "1"), ())
    notes = recover(stores)
    assert notes == [
        "An interrupted change (A_VAR=1) had not been written yet; nothing was changed."
    ]
    assert journal.load() == []
    assert _raw(stores["profile"]) == PROFILE and _raw(stores["environment.d"]) == ENVD


def test_half_written_change_is_rolled_back_so_the_stores_are_in_step(stores) -> None:
    _interrupted(stores, EnvChange("A_VAR", "1"), ("environment.d",))
    assert b"A_VAR=1" in _raw(stores["environment.d"])  # out of step now
    notes = recover(stores)
    envd_path = stores["environment.d"].target()
    assert notes == [f"An interrupted change (A_VAR=1) was rolled back: {envd_path} restored."]
    assert _raw(stores["environment.d"]) == ENVD and _raw(stores["profile"]) == PROFILE
    assert journal.load() == []
    assert recover(stores) == []  # nothing left to do


def test_new_file_of_a_half_written_change_is_removed(tmp_path, stores) -> None:
    stores["environment.d"].path.unlink()  # type: ignore[attr-defined]
    _interrupted(stores, EnvChange("A_VAR", "1"), ("environment.d",))
    recover(stores)
    assert _raw(stores["environment.d"]) is None and _raw(stores["profile"]) == PROFILE


def test_fully_written_change_is_completed_and_can_be_undone(stores) -> None:
    _interrupted(stores, EnvChange("A_VAR", "1"), ("environment.d", "profile"))
    notes = recover(stores)
    assert notes == [
        "An interrupted change (A_VAR=1) had been written completely; it can be undone as usual."
    ]
    assert [entry["state"] for entry in journal.load()] == ["complete"]
    assert undo_last(stores).message == "Undid A_VAR=1."
    assert _raw(stores["environment.d"]) == ENVD and _raw(stores["profile"]) == PROFILE


def test_a_store_changed_by_someone_else_meanwhile_is_left_alone(stores) -> None:
    _interrupted(stores, EnvChange("A_VAR", "1"), ("environment.d",))
    profile: Path = stores["profile"].path  # type: ignore[attr-defined]
    profile.write_bytes(PROFILE + b"# edited by hand\n")
    notes = recover(stores)
    assert len(notes) == 1 and "was rolled back" in notes[0]
    assert f"{profile} had been changed meanwhile and was left as it is." in notes[0]
    assert _raw(stores["environment.d"]) == ENVD
    assert profile.read_bytes() == PROFILE + b"# edited by hand\n"
    assert journal.load() == []


def test_half_done_undo_is_finished(stores) -> None:
    apply_changes(stores, ["environment.d", "profile"], [EnvChange("A_VAR", "1")])
    entries = journal.load()
    entries[-1]["state"] = "undoing"
    journal.save(entries)
    stores["environment.d"].restore(entries[-1]["records"][0])  # killed after the first
    notes = recover(stores)
    assert notes == [
        f"An interrupted undo of (A_VAR=1) was finished: {stores['profile'].target()} restored."
    ]
    assert _raw(stores["environment.d"]) == ENVD and _raw(stores["profile"]) == PROFILE
    assert journal.load() == []


def test_the_entry_is_written_pending_before_any_store_is_touched(stores, monkeypatch) -> None:
    seen: list[tuple[str, bytes | None, bytes | None]] = []
    real_save = journal.save

    def spy(entries):
        last = entries[-1]["state"] if entries else None
        seen.append((last, _raw(stores["environment.d"]), _raw(stores["profile"])))
        real_save(entries)

    monkeypatch.setattr(journal, "save", spy)
    apply_changes(stores, ["environment.d", "profile"], [EnvChange("A_VAR", "1")])
    assert [state for state, _, _ in seen] == ["pending", "complete"]
    assert seen[0][1:] == (ENVD, PROFILE)  # nothing written yet when the entry was saved
    record = journal.load()[-1]["records"][1]
    assert record["before_sha256"] == sha256(PROFILE)
    assert record["written_sha256"] == sha256(_raw(stores["profile"]))
    assert Path(record["backup"]).read_bytes() == PROFILE


def test_unwritable_backups_folder_changes_nothing(stores) -> None:
    paths.data_dir().mkdir(parents=True, exist_ok=True)
    paths.backups_dir().write_bytes(b"")  # a file where the folder should be: no backup
    with pytest.raises(PanelError, match=r"backups folder .* nothing was changed"):
        apply_changes(stores, ["environment.d", "profile"], [EnvChange("A_VAR", "1")])
    assert _raw(stores["environment.d"]) == ENVD and _raw(stores["profile"]) == PROFILE
    assert journal.load() == []


def test_a_damaged_journal_is_moved_aside_by_an_apply_and_stops_an_undo(stores) -> None:
    path = journal.journal_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    with pytest.raises(journal.JournalError) as info:
        undo_last(stores)
    assert info.value.message.startswith(f"rocmpanel cannot read its undo journal {path}: ")
    assert f"Move it aside (mv {path} {path}.bad) to continue; nothing was changed." in str(
        info.value
    )
    assert path.read_text() == "{not json"
    read = recover_and_read(stores)
    assert read.notes == (info.value.message,) and path.read_text() == "{not json"
    result = apply_changes(stores, ["environment.d", "profile"], [EnvChange("A_VAR", "1")])
    aside = sorted(path.parent.glob("env_undo.json.bad-*"))
    assert len(aside) == 1 and aside[0].read_text() == "{not json"
    assert result.notes == (
        f"The undo journal {path} could not be read ({info.value.why}); it was kept as "
        f"{aside[0]} and a new one was started (earlier changes can no longer be undone "
        "from rocmpanel).",
    )
    assert [entry["summary"] for entry in journal.load()] == ["A_VAR=1"]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ([], "it is not a JSON object with an 'entries' list"),
        ({"entries": {}}, "'entries' is missing or not a list"),
        ({"version": 9, "entries": []}, "it was written by a newer rocmpanel (version 9)"),
        ({"entries": [{"records": "x"}]}, "entry 1: 'records' is missing or empty"),
        (
            {"entries": [{"records": [{"path": "p", "written_sha256": "s"}]}]},
            "entry 1, record 1: 'store' is missing or not a string",
        ),
        (
            {"entries": [{"records": [{"store": "profile", "path": "p", "written_sha256": 5}]}]},
            "entry 1, record 1: 'written_sha256' is missing or not a string",
        ),
        ({"entries": [{"state": "odd", "records": []}]}, "entry 1: unknown state 'odd'"),
        (
            {
                "entries": [
                    {
                        "records": [
                            {
                                "store": "registry",
                                "path": "p",
                                "written_sha256": "s",
                                "backup": "b",
                                "written": {"A": [1, 2]},
                            }
                        ]
                    }
                ]
            },
            "entry 1, record 1: the written value of 'A' is not [text, type]",
        ),
    ],
)
def test_journal_shapes_are_checked(data, why) -> None:
    path = journal.journal_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    with pytest.raises(journal.JournalError) as info:
        journal.load()
    assert info.value.why == why


def test_a_journal_of_the_previous_format_still_undoes(stores) -> None:
    apply_changes(stores, ["environment.d", "profile"], [EnvChange("A_VAR", "1")])
    data = json.loads(journal.journal_path().read_text())
    for entry in data["entries"]:  # version 1: no state, no before_sha256, no id
        del entry["state"], entry["id"]
        for record in entry["records"]:
            del record["before_sha256"]
    journal.journal_path().write_text(json.dumps({"version": 1, "entries": data["entries"]}))
    assert recover(stores) == []
    undo_last(stores)
    assert _raw(stores["environment.d"]) == ENVD and _raw(stores["profile"]) == PROFILE


def test_recovery_with_nothing_to_do_does_not_wait_for_the_lock(stores, monkeypatch) -> None:
    def busy(timeout=None):
        raise lock.EnvBusyError(lock.BUSY_MESSAGE)

    monkeypatch.setattr("rocmpanel.envvars.transaction.env_lock", busy)
    assert recover(stores) == []
    assert recover_and_read(stores).snapshots["profile"].raw == PROFILE


def test_a_lock_held_elsewhere_is_a_clear_refusal(stores, monkeypatch) -> None:
    holder = textwrap.dedent(
        f"""
        import sys, time
        from filelock import FileLock
        with FileLock({str(lock.lock_path())!r}):
            print("held", flush=True)
            sys.stdin.readline()
        """
    )
    lock.lock_path().parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        monkeypatch.setattr(lock, "LOCK_TIMEOUT", 0.3)
        started = time.monotonic()
        with pytest.raises(lock.EnvBusyError) as info:
            apply_changes(stores, ["environment.d", "profile"], [EnvChange("A_VAR", "1")])
        assert 0.3 <= time.monotonic() - started < 3
    finally:
        proc.communicate("\n", timeout=10)
    assert info.value.message == (
        "another rocmpanel is changing the environment; try again in a moment. Nothing was changed."
    )
    assert _raw(stores["profile"]) == PROFILE
    apply_plans(stores, [s.plan(s.read(), [EnvChange("A_VAR", "1")]) for s in stores.values()])
    assert b"A_VAR='1'" in _raw(stores["profile"])


def test_recovery_removes_only_its_own_temp_files_of_gone_writers(tmp_path, stores) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    ours = tmp_path / f"..profile.rocmpanel-{pid}.x1y2.tmp"
    other_file = tmp_path / f".bashrc.rocmpanel-{pid}.x1y2.tmp"
    old_style = tmp_path / "..profile.k3j4.tmp"
    for path in (ours, other_file, old_style):
        path.write_bytes(b"half")
    notes = recover(stores)
    assert notes == [f"Removed 1 leftover temporary file(s) of an interrupted write: {ours}."]
    assert not ours.exists() and other_file.exists() and old_style.exists()
    assert recover(stores) == []
