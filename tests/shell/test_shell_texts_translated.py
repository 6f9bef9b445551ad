"""The shell's own windows go through Qt's translation machinery too: the first-run guide
(not in the demo the window-wide check opens), the Settings, About, Keyboard shortcuts and
crash dialogs. Same pseudo-translator and word check as test_translation_coverage."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from rocmpanel.base.settings import Settings
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.machine.gpu_model import SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.shell.main_window import MainWindow

from .test_translation_coverage import OPEN, PseudoTranslator, untranslated


class OneTab(QWidget):
    title = "Setup"

    def __init__(self, ctx, parent=None):  # type: ignore[no-untyped-def]
        super().__init__(parent)

    def shutdown(self) -> None:
        pass


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path):  # type: ignore[no-untyped-def]
    translator = PseudoTranslator()
    QCoreApplication.installTranslator(translator)
    inventory = InventoryHolder(detector=lambda: Inventory(SystemInfo("linux", gpus=())))
    win = MainWindow(Settings.load(), tabs=(OneTab,), inventory=inventory)
    win.save_on_close = False
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.first_painted, timeout=5000):
        win.show()
    qtbot.waitUntil(lambda: win.ctx.inventory.current is not None, timeout=5000)
    yield win
    win.close()
    QCoreApplication.removeTranslator(translator)


def _all(widget: QWidget) -> list[QWidget]:
    return [widget, *widget.findChildren(QWidget)]


def test_the_first_run_guide_is_translated(window: MainWindow, qtbot: QtBot) -> None:
    assert window.guide is not None and window.guide.isVisible()
    qtbot.wait(100)  # its ticks are read in the background
    assert window.guide.step_buttons[0].text().startswith(OPEN)
    assert untranslated(window, _all(window.guide)) == []


def test_the_shell_dialogs_are_translated(window: MainWindow, qtbot: QtBot) -> None:
    from rocmpanel.shell.about import AboutDialog
    from rocmpanel.shell.crash_dialog import CrashDialog
    from rocmpanel.shell.settings_dialog import SettingsDialog

    settings = SettingsDialog(window.settings, window)
    about = AboutDialog(window.ctx, window)
    shortcuts = window.open_shortcuts()
    crash = CrashDialog("ValueError: x", "Traceback …", window)
    for dialog in (settings, about, shortcuts, crash):
        qtbot.addWidget(dialog)
    problems = []
    for dialog in (settings, about, shortcuts, crash):
        problems += untranslated(window, _all(dialog))
    assert problems == []
    assert settings.windowTitle().startswith(OPEN)
    assert window.windowTitle() == "rocmpanel"  # a name, the same in every language
