"""Exact outcomes of the file store's decisions (issue 19): bounded reads and the words of
each read failure, the write checks, the undo record, what ``state`` finds, the checks
before an undo writes a backup back, ``sh -n``, and the factory.

Every store is a real ``FileEnvStore`` (environment.d or ~/.profile) in a temp home.
"""

from __future__ import annotations

import errno
import logging
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import NotRegularFileError
from rocmpanel.envvars import store as store_module
from rocmpanel.envvars.plan import EnvChange, FilePlan
from rocmpanel.envvars.store import (
    BEFORE,
    KEEP_BACKUPS,
    OTHER,
    WRITTEN,
    EnvConflictError,
    damaged_store_error,
    make_stores,
    read_limited,
    read_stores,
    sha256,
    shell_syntax_problem,
    store_notes,
)
from rocmpanel.envvars.stores.linux import EnvironmentDStore, ProfileStore
from rocmpanel.envvars.stores.session import SessionStore
from rocmpanel.envvars.stores.windows import WindowsUserStore

OLD = b"A_VAR=0\n"
HEAD = (
    "# Written by rocmpanel (Setup tab or `rocmpanel env`). The systemd user manager reads\n"
    "# this file when your session starts: changes apply from the next login.\n"
)
NEW = HEAD.encode() + b"A_VAR=1\n"  # a new file
EDITED = b"A_VAR=1\n"  # OLD, edited
EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


@pytest.fixture
def envd(tmp_path: Path) -> EnvironmentDStore:
    """environment.d holding OLD, keeping 20 backups."""
    store = EnvironmentDStore(tmp_path, 20)
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(OLD)
    return store


def set_a(store: EnvironmentDStore | ProfileStore) -> FilePlan:
    return store.plan(store.read(), [EnvChange("A_VAR", "1")])


def written(store: EnvironmentDStore) -> dict[str, Any]:
    """The undo record of setting A_VAR=1, after the write."""
    plan = set_a(store)
    record = store.backup(plan, set())
    store.write(plan)
    return record


def refusal(store: EnvironmentDStore, backup: object, why: str) -> str:
    return (
        f"The backup {backup} {why}, so nothing was restored and {store.path} was left as it "
        "is. Set or unset the variables again instead (earlier copies are in "
        f"{paths.backups_dir()})."
    )


def raising(exc: BaseException) -> Any:
    def fake(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return fake


# ---- reads ---------------------------------------------------------------------------------


def test_sha256_of_nothing_and_of_empty_bytes() -> None:
    assert sha256(None) is None
    assert sha256(b"") == EMPTY_SHA


def test_a_missing_file_reads_as_none_and_a_file_at_the_limit_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "CONFIG_LIMIT", 4)
    path = tmp_path / "f"
    assert read_limited(path) is None
    path.write_bytes(b"1234")
    assert read_limited(path) == b"1234"
    path.write_bytes(b"12345")
    with pytest.raises(PanelError) as info:
        read_limited(path)
    assert info.value.message.startswith(f"Could not read {path}: it ")
    assert info.value.message.endswith(
        ". rocmpanel edits only regular files of a few MiB at most (or links to one): replace "
        "it with a regular file and try again; nothing was changed."
    )
    assert str(path) not in info.value.message.removeprefix(f"Could not read {path}")


def test_a_folder_in_place_of_the_file_is_not_read(tmp_path) -> None:
    path = tmp_path / "f"
    path.mkdir()
    with pytest.raises(PanelError) as info:
        read_limited(path)
    assert info.value.message == (
        f"Could not read {path}: it is a folder, not a regular file. rocmpanel edits only "
        "regular files of a few MiB at most (or links to one): replace it with a regular file "
        "and try again; nothing was changed."
    )
    assert info.value.detail == f"{path} is a folder, not a regular file"


def test_a_file_in_place_of_a_folder_is_named(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b").write_bytes(b"")
    path = tmp_path / "a" / "b" / "c" / "d"
    with pytest.raises(PanelError) as info:
        read_limited(path)
    culprit = tmp_path / "a" / "b"
    assert info.value.message == (
        f"Could not read {path}: {culprit} is a file, not a folder. Nothing was changed. Move "
        f"it aside (mv {culprit} {culprit}.bak) and try again."
    )


def test_a_link_loop_is_named(tmp_path) -> None:
    path = tmp_path / "loop"
    path.symlink_to(path)
    with pytest.raises(PanelError) as info:
        read_limited(path)
    assert info.value.message == (
        f"Could not read {path}: it is a loop of symbolic links (or a chain too long to "
        f"follow). Nothing was changed. Replace the link with a regular file (rm {path}, then "
        "try again)."
    )


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            PermissionError(errno.EACCES, "Permission denied"),
            "permission denied. Nothing was changed. Give yourself read permission "
            "(chmod u+r {path}) and try again.",
        ),
        (
            OSError(errno.EIO, "Input/output error"),
            "Input/output error. Nothing was changed; fix or move the file aside and try again.",
        ),
        (
            OSError("odd"),
            "odd. Nothing was changed; fix or move the file aside and try again.",
        ),
        (  # no file on the way: the plain words
            NotADirectoryError(errno.ENOTDIR, "Not a directory"),
            "Not a directory. Nothing was changed; fix or move the file aside and try again.",
        ),
    ],
)
def test_other_read_failures_say_what_to_do(tmp_path, monkeypatch, error, said) -> None:
    path = tmp_path / "f"
    monkeypatch.setattr(store_module, "read_bytes", raising(error))
    with pytest.raises(PanelError) as info:
        read_limited(path)
    assert info.value.message == f"Could not read {path}: " + said.format(path=path)
    assert info.value.detail == str(error)


def test_read_gives_values_raw_bytes_or_the_problem(envd) -> None:
    snapshot = envd.read()
    assert (snapshot.store, snapshot.target) == ("environment.d", str(envd.path))
    assert (dict(snapshot.values), snapshot.raw, snapshot.problem) == ({"A_VAR": "0"}, OLD, "")
    envd.path.unlink()
    assert (dict(envd.read().values), envd.read().raw) == ({}, None)
    session = SessionStore(envd.path.parent / "s.json")
    session.path.write_bytes(b"[1]")
    damaged = session.read()
    assert damaged.problem == (
        f'{session.path}: expected {{"variables": {{"NAME": "value", ...}}}}'
    )
    assert (dict(damaged.values), damaged.raw) == ({}, b"[1]")
    assert (damaged.store, damaged.target) == ("session", str(session.path))


def test_an_empty_file_parses_as_empty_text(envd, monkeypatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr(envd, "parse", lambda text: seen.append(text) or {})
    envd.path.write_bytes(b"")
    assert dict(envd.read().values) == {} and seen == [""]


def test_a_path_that_repeats_in_the_reason_is_shortened_once(tmp_path, monkeypatch) -> None:
    path = tmp_path / "f"
    said = f"{path} is odd, says {path} "
    monkeypatch.setattr(store_module, "read_bytes", raising(NotRegularFileError(said)))
    with pytest.raises(PanelError) as info:
        read_limited(path)
    assert info.value.message.startswith(f"Could not read {path}: it is odd, says {path} . ")


def test_a_damaged_store_says_how_to_move_it_aside(envd, monkeypatch) -> None:
    snapshot = store_module.StoreSnapshot("environment.d", str(envd.path), {}, b"", "Bad")
    error = damaged_store_error(envd, snapshot)
    assert error.message == (
        f"Bad. Nothing was changed: fix the file, or move it aside (mv {envd.path} "
        f"{envd.path}.bad) and try again."
    )
    assert error.detail == "Bad"
    envd.platform = "windows"  # a file store on Windows: the path has a slash
    assert "(mv " in damaged_store_error(envd, snapshot).message
    monkeypatch.setattr(envd, "target", lambda: "HKCU\\Environment")
    assert damaged_store_error(envd, snapshot).message == (
        "Bad. Nothing was changed: fix the file, or move it aside and try again."
    )


@pytest.mark.parametrize("error", [PanelError("x"), OSError("x"), ValueError("x")])
def test_notes_of_a_store_that_fails_are_left_out(tmp_path, monkeypatch, caplog, error):
    stores = make_stores("linux", home=tmp_path, keep=3)
    (tmp_path / ".bash_profile").write_bytes(b"")
    monkeypatch.setattr(stores["environment.d"], "notes", raising(error))
    with caplog.at_level(logging.INFO, logger=store_module.__name__):
        notes = store_notes(stores.values())
    assert notes == [
        "~/.bash_profile exists, so bash login shells read it instead of ~/.profile (unless "
        "~/.bash_profile sources ~/.profile)."
    ]
    assert caplog.messages == [
        f"Could not collect the notes of {stores['environment.d'].target()}: x"
    ]


def test_read_stores_keeps_the_error_and_an_empty_snapshot(tmp_path, monkeypatch) -> None:
    stores = make_stores("linux", home=tmp_path, keep=3)
    error = PanelError("Could not read it.")
    monkeypatch.setattr(stores["profile"], "read", raising(error))
    read = read_stores(stores)
    assert read.errors == (error,) and read.notes == () and read.about == ()
    assert read.snapshots["profile"] == store_module.StoreSnapshot(
        "profile", str(tmp_path / ".profile"), {}, None, "Could not read it."
    )
    assert list(read.snapshots) == ["environment.d", "profile", "session"]


# ---- preflight and write -------------------------------------------------------------------


def test_a_file_changed_since_read_is_a_conflict_with_its_diff(envd) -> None:
    plan = set_a(envd)
    envd.path.write_bytes(b"A_VAR=2\n")
    with pytest.raises(EnvConflictError) as info:
        envd.preflight(plan)
    assert info.value.message == (
        f"{envd.path} changed since rocmpanel read it; nothing was written. Reload and review "
        "the changes."
    )
    assert (
        info.value.diff
        == info.value.detail
        == (f"--- {envd.path} (now)\n+++ {envd.path} (new)\n@@ -1 +1 @@\n-A_VAR=0\n+A_VAR=2\n")
    )


def test_a_plan_that_removes_the_file_is_not_written(envd) -> None:
    plan = FilePlan("environment.d", str(envd.path), OLD, None, (), "")
    with pytest.raises(PanelError) as info:
        envd.preflight(plan)
    assert info.value.message == f"Nothing to write to {envd.path}."
    with pytest.raises(PanelError) as again:
        envd.write(plan)
    assert again.value.message == f"Nothing to write to {envd.path}."
    assert envd.path.read_bytes() == OLD


def test_a_read_only_file_is_refused_with_its_mode(envd) -> None:
    plan = set_a(envd)
    envd.path.chmod(0o444)
    with pytest.raises(PanelError) as info:
        envd.preflight(plan)
    assert info.value.message == (
        f"{envd.path} is read-only; nothing was changed. Make it writable "
        f"(chmod u+w {envd.path}) or choose another store."
    )
    assert info.value.detail == "mode -r--r--r--"
    envd.path.chmod(0o644)
    envd.preflight(plan)


def test_the_nearest_existing_folder_must_be_writable(tmp_path, monkeypatch) -> None:
    store = EnvironmentDStore(tmp_path / "home", 3)  # .config/environment.d not there yet
    tmp_path.joinpath("home").mkdir()
    asked: list[tuple[Path, int]] = []

    def access(folder: Path, mode: int) -> bool:
        asked.append((folder, mode))
        return False

    monkeypatch.setattr(store_module.os, "access", access)
    with pytest.raises(PanelError) as info:
        store.preflight(set_a(store))
    home = tmp_path / "home"
    assert asked == [(home, os.W_OK | os.X_OK)]
    assert info.value.message == (
        f"The folder {home} is not writable, so {store.path} cannot be replaced; nothing "
        "was changed."
    )
    assert info.value.detail == f"os.access({home}, W_OK) is false"


def test_a_file_that_cannot_be_checked_is_named(envd, monkeypatch) -> None:
    error = OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(type(envd.path), "stat", raising(error))
    with pytest.raises(PanelError) as info:
        envd._check_writable()
    assert info.value.message == f"Could not check {envd.path}: Input/output error."
    assert info.value.detail == "[Errno 5] Input/output error"


def test_preflight_asks_the_store_about_the_new_contents(tmp_path, monkeypatch) -> None:
    profile = ProfileStore(tmp_path, 3)
    plan = set_a(profile)
    monkeypatch.setattr(profile, "syntax_problem", lambda data: "sh: 1: bad")
    with pytest.raises(PanelError) as info:
        profile.preflight(plan)
    assert info.value.message.startswith(f"The new {profile.path} would not pass `sh -n`")


def test_the_undo_record_names_the_backup_and_both_checksums(envd) -> None:
    plan = set_a(envd)
    record = envd.backup(plan, set())
    [backup] = paths.backups_dir().iterdir()
    assert record == {
        "store": "environment.d",
        "path": str(envd.path),
        "backup": str(backup),
        "before_sha256": sha256(OLD),
        "written_sha256": sha256(EDITED),
    }
    assert backup.read_bytes() == OLD and envd.path.read_bytes() == OLD
    envd.write(plan)
    assert envd.path.read_bytes() == EDITED


def test_a_new_file_has_no_backup(tmp_path) -> None:
    store = EnvironmentDStore(tmp_path, 3)
    record = store.backup(set_a(store), set())
    assert (record["backup"], record["before_sha256"]) == (None, None)
    assert not paths.backups_dir().exists()


def test_backups_are_pruned_to_keep_but_protected_ones_stay(envd) -> None:
    envd.keep = 1
    first = envd.backup(set_a(envd), set())["backup"]
    second = envd.backup(set_a(envd), {first})["backup"]
    assert sorted(p.name for p in paths.backups_dir().iterdir()) == sorted(
        [Path(first).name, Path(second).name]
    )
    third = envd.backup(set_a(envd), set())["backup"]
    assert [str(p) for p in paths.backups_dir().iterdir()] == [third]


# ---- state, check_restore, restore ---------------------------------------------------------


def test_state_is_written_before_or_other(envd) -> None:
    record = written(envd)
    assert envd.state(record) == WRITTEN
    envd.path.write_bytes(OLD)
    assert envd.state(record) == BEFORE
    envd.path.write_bytes(b"A_VAR=5\n")
    assert envd.state(record) == OTHER


def test_state_of_an_older_record_compares_with_its_backup(envd) -> None:
    record = written(envd)
    envd.path.write_bytes(OLD)
    Path(record["backup"]).write_bytes(b"changed since\n")
    assert envd.state(record) == BEFORE  # the recorded checksum, not the backup's
    Path(record["backup"]).write_bytes(OLD)
    del record["before_sha256"]
    assert envd.state(record) == BEFORE
    Path(record["backup"]).unlink()
    assert envd.state(record) == OTHER


def test_state_of_a_new_file_removed_again_is_before(tmp_path) -> None:
    store = EnvironmentDStore(tmp_path, 3)
    record = written(store)
    store.path.unlink()
    assert store.state(record) == BEFORE


def test_check_restore_refuses_a_changed_file_with_the_diff_from_the_backup(envd) -> None:
    record = written(envd)
    envd.path.write_bytes(EDITED + b"B=2\n")
    with pytest.raises(EnvConflictError) as info:
        envd.check_restore(record)
    assert info.value.message == (
        f"{envd.path} changed after rocmpanel wrote it; undo would lose those changes, so "
        "nothing was restored."
    )
    assert info.value.diff.startswith(f"--- {envd.path} (now)\n+++ {envd.path} (new)\n")
    assert "-A_VAR=0\n" in info.value.diff and "+B=2\n" in info.value.diff
    Path(record["backup"]).unlink()
    with pytest.raises(EnvConflictError) as gone:
        envd.check_restore(record)
    assert gone.value.diff.startswith(f"--- /dev/null (now)\n+++ {envd.path} (new)\n")


def test_check_restore_refuses_a_read_only_file(envd) -> None:
    record = written(envd)
    envd.path.chmod(0o444)
    with pytest.raises(PanelError, match=r"is read-only; nothing was changed"):
        envd.check_restore(record)
    envd.path.chmod(0o644)
    envd.check_restore(record)


def test_a_record_without_its_backup_is_refused(envd) -> None:
    record = {**written(envd), "backup": None}
    with pytest.raises(PanelError) as info:
        envd.check_restore(record)
    assert info.value.message == refusal(
        envd, "(none)", "is missing from the undo record although the file existed"
    )
    assert info.value.detail == "is missing from the undo record although the file existed"


def test_a_backup_outside_the_backups_folder_is_refused(envd, tmp_path) -> None:
    record = written(envd)
    outside = tmp_path / "elsewhere.bak"
    outside.write_bytes(OLD)
    with pytest.raises(PanelError) as info:
        envd.restore({**record, "backup": str(outside)})
    folder = paths.backups_dir().resolve()
    assert info.value.message == refusal(envd, outside, f"is not in the backups folder {folder}")
    assert envd.path.read_bytes() == EDITED


def test_a_backup_that_cannot_be_resolved_is_refused(envd) -> None:
    record = written(envd)
    loop = paths.backups_dir() / "loop.bak"
    loop.symlink_to(loop)
    with pytest.raises(PanelError) as info:
        envd.check_restore({**record, "backup": str(loop)})
    folder = paths.backups_dir().resolve()
    assert info.value.message == refusal(envd, loop, f"is not in the backups folder {folder}")


def test_a_changed_backup_is_refused_unless_the_record_is_older(envd) -> None:
    record = written(envd)
    Path(record["backup"]).write_bytes(b"A_VAR=9\n")
    with pytest.raises(PanelError) as info:
        envd.restore(record)
    assert info.value.message == refusal(
        envd,
        record["backup"],
        "does not match the checksum recorded when it was made (it was damaged or changed since)",
    )
    assert envd.path.read_bytes() == EDITED
    del record["before_sha256"]  # an older rocmpanel's record: nothing to compare with
    envd.restore(record)
    assert envd.path.read_bytes() == b"A_VAR=9\n"


def test_a_backup_the_store_refuses_is_not_written_back(envd, monkeypatch) -> None:
    record = written(envd)
    seen: list[bytes] = []

    def problem(data: bytes) -> str:
        seen.append(data)
        return "would not pass `sh -n` (x)"

    monkeypatch.setattr(envd, "check_restored_content", problem)
    with pytest.raises(PanelError) as info:
        envd.restore(record)
    assert info.value.message == refusal(envd, record["backup"], "would not pass `sh -n` (x)")
    assert seen == [OLD] and envd.path.read_bytes() == EDITED


def test_a_gone_backup_is_named(envd) -> None:
    record = written(envd)
    Path(record["backup"]).unlink()
    with pytest.raises(PanelError) as info:
        envd.restore(record)
    assert info.value.message == (
        f"The backup {record['backup']} needed to undo is gone; nothing was restored."
    )
    assert info.value.detail == (
        f"[Errno {errno.ENOENT}] No such file or directory: '{record['backup']}'"
    )


def test_restore_writes_the_backup_back_or_removes_a_new_file(envd, tmp_path) -> None:
    record = written(envd)
    envd.restore(record)
    assert envd.path.read_bytes() == OLD
    store = EnvironmentDStore(tmp_path / "other", 3)
    new = written(store)
    store.restore(new)
    assert not store.path.exists()
    store.restore(new)  # already gone: nothing to do
    assert not store.path.exists()


def test_restoring_through_a_dangling_link_removes_only_the_target(tmp_path) -> None:
    store = EnvironmentDStore(tmp_path, 3)
    store.path.parent.mkdir(parents=True)
    real = tmp_path / "real.conf"
    store.path.symlink_to(real)
    assert store.temp_places() == [
        (store.path.parent, store.path.name),
        (tmp_path, "real.conf"),
    ]
    record = written(store)
    assert real.read_bytes() == NEW
    store.restore(record)
    assert store.path.is_symlink() and not real.exists()


def test_a_file_that_cannot_be_removed_is_named(tmp_path, monkeypatch) -> None:
    store = EnvironmentDStore(tmp_path, 3)
    record = written(store)
    monkeypatch.setattr(type(store.path), "unlink", raising(PermissionError(1, "Not allowed")))
    with pytest.raises(PanelError) as info:
        store.restore(record)
    assert info.value.message == f"Could not remove {store.path}: Not allowed."
    assert info.value.detail == "[Errno 1] Not allowed"
    assert store.temp_places() == [(store.path.parent, store.path.name)]


def test_before_restore_keeps_a_copy_of_what_is_there(envd, tmp_path) -> None:
    record = written(envd)
    envd.before_restore(record, set())
    [*_, copy] = sorted(paths.backups_dir().iterdir())
    assert copy.read_bytes() == EDITED and len(list(paths.backups_dir().iterdir())) == 2
    envd.path.unlink()
    envd.before_restore(record, set())
    assert len(list(paths.backups_dir().iterdir())) == 2


# ---- sh -n ---------------------------------------------------------------------------------


def test_sh_n_passes_good_text_and_names_the_first_problem() -> None:
    assert shell_syntax_problem(b"export A='1'\n", "~/.profile") is None
    assert shell_syntax_problem(b"if\n", "~/.profile") == (
        '~/.profile: 2: Syntax error: end of file unexpected (expecting "then")'
    )


@pytest.mark.parametrize(
    ("stderr", "said"),
    [
        (b"sh: line 1: bad\nmore\n", "L: line 1: bad"),
        (b"/bin/sh: 1: bad\n", "L: 1: bad"),
        (b"  \n", "L: sh -n exited with status 2"),
        (b"sh: 1: bad \xff\n", "L: 1: bad \ufffd"),
    ],
)
def test_sh_n_words_lose_the_shell_name(monkeypatch, stderr, said) -> None:
    monkeypatch.setattr(store_module.shutil, "which", lambda name: "/bin/sh")
    done = subprocess.CompletedProcess(["/bin/sh", "-n"], 2, b"", stderr)
    calls: list[tuple[Any, Any]] = []

    def run(args: Any, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        calls.append((args, kwargs))
        return done

    monkeypatch.setattr(store_module.subprocess, "run", run)
    assert shell_syntax_problem(b"x", "L") == said
    assert calls == [
        (
            ["/bin/sh", "-n"],
            {"input": b"x", "capture_output": True, "timeout": 5.0, "check": False},
        )
    ]


def test_sh_n_that_cannot_run_is_skipped_and_logged(monkeypatch, caplog) -> None:
    caplog.set_level(logging.INFO, logger=store_module.__name__)
    monkeypatch.setattr(store_module.shutil, "which", lambda name: None)
    assert shell_syntax_problem(b"if\n", "L") is None
    monkeypatch.setattr(store_module.shutil, "which", lambda name: "/bin/sh")
    monkeypatch.setattr(
        store_module.subprocess, "run", raising(subprocess.TimeoutExpired("sh", 5.0))
    )
    assert shell_syntax_problem(b"if\n", "L") is None
    monkeypatch.setattr(store_module.subprocess, "run", raising(OSError("no exec")))
    assert shell_syntax_problem(b"if\n", "L") is None
    assert caplog.messages == [
        "No sh found: L was not checked with sh -n.",
        "sh -n took over 5 s: L was not checked.",
        "sh -n could not run (no exec): L was not checked.",
    ]


# ---- the factory ---------------------------------------------------------------------------


def test_linux_stores_keep_the_setting_or_the_given_number(tmp_path) -> None:
    paths.settings_file().parent.mkdir(parents=True, exist_ok=True)
    paths.settings_file().write_text("env_backups_keep: 7\n")
    stores = make_stores("linux", home=tmp_path)
    assert list(stores) == ["environment.d", "profile", "session"]
    assert [store.keep for store in stores.values()] == [7, 7, 7]
    assert stores["profile"].target() == str(tmp_path / ".profile")
    assert [s.keep for s in make_stores("linux", home=tmp_path, keep=2).values()] == [2, 2, 2]


def test_unreadable_settings_keep_the_default(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("rocmpanel.base.settings.Settings.load", raising(KeyError("x")))
    stores = make_stores("linux", home=tmp_path)
    assert [store.keep for store in stores.values()] == [KEEP_BACKUPS] * 3 == [20] * 3


def test_the_home_defaults_to_the_users(monkeypatch) -> None:
    stores = make_stores("linux", keep=3)
    assert stores["profile"].target() == str(Path.home() / ".profile")


def test_windows_has_the_registry_and_the_session_store() -> None:
    registry = object()

    def broadcast() -> None:
        pass

    stores = make_stores("windows", registry=registry, broadcast=broadcast, keep=4)
    assert list(stores) == ["registry", "session"]
    windows = stores["registry"]
    assert isinstance(windows, WindowsUserStore)
    assert windows.reg is registry and windows.broadcast is broadcast
    assert [store.keep for store in stores.values()] == [4, 4]


def test_the_platform_defaults_to_this_one(monkeypatch) -> None:
    monkeypatch.setattr(store_module, "current_platform", lambda: "linux")
    assert list(make_stores(keep=3)) == ["environment.d", "profile", "session"]


def test_the_plan_follows_the_stores_platform(tmp_path) -> None:
    profile = ProfileStore(tmp_path, 3)
    change = [EnvChange("PATH", "$HOME/bin:$PATH")]
    assert b'export PATH="$HOME/bin:$PATH"\n' in profile.plan(profile.read(), change).after
    profile.platform = "windows"  # Windows keeps every value literal
    assert b"export PATH='$HOME/bin:$PATH'\n" in profile.plan(profile.read(), change).after
