"""Start-up of the main window: what waits for the first frame, and the collector after it."""

from __future__ import annotations

import gc
import logging

from PySide6.QtWidgets import QLabel

from rocmpanel.base.settings import Settings
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.machine.gpu_model import SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.shell import heap
from rocmpanel.shell.main_window import MainWindow


class OneTab(QLabel):
    title = "One"

    def __init__(self, ctx, parent=None):
        super().__init__("one", parent)

    def shutdown(self):
        pass


class OtherTab(OneTab):
    title = "Other"


def _window(qtbot, settings: Settings | None = None) -> MainWindow:
    inventory = InventoryHolder(detector=lambda: Inventory(SystemInfo("linux", gpus=())))
    win = MainWindow(settings or Settings.load(), tabs=(OneTab, OtherTab), inventory=inventory)
    qtbot.addWidget(win)
    return win


def test_the_heap_is_frozen_once_start_up_is_done(qtbot) -> None:
    gc.unfreeze()
    win = _window(qtbot)
    assert gc.get_freeze_count() == 0  # not while the window is built
    win.show()
    qtbot.waitUntil(lambda: all(win.tabs.widget(i).widget for i in range(2)), timeout=5000)
    qtbot.waitUntil(lambda: gc.get_freeze_count() > 0, timeout=5000)
    assert gc.get_threshold()[2] >= heap.OLDEST_THRESHOLD
    assert gc.isenabled()


def test_a_paused_collector_runs_again_once_start_up_is_done(qtbot) -> None:
    heap.pause()  # as run_gui does before it imports Qt
    assert not gc.isenabled()
    win = _window(qtbot)
    win.show()
    qtbot.waitUntil(gc.isenabled, timeout=5000)
    assert gc.get_freeze_count() > 0


def test_the_log_dock_is_built_after_the_first_frame_and_shows_what_came_before(qtbot) -> None:
    win = _window(qtbot)
    logging.getLogger("rocmpanel.test").warning("logged before the log view exists")
    assert win._log_dock is None  # not in the first frame: it is closed
    assert win._view_menu.actions() == []  # the menus' entries follow the frame too
    with qtbot.waitSignal(win.first_painted, timeout=5000):
        win.show()
    assert win._log_dock is not None and win.log_dock.isHidden()
    assert "&Log" in [action.text() for action in win._view_menu.actions()]
    qtbot.waitUntil(
        lambda: "logged before the log view exists" in win.log_view.toPlainText(), timeout=3000
    )
    logging.getLogger("rocmpanel.test").warning("logged after")
    qtbot.waitUntil(lambda: "logged after" in win.log_view.toPlainText(), timeout=3000)
    assert win.log_view.toPlainText().count("logged before the log view exists") == 1


def test_a_log_dock_open_at_close_is_in_the_next_first_frame(qtbot) -> None:
    settings = Settings.load()
    win = _window(qtbot, settings)
    win.show()
    win.log_dock.show()
    qtbot.waitUntil(win.log_dock.isVisible, timeout=3000)
    win.close()
    assert settings.window.log_open
    again = _window(qtbot, Settings.load(settings.path))
    assert again._log_dock is not None  # built with the window, restored open
    again.show()
    qtbot.waitUntil(again.log_dock.isVisible, timeout=3000)
    again.log_dock.hide()
    again.close()
    assert not Settings.load(settings.path).window.log_open
    closed = _window(qtbot, Settings.load(settings.path))
    assert closed._log_dock is None
    closed.show()
    qtbot.waitUntil(lambda: closed._log_dock is not None, timeout=3000)
    assert closed.log_dock.isHidden()  # built after the first frame, as it was: closed
