"""Issue 12 after the R6 break-it run, the environment stores: undo and recovery check their
backups, dangerous variables and empty values are refused, the ~/.bash_profile note is shown,
--home must be a folder, extra arguments are refused, and read errors say which path, that
nothing was changed and what to do (R6 findings 1, 2, 3, 4, 10, 11 and 16, env parts).

Every test runs with HOME and ROCMPANEL_HOME in temp folders (tests/conftest.py). The CLI's
``main`` runs in this process: it is what ``rocmpanel env`` runs.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.envvars import journal
from rocmpanel.envvars.catalogue import load_catalogue
from rocmpanel.envvars.plan import EnvChange
from rocmpanel.envvars.store import make_stores, sha256
from rocmpanel.shell.cli import main

USER_PROFILE = b'export USERSTUFF=1\nalias ll="ls -l"\n'
GENERATOR = Path("/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator")
BASH_NOTE = (
    "~/.bash_profile exists, so bash login shells read it instead of ~/.profile (unless "
    "~/.bash_profile sources ~/.profile)."
)
DANGEROUS = ("HOME", "IFS", "SHELLOPTS", "BASHOPTS", "LD_PRELOAD", "LD_AUDIT", "BASH_ENV", "ENV")


def home() -> Path:
    return Path(os.environ["HOME"])


def profile() -> Path:
    return home() / ".profile"


def envd() -> Path:
    return home() / ".config" / "environment.d" / "60-rocmpanel.conf"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["env", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code != 70  # never the last-resort catch of shell/cli.py
    return code, out, err


def profile_backup(entry: int = -1) -> Path:
    record = next(r for r in journal.load()[entry]["records"] if r["store"] == "profile")
    return Path(record["backup"])


# ---- finding 1: undo and recovery check the backup ----------------------------------------


def test_undo_refuses_a_truncated_backup(capsys: pytest.CaptureFixture[str]) -> None:
    profile().write_bytes(USER_PROFILE)
    assert cli(capsys, "set", "A", "1")[0] == 0
    assert cli(capsys, "set", "B", "2")[0] == 0
    backup = profile_backup()
    with backup.open("r+b") as handle:
        handle.truncate(10)
    written = profile().read_bytes()
    written_envd = envd().read_bytes()
    code, out, err = cli(capsys, "undo")
    assert code == 1 and out == ""
    assert err == (
        f"rocmpanel env: The backup {backup} does not match the checksum recorded when it was "
        f"made (it was damaged or changed since), so nothing was restored and {profile()} was "
        "left as it is. Set or unset the variables again instead (earlier copies are in "
        f"{paths.backups_dir()}).\n"
    )
    assert profile().read_bytes() == written  # not "export USE"
    assert envd().read_bytes() == written_envd  # no store restored
    assert [e["summary"] for e in journal.load()] == ["A=1", "B=2"]


def test_undo_refuses_a_backup_outside_the_backups_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    profile().write_bytes(USER_PROFILE)
    assert cli(capsys, "set", "A", "1")[0] == 0
    outside = tmp_path / "elsewhere.bak"
    outside.write_bytes(USER_PROFILE)  # even with the right checksum
    entries = journal.load()
    for record in entries[-1]["records"]:
        if record["store"] == "profile":
            record["backup"] = str(outside)
    journal.save(entries)
    written = profile().read_bytes()
    code, _, err = cli(capsys, "undo")
    assert code == 1
    folder = paths.backups_dir().resolve()
    assert err.startswith(
        f"rocmpanel env: The backup {outside} is not in the backups folder {folder}, so "
        f"nothing was restored and {profile()} was left as it is."
    )
    assert profile().read_bytes() == written


def test_undo_refuses_a_profile_backup_that_fails_sh_n(capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("sh") is None:
        pytest.skip("no sh")
    profile().write_bytes(USER_PROFILE)
    assert cli(capsys, "set", "A", "1")[0] == 0
    assert cli(capsys, "set", "B", "2")[0] == 0
    broken = profile_backup().read_bytes().replace(b"export A='1'", b"export A='1")
    assert broken != profile_backup().read_bytes()
    profile_backup().write_bytes(broken)
    entries = journal.load()  # a checksum that matches: only sh -n can catch it
    for record in entries[-1]["records"]:
        if record["store"] == "profile":
            record["before_sha256"] = sha256(broken)
    journal.save(entries)
    written = profile().read_bytes()
    code, _, err = cli(capsys, "undo")
    assert code == 1
    assert f"rocmpanel env: The backup {profile_backup()} would not pass `sh -n` (" in err
    assert f"so nothing was restored and {profile()} was left as it is." in err
    assert profile().read_bytes() == written


def test_recovery_does_not_roll_back_from_a_damaged_backup(
    capsys: pytest.CaptureFixture[str],
) -> None:
    envd().parent.mkdir(parents=True)
    envd().write_bytes(b"KEEP=1\nMORE=2\n")
    stores = make_stores("linux", home=home())
    plans = [
        stores[key].plan(stores[key].read(), [EnvChange("A_VAR", "1")])
        for key in ("environment.d", "profile")
    ]
    records = [stores[plan.store].backup(plan, set()) for plan in plans]
    journal.save([{"id": "x", "state": "pending", "summary": "A_VAR=1", "records": records}])
    stores["environment.d"].write(plans[0])  # killed before ~/.profile was written
    backup = Path(records[0]["backup"])
    backup.write_bytes(b"KEEP=1\n")  # damaged since
    code, _, err = cli(capsys, "list")
    assert code == 0
    assert (
        "rocmpanel env: An interrupted change (A_VAR=1) could not be rolled back: The backup "
        f"{backup} does not match the checksum recorded when it was made (it was damaged or "
        f"changed since), so nothing was restored and {envd()} was left as it is." in err
    )
    assert envd().read_bytes() == plans[0].after  # not the damaged "KEEP=1"
    assert journal.load()[0]["state"] == "pending"  # kept for a later look


# ---- finding 2: dangerous variables ---------------------------------------------------------


@pytest.mark.parametrize("name", [*DANGEROUS, "PS4"])
def test_dangerous_variables_are_refused_without_force(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, out, err = cli(capsys, "set", name, "/tmp/x")
    breaks = load_catalogue().dangerous[name].breaks
    assert code == 2 and out == ""
    assert err == (
        f"rocmpanel env: refused: Setting {name} can break the next login: {breaks}. "
        "Nothing was changed; add --force to write it anyway.\n"
    )
    assert not profile().exists() and not envd().exists()


def test_the_dangerous_list_is_in_the_catalogue_with_reasons() -> None:
    dangerous = load_catalogue().dangerous
    assert sorted(dangerous) == sorted([*DANGEROUS, "PS4", "PATH"])
    assert all(len(danger.breaks) > 40 for danger in dangerous.values())
    assert "readonly variable" in dangerous["SHELLOPTS"].breaks


def test_a_path_without_its_own_reference_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "set", "PATH", "/tmp/x")
    assert code == 2
    assert err == (
        "rocmpanel env: refused: The new PATH does not keep $PATH: without $PATH the system "
        "folders (/usr/bin, /bin) are lost: login shells, scripts and the desktop session find "
        "no programs (not even ls or bash). Nothing was changed; add --force to write it "
        "anyway.\n"
    )
    assert not profile().exists()
    assert cli(capsys, "set", "PATH", "/opt/x", "--prepend")[0] == 0
    before = profile().read_bytes()
    code, _, err = cli(capsys, "set", "PATH", "$PATH", "--remove-entry")
    assert code == 2 and "The new PATH does not keep $PATH" in err
    assert profile().read_bytes() == before
    assert cli(capsys, "set", "PATH", "${PATH}:/opt/y")[0] == 0  # ${PATH} keeps it too


def test_force_writes_a_dangerous_variable_with_a_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(capsys, "set", "LD_PRELOAD", "/tmp/x.so", "--force", "--store", "profile")
    assert code == 0 and out == f"Wrote {profile()}.\n"
    assert err.startswith(
        "warning (~/.profile): written with --force: Setting LD_PRELOAD can break the next "
        "login: the dynamic linker loads"
    )
    assert b"export LD_PRELOAD='/tmp/x.so'" in profile().read_bytes()


def test_the_editor_refuses_dangerous_and_empty_values(qtbot) -> None:
    from rocmpanel.envvars.views.editor import EnvEditor

    widget = EnvEditor(stores=make_stores("linux", home=home()), environ={})
    qtbot.addWidget(widget)
    with qtbot.waitSignal(widget.loaded, timeout=5000):
        pass
    widget.propose("HOME", "/tmp/x")
    assert widget.status.text().startswith(
        "Refused: Setting HOME can break the next login: login shells, ssh"
    )
    assert widget.status.text().endswith(
        "The editor never writes such a value; nothing was changed."
    )
    assert not widget.apply_button.isEnabled()
    assert widget.apply() is False  # refused before anything starts
    widget.discard()
    widget.propose("RP_EMPTY", "")
    assert widget.status.text() == (
        "Refused: an empty value cannot be stored in environment.d (systemd ignores "
        "`RP_EMPTY=`); use `rocmpanel env unset RP_EMPTY`, or Remove RP_EMPTY here; nothing "
        "was changed."
    )
    assert not widget.apply_button.isEnabled()
    assert not profile().exists() and not envd().exists()


# ---- finding 3: empty values ----------------------------------------------------------------


def test_an_empty_value_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "set", "RP_EMPTY", "")
    assert code == 2 and out == ""
    assert err == (
        "rocmpanel env: refused: an empty value cannot be stored in environment.d (systemd "
        "ignores `RP_EMPTY=`); use `rocmpanel env unset RP_EMPTY`.\n"
    )
    assert not profile().exists() and not envd().exists()


def test_removing_an_absent_entry_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "set", "LD_LIBRARY_PATH", "/opt/rocm/lib", "--remove-entry")
    assert (code, out) == (0, "Nothing to change.\n")
    assert not profile().exists() and not envd().exists()
    assert journal.load() == []
    assert cli(capsys, "set", "LD_LIBRARY_PATH", "/opt/a:/opt/b")[0] == 0
    before = envd().read_bytes()
    code, out, _ = cli(capsys, "set", "LD_LIBRARY_PATH", "/opt/c", "--remove-entry")
    assert (code, out) == (0, "Nothing to change.\n")
    assert envd().read_bytes() == before


def test_removing_the_last_entry_unsets_the_variable(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "set", "LD_LIBRARY_PATH", "/opt/a", "--store", "environment.d")[0] == 0
    code, out, err = cli(
        capsys, "set", "LD_LIBRARY_PATH", "/opt/a", "--remove-entry", "--store", "environment.d"
    )
    assert (code, out) == (0, f"Wrote {envd()}.\n")
    assert err == (
        "note: LD_LIBRARY_PATH held only /opt/a in environment.d; an empty value cannot be "
        "stored, so LD_LIBRARY_PATH is unset there instead.\n"
    )
    assert b"LD_LIBRARY_PATH" not in envd().read_bytes()
    if GENERATOR.exists():
        done = subprocess.run(
            [str(GENERATOR)],
            env={"HOME": str(home()), "XDG_CONFIG_HOME": str(home() / ".config")},
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        assert "invalid syntax" not in done.stderr


# ---- finding 4: the ~/.bash_profile note ----------------------------------------------------


@pytest.mark.parametrize("name", [".bash_profile", ".bash_login"])
def test_the_bash_profile_note_is_shown_by_set_unset_and_list(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    (home() / name).write_text("echo hi\n")
    note = BASH_NOTE.replace(".bash_profile", name)
    code, out, err = cli(capsys, "set", "HIP_VISIBLE_DEVICES", "0")
    assert code == 0 and err == f"note: {note}\n"
    code, out, _ = cli(capsys, "list")
    assert code == 0 and out.splitlines()[-1] == f"note: {note}"
    code, out, _ = cli(capsys, "list", "--json")
    assert json.loads(out)["notes"] == [note]
    code, out, err = cli(capsys, "set", "HIP_VISIBLE_DEVICES", "1", "--json")
    assert json.loads(out)["notes"] == [note] and err == ""
    code, out, err = cli(capsys, "unset", "HIP_VISIBLE_DEVICES")
    assert code == 0 and err == f"note: {note}\n"


def test_no_note_without_a_bash_profile(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "set", "HIP_VISIBLE_DEVICES", "0")
    assert code == 0 and err == ""
    assert json.loads(cli(capsys, "list", "--json")[1])["notes"] == []


def test_the_editor_shows_the_bash_profile_note(qtbot) -> None:
    from rocmpanel.envvars.views.editor import EnvEditor

    (home() / ".bash_profile").write_text("echo hi\n")
    widget = EnvEditor(stores=make_stores("linux", home=home()), environ={})
    qtbot.addWidget(widget)
    widget.show()
    with qtbot.waitSignal(widget.loaded, timeout=5000):
        pass
    assert widget.about.text() == f"Note: {BASH_NOTE}"
    assert widget.about.isVisible()


# ---- findings 10 and 11: arguments ----------------------------------------------------------


@pytest.mark.parametrize("given", ["", "missing/x"])
def test_home_must_be_an_existing_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.chdir(tmp_path)  # '' was the current folder, and a missing one was created
    with pytest.raises(SystemExit) as ended:
        main(["env", "set", "A", "b", "--home", given])
    assert ended.value.code == 2
    said = "is empty" if not given else f"{given} does not exist"
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"rocmpanel env: error: argument --home: {said} (give your home folder)"
    )
    assert sorted(tmp_path.iterdir()) == []


def test_home_that_is_a_file_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(SystemExit) as ended:
        main(["env", "set", "A", "b", "--home", str(afile)])
    assert ended.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"rocmpanel env: error: argument --home: {afile} is not a folder (give your home folder)"
    )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ("undo", "FOO"),
            "'undo' takes no variable name or value (got 'FOO'); run `rocmpanel env undo` alone.",
        ),
        (
            ("undo", "A", "1"),
            "'undo' takes no variable name or value (got 'A' '1'); run `rocmpanel env undo` alone.",
        ),
        (
            ("list", "FOO"),
            "'list' takes no variable name or value (got 'FOO'); run `rocmpanel env list` alone.",
        ),
        (("unset", "A", "1"), "'unset' takes one variable name only (got '1' as well)."),
    ],
)
def test_extra_arguments_are_refused(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], said: str
) -> None:
    assert cli(capsys, "set", "A", "1")[0] == 0
    written = profile().read_bytes()
    code, out, err = cli(capsys, *argv)
    assert (code, out, err) == (2, "", f"rocmpanel env: {said}\n")
    assert profile().read_bytes() == written  # `undo FOO` did not undo A=1
    assert [e["summary"] for e in journal.load()] == ["A=1"]


# ---- finding 16: messages -------------------------------------------------------------------


def test_a_config_file_in_place_of_the_folder_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    config = home() / ".config"
    config.write_text("x")
    code, _, err = cli(capsys, "set", "A", "b")
    assert code == 1
    assert err == (
        f"rocmpanel env: Could not read {envd()}: {config} is a file, not a folder. Nothing "
        f"was changed. Move it aside (mv {config} {config}.bak) and try again.\n"
    )
    assert not profile().exists()


def test_a_profile_link_loop_says_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    profile().symlink_to(".profile")
    code, _, err = cli(capsys, "set", "A", "b")
    assert code == 1
    assert err == (
        f"rocmpanel env: Could not read {profile()}: it is a loop of symbolic links (or a chain "
        f"too long to follow). Nothing was changed. Replace the link with a regular file "
        f"(rm {profile()}, then try again).\n"
    )
    assert not envd().exists()


def test_a_damaged_session_file_says_to_move_it_aside(capsys: pytest.CaptureFixture[str]) -> None:
    session = paths.config_dir() / "session_env.json"
    session.parent.mkdir(parents=True, exist_ok=True)
    session.write_text("{bad")
    code, _, err = cli(capsys, "set", "A", "b", "--store", "session")
    assert code == 1
    assert err == (
        f"rocmpanel env: {session}: not valid JSON (Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)). Nothing was changed: fix the file, or move it aside "
        f"(mv {session} {session}.bad) and try again.\n"
    )
    assert session.read_text() == "{bad"
    code, _, err = cli(capsys, "set", "A", "b", "--store", "session", "--dry-run")
    assert code == 1 and f"(mv {session} {session}.bad)" in err


def test_a_full_disk_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "interpreters.json"
    with pytest.raises(PanelError) as failed:
        write_atomic(target, b"[]")
    assert str(failed.value) == f"Could not write {target}: No space left on device."
    assert failed.value.detail == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == []
