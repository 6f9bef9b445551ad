"""The window's keyboard shortcuts: Ctrl+digit for the tabs, Ctrl+PgUp/PgDn, the menus'
keys; F1 lists them all, read from the actions; no two actions share a key."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QVBoxLayout
from pytestqt.qtbot import QtBot

from rocmpanel.base.settings import Settings
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.machine.gpu_model import SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.shell import shortcuts
from rocmpanel.shell.main_window import MainWindow
from rocmpanel.shell.shortcuts import ShortcutsDialog, plain_text

TITLES = ("Setup", "Monitor", "PyTorch", "Tuning", "Chat", "Multi-GPU")


def _tab(title: str) -> type:
    class FakeTab(QLabel):
        def __init__(self, ctx, parent=None):  # type: ignore[no-untyped-def]
            super().__init__(title, parent)
            # A text field with the focus: the window's keys work from inside a tab too.
            self.field = QLineEdit(self)
            QVBoxLayout(self).addWidget(self.field)

        def shutdown(self) -> None:
            pass

    FakeTab.title = title  # type: ignore[attr-defined]
    FakeTab.__name__ = title.replace("-", "") + "Tab"
    return FakeTab


@pytest.fixture
def window(qtbot: QtBot) -> MainWindow:
    settings = Settings.load()
    settings.general.guide_dismissed = True  # the guide's own tests are in test_first_run
    inventory = InventoryHolder(detector=lambda: Inventory(SystemInfo("linux", gpus=())))
    win = MainWindow(settings, tabs=[_tab(t) for t in TITLES], inventory=inventory)
    win.save_on_close = False
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.first_painted, timeout=5000):
        win.show()
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win, timeout=3000)
    return win


def _press(qtbot: QtBot, win: MainWindow, keys: str) -> None:
    """Press ``keys`` where the focus is (the current tab's text field)."""
    sequence = QKeySequence(keys)[0]
    target = QApplication.focusWidget() or win
    qtbot.keyClick(target, sequence.key(), sequence.keyboardModifiers())


def test_ctrl_digit_switches_to_each_of_the_six_tabs(qtbot: QtBot, window: MainWindow) -> None:
    for index in (2, 5, 0, 3, 1, 4):
        page = window.tabs.currentWidget()
        field = getattr(page.widget, "field", None)  # type: ignore[attr-defined]
        if field is not None:
            field.setFocus()
        _press(qtbot, window, f"Ctrl+{index + 1}")
        assert window.tabs.currentIndex() == index, TITLES[index]
    assert window.tab_titles() == list(TITLES)


def test_ctrl_page_down_and_up_walk_the_tabs_round(qtbot: QtBot, window: MainWindow) -> None:
    window.tabs.setCurrentIndex(4)
    _press(qtbot, window, "Ctrl+PgDown")
    assert window.tabs.currentIndex() == 5
    _press(qtbot, window, "Ctrl+PgDown")
    assert window.tabs.currentIndex() == 0  # round to the first
    _press(qtbot, window, "Ctrl+PgUp")
    assert window.tabs.currentIndex() == 5


def test_ctrl_l_shows_and_hides_the_log(qtbot: QtBot, window: MainWindow) -> None:
    assert window.log_dock.isHidden()
    _press(qtbot, window, "Ctrl+L")
    assert not window.log_dock.isHidden()
    _press(qtbot, window, "Ctrl+L")
    assert window.log_dock.isHidden()


def test_the_menus_keys(qtbot: QtBot, window: MainWindow, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    called: list[str] = []
    monkeypatch.setattr(MainWindow, "open_settings", lambda self: called.append("settings"))
    monkeypatch.setattr(MainWindow, "export_health_report", lambda self: called.append("report"))
    # The actions call the window's methods by name at the time: rebuild them.
    window._menus_filled = False
    for menu in (window._file_menu, window._view_menu, window._help_menu):
        menu.clear()
    window._fill_menus()
    _press(qtbot, window, "Ctrl+,")
    _press(qtbot, window, "Ctrl+Shift+E")
    assert called == ["settings", "report"]
    _press(qtbot, window, "Ctrl+Q")
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=3000)


def test_f1_lists_every_shortcut_from_the_actions(qtbot: QtBot, window: MainWindow) -> None:
    _press(qtbot, window, "F1")
    dialogs = [w for w in QApplication.topLevelWidgets() if isinstance(w, ShortcutsDialog)]
    assert len(dialogs) == 1 and dialogs[0].isVisible()
    qtbot.addWidget(dialogs[0])
    rows = dict(dialogs[0].rows())
    native = QKeySequence.SequenceFormat.NativeText
    expected = {
        "Settings": QKeySequence("Ctrl+,").toString(native),
        "Export health report": QKeySequence("Ctrl+Shift+E").toString(native),
        "Quit": QKeySequence("Ctrl+Q").toString(native),
        "Log": QKeySequence("Ctrl+L").toString(native),
        "Next tab": QKeySequence("Ctrl+PgDown").toString(native),
        "Previous tab": QKeySequence("Ctrl+PgUp").toString(native),
        "Keyboard shortcuts": "F1",
        **{t: QKeySequence(f"Ctrl+{i + 1}").toString(native) for i, t in enumerate(TITLES)},
    }
    assert rows == expected
    # A key given to an action later shows in the list too: it is read, not kept apart.
    window._help_menu.actions()[-1].setShortcut(QKeySequence("Ctrl+Shift+A"))
    assert ("About rocmpanel", "Ctrl+Shift+A") in window.shortcut_rows()


def test_no_two_actions_share_a_key(window: MainWindow) -> None:
    seen: dict[str, str] = {}
    for what, keys in window.shortcut_rows():
        for key in keys.split(", "):
            assert key not in seen, f"{key}: {what} and {seen[key]}"
            seen[key] = what


def test_the_menus_mnemonics_are_distinct(window: MainWindow) -> None:
    """Alt+letter opens each menu, and each entry of a menu has its own letter."""
    bar = [a.text() for a in window.menuBar().actions()]
    letters = [t[t.index("&") + 1].lower() for t in bar]
    assert len(set(letters)) == len(letters) == 3
    for menu in (window._file_menu, window._view_menu, window._help_menu):
        texts = [a.text() for a in menu.actions() if "&" in a.text()]
        own = [t[t.index("&") + 1].lower() for t in texts]
        assert len(set(own)) == len(own), texts


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("&Settings…", "Settings"),
        ("文件(&F)", "文件"),
        ("导出健康报告(&E)…", "导出健康报告"),
        ("Fish && &Chips", "Fish & Chips"),
        ("Setup", "Setup"),
    ],
)
def test_plain_text(text: str, plain: str) -> None:
    assert plain_text(text) == plain


def test_tab_keys_stop_after_nine() -> None:
    assert shortcuts.tab_key(0) == "Ctrl+1" and shortcuts.tab_key(8) == "Ctrl+9"
    assert shortcuts.tab_key(9) == ""


def test_no_window_key_is_taken_by_a_tab(qtbot: QtBot) -> None:
    """The feature views' own shortcuts (F5 in Setup, Ctrl+S in the preset editor) are
    not the window's: a window key there would be ambiguous and do nothing."""
    import pathlib
    import re

    import rocmpanel

    window_keys = {
        QKeySequence(k).toString()
        for k in (
            shortcuts.SETTINGS,
            shortcuts.QUIT,
            shortcuts.EXPORT_REPORT,
            shortcuts.LOG,
            shortcuts.NEXT_TAB,
            shortcuts.PREVIOUS_TAB,
            shortcuts.SHORTCUTS,
            *(shortcuts.tab_key(i) for i in range(9)),
        )
    }
    root = pathlib.Path(rocmpanel.__file__).parent
    pattern = re.compile(r"QKeySequence\(\s*\"([^\"]+)\"|KEYS\s*=\s*\(([^)]*)\)")
    for path in root.glob("*/views/*.py"):
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            for key in re.findall(r"[\w+,]+", match.group(1) or match.group(2)):
                assert QKeySequence(key).toString() not in window_keys, (path.name, key)
    assert QKeySequence(QKeySequence.StandardKey.Refresh).toString() not in window_keys
    del qtbot
