"""Exact outcomes of apply, undo and recovery (issue 19): a store left unchanged, a write or
restore that fails at a chosen step, a missing backup, a journal that cannot be saved. Each
test states every file's bytes, the journal and the words the user reads.

The stores are the real Linux file stores in a temp home (``make_stores``); faults are
injected in-process by replacing one store's ``write`` / ``restore`` or ``journal.save``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.envvars import journal, transaction
from rocmpanel.envvars.plan import EnvChange
from rocmpanel.envvars.store import EnvStore, FileEnvStore, make_stores, sha256
from rocmpanel.envvars.transaction import (
    apply_changes,
    apply_plans,
    recover,
    recover_and_read,
    undo_last,
)

PROFILE = b"# mine\nexport EDITOR=vi\n"
ENVD_HEAD = (
    b"# Written by rocmpanel (Setup tab or `rocmpanel env`). The systemd user manager reads\n"
    b"# this file when your session starts: changes apply from the next login.\n"
)
ENVD_A = ENVD_HEAD + b"A_VAR=1\n"
BLOCK_A = (
    b"# >>> rocmpanel environment >>>\n"
    b"# Managed by rocmpanel (Setup tab or `rocmpanel env`); edits inside this block are "
    b"replaced.\n"
    b"export A_VAR='1'\n"
    b"# <<< rocmpanel environment <<<\n"
)
BOTH = ["environment.d", "profile"]
SET_A = [EnvChange("A_VAR", "1")]


@pytest.fixture
def stores(tmp_path: Path) -> dict[str, FileEnvStore]:
    """environment.d (no file yet), ~/.profile (the user's two lines) and the session store."""
    (tmp_path / ".profile").write_bytes(PROFILE)
    made = make_stores("linux", home=tmp_path, keep=20)
    return {key: store for key, store in made.items() if isinstance(store, FileEnvStore)}


def raw(store: FileEnvStore) -> bytes | None:
    return store.path.read_bytes() if store.path.exists() else None


def backups() -> list[str]:
    folder = paths.backups_dir()
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def fail(message: str) -> Callable[..., None]:
    def raiser(*args: Any, **kwargs: Any) -> None:
        raise PanelError(message, "injected")

    return raiser


# ---- an apply where a store is unchanged -----------------------------------------------------


def test_a_store_already_holding_the_value_is_skipped_not_refused(stores) -> None:
    envd, profile = stores["environment.d"], stores["profile"]
    envd.path.parent.mkdir(parents=True)
    envd.path.write_bytes(ENVD_A)
    result = apply_changes(stores, BOTH, SET_A)
    assert result.targets == (str(profile.path),)
    assert result.message == f"Wrote {profile.path}."
    assert result.notes == ()
    assert result.diff.startswith(f"--- {profile.path} (now)\n+++ {profile.path} (new)\n")
    assert raw(envd) == ENVD_A and raw(profile) == PROFILE + BLOCK_A
    [entry] = journal.load()
    assert entry["state"] == "complete" and entry["summary"] == "A_VAR=1"
    assert [record["store"] for record in entry["records"]] == ["profile"]
    assert undo_last(stores).targets == (str(profile.path),)
    assert raw(envd) == ENVD_A and raw(profile) == PROFILE


def test_an_unset_of_a_variable_one_store_lacks_writes_only_the_other(stores) -> None:
    envd, profile = stores["environment.d"], stores["profile"]
    apply_changes(stores, ["profile"], SET_A)
    result = apply_changes(stores, BOTH, [EnvChange("A_VAR", None)])
    assert result.message == f"Wrote {profile.path}." and raw(envd) is None
    assert raw(profile) == PROFILE
    assert [e["summary"] for e in journal.load()] == ["A_VAR=1", "unset A_VAR"]


def test_nothing_to_change_writes_no_journal_and_keeps_the_notes(stores, tmp_path) -> None:
    leftover = tmp_path / "..profile.rocmpanel-999999999.ab12.tmp"
    leftover.write_bytes(b"half")
    result = apply_changes(stores, ["environment.d"], [EnvChange("A_VAR", None)])
    assert result == transaction.ApplyResult(
        (),
        "Nothing to change.",
        (f"Removed 1 leftover temporary file(s) of an interrupted write: {leftover}.",),
        "",
    )
    assert not journal.journal_path().exists() and backups() == []


# ---- a write that fails part-way --------------------------------------------------------------


def test_a_failed_second_write_restores_the_first_and_says_so(stores, monkeypatch) -> None:
    envd, profile = stores["environment.d"], stores["profile"]
    envd.path.parent.mkdir(parents=True)
    envd.path.write_bytes(ENVD_HEAD)
    monkeypatch.setattr(profile, "write", fail("Could not write ~/.profile: disk full."))
    with pytest.raises(PanelError) as info:
        apply_changes(stores, BOTH, SET_A)
    assert info.value.message == (
        "Could not write ~/.profile: disk full. The stores already written were restored; "
        "nothing changed."
    )
    assert raw(envd) == ENVD_HEAD and raw(profile) == PROFILE
    assert journal.load() == []
    assert recover(stores) == []


def test_a_failed_first_write_claims_no_restore(stores, monkeypatch) -> None:
    envd, profile = stores["environment.d"], stores["profile"]
    monkeypatch.setattr(envd, "write", fail("Could not write envd: disk full."))
    with pytest.raises(PanelError) as info:
        apply_changes(stores, BOTH, SET_A)
    assert info.value.message == "Could not write envd: disk full."
    assert raw(envd) is None and raw(profile) == PROFILE and journal.load() == []


def test_a_failed_restore_after_a_failed_write_says_it_was_not_restored(
    stores, monkeypatch
) -> None:
    envd, profile = stores["environment.d"], stores["profile"]
    monkeypatch.setattr(profile, "write", fail("Could not write ~/.profile: disk full."))
    monkeypatch.setattr(envd, "restore", fail("Could not remove envd: busy."))
    with pytest.raises(PanelError) as info:
        apply_changes(stores, BOTH, SET_A)
    assert info.value.message == (
        "Could not write ~/.profile: disk full. Restoring the stores already written also "
        "failed: Could not remove envd: busy. The next rocmpanel command will try again."
    )
    assert info.value.detail == "injected"
    assert raw(envd) == ENVD_A and raw(profile) == PROFILE
    [entry] = journal.load()
    assert entry["state"] == "pending"
    monkeypatch.delattr(envd, "restore")  # the faults are gone
    monkeypatch.delattr(profile, "write")
    assert recover(stores) == [
        f"An interrupted change (A_VAR=1) was rolled back: {envd.path} restored."
    ]
    assert raw(envd) is None and raw(profile) == PROFILE and journal.load() == []


def test_an_unsaveable_pending_entry_changes_nothing(stores, monkeypatch) -> None:
    monkeypatch.setattr(journal, "save", fail("Could not write env_undo.json: disk full."))
    with pytest.raises(PanelError) as info:
        apply_changes(stores, BOTH, SET_A)
    assert info.value.message == (
        "The undo record could not be saved (Could not write env_undo.json: disk full.); "
        "nothing was changed."
    )
    assert info.value.detail == "injected"
    assert raw(stores["environment.d"]) is None and raw(stores["profile"]) == PROFILE


def test_an_uncompletable_entry_is_a_note_and_the_next_command_completes_it(
    stores, monkeypatch
) -> None:
    real_save = journal.save

    def save(entries: list[journal.Entry]) -> None:
        if entries and entries[-1]["state"] == "complete":
            raise PanelError("Could not write env_undo.json: disk full.")
        real_save(entries)

    monkeypatch.setattr(journal, "save", save)
    result = apply_changes(stores, BOTH, SET_A)
    assert result.notes == (
        "The undo record could not be completed (Could not write env_undo.json: disk full.); "
        "the next rocmpanel command will complete it.",
    )
    assert raw(stores["profile"]) == PROFILE + BLOCK_A
    monkeypatch.setattr(journal, "save", real_save)
    assert recover(stores) == [
        "An interrupted change (A_VAR=1) had been written completely; it can be undone as usual."
    ]
    assert [e["state"] for e in journal.load()] == ["complete"]


def test_the_entry_names_every_change_sorted_with_an_id_and_a_time(stores) -> None:
    apply_changes(stores, BOTH, [EnvChange("B_VAR", "2"), EnvChange("A_VAR", None)])
    [entry] = journal.load()
    assert entry["summary"] == "B_VAR=2; unset A_VAR"
    assert re.fullmatch(r"[0-9a-f]{32}", entry["id"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", entry["time"])


def test_after_change_is_told_once_per_written_store(stores, monkeypatch) -> None:
    told: list[str] = []
    for key, store in stores.items():
        monkeypatch.setattr(store, "after_change", lambda key=key: told.append(key))
    apply_changes(stores, ["profile", "environment.d"], SET_A)
    assert told == ["profile", "environment.d"]
    told.clear()
    undo_last(stores)
    assert told == ["profile", "environment.d"]


def test_apply_changes_asks_a_change_function_per_store(stores) -> None:
    asked: list[tuple[str, dict[str, str]]] = []

    def changes(store: EnvStore, snapshot: Any) -> list[EnvChange]:
        asked.append((store.key, dict(snapshot.values)))
        return [EnvChange("B_VAR", store.key.upper())]

    apply_changes(stores, ["profile", "session"], changes)
    assert asked == [("profile", {}), ("session", {})]
    assert stores["profile"].read().values == {"B_VAR": "PROFILE"}
    assert stores["session"].read().values == {"B_VAR": "SESSION"}


def test_a_damaged_store_stops_the_apply_before_anything_is_written(stores) -> None:
    session = stores["session"]
    session.path.parent.mkdir(parents=True, exist_ok=True)
    session.path.write_bytes(b"[]")
    with pytest.raises(PanelError) as info:
        apply_changes(stores, ["profile", "session"], SET_A)
    assert info.value.message == (
        f'{session.path}: expected {{"variables": {{"NAME": "value", ...}}}}. Nothing was '
        f"changed: fix the file, or move it aside (mv {session.path} {session.path}.bad) and "
        "try again."
    )
    assert raw(stores["profile"]) == PROFILE and journal.load() == []


def test_apply_plans_writes_reviewed_plans(stores) -> None:
    plans = [s.plan(s.read(), SET_A) for s in (stores["environment.d"], stores["profile"])]
    result = apply_plans(stores, plans)
    assert result.message == f"Wrote {stores['environment.d'].path}, {stores['profile'].path}."
    assert result.diff == ""  # the editor shows its own diff
    assert raw(stores["environment.d"]) == ENVD_A


def test_apply_plans_first_finishes_an_interrupted_change(stores) -> None:
    pending(stores, BOTH, ["environment.d"])  # killed after writing environment.d only
    session = stores["session"]
    result = apply_plans(stores, [session.plan(session.read(), [EnvChange("B_VAR", "2")])])
    assert result.notes == (
        "An interrupted change (A_VAR=1) was rolled back: "
        f"{stores['environment.d'].path} restored.",
    )
    assert raw(stores["environment.d"]) is None and raw(stores["profile"]) == PROFILE
    assert session.read().values == {"B_VAR": "2"}
    assert [(e["state"], e["summary"]) for e in journal.load()] == [("complete", "B_VAR=2")]


def test_the_backups_folder_is_probed_with_a_temp_file_recovery_knows(stores, monkeypatch):
    real = transaction.tempfile.mkstemp
    calls: list[dict[str, Any]] = []

    def spy(**kwargs: Any) -> tuple[int, str]:
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(transaction.tempfile, "mkstemp", spy)
    apply_changes(stores, ["profile"], SET_A)
    prefix = f".probe.rocmpanel-{os.getpid()}."
    # the first temp file of an apply is the probe; the backup and the writes follow
    assert calls[0] == {"prefix": prefix, "suffix": ".tmp", "dir": paths.backups_dir()}
    assert [call for call in calls if call["prefix"].startswith(".probe")] == calls[:1]
    assert [name for name in backups() if name.startswith(".probe")] == []


def test_an_unwritable_backups_folder_is_named(stores, monkeypatch) -> None:
    def no_temp(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(transaction.tempfile, "mkstemp", no_temp)
    with pytest.raises(PanelError) as info:
        apply_changes(stores, BOTH, SET_A)
    assert info.value.message == (
        f"The backups folder {paths.backups_dir()} is not writable (Permission denied). "
        "rocmpanel backs up every file before it changes it, so nothing was changed: make "
        "the folder writable and try again."
    )
    assert info.value.detail == "[Errno 13] Permission denied"
    assert raw(stores["profile"]) == PROFILE and journal.load() == []


def test_two_failed_restores_after_a_failed_write_are_both_named(stores, monkeypatch) -> None:
    keys = ["environment.d", "session", "profile"]
    monkeypatch.setattr(stores["profile"], "write", fail("Could not write ~/.profile."))
    monkeypatch.setattr(stores["environment.d"], "restore", fail("Envd failed."))
    monkeypatch.setattr(stores["session"], "restore", fail("Session failed."))
    with pytest.raises(PanelError) as info:
        apply_changes(stores, keys, SET_A)
    assert info.value.message == (
        "Could not write ~/.profile. Restoring the stores already written also failed: "
        "Session failed. Envd failed. The next rocmpanel command will try again."
    )  # restored newest first


def test_a_journal_that_cannot_drop_a_rolled_back_entry_leaves_it_for_recovery(
    stores, monkeypatch
) -> None:
    monkeypatch.setattr(stores["profile"], "write", fail("Could not write ~/.profile."))
    real_save = journal.save
    saves: list[int] = []

    def save_once(entries: Any) -> None:  # the pending entry is saved, dropping it fails
        saves.append(len(entries))
        if len(saves) > 1:
            raise PanelError("Could not write env_undo.json: disk full.")
        real_save(entries)

    monkeypatch.setattr(journal, "save", save_once)
    with pytest.raises(PanelError) as info:
        apply_changes(stores, BOTH, SET_A)
    assert info.value.message == (
        "Could not write ~/.profile. The stores already written were restored; nothing changed."
    )
    assert saves == [1, 0]
    monkeypatch.setattr(journal, "save", real_save)
    assert [e["state"] for e in journal.load()] == ["pending"]
    assert recover(stores) == [
        "An interrupted change (A_VAR=1) had not been written yet; nothing was changed."
    ]
    assert raw(stores["environment.d"]) is None and raw(stores["profile"]) == PROFILE


# ---- undo ------------------------------------------------------------------------------------


def test_undo_with_an_empty_journal_is_refused() -> None:
    with pytest.raises(PanelError) as info:
        undo_last({})
    assert info.value.message == "There is no apply to undo."


def test_an_undo_whose_restore_fails_keeps_its_entry_for_recovery(stores, monkeypatch) -> None:
    envd, profile = stores["environment.d"], stores["profile"]
    apply_changes(stores, ["session"], [EnvChange("B_VAR", "2")])
    apply_changes(stores, BOTH, SET_A)
    earlier, applied = journal.load()
    monkeypatch.setattr(envd, "restore", fail("Could not remove envd: busy."))
    with pytest.raises(PanelError) as info:
        undo_last(stores)
    assert info.value.message == (
        "Undo failed: Could not remove envd: busy. The next rocmpanel command will try to "
        "finish it."
    )
    assert raw(envd) == ENVD_A and raw(profile) == PROFILE  # profile restored first
    assert journal.load() == [earlier, {**applied, "state": "undoing"}]
    assert recover(stores) == [
        "An interrupted undo of (A_VAR=1) could not be finished: Could not remove envd: busy."
    ]
    assert journal.load() == [earlier, {**applied, "state": "undoing"}]
    leftover = profile.path.parent / "..profile.rocmpanel-999999999.ab12.tmp"
    leftover.write_bytes(b"half")
    with pytest.raises(PanelError) as again:
        undo_last(stores)
    assert again.value.message == (
        "The last change (A_VAR=1) was interrupted and could not be finished or rolled back "
        "yet; nothing was restored. Removed 1 leftover temporary file(s) of an interrupted "
        f"write: {leftover}. An interrupted undo of (A_VAR=1) could not be finished: "
        "Could not remove envd: busy."
    )
    monkeypatch.delattr(envd, "restore")
    assert recover(stores) == [
        f"An interrupted undo of (A_VAR=1) was finished: {envd.path} restored."
    ]
    assert raw(envd) is None and raw(profile) == PROFILE and journal.load() == [earlier]


def test_an_undo_whose_restores_all_fail_names_each(stores, monkeypatch) -> None:
    apply_changes(stores, BOTH, SET_A)
    monkeypatch.setattr(stores["environment.d"], "restore", fail("Envd failed."))
    monkeypatch.setattr(stores["profile"], "restore", fail("Profile failed."))
    with pytest.raises(PanelError) as info:
        undo_last(stores)
    assert info.value.message == (
        "Undo failed: Profile failed. Envd failed. The next rocmpanel command will try to "
        "finish it."
    )
    assert recover(stores) == [
        "An interrupted undo of (A_VAR=1) could not be finished: Profile failed. Envd failed."
    ]


@pytest.mark.parametrize("which", ["environment.d", "profile"])
def test_an_undo_with_a_missing_backup_restores_nothing(stores, which) -> None:
    envd, profile = stores["environment.d"], stores["profile"]
    envd.path.parent.mkdir(parents=True)
    envd.path.write_bytes(ENVD_HEAD)
    apply_changes(stores, BOTH, SET_A)
    [applied] = journal.load()
    record = next(r for r in applied["records"] if r["store"] == which)
    Path(record["backup"]).unlink()
    before = backups()
    with pytest.raises(PanelError) as info:
        undo_last(stores)
    assert info.value.message == (
        f"The backup {record['backup']} needed to undo is gone; nothing was restored."
    )
    assert raw(envd) == ENVD_A and raw(profile) == PROFILE + BLOCK_A
    assert journal.load() == [applied] and backups() == before


def test_an_undo_of_a_changed_store_restores_nothing(stores) -> None:
    envd, profile = stores["environment.d"], stores["profile"]
    apply_changes(stores, BOTH, SET_A)
    [applied] = journal.load()
    profile.path.write_bytes(PROFILE + BLOCK_A + b"# by hand\n")
    with pytest.raises(PanelError) as info:
        undo_last(stores)
    assert info.value.message == (
        f"{profile.path} changed after rocmpanel wrote it; undo would lose those changes, so "
        "nothing was restored."
    )
    assert raw(envd) == ENVD_A and journal.load() == [applied]


def test_an_undo_of_a_store_not_available_here_is_refused(stores) -> None:
    apply_changes(stores, BOTH, SET_A)
    with pytest.raises(PanelError) as info:
        undo_last({"environment.d": stores["environment.d"]})
    assert info.value.message == (
        "The last apply wrote the profile store, which is not available here; nothing was restored."
    )
    assert raw(stores["environment.d"]) == ENVD_A


def test_undo_keeps_a_copy_of_what_it_replaces_and_names_the_files(stores) -> None:
    envd, profile = stores["environment.d"], stores["profile"]
    apply_changes(stores, BOTH, SET_A)
    after_apply = backups()
    result = undo_last(stores)
    assert result.targets == (str(envd.path), str(profile.path))
    assert result.message == "Undid A_VAR=1." and result.notes == ()
    new = sorted(set(backups()) - set(after_apply))
    contents = sorted(paths.backups_dir().joinpath(name).read_bytes() for name in new)
    assert contents == sorted([ENVD_A, PROFILE + BLOCK_A])


def test_an_entry_without_a_summary_is_the_last_apply(stores) -> None:
    apply_changes(stores, ["profile"], SET_A)
    entries = journal.load()
    del entries[-1]["summary"]
    journal.save(entries)
    assert undo_last(stores).message == "Undid the last apply."


def test_an_unremovable_undo_record_is_a_note_and_recovery_drops_it(stores, monkeypatch) -> None:
    apply_changes(stores, BOTH, SET_A)
    real_save = journal.save

    def save(entries: list[journal.Entry]) -> None:
        if not entries:
            raise PanelError("Could not write env_undo.json: disk full.")
        real_save(entries)

    monkeypatch.setattr(journal, "save", save)
    result = undo_last(stores)
    assert result.notes == (
        "The undo record could not be removed (Could not write env_undo.json: disk full.); "
        "the next rocmpanel command will remove it.",
    )
    monkeypatch.setattr(journal, "save", real_save)
    assert raw(stores["profile"]) == PROFILE and raw(stores["environment.d"]) is None
    assert recover(stores) == ["An interrupted undo of (A_VAR=1) was finished."]
    assert journal.load() == []


# ---- recovery --------------------------------------------------------------------------------


def pending(stores: dict[str, FileEnvStore], keys: list[str], written: list[str]) -> None:
    """A journal whose last entry is an apply of SET_A killed after writing ``written``."""
    plans = [stores[key].plan(stores[key].read(), SET_A) for key in keys]
    records = [stores[plan.store].backup(plan, set()) for plan in plans]
    entry = {"id": "t", "state": "pending", "summary": "A_VAR=1", "records": records}
    journal.save([*journal.load(), entry])
    for plan in plans:
        if plan.store in written:
            stores[plan.store].write(plan)


def test_an_entry_of_a_store_not_available_here_is_left_for_later(stores) -> None:
    pending(stores, ["session", "environment.d", "profile"], ["session"])
    [entry] = journal.load()
    notes = recover({"profile": stores["profile"]})
    assert notes == [
        "An interrupted change (A_VAR=1) involves the environment.d, session store, which is "
        "not available here; it was left for later."
    ]
    assert journal.load() == [entry]


def test_an_entry_that_cannot_be_checked_is_kept(stores, monkeypatch) -> None:
    pending(stores, BOTH, ["environment.d"])
    monkeypatch.setattr(stores["profile"], "state", fail("Could not read ~/.profile."))
    assert recover(stores) == [
        "An interrupted change (A_VAR=1) could not be checked: Could not read ~/.profile."
    ]
    assert [e["state"] for e in journal.load()] == ["pending"]


def test_a_roll_back_that_fails_is_kept_and_said(stores, monkeypatch) -> None:
    pending(stores, BOTH, BOTH)
    stores["profile"].path.write_bytes(b"# by hand\n")
    entries = journal.load()
    del entries[-1]["summary"]
    journal.save(entries)
    monkeypatch.setattr(stores["environment.d"], "restore", fail("Could not remove envd."))
    told: list[str] = []
    monkeypatch.setattr(stores["environment.d"], "after_change", lambda: told.append("x"))
    assert recover(stores) == [
        "An interrupted change (?) could not be rolled back: Could not remove envd."
    ]
    assert [e["state"] for e in journal.load()] == ["pending"] and told == []


def test_every_failed_roll_back_is_named(stores, monkeypatch) -> None:
    pending(stores, ["session", "environment.d", "profile"], ["session", "environment.d"])
    monkeypatch.setattr(stores["environment.d"], "restore", fail("Envd failed."))
    monkeypatch.setattr(stores["session"], "restore", fail("Session failed."))
    assert recover(stores) == [
        "An interrupted change (A_VAR=1) could not be rolled back: Envd failed. Session failed."
    ]
    assert [e["state"] for e in journal.load()] == ["pending"]


def test_recovery_tells_each_restored_store_once(stores, monkeypatch) -> None:
    pending(stores, BOTH, BOTH[:1])
    told: list[str] = []
    for key, store in stores.items():
        monkeypatch.setattr(store, "after_change", lambda key=key: told.append(key))
    recover(stores)
    assert told == ["environment.d"]


def test_complete_entries_before_an_interrupted_one_are_kept(stores) -> None:
    apply_changes(stores, ["session"], [EnvChange("B_VAR", "2")])
    [done] = journal.load()
    pending(stores, BOTH, [])
    assert recover(stores) == [
        "An interrupted change (A_VAR=1) had not been written yet; nothing was changed."
    ]
    assert journal.load() == [done]


@pytest.mark.parametrize("count", [3, 4])
def test_leftover_temp_files_are_named_three_at_most_and_counted(stores, count) -> None:
    beside_journal = journal.journal_path().parent / ".env_undo.json.rocmpanel-999999999.x1.tmp"
    folder = paths.backups_dir()
    folder.mkdir(parents=True)
    in_backups = [folder / f".b{n}.rocmpanel-999999999.ab1{n}.tmp" for n in range(count - 1)]
    for path in [beside_journal, *in_backups]:
        path.write_bytes(b"half")
    named = ", ".join(str(path) for path in [beside_journal, *in_backups][:3])
    assert recover(stores) == [
        f"Removed {count} leftover temporary file(s) of an interrupted write: {named}"
        + (" …." if count > 3 else ".")
    ]
    assert not beside_journal.exists() and not any(path.exists() for path in in_backups)
    assert recover(stores) == []


def test_a_damaged_journal_is_noted_raised_or_moved(stores) -> None:
    path = journal.journal_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"[]")
    why = "it is not a JSON object with an 'entries' list"
    message = (
        f"rocmpanel cannot read its undo journal {path}: {why}. Move it aside "
        f"(mv {path} {path}.bad) to continue; nothing was changed."
    )
    assert recover(stores) == [message]
    assert recover(stores, on_damaged="note") == [message]
    with pytest.raises(journal.JournalError):
        recover(stores, on_damaged="raise")
    [note] = recover(stores, on_damaged="move")
    [aside] = path.parent.glob("env_undo.json.bad-*")
    assert note == (
        f"The undo journal {path} could not be read ({why}); it was kept as {aside} and a new "
        "one was started (earlier changes can no longer be undone from rocmpanel)."
    )
    assert aside.read_bytes() == b"[]" and not path.exists()


def test_recover_and_read_reports_a_recovery_that_could_not_run(stores, monkeypatch) -> None:
    monkeypatch.setattr(transaction, "recover", fail("another rocmpanel is busy."))
    read = recover_and_read(stores)
    assert read.notes == ("another rocmpanel is busy.",)
    assert read.snapshots["profile"].raw == PROFILE


def test_a_complete_journal_without_leftovers_needs_no_recovery(stores) -> None:
    apply_changes(stores, ["profile"], SET_A)
    assert transaction._needs_recovery(stores) is False
    entries = journal.load()
    journal.save([*entries, {**entries[-1], "state": "undoing"}])
    assert transaction._needs_recovery(stores) is True
    assert sha256(raw(stores["profile"])) == entries[-1]["records"][0]["written_sha256"]


def test_a_roll_back_names_every_restored_file_and_every_file_left_alone(stores) -> None:
    envd, profile, session = stores["environment.d"], stores["profile"], stores["session"]
    pending(stores, ["environment.d", "profile", "session"], ["environment.d", "profile"])
    assert recover(dict(stores)) == [
        f"An interrupted change (A_VAR=1) was rolled back: {envd.path}, {profile.path} restored."
    ]
    pending(stores, ["environment.d", "profile", "session"], ["environment.d"])
    profile.path.write_bytes(b"# by hand\n")
    session.path.parent.mkdir(parents=True, exist_ok=True)
    session.path.write_bytes(b'{"variables": {}}\n')
    assert recover(stores) == [
        f"An interrupted change (A_VAR=1) was rolled back: {envd.path} restored. "
        f"{profile.path}, {session.path} had been changed meanwhile and was left as it is."
    ]
    assert raw(envd) is None and raw(profile) == b"# by hand\n"


def test_temp_files_of_other_files_do_not_take_the_lock(stores, tmp_path, monkeypatch) -> None:
    other = tmp_path / ".bashrc.rocmpanel-999999999.ab12.tmp"
    other.write_bytes(b"not ours")

    def busy(timeout: float | None = None) -> None:
        raise PanelError("busy")

    monkeypatch.setattr(transaction, "env_lock", busy)
    assert recover(stores) == [] and other.exists()
