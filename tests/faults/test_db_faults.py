"""Fault suite: damaged databases (truncated, garbage, empty, another schema, a newer
version, a FIFO, a folder, read-only) and damaged environment records; bad arguments of
``rocmpanel torch``. Every case ends in a clear message, never a traceback, and the user's
bytes are kept."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.chat.store import ChatStore
from rocmpanel.pytorch.validation_run import CheckResult, ValidationRun
from rocmpanel.pytorch.validation_store import ValidationStore
from rocmpanel.shell.cli import main

VALIDATE = (sys.executable, "-m", "rocmpanel", "torch", "validate", "--json", "--gfx", "gfx1100")
CHECK = {"id": "import", "name": "torch imports", "status": "pass", "figure": "torch 2.9"}


def _run() -> ValidationRun:
    return ValidationRun.from_result({"started_at": 1.0, "checks": [CHECK]}, python="/p")


def _real_validation_db(path: Path) -> bytes:
    ValidationStore(path, legacy=None).save(_run())
    return path.read_bytes()


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def _truncated(path: Path) -> bytes:
    real = _real_validation_db(path.with_name("real.sqlite3"))
    path.with_name("real.sqlite3").unlink()
    return real[:100]


def _wrong_schema(path: Path) -> bytes:
    with sqlite3.connect(path) as db:  # a table of our name, other columns
        db.execute("CREATE TABLE validation_runs (x TEXT)")
        db.execute("CREATE TABLE chat_conversations (x TEXT)")
        db.execute("INSERT INTO validation_runs VALUES ('someone else''s row')")
    return path.read_bytes()


# (how to damage the file, the sentence its notice starts with after "The <what> at <path> ")
DAMAGED: dict[str, tuple[Callable[[Path], bytes], str]] = {
    "truncated": (_truncated, "is not a readable database (database disk image is malformed)"),
    "garbage": (
        lambda path: b"\x00\xff garbage \x13" * 300,
        "is not a database (it does not start with sqlite's header)",
    ),
    "wrong schema": (_wrong_schema, "has a table"),
}


def _plant(path: Path, make: Callable[[Path], bytes]) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = make(path)
    if not path.exists():
        path.write_bytes(data)
    return path.read_bytes()


def _aside(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.corrupt-*"))


# -- the stores ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_validation_history_is_kept_aside_and_a_new_one_works(case: str) -> None:
    path = paths.validation_database_file()
    original = _plant(path, DAMAGED[case][0])
    store = ValidationStore()
    assert store.list_runs() == []
    (kept,) = _aside(path)
    assert kept.read_bytes() == original
    assert store.notice is not None
    assert store.notice.startswith(f"The validation history at {path} {DAMAGED[case][1]}")
    assert store.notice.endswith(
        f". It was moved to {kept.name} (kept as it was) and a new, empty validation history "
        "was started."
    )
    saved = store.save(_run())
    assert saved.id == 1 and [r.id for r in store.list_runs()] == [1]


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_chat_history_is_kept_aside_and_a_new_one_works(case: str) -> None:
    path = paths.chat_database_file()
    original = _plant(path, DAMAGED[case][0])
    store = ChatStore()
    assert store.conversations() == []
    (kept,) = _aside(path)
    assert kept.read_bytes() == original
    assert store.notice is not None
    assert store.notice.startswith(f"The chat history at {path} {DAMAGED[case][1]}")
    cid = store.create("after the damage")
    store.add_message(cid, "user", "hello")
    assert [c.title for c in store.conversations()] == ["after the damage"]


def test_an_empty_file_is_a_new_database_not_damage() -> None:
    path = paths.validation_database_file()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    store = ValidationStore()
    assert store.save(_run()).id == 1
    assert store.notice is None and _aside(path) == []


@pytest.mark.parametrize("store_class", [ValidationStore, ChatStore])
def test_a_newer_rocmpanels_file_is_refused_and_left_alone(store_class: type) -> None:
    path = (
        paths.validation_database_file()
        if store_class is ValidationStore
        else paths.chat_database_file()
    )
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE from_the_future (x)")
        db.execute("PRAGMA user_version = 999")
    before = path.read_bytes()
    store = store_class()
    what = "validation history" if store_class is ValidationStore else "chat history"
    latest = 3 if store_class is ValidationStore else 2
    with pytest.raises(PanelError) as caught:
        store.save(_run()) if store_class is ValidationStore else store.create("x")
    assert caught.value.message == (
        f"The {what} at {path} was made by a newer rocmpanel (schema 999; this version knows "
        f"up to {latest}). It is left as it is: update rocmpanel to use it."
    )
    assert path.read_bytes() == before and _aside(path) == [] and store.notice is None


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_no_file_where_the_database_goes_is_moved_aside(kind: str) -> None:
    path = paths.chat_database_file()
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        (path / "something").mkdir(parents=True)
    store = ChatStore()
    assert store.recent_models() == []  # returns: no read of a FIFO
    (kept,) = _aside(path)
    what = "a FIFO (named pipe)" if kind == "fifo" else "a folder"
    assert store.notice == (
        f"The chat history at {path} is {what}, not a database file. It was moved to "
        f"{kept.name} (kept as it was) and a new, empty chat history was started."
    )
    assert kept.is_fifo() if kind == "fifo" else (kept / "something").is_dir()
    store.create("works")
    assert path.is_file()


def test_a_read_only_database_reads_and_says_why_it_cannot_write(monkeypatch) -> None:
    path = paths.validation_database_file()
    store = ValidationStore()
    store.save(_run())
    real_connect = sqlite3.connect

    def read_only(database, *args, **kwargs):  # as a file without write permission opens
        if Path(database) == path:
            return real_connect(f"{path.as_uri()}?mode=ro", *args, uri=True, **kwargs)
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)
    assert [r.id for r in ValidationStore().list_runs()] == [1]
    with pytest.raises(PanelError) as caught:
        ValidationStore().save(_run())
    assert caught.value.message == (
        f"The validation history at {path} cannot be written: the file or its folder is "
        "read-only. Check their permissions."
    )
    assert _aside(path) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_a_read_only_database_file_for_real() -> None:
    path = paths.validation_database_file()
    ValidationStore().save(_run())
    path.chmod(0o444)
    assert [r.id for r in ValidationStore().list_runs()] == [1]
    with pytest.raises(PanelError, match="cannot be written: the file or its folder is read-only"):
        ValidationStore().save(_run())


def test_reading_a_history_that_does_not_exist_creates_nothing() -> None:
    assert ValidationStore().list_runs() == [] and ValidationStore().get(1) is None
    assert ChatStore().conversations() == [] and ChatStore().recent_models() == []
    assert not paths.data_dir().exists()


# -- the CLI ---------------------------------------------------------------------------------
def test_torch_history_on_a_damaged_file_says_so_and_lists_nothing(capsys) -> None:
    path = paths.validation_database_file()
    original = _plant(path, DAMAGED["garbage"][0])
    assert main(["torch", "history"]) == 0
    out, err = capsys.readouterr()
    (kept,) = _aside(path)
    assert out == "No validation runs saved yet: `rocmpanel torch validate` makes one.\n"
    assert err == (
        f"rocmpanel torch: The validation history at {path} is not a database (it does not "
        f"start with sqlite's header). It was moved to {kept.name} (kept as it was) and a new, "
        "empty validation history was started.\n"
    )
    assert kept.read_bytes() == original
    assert main(["torch", "history"]) == 0  # now a sound, empty file: nothing more moved
    assert _aside(path) == [kept]


def test_torch_history_of_a_newer_file_is_a_message_and_status_1(capsys) -> None:
    path = paths.validation_database_file()
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 999")
    assert main(["torch", "history"]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"rocmpanel torch: The validation history at {path} was made by a newer rocmpanel "
        "(schema 999; this version knows up to 3). It is left as it is: update rocmpanel to "
        "use it.\n"
    )


def _fake_python(tmp_path: Path, status: str) -> Path:
    """A "workload Python" that answers the validate worker's protocol with one check."""
    check = {**CHECK, "status": status}
    lines = [
        {"event": "check", "check": check},
        {"event": "result", "data": {"checks": [check], "torch_version": "2.9", "build": "rocm"}},
    ]
    script = tmp_path / "fake-python"
    script.write_text(
        f"#!{sys.executable}\nimport sys\n"
        + "".join(f"print({json.dumps(json.dumps(line))}, flush=True)\n" for line in lines)
    )
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(("status", "code"), [("pass", 0), ("fail", 1)])
def test_torch_validate_json_prints_its_run_when_saving_fails(
    tmp_path: Path, status: str, code: int
) -> None:
    path = paths.validation_database_file()
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:  # a newer rocmpanel's file: the save is refused
        db.execute("PRAGMA user_version = 999")
    python = _fake_python(tmp_path, status)
    result = subprocess.run(
        [*VALIDATE, "--python", str(python)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == code, result.stderr
    data = json.loads(result.stdout)
    assert data["saved"] is False and data["id"] is None
    assert [(c["id"], c["status"]) for c in data["checks"]] == [("import", status)]
    assert data["verdict"] == status
    assert result.stderr == (
        f"rocmpanel torch: the run was not saved to the history: The validation history at "
        f"{path} was made by a newer rocmpanel (schema 999; this version knows up to 3). It "
        "is left as it is: update rocmpanel to use it.\n"
    )


def test_torch_validate_on_a_damaged_file_saves_into_a_new_one(tmp_path: Path) -> None:
    path = paths.validation_database_file()
    original = _plant(path, DAMAGED["garbage"][0])
    result = subprocess.run(
        [*VALIDATE, "--python", str(_fake_python(tmp_path, "pass"))],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["saved"] is True and data["id"] == 1
    (kept,) = _aside(path)
    assert kept.read_bytes() == original
    assert result.stderr.startswith(f"rocmpanel torch: The validation history at {path} is not")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["plan", "--python", "abc"],
            "argument --python: 'abc' is not a Python version (expected X.Y, such as 3.12)",
        ),
        (
            ["plan", "--rocm", "seven"],
            "argument --rocm: 'seven' is not a version number (expected digits and dots, "
            "such as 7.2 or 10.1.0)",
        ),
        (
            ["install", "--gfx", "rx7900"],
            "argument --gfx: 'rx7900' is not a GPU target rocmpanel knows; it looks like a "
            "product name: AMD GPUs numbered 7900 are gfx1100, so pass --gfx gfx1100. Known "
            "targets: gfx803, gfx900,",
        ),
        (["plan", "--os", "macos"], "argument --os: 'macos' is not an OS rocmpanel plans for"),
        (["history", "--export", "x"], "argument --export: 'x' is not a whole number"),
        (["history", "--compare", "1", "-2"], "argument --compare: -2 is below the minimum 1"),
        (
            ["install", "--index-url", "pypi"],
            "argument --index-url: 'pypi' is not an index URL (expected https://…, http://… or "
            "file://…)",
        ),
    ],
)
def test_bad_torch_arguments_are_clear_errors(capsys, argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["torch", *argv])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"rocmpanel torch {argv[0]}: error: {message}" in err
    assert "Traceback" not in err


# -- damaged environment records -------------------------------------------------------------
RECORDS = {
    "installed-5": (
        '{"name": "installed-5", "created_at": 1, "installed": 5}',
        "installed is 5, not a table of package versions",
    ),
    "created-abc": (
        '{"name": "created-abc", "created_at": "abc"}',
        'created_at is "abc", not a time',
    ),
    "not-json": (
        "{nope",
        "it is not JSON (Expecting property name enclosed in double quotes: line 1 column 2 "
        "(char 1))",
    ),
    "a-list": ("[1, 2]", "it holds list, not a record"),
    "no-keys": ('{"installed": {}}', "it lacks name and created_at"),
}


def _envs() -> Path:
    root = paths.data_dir() / "envs"
    good = root / "good"
    (good / "bin").mkdir(parents=True)
    (good / "bin" / "python").write_text("")
    (good / "rocmpanel-env.json").write_text(
        json.dumps({"name": "good", "created_at": 5.0, "torch_version": "2.9", "installed": {}})
    )
    for name, (text, _problem) in RECORDS.items():
        (root / name).mkdir()
        (root / name / "rocmpanel-env.json").write_text(text)
    return root


def test_torch_envs_lists_damaged_records_beside_the_good_ones(capsys) -> None:
    root = _envs()
    assert main(["torch", "envs"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == ["good", "(torch", "2.9)", "managed", str(root / "good/bin/python")]
    for name, (_text, problem) in sorted(RECORDS.items()):
        record = root / name / "rocmpanel-env.json"
        index = lines.index(f"! {name:40} {'damaged':10} {record}: {problem}.")
        assert lines[index + 1].strip() == (
            f"Repair {record}, or delete the environment: rocmpanel torch envs --remove {name}"
        )
    assert err == "" and "Traceback" not in out
    assert main(["torch", "envs", "--json"]) == 0
    rows = {row["label"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["good (torch 2.9)"]["damaged"] is False
    assert {name: rows[name]["problem"] for name in RECORDS} == {
        name: problem for name, (_text, problem) in RECORDS.items()
    }


def test_a_damaged_environment_is_not_activated_but_can_be_removed(capsys) -> None:
    root = _envs()
    assert main(["torch", "envs", "--activate", "installed-5"]) == 1
    assert capsys.readouterr().err == (
        "rocmpanel torch: the environment 'installed-5' cannot be used: its record "
        f"{root}/installed-5/rocmpanel-env.json is damaged (installed is 5, not a table of "
        f"package versions). Repair {root}/installed-5/rocmpanel-env.json, or delete the "
        "environment: rocmpanel torch envs --remove installed-5\n"
    )
    assert main(["torch", "envs", "--remove", "not-json", "--yes"]) == 0
    assert capsys.readouterr().out == f"Removed {root / 'not-json'}\n"
    assert not (root / "not-json").exists() and (root / "good").is_dir()


def test_the_environments_panel_lists_damaged_records(qtbot) -> None:
    from rocmpanel.base.settings import Settings
    from rocmpanel.gui.background import wait_for_background
    from rocmpanel.gui.context import AppContext
    from rocmpanel.jobs.runner import JobManager
    from rocmpanel.pytorch.views.envs_panel import TorchEnvsPanel

    root = _envs()
    manager = JobManager(grace_s=1.0)
    panel = TorchEnvsPanel(AppContext(Settings.load(), manager, lambda _m: None))
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.refreshed, timeout=5000):
        pass
    rows = {}
    for index in range(panel.tree.topLevelItemCount()):
        item = panel.tree.topLevelItem(index)
        assert item is not None
        rows[item.text(0)] = item
    assert rows["good"].text(2) == "managed"
    for name, (_text, problem) in RECORDS.items():
        row = rows[name]
        record = root / name / "rocmpanel-env.json"
        assert (row.text(2), row.text(3)) == ("damaged", str(record))
        assert problem in row.toolTip(0)
        # The GUI's fix names its button, not the command line's.
        assert row.toolTip(0).endswith(
            f"Repair {record}, or select it and press Remove… to delete the environment."
        )
    panel.tree.setCurrentItem(rows["created-abc"])
    assert not panel.activate_button.isEnabled() and panel.remove_button.isEnabled()
    manager.shutdown()
    assert wait_for_background(5000)


# -- the tabs --------------------------------------------------------------------------------
def test_the_validation_history_shows_the_recovery(qtbot) -> None:
    from rocmpanel.pytorch.views.validation_history import ValidationHistory

    path = paths.validation_database_file()
    _plant(path, DAMAGED["garbage"][0])
    history = ValidationHistory(ValidationStore(), lambda: {}, lambda _m: None)
    qtbot.addWidget(history)
    with qtbot.waitSignal(history.loaded, timeout=5000):
        history.reload()
    (kept,) = _aside(path)
    assert not history.notice_label.isHidden()
    assert history.notice_label.text().endswith(
        f"It was moved to {kept.name} (kept as it was) and a new, empty validation history "
        "was started."
    )


def test_the_chat_history_list_shows_the_recovery(qtbot) -> None:
    from rocmpanel.chat.views.history import ConversationList
    from rocmpanel.chat.views.store_queue import StoreQueue
    from rocmpanel.gui.background import wait_for_background

    path = paths.chat_database_file()
    _plant(path, _wrong_schema)
    queue = StoreQueue()
    listing = ConversationList(queue)
    qtbot.addWidget(listing)
    qtbot.waitUntil(lambda: queue.idle, timeout=5000)
    (kept,) = _aside(path)
    assert not listing.notice_label.isHidden()
    assert listing.notice_label.text() == (
        f"The chat history at {path} has a table chat_conversations that rocmpanel did not "
        "make (no column created, id, model, system_prompt, title, updated). It was moved to "
        f"{kept.name} (kept as it was) and a new, empty chat history was started."
    )
    assert wait_for_background(5000)


def test_the_smoke_test_starts_on_damaged_databases_and_leaves_them_alone(
    _private_home: Path,
) -> None:
    """Break-it round 6, finding 15: the smoke test reads the databases read-only; it
    neither moves a damaged one aside nor makes a new one."""
    chat, validation = paths.chat_database_file(), paths.validation_database_file()
    chat_bytes = _plant(chat, DAMAGED["truncated"][0])
    validation_bytes = _plant(validation, DAMAGED["garbage"][0])
    result = subprocess.run(
        [sys.executable, "-m", "rocmpanel", "--smoke-test"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["tabs"] == [
        "Setup",
        "Monitor",
        "PyTorch",
        "Tuning",
        "Chat",
        "Multi-GPU",
    ]
    assert "Traceback" not in result.stderr
    assert _aside(chat) == [] and _aside(validation) == []
    assert chat.read_bytes() == chat_bytes and validation.read_bytes() == validation_bytes
    assert sorted(p.name for p in chat.parent.iterdir()) == [
        "chat.sqlite3",
        "logs",
        "validation.sqlite3",
    ]


def test_a_check_result_survives_a_round_trip_through_a_recovered_file() -> None:
    path = paths.validation_database_file()
    _plant(path, DAMAGED["truncated"][0])
    store = ValidationStore()
    saved = store.save(_run())
    again = store.get(saved.id or 0)
    assert again is not None and again.checks == (CheckResult.from_dict(CHECK),)


# -- FC: break-it round 6, finding 15: read-only mode (the smoke test) writes no database ------
@pytest.fixture
def read_only_mode():
    from rocmpanel.base import sqlite as sqlite_module

    sqlite_module.set_read_only(True)
    yield
    sqlite_module.set_read_only(False)


def _folder_listing(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir()) if path.parent.is_dir() else []


@pytest.mark.parametrize("case", sorted(DAMAGED))
@pytest.mark.usefixtures("read_only_mode")
def test_read_only_mode_reports_a_damaged_database_and_leaves_it(case: str) -> None:
    from rocmpanel.base import sqlite as sqlite_module

    path = paths.validation_database_file()
    sqlite_module.set_read_only(False)  # planting a truncated file writes a real one first
    original = _plant(path, DAMAGED[case][0])
    sqlite_module.set_read_only(True)
    with pytest.raises(PanelError) as caught:
        ValidationStore().list_runs()
    assert caught.value.message.startswith(f"The validation history at {path} {DAMAGED[case][1]}")
    assert caught.value.message.endswith(
        ". It was left as it is: rocmpanel runs read-only now (the smoke test), and moves it "
        "aside at the next normal start."
    )
    assert path.read_bytes() == original
    assert _folder_listing(path) == ["validation.sqlite3"]


@pytest.mark.parametrize("kind", ["fifo", "folder"])
@pytest.mark.usefixtures("read_only_mode")
def test_read_only_mode_leaves_a_fifo_or_folder_in_place(kind: str) -> None:
    path = paths.chat_database_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        what = "a FIFO (named pipe)"
    else:
        path.mkdir()
        what = "a folder"
    with pytest.raises(PanelError) as caught:
        ChatStore(legacy=None).conversations()
    assert caught.value.message == (
        f"The chat history at {path} is {what}, not a database file. It was left as it is: "
        "rocmpanel runs read-only now (the smoke test), and moves it aside at the next normal "
        "start."
    )
    assert _folder_listing(path) == ["chat.sqlite3"]


@pytest.mark.usefixtures("read_only_mode")
def test_read_only_mode_reads_a_healthy_database_and_writes_nothing(tmp_path: Path) -> None:
    from rocmpanel.base import sqlite as sqlite_module

    path = paths.validation_database_file()
    sqlite_module.set_read_only(False)
    original = _real_validation_db(path)
    sqlite_module.set_read_only(True)
    store = ValidationStore(path, legacy=None)
    (run,) = store.list_runs()
    assert run.checks == (CheckResult.from_dict(CHECK),)
    with pytest.raises(PanelError) as caught:
        store.save(_run())
    assert caught.value.message == (
        f"The validation history at {path} is not written: rocmpanel runs read-only now (the "
        "smoke test)."
    )
    assert path.read_bytes() == original
    assert _folder_listing(path) == ["validation.sqlite3"]


@pytest.mark.usefixtures("read_only_mode")
def test_read_only_mode_creates_no_database_and_no_folder() -> None:
    path = paths.chat_database_file()
    store = ChatStore(legacy=None)
    assert store.conversations() == []
    store.create("only in memory")  # a missing file is read through an empty in-memory copy
    assert not path.parent.exists()


@pytest.mark.usefixtures("read_only_mode")
def test_read_only_mode_reads_an_older_schema_through_a_memory_copy() -> None:
    from rocmpanel.base import sqlite as sqlite_module
    from rocmpanel.pytorch.validation_store import migrations

    path = paths.validation_database_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    sqlite_module.set_read_only(False)
    with sqlite3.connect(path) as db:  # the first migration only: an older file
        db.isolation_level = None
        sqlite_module.migrate(db, migrations(None)[:1], "validation history")
    db.close()
    original = path.read_bytes()
    sqlite_module.set_read_only(True)
    assert ValidationStore(path, legacy=None).list_runs() == []
    assert path.read_bytes() == original
    assert _folder_listing(path) == ["validation.sqlite3"]


# -- R6 finding 6: a stored run with a field of the wrong type -------------------------------
# (the SQL that damages run #2, what its history line then says)
BAD_ROWS = {
    "created_at text": (
        "UPDATE validation_runs SET created_at = 'abc' WHERE id = 2",
        "created_at is 'abc', not a time",
    ),
    "figure blob": (
        "UPDATE validation_checks SET figure = x'00ff' WHERE run_id = 2",
        "check 0: figure is 2 bytes of binary data, not text",
    ),
    "python blob": (  # a number would be kept as text: the column has TEXT affinity
        "UPDATE validation_runs SET python = x'0102' WHERE id = 2",
        "python is 2 bytes of binary data, not text",
    ),
    "unit blob": (
        "UPDATE validation_checks SET unit = x'00' WHERE run_id = 2",
        "check 0: unit is 1 byte of binary data, not text",
    ),
    "value text": (
        "UPDATE validation_checks SET value = 'fast' WHERE run_id = 2",
        "check 0: value is 'fast', not a number",
    ),
    "created_at huge": (
        "UPDATE validation_runs SET created_at = 1e300 WHERE id = 2",
        "created_at is 1e+300, not a time",
    ),
}


def _three_runs_with_a_damaged_second(sql: str) -> Path:
    path = paths.validation_database_file()
    store = ValidationStore()
    for _ in range(3):
        store.save(_run())
    with sqlite3.connect(path) as db:
        db.execute(sql)
    return path


@pytest.mark.parametrize("case", BAD_ROWS)
def test_a_damaged_run_is_listed_as_damaged_beside_the_others(capsys, case: str) -> None:
    sql, problem = BAD_ROWS[case]
    _three_runs_with_a_damaged_second(sql)
    assert main(["torch", "history"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[1] == f"#2 damaged run: {problem}"
    assert [line.split()[0] for line in lines] == ["#3", "#2", "#1"]
    assert lines[0].endswith("/p: 1 pass, 0 fail, 0 skip") and lines[2].endswith(
        "/p: 1 pass, 0 fail, 0 skip"
    )
    assert err == ""
    assert main(["torch", "history", "--export", "2"]) == 1
    assert capsys.readouterr().err == (
        f"rocmpanel torch: Validation run #2 is damaged ({problem}), so it cannot be shown. "
        "Delete it in the PyTorch tab's run history.\n"
    )
    assert main(["torch", "history", "--export", "3"]) == 0
    assert "| torch imports | PASS | torch 2.9 |" in capsys.readouterr().out
    assert main(["torch", "history", "--compare", "1", "2"]) == 1
    assert "Validation run #2 is damaged" in capsys.readouterr().err


def test_the_validation_history_lists_a_damaged_run(qtbot) -> None:
    from rocmpanel.pytorch.views.validation_history import ValidationHistory

    _three_runs_with_a_damaged_second(BAD_ROWS["figure blob"][0])
    history = ValidationHistory(ValidationStore(), lambda: {}, lambda _m: None)
    qtbot.addWidget(history)
    with qtbot.waitSignal(history.loaded, timeout=5000):
        history.reload()
    items = [history.list.item(i) for i in range(history.list.count())]
    assert [item.text() for item in items][1] == "#2 damaged run"
    assert (
        items[1].toolTip() == "#2 damaged run: check 0: figure is 2 bytes of binary data, not text"
    )
    assert [item.text().split()[0] for item in items] == ["#3", "#2", "#1"]
    items[1].setSelected(True)
    items[2].setSelected(True)
    assert history.compare_text() == (
        "Validation run #2 is damaged (check 0: figure is 2 bytes of binary data, not text), so "
        "it cannot be shown. Delete it in the PyTorch tab's run history.\n"
    )
