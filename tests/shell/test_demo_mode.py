"""Demo mode (``rocmpanel --demo``): parsing, the temporary home, the whole window on the
demo's recorded GPUs (every tab), the "Show a demo" hook, ``install_packages`` routing, and
``ROCMPANEL_SYSFS_ROOT`` read by the shared inventory."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel

from rocmpanel.base.settings import Settings
from rocmpanel.gui.inventory import InventoryHolder, detect_from_environment
from rocmpanel.machine import demo
from rocmpanel.machine.gpu_model import SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.setup.views.probe_box import DEMO_NOT_PROBED
from rocmpanel.shell import app, cli
from rocmpanel.shell.main_window import DEMO_TITLE, MainWindow


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, bool]]:
    seen: list[tuple[bool, bool]] = []

    def fake(smoke_test: bool, demo: bool = False) -> int:
        seen.append((smoke_test, demo))
        return 0

    monkeypatch.setattr(cli, "_run_gui", fake)
    return seen


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--demo"], (False, True)),
        (["--demo", "--smoke-test"], (True, True)),
        (["--smoke-test", "--demo"], (True, True)),
        (["--smoke-test"], (True, False)),
        ([], (False, False)),
    ],
)
def test_demo_opens_the_window_without_building_the_parser(
    calls, monkeypatch: pytest.MonkeyPatch, argv: list[str], expected: tuple[bool, bool]
) -> None:  # type: ignore[no-untyped-def]
    def no_parser() -> None:
        raise AssertionError("the window's start must not build the parser")

    monkeypatch.setattr(cli, "build_parser", no_parser)
    assert cli.main(argv) == 0
    assert calls == [expected]


def test_demo_is_refused_with_a_command(calls, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as stopped:
        cli.main(["--demo", "doctor"])
    assert stopped.value.code == 2
    assert "--demo opens the window; it does not go with a command" in capsys.readouterr().err
    assert calls == []


def test_help_describes_demo(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--demo open the window on recorded GPUs with a replayed workload" in out


def test_the_demo_runs_in_a_temporary_home_removed_at_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home_before = os.environ["ROCMPANEL_HOME"]
    monkeypatch.delenv("ROCMPANEL_SYSFS_ROOT", raising=False)
    seen: dict[str, Any] = {}

    def fake(smoke_test: bool, session: demo.DemoSession | None = None) -> int:
        assert session is not None
        seen["session"] = session
        seen["env"] = {k: os.environ.get(k) for k in session.environ()}
        seen["home_exists"] = session.home.is_dir()
        return 7

    monkeypatch.setattr(app, "_run_gui", fake)
    assert app.run_gui(demo=True) == 7
    session = seen["session"]
    assert seen["env"]["ROCMPANEL_HOME"] == str(session.home) != home_before
    assert seen["env"]["ROCMPANEL_SYSFS_ROOT"] == str(session.sysfs_root)
    assert seen["home_exists"] is True
    assert not session.folder.exists()  # removed at exit
    assert os.environ["ROCMPANEL_HOME"] == home_before  # and the environment restored
    assert "ROCMPANEL_SYSFS_ROOT" not in os.environ


def test_a_damaged_recording_is_said_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*_a: object, **_k: object) -> None:
        raise OSError("recording.json: No such file or directory")

    monkeypatch.setattr(demo, "DemoSession", broken)
    assert app.run_gui(demo=True) == 1
    assert capsys.readouterr().err == (
        "rocmpanel --demo: the demo's recording could not be loaded "
        "(recording.json: No such file or directory).\n"
    )


def test_the_demo_window_on_every_tab(demo_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    win = demo_window
    assert win.windowTitle() == DEMO_TITLE
    assert "DEMO" in win.windowTitle()
    assert win.demo_banner is not None and win.demo_banner.isVisible()
    assert win.demo_banner.text().startswith("DEMO — recorded GPUs")
    assert any(w.text() == "DEMO: recorded GPUs" for w in win.statusBar().findChildren(QLabel))
    assert win.ctx.demo is True and win.ctx.show_demo is None
    assert win.ctx.install_packages is not None

    # Setup: the two demo GPUs with their verdicts, ROCm from the recording.
    setup = win.tab("Setup")
    qtbot.waitUntil(lambda: getattr(setup, "report", None) is not None, timeout=10_000)
    rows = [(g.gfx, v.status.value) for g, v in setup.report.gpu_rows()]  # type: ignore[union-attr]
    assert rows == [("gfx1100", "supported"), ("gfx1030", "limited")]
    assert setup.report.system.rocm_version == "7.2.0"  # type: ignore[union-attr]
    # No probe of this machine's Python: it would mix two machines in one report.
    assert setup.probe_box.label.text() == DEMO_NOT_PROBED  # type: ignore[union-attr]
    assert not setup.probe_box.button.isEnabled()  # type: ignore[union-attr]
    editor = setup.env_editor  # type: ignore[union-attr]  # the environment editor opens
    assert editor.read_only is True  # demo mode never changes this machine

    # Monitor: minutes of history as soon as it opens, then live samples after them.
    opened = time.time()
    win.tabs.setCurrentIndex(win.tab_titles().index("Monitor"))
    monitor = win.tab("Monitor")
    assert monitor.window_combo.currentText() == "10 min"  # type: ignore[union-attr]

    def history_span() -> float:
        history = monitor.history  # type: ignore[union-attr]
        if history is None or "0000:03:00.0" not in history.gpus:
            return 0.0
        series = history.gpus["0000:03:00.0"]
        oldest = series.oldest_full_time()
        if oldest is None:
            return 0.0
        times = series.window(oldest, time.time() + 60, 100_000).times  # full resolution
        return float(times[-1] - times[0]) if len(times) else 0.0

    qtbot.waitUntil(lambda: monitor._held is None, timeout=20_000)  # type: ignore[union-attr]
    assert history_span() >= 120.0
    series = monitor.history.gpus["0000:03:00.0"]  # type: ignore[union-attr]
    assert (series.oldest_full_time() or opened) <= opened - 120.0  # from before it opened
    count = len(series)
    qtbot.waitUntil(lambda: len(series) > count, timeout=10_000)  # a new sample after a tick
    times = series.window(series.oldest_full_time() or 0.0, time.time() + 60, 100_000).times
    assert list(times) == sorted(times)  # the past before the live samples
    assert sorted(monitor.panels) == ["0000:03:00.0", "0000:0c:00.0"]  # type: ignore[union-attr]

    # PyTorch: a plan for the demo's gfx1100.
    torch_tab = win.tab("PyTorch")
    planner = torch_tab.planner  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: planner.plan is not None, timeout=20_000)
    assert "gfx1100" in planner.gpu_label.text()
    validation = torch_tab.validation  # type: ignore[union-attr]
    assert not validation.validate_button.isEnabled()  # it would run this machine's Python
    validation.start_validation()

    # Chat opens; no tab failed.
    assert win.tab("Chat") is not None
    assert win.tab_failures == []
    assert [job.name for job in win.jobs.jobs] == []  # the demo ran nothing here


def test_show_demo_starts_a_detached_demo_process(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from rocmpanel.base import subproc

    started: list[tuple[list[str], dict[str, Any]]] = []
    monkeypatch.setattr(subproc, "popen", lambda argv, **kw: started.append((argv, kw)))
    win = _plain_window(qtbot)
    assert win.ctx.show_demo is not None and win.ctx.demo is False
    assert win.windowTitle() == "rocmpanel" and win.demo_banner is None
    win.ctx.show_demo()
    [(argv, kwargs)] = started
    assert argv == [sys.executable, "-m", "rocmpanel", "--demo"]
    assert kwargs["start_new_session"] is True
    assert kwargs["stdin"] is subprocess.DEVNULL
    assert win.statusBar().currentMessage() == "Opening the demo in a second window…"


def test_a_demo_that_cannot_start_is_reported(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from rocmpanel.base import subproc

    def refuse(argv: list[str], **_kw: object) -> None:
        raise OSError("Permission denied")

    monkeypatch.setattr(subproc, "popen", refuse)
    win = _plain_window(qtbot)
    win.show_demo()
    assert win.statusBar().currentMessage() == (
        "The demo could not start: Permission denied. The panel's Python could not be run "
        "again; reinstalling rocmpanel usually fixes this."
    )


class _TorchTab(QLabel):
    title = "PyTorch"

    def __init__(self, ctx: object, parent: object = None) -> None:
        super().__init__("torch")
        self.installed: list[str] = []

    def install_packages(self, profile: str) -> None:
        self.installed.append(profile)

    def shutdown(self) -> None:
        pass


class _OtherTab(_TorchTab):
    title = "Other"


def _plain_window(qtbot, tabs: tuple[type, ...] = (_OtherTab,)) -> MainWindow:  # type: ignore[no-untyped-def]
    inventory = InventoryHolder(detector=lambda: Inventory(SystemInfo("linux")))
    win = MainWindow(Settings(), tabs=tabs, inventory=inventory)  # type: ignore[arg-type]
    win.save_on_close = False
    qtbot.addWidget(win)
    return win


def test_install_packages_goes_to_the_pytorch_tab(qtbot) -> None:  # type: ignore[no-untyped-def]
    win = _plain_window(qtbot, (_OtherTab, _TorchTab))
    assert win.tabs.currentIndex() == 0
    assert win.ctx.install_packages is not None
    win.ctx.install_packages("llm")
    assert win.tabs.currentIndex() == 1
    assert win.tab("PyTorch").installed == ["llm"]  # type: ignore[union-attr]


def test_install_packages_without_a_pytorch_tab_says_so(qtbot) -> None:  # type: ignore[no-untyped-def]
    win = _plain_window(qtbot)
    win.install_packages("llm")
    assert win.statusBar().currentMessage() == (
        "Installing packages needs the PyTorch tab, which this build lacks."
    )


def test_the_sysfs_root_variable_makes_the_inventory_read_that_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_tools(*_a: object, **_k: object) -> None:
        raise AssertionError("no tool of this machine runs for a recorded tree")

    monkeypatch.setattr("rocmpanel.machine.detect.run_rocminfo", no_tools)
    monkeypatch.setattr("rocmpanel.machine.parsers.lspci.run_lspci", no_tools)
    demo.build_tree(tmp_path, demo.load_recording(), 1_800_000_000.0)
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(tmp_path))
    inventory = detect_from_environment()
    assert [g.bdf for g in inventory.gpus] == ["0000:03:00.0", "0000:0c:00.0"]
    assert inventory.live is False
    assert detect_from_environment({"ROCMPANEL_SYSFS_ROOT": str(tmp_path / "none")}).gpus == ()


def test_the_holder_detects_from_the_environment_by_default(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    demo.build_tree(tmp_path, demo.load_recording(), 1_800_000_000.0)
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(tmp_path))
    holder = InventoryHolder()
    with qtbot.waitSignal(holder.changed, timeout=10_000) as got:
        holder.refresh()
    assert [g.gfx for g in got.args[0].gpus] == ["gfx1100", "gfx1030"]
