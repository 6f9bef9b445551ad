"""The first-run guide: shown at the first start (not in the demo, not when nothing can be
saved), three steps that take the user where each is done, ticks read off the GUI thread,
"Don't show again" kept in the settings, Help → First-run guide opens it again."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from rocmpanel.base.settings import Settings
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.jobs.workload import ManagedEnv
from rocmpanel.machine.gpu_model import SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.shell import first_run
from rocmpanel.shell.first_run import CHECK, DONE_MARK, INSTALL, VALIDATE, GuideProgress
from rocmpanel.shell.main_window import MainWindow


class SetupTab(QLabel):
    title = "Setup"

    def __init__(self, ctx, parent=None):  # type: ignore[no-untyped-def]
        super().__init__("setup", parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def shutdown(self) -> None:
        pass


class _Panel(QWidget):
    def __init__(self, name: str, parent: QWidget) -> None:
        super().__init__(parent)
        button = QPushButton(name, self)
        setattr(self, "install_button" if name == "Install" else "validate_button", button)
        QVBoxLayout(self).addWidget(button)


class PyTorchTab(QWidget):
    """The names the guide looks for: installer.install_button, validation.validate_button."""

    title = "PyTorch"

    def __init__(self, ctx, parent=None):  # type: ignore[no-untyped-def]
        super().__init__(parent)
        self.installer = _Panel("Install", self)
        self.validation = _Panel("Validate", self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.installer)
        layout.addWidget(self.validation)

    def shutdown(self) -> None:
        pass


def _window(qtbot: QtBot, settings: Settings | None = None, *, demo: bool = False) -> MainWindow:
    inventory = InventoryHolder(detector=lambda: Inventory(SystemInfo("linux", gpus=())))
    win = MainWindow(
        settings if settings is not None else Settings.load(),
        tabs=(SetupTab, PyTorchTab),
        inventory=inventory,
        demo=demo,
    )
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.first_painted, timeout=5000):
        win.show()
    return win


def test_the_guide_shows_at_the_first_start_and_ticks_the_check(qtbot: QtBot) -> None:
    win = _window(qtbot)
    assert win.guide is not None and win.guide.isVisible()
    assert [b.text() for b in win.guide.step_buttons] == [
        "1  Check this machine",
        "2  Install PyTorch",
        "3  Validate it",
    ]
    qtbot.waitUntil(lambda: win.ctx.inventory.current is not None, timeout=5000)
    assert win.guide.done_labels[CHECK].text() == DONE_MARK  # the machine was checked
    assert win.guide.done_labels[INSTALL].text() == ""  # no environment in a fresh home
    assert win.guide.done_labels[VALIDATE].text() == ""


@pytest.mark.parametrize("why", ["demo", "dismissed", "smoke test"])
def test_the_guide_stays_away(qtbot: QtBot, why: str) -> None:
    settings = Settings.load()
    if why == "dismissed":
        settings.general.guide_dismissed = True
    if why == "smoke test":
        settings.writable = False  # as run_gui's smoke test sets it
    win = _window(qtbot, settings, demo=why == "demo")
    qtbot.wait(50)
    assert win.guide is None


def test_each_step_takes_the_user_to_its_button(qtbot: QtBot) -> None:
    win = _window(qtbot)
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win, timeout=3000)
    assert win.guide is not None
    qtbot.mouseClick(win.guide.step_buttons[INSTALL], Qt.MouseButton.LeftButton)
    tab = win.tab("PyTorch")
    assert isinstance(tab, PyTorchTab)
    assert win.tabs.currentWidget().widget is tab  # type: ignore[attr-defined]
    assert QApplication.focusWidget() is tab.installer.install_button  # type: ignore[attr-defined]
    win.guide.step_buttons[VALIDATE].click()
    assert QApplication.focusWidget() is tab.validation.validate_button  # type: ignore[attr-defined]
    win.guide.step_buttons[CHECK].click()
    assert win.tab_titles()[win.tabs.currentIndex()] == "Setup"


def test_the_guide_is_usable_from_the_keyboard(qtbot: QtBot) -> None:
    win = _window(qtbot)
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win, timeout=3000)
    qtbot.waitUntil(lambda: win.ctx.inventory.current is not None, timeout=5000)
    guide = win.show_guide()  # Help → First-run guide focuses the first step not done
    assert QApplication.focusWidget() is guide.step_buttons[INSTALL]
    qtbot.keyClick(guide.step_buttons[INSTALL], Qt.Key.Key_Space)
    assert win.tab_titles()[win.tabs.currentIndex()] == "PyTorch"


def test_dont_show_again_is_kept_and_help_opens_it_again(qtbot: QtBot) -> None:
    win = _window(qtbot)
    assert win.guide is not None
    win.guide.dismiss_button.click()
    assert not win.guide.isVisible()
    qtbot.waitUntil(lambda: Settings.load().general.guide_dismissed, timeout=5000)
    win.close()
    again = _window(qtbot)
    qtbot.wait(50)
    assert again.guide is None
    again._fill_menus()
    entry = next(a for a in again._help_menu.actions() if "First-run guide" in a.text())
    entry.trigger()
    assert again.guide is not None and again.guide.isVisible()


def test_the_cross_closes_it_for_this_session_only(qtbot: QtBot) -> None:
    win = _window(qtbot)
    assert win.guide is not None
    win.guide.close_button.click()
    assert not win.guide.isVisible()
    qtbot.wait(100)
    assert Settings.load().general.guide_dismissed is False


def test_ticks_are_read_in_the_background(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    main = threading.current_thread()
    threads: list[threading.Thread] = []

    def slow_progress() -> GuideProgress:
        threads.append(threading.current_thread())
        time.sleep(0.2)
        return GuideProgress(installed=True, validated=True)

    monkeypatch.setattr(first_run, "read_progress", slow_progress)
    win = _window(qtbot)
    assert win.guide is not None
    qtbot.waitUntil(lambda: win.guide.done_labels[VALIDATE].text() == DONE_MARK, timeout=5000)  # type: ignore[union-attr]
    assert win.guide.done_labels[INSTALL].text() == DONE_MARK
    assert threads and all(t is not main for t in threads)


def test_read_progress_sees_an_environment_and_a_passed_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rocmpanel.jobs import workload
    from rocmpanel.pytorch.validation_run import RunVerdict
    from rocmpanel.pytorch.validation_store import ValidationStore

    assert first_run.read_progress() == GuideProgress(False, False)  # a fresh home

    class Run:
        def __init__(self, verdict: RunVerdict) -> None:
            self.verdict = verdict

    env = object.__new__(ManagedEnv)
    monkeypatch.setattr(workload, "list_envs", lambda: [env])
    runs = [Run(RunVerdict.FAIL)]
    monkeypatch.setattr(ValidationStore, "list_runs", lambda self, limit=200: runs)
    assert first_run.read_progress() == GuideProgress(installed=True, validated=False)
    runs.append(Run(RunVerdict.PASS))
    assert first_run.read_progress() == GuideProgress(installed=True, validated=True)


def test_the_check_is_not_ticked_while_the_machine_is_unknown(qtbot: QtBot) -> None:
    def fails() -> Inventory:
        raise OSError("no /sys here")

    inventory = InventoryHolder(detector=fails)
    win = MainWindow(Settings.load(), tabs=(SetupTab, PyTorchTab), inventory=inventory)
    qtbot.addWidget(win)
    with qtbot.waitSignal(inventory.failed, timeout=5000):
        win.show()
    assert win.guide is not None and inventory.current is None
    assert win.guide.done_labels[CHECK].text() == ""


def test_a_finished_job_reads_the_ticks_again(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An install finishing while the guide is open ticks step 2 without a restart."""
    state = {"installed": False}
    monkeypatch.setattr(first_run, "read_progress", lambda: GuideProgress(state["installed"]))
    win = _window(qtbot)
    assert win.guide is not None
    qtbot.wait(200)
    assert win.guide.done_labels[INSTALL].text() == ""
    state["installed"] = True
    win.guide._on_job_finished(object())  # what ctx.jobs.job_finished calls
    qtbot.waitUntil(lambda: win.guide.done_labels[INSTALL].text() == DONE_MARK, timeout=5000)  # type: ignore[union-attr]
