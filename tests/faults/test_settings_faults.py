"""Fault suite: a settings.yaml that does not parse, is not a mapping, holds values that do
not fit, is no file at all, or is changed by two panels at once, is never lost."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from rocmpanel.base import paths
from rocmpanel.base import settings as settings_module
from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings

TYPO = b"workload_python: /opt/py/bin/python\ntelemetry_interval_ms 500\nfuture_key: 1\n"


@pytest.fixture(autouse=True)
def _fresh_notices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees the once-per-process notices afresh."""
    monkeypatch.setattr(settings_module, "_told", set())


@pytest.fixture(autouse=True)
def _collector_restored():
    """A window that finishes start-up freezes the heap (rocmpanel.shell.heap): undo it."""
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    from rocmpanel.shell import heap

    heap._paused = False
    if enabled:
        gc.enable()
    else:
        gc.disable()


def _settings_file(data: bytes) -> Path:
    path = paths.settings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _bad_copies(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.bad-*"))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


# -- a file that does not parse -------------------------------------------------------------
def test_a_yaml_typo_gives_defaults_and_leaves_the_file_alone(capsys) -> None:
    path = _settings_file(TYPO)
    settings = Settings.load()
    assert settings.general.workload_python == ""  # the whole file is unusable
    assert settings.monitor.interval_ms == 500
    assert settings.damaged == (
        f"{path} is not valid YAML (line 2, column 1: could not find expected ':')"
    )
    assert settings.problems == [
        f"{path} is not valid YAML (line 2, column 1: could not find expected ':'). rocmpanel "
        "uses the default settings this time and leaves the file as it is: correct it, or "
        "delete it to start afresh. (Changing a setting replaces it; your file is then kept "
        "beside it as settings.yaml.bad-<date>-<time>.)"
    ]
    err = capsys.readouterr().err
    assert err == "rocmpanel: " + settings.problems[0] + "\n"  # one line, for a headless command
    Settings.load()
    assert capsys.readouterr().err == ""  # once per process
    assert path.read_bytes() == TYPO
    assert _bad_copies(path) == []


def test_the_window_bookkeeping_never_replaces_a_damaged_file() -> None:
    path = _settings_file(TYPO)
    settings = Settings.load(tell=False)
    settings.window.geometry = "AAAA"
    settings.window.last_tab = "Chat"
    notices = settings.save(replace_damaged=False)
    assert notices == [
        f"Settings not saved: {path} is not valid YAML (line 2, column 1: could not find "
        "expected ':'), and it is left as it is."
    ]
    assert path.read_bytes() == TYPO
    assert _bad_copies(path) == []


def test_a_change_the_user_makes_keeps_the_damaged_file_aside_first() -> None:
    path = _settings_file(TYPO)
    settings = Settings.load(tell=False)
    settings.monitor.interval_ms = 1000
    notices = settings.save()
    (kept,) = _bad_copies(path)
    assert kept.read_bytes() == TYPO  # the user's bytes, exactly
    assert kept.name.startswith("settings.yaml.bad-") and len(kept.name) == len(
        "settings.yaml.bad-20250101-120000"
    )
    assert notices == [
        f"{path} is not valid YAML (line 2, column 1: could not find expected ':'): it was "
        f"kept as {kept} and replaced by the settings of this session."
    ]
    assert yaml.safe_load(path.read_text()) == {"telemetry_interval_ms": 1000}
    # Saving again does not make another copy: the file is sound now.
    settings.chat.temperature = 0.5
    assert settings.save() == []
    assert _bad_copies(path) == [kept]
    assert yaml.safe_load(path.read_text()) == {
        "telemetry_interval_ms": 1000,
        "chat_temperature": 0.5,
    }


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"- a\n- b\n", "does not hold settings (`key: value` lines) but a list"),
        (
            b"telemetry_interval_ms 500\n",
            "does not hold settings (`key: value` lines) but a line of text",
        ),
        (b"\xff\xfe\x00garbage\x80", "is not UTF-8 text"),
        (
            b"a: [unclosed\n",
            "is not valid YAML (line 1, column 4: expected ',' or ']', but got '<stream end>')",
        ),
    ],
)
def test_what_is_not_a_mapping_is_damaged_and_kept(data: bytes, problem: str) -> None:
    path = _settings_file(data)
    settings = Settings.load(tell=False)
    assert settings.damaged == f"{path} {problem}"
    assert settings.as_dict() == Settings().as_dict()  # defaults
    settings.general.workload_python = "/opt/py"
    settings.save()
    (kept,) = _bad_copies(path)
    assert kept.read_bytes() == data
    assert yaml.safe_load(path.read_text()) == {"workload_python": "/opt/py"}


def test_a_huge_settings_file_is_not_read_whole() -> None:
    path = _settings_file(b"# " + b"x" * (5 * 1024 * 1024) + b"\n")
    settings = Settings.load(tell=False)
    assert settings.damaged == f"{path} is larger than 4 MiB (settings are a few lines)"


# -- values that do not fit -----------------------------------------------------------------
def test_a_bad_value_is_the_default_for_the_session_and_stays_in_the_file() -> None:
    original = (
        b"workload_python: /opt/py/bin/python\n"
        b"telemetry_interval_ms: 5\n"  # below the minimum of 100
        b"job_cancel_grace_s: abc\n"  # not a number
        b"future_key: {nested: [1, 2]}\n"  # a newer version's
    )
    path = _settings_file(original)
    settings = Settings.load(tell=False)
    assert settings.general.workload_python == "/opt/py/bin/python"
    assert settings.monitor.interval_ms == 500
    assert settings.general.job_cancel_grace_s == 3.0
    assert settings.damaged == ""
    assert settings.problems == [
        f"{path}: telemetry_interval_ms must be at least 100 (it is 5), so the default 500 "
        "is used; the file keeps your value until you change this setting.",
        f"{path}: job_cancel_grace_s must be a number (it is 'abc'), so the default 3.0 is "
        "used; the file keeps your value until you change this setting.",
    ]
    settings.chat.temperature = 1.2
    settings.window.last_tab = "Chat"
    assert settings.save() == []
    assert yaml.safe_load(path.read_text()) == {
        "workload_python": "/opt/py/bin/python",
        "telemetry_interval_ms": 5,
        "job_cancel_grace_s": "abc",
        "future_key": {"nested": [1, 2]},
        "chat_temperature": 1.2,
        "last_tab": "Chat",
    }
    assert _bad_copies(path) == []
    # Changing the bad setting itself replaces it.
    settings.monitor.interval_ms = 250
    settings.save()
    assert yaml.safe_load(path.read_text())["telemetry_interval_ms"] == 250


# -- merging: only what this session changed is written ---------------------------------
def test_two_panels_open_at_once_keep_each_others_changes() -> None:
    path = _settings_file(b"workload_python: /opt/py\nunknown: 7\n")
    first, second = Settings.load(), Settings.load()
    first.monitor.interval_ms = 1000
    first.save()
    second.general.workload_python = "/opt/other"
    second.chat.top_k = 10
    second.save()
    first.window.last_tab = "Monitor"
    first.save()  # must not put /opt/py back, nor drop top_k
    assert yaml.safe_load(path.read_text()) == {
        "workload_python": "/opt/other",
        "unknown": 7,
        "telemetry_interval_ms": 1000,
        "chat_top_k": 10,
        "last_tab": "Monitor",
    }


def test_a_setting_changed_back_to_its_default_is_removed_and_nothing_else() -> None:
    path = _settings_file(b"telemetry_interval_ms: 250\nchat_top_k: 10\n")
    settings = Settings.load()
    settings.monitor.interval_ms = 500  # the default
    settings.save()
    assert yaml.safe_load(path.read_text()) == {"chat_top_k": 10}


def test_a_save_with_nothing_changed_writes_nothing() -> None:
    path = _settings_file(b"# my comment\nchat_top_k: 10\n")
    before = os.stat(path)
    settings = Settings.load()
    settings.chat.top_k = 10  # the same value
    assert settings.save() == []
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert path.read_bytes() == b"# my comment\nchat_top_k: 10\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.yaml"]


def test_concurrent_saves_of_different_settings_all_land() -> None:
    path = _settings_file(b"keep_me: true\n")
    # Each process changes a different option (a window setting each), all at once.
    names = ["geometry", "state", "last_tab"]
    options = [(name, f"value-{name}") for name in names] + [("workload", "/opt/w")]
    script = (
        "import sys, time\n"
        "from rocmpanel.base.settings import Settings\n"
        "s = Settings.load()\n"
        "start = float(sys.argv[3])\n"
        "time.sleep(max(0.0, start - time.time()))\n"
        "if sys.argv[1] == 'workload':\n"
        "    s.general.workload_python = sys.argv[2]\n"
        "else:\n"
        "    setattr(s.window, sys.argv[1], sys.argv[2])\n"
        "s.save()\n"
    )
    start = time.time() + 1.5
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, name, value, str(start)],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name, value in options
    ]
    outputs = [p.communicate(timeout=30) for p in procs]
    assert [p.returncode for p in procs] == [0] * len(procs), outputs
    assert yaml.safe_load(path.read_text()) == {
        "keep_me": True,
        "window_geometry": "value-geometry",
        "window_state": "value-state",
        "last_tab": "value-last_tab",
        "workload_python": "/opt/w",
    }


# -- no file at all -------------------------------------------------------------------------
def _load_in_thread() -> Settings:
    box: list[Settings] = []
    worker = threading.Thread(target=lambda: box.append(Settings.load(tell=False)), daemon=True)
    worker.start()
    worker.join(2.0)
    assert box, "Settings.load() hung"
    return box[0]


def test_a_fifo_settings_file_neither_hangs_nor_is_replaced() -> None:
    path = paths.settings_file()
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    settings = _load_in_thread()
    assert settings.problems == [
        f"{path} is a FIFO (named pipe), not a regular file. rocmpanel uses the default "
        "settings and saves none while it is there: move it away."
    ]
    settings.general.workload_python = "/opt/py"
    with pytest.raises(PanelError) as caught:
        settings.save()
    assert caught.value.message == (
        f"Settings not saved: {path} is a FIFO (named pipe), not a regular file. Move it "
        "away so that rocmpanel can keep its settings there."
    )
    assert path.is_fifo()


def test_a_folder_in_place_of_the_settings_file_is_left_alone() -> None:
    path = paths.settings_file()
    (path / "inside").mkdir(parents=True)
    settings = _load_in_thread()
    assert settings.damaged == f"{path} is a folder, not a regular file"
    settings.chat.top_k = 3
    with pytest.raises(PanelError) as caught:
        settings.save()
    assert caught.value.message == (
        f"Settings not saved: {path} is a folder, not a regular file. Move it away so that "
        "rocmpanel can keep its settings there."
    )
    assert (path / "inside").is_dir()


# -- the window and the smoke test ----------------------------------------------------------
def test_the_window_says_what_was_wrong_once_and_keeps_the_file(qtbot) -> None:
    from PySide6.QtWidgets import QLabel

    from rocmpanel.gui.inventory import InventoryHolder
    from rocmpanel.machine.gpu_model import SystemInfo
    from rocmpanel.machine.inventory import Inventory
    from rocmpanel.shell.main_window import MainWindow

    class OnlyTab(QLabel):
        title = "Only"

        def __init__(self, ctx, parent=None):
            super().__init__("only", parent)

        def shutdown(self):
            pass

    path = _settings_file(TYPO)
    settings = Settings.load(tell=False)
    holder = InventoryHolder(detector=lambda: Inventory(SystemInfo("linux", gpus=())))
    win = MainWindow(settings, tabs=(OnlyTab,), inventory=holder)
    qtbot.addWidget(win)
    assert win.settings_problems_box is None  # not before the first frame
    # Finding 16: a short sentence in the status bar (a long one is cut at the window's edge)
    assert win.statusBar().currentMessage() == (
        "Settings file damaged: using defaults — see the message."
    )
    with qtbot.waitSignal(win.first_painted, timeout=5000):
        win.show()
    box = win.settings_problems_box
    assert box is not None and box.isVisible() and not box.isModal()
    assert box.text() == f"Some of your settings could not be used ({path})."
    assert box.informativeText() == settings.problems[0]
    assert win.show_settings_problems() is box  # once
    box.close()
    win.close()  # saves the window's size and last tab: not over a damaged file
    assert path.read_bytes() == TYPO
    assert _bad_copies(path) == []


def test_the_settings_dialog_says_where_a_damaged_file_was_kept(qtbot) -> None:
    from rocmpanel.shell.settings_dialog import SettingsDialog

    path = _settings_file(TYPO)
    settings = Settings.load(tell=False)
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.accept()  # nothing changed: nothing written
    assert path.read_bytes() == TYPO and dialog.notice_box is None
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    editor = dialog.editor("telemetry_interval_ms")
    editor.setValue(1000)  # type: ignore[union-attr]
    dialog.accept()
    (kept,) = _bad_copies(path)
    assert kept.read_bytes() == TYPO
    assert dialog.notice_box is not None
    assert str(kept) in dialog.notice_box.text()
    assert yaml.safe_load(path.read_text()) == {"telemetry_interval_ms": 1000}


def _run_smoke_test() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rocmpanel", "--smoke-test"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("data", [b"# mine\nworkload_python: /opt/py\nfuture: [1]\n", TYPO])
def test_the_smoke_test_writes_none_of_the_users_files(data: bytes, _private_home: Path) -> None:
    path = _settings_file(data)
    result = _run_smoke_test()
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["tabs"]
    assert "Traceback" not in result.stderr
    assert path.read_bytes() == data
    # Only the log is new: no database, no lock, no copy of the settings.
    assert _tree(_private_home) == [
        "config",
        "config/settings.yaml",
        "data",
        "data/logs",
        "data/logs/rocmpanel.log",
        "user",
    ]


def test_closing_the_real_window_never_replaces_a_damaged_file(tmp_path: Path) -> None:
    """Every tab saves its choices at close (the Chat tab its model and sampling): none of
    those saves, which the user did not ask for, may replace a file that could not be read."""
    path = _settings_file(TYPO)
    script = Path(__file__).resolve().parents[2] / "scripts" / "screenshot.py"
    result = subprocess.run(
        [sys.executable, str(script), "--tab", "all", "--out", str(tmp_path / "shot.png")],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == TYPO
    assert _bad_copies(path) == []


# -- break-it round 6: leftover temp files, backups, duplicate keys (findings 13, 14) ----------
def _dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], **_CAPTURE)
    return int(child.stdout)


_CAPTURE: dict = {"capture_output": True, "text": True, "check": True, "timeout": 30}


def test_a_save_removes_the_temp_files_of_killed_saves_only() -> None:
    path = _settings_file(b"telemetry_interval_ms: 500\n")
    dead = path.parent / f".settings.yaml.rocmpanel-{_dead_pid()}.k1ll3d_.tmp"
    live = path.parent / f".settings.yaml.rocmpanel-{os.getppid()}.al1ve.tmp"  # still running
    other = path.parent / f".other.yaml.rocmpanel-{_dead_pid()}.x.tmp"  # not the settings'
    for leftover in (dead, live, other):
        leftover.write_bytes(b"telemetry_interval_ms: 1")
    settings = Settings.load()
    settings.monitor.interval_ms = 1000
    settings.save()
    assert not dead.exists()
    assert live.exists() and other.exists()
    assert yaml.safe_load(path.read_text()) == {"telemetry_interval_ms": 1000}


def _backups(path: Path) -> list[Path]:
    return sorted(paths.backups_dir().glob("*settings.yaml.*.bak"))


def test_the_first_save_of_a_session_backs_the_file_up_and_says_so_when_it_had_comments() -> None:
    text = b"# my comment\nunknown_key: keepme\ntelemetry_interval_ms: 500\n"
    path = _settings_file(text)
    settings = Settings.load()
    settings.monitor.interval_ms = 1000
    notices = settings.save()
    (backup,) = _backups(path)
    assert backup.read_bytes() == text
    assert notices == [
        f"{path} had comments, which a save does not keep; the file as you wrote it is kept "
        f"as {backup}."
    ]
    assert yaml.safe_load(path.read_text()) == {
        "unknown_key": "keepme",
        "telemetry_interval_ms": 1000,
    }
    settings.monitor.interval_ms = 1500  # a second save of the session: no second copy
    assert settings.save() == []
    assert _backups(path) == [backup]


def test_a_file_without_comments_is_backed_up_silently_and_only_a_few_are_kept() -> None:
    path = _settings_file(b"telemetry_interval_ms: 500\n")
    for session in range(settings_module.KEEP_BACKUPS + 2):
        settings = Settings.load()
        settings.monitor.interval_ms = 1000 + session
        assert settings.save() == []
    backups = _backups(path)
    assert len(backups) == settings_module.KEEP_BACKUPS
    assert yaml.safe_load(backups[-1].read_text()) == {
        "telemetry_interval_ms": 1000 + settings_module.KEEP_BACKUPS
    }


def test_a_missing_file_needs_no_backup() -> None:
    settings = Settings.load()
    settings.monitor.interval_ms = 1000
    assert settings.save() == []
    settings.monitor.interval_ms = 1100
    assert settings.save() == []
    assert _backups(paths.settings_file()) == []


def test_no_backup_possible_means_no_save() -> None:
    text = b"telemetry_interval_ms: 500\n"
    path = _settings_file(text)
    backups = paths.backups_dir()
    backups.parent.mkdir(parents=True, exist_ok=True)
    backups.write_text("a file where the backups folder belongs")
    settings = Settings.load()
    settings.monitor.interval_ms = 1000
    with pytest.raises(PanelError) as caught:
        settings.save()
    assert caught.value.message == (
        f"Settings not saved: {path} could not be backed up first (Could not create the "
        f"backups folder {backups}: File exists). Nothing was changed."
    )
    assert path.read_bytes() == text


def test_a_key_written_twice_is_a_problem_line_and_the_last_one_counts(capsys) -> None:
    path = _settings_file(b"telemetry_interval_ms: 100\nfuture: 1\ntelemetry_interval_ms: 700\n")
    settings = Settings.load()
    assert settings.monitor.interval_ms == 700
    assert settings.problems == [
        f"{path}: the key 'telemetry_interval_ms' appears more than once; the last one is used."
    ]
    assert settings.damaged == ""
    assert capsys.readouterr().err == "rocmpanel: " + settings.problems[0] + "\n"


def test_the_smoke_test_writes_none_of_the_users_files_with_damaged_databases(
    _private_home: Path,
) -> None:
    """Finding 15: damaged databases are reported, not moved aside or made anew."""
    data = _private_home / "data"
    data.mkdir()
    (data / "chat.sqlite3").write_bytes(b"\x00\xff garbage" * 500)
    os.mkfifo(data / "validation.sqlite3")
    (data / "rocmpanel.sqlite3").mkdir()  # the old shared database, as a folder
    path = _settings_file(TYPO)
    result = _run_smoke_test()
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert path.read_bytes() == TYPO
    assert (data / "chat.sqlite3").read_bytes() == b"\x00\xff garbage" * 500
    assert _tree(_private_home) == [
        "config",
        "config/settings.yaml",
        "data",
        "data/chat.sqlite3",
        "data/logs",
        "data/logs/rocmpanel.log",
        "data/rocmpanel.sqlite3",
        "data/validation.sqlite3",
        "user",
    ]
