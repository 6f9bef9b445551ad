"""The window's keyboard shortcuts, and Help → Keyboard shortcuts, which lists them.

The keys are set here, once, on the menus' actions; the list is read back from the
actions the window holds (so it cannot fall out of step with them). Tabs are switched
with Ctrl+digit, not Alt+digit: Alt+letter is the mnemonics' (menus, buttons), and on
Linux desktops Alt+digit often reaches the mnemonics or the window manager first.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.i18n import translate

# Fixed keys rather than QKeySequence.StandardKey: Preferences and Quit are empty on
# Windows and some Linux desktops, and HelpContents (F1) is taken by the shortcuts list.
SETTINGS = "Ctrl+,"
QUIT = "Ctrl+Q"
EXPORT_REPORT = "Ctrl+Shift+E"
LOG = "Ctrl+L"
NEXT_TAB = "Ctrl+PgDown"
PREVIOUS_TAB = "Ctrl+PgUp"
SHORTCUTS = "F1"
TABS_WITH_KEYS = 9  # Ctrl+1 … Ctrl+9


def tab_key(index: int) -> str:
    """The key of the tab at ``index`` (from 0), "" past the ninth."""
    return f"Ctrl+{index + 1}" if index < TABS_WITH_KEYS else ""


def set_keys(action: QAction, keys: str) -> QAction:
    """Give ``action`` its key; it works wherever the focus is in the window."""
    action.setShortcut(QKeySequence(keys))
    action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    return action


def plain_text(text: str) -> str:
    """A menu text without its mnemonic marker and ellipsis ("&Settings…" → "Settings";
    "文件(&F)" → "文件")."""
    text = text.replace("…", "").strip()
    for marker in ("(&", "（&"):  # the Chinese convention: the letter in brackets after
        at = text.find(marker)
        if at > 0 and text.endswith((")", "）")):
            text = text[:at]
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").strip()


def shortcut_rows(actions: Iterable[QAction]) -> list[tuple[str, str]]:
    """(what, keys) for each visible action with a shortcut, keys as the platform
    writes them (Ctrl+Q; ⌘Q on macOS); each action once."""
    rows: list[tuple[str, str]] = []
    seen: set[int] = set()
    for action in actions:
        if id(action) in seen or not action.isVisible() or action.isSeparator():
            continue
        seen.add(id(action))
        keys = [k for k in action.shortcuts() if not k.isEmpty()]
        if not keys:
            continue
        shown = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys)
        rows.append((plain_text(action.text()), shown))
    return rows


def menu_actions(menus: Iterable[QMenu]) -> list[QAction]:
    """Every action of these menus and their submenus, in menu order."""
    found: list[QAction] = []
    for menu in menus:
        for action in menu.actions():
            sub = action.menu()
            if isinstance(sub, QMenu):
                found += menu_actions([sub])
            else:
                found.append(action)
    return found


class ShortcutsDialog(QDialog):
    """Help → Keyboard shortcuts: the window's actions and their keys."""

    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(translate("ShortcutsDialog", "Keyboard shortcuts"))
        layout = QVBoxLayout(self)
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(
            [translate("ShortcutsDialog", "Action"), translate("ShortcutsDialog", "Keys")]
        )
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        for row, (what, keys) in enumerate(rows):
            self.table.setItem(row, 0, QTableWidgetItem(what))
            self.table.setItem(row, 1, QTableWidgetItem(keys))
        layout.addWidget(self.table)
        note = QLabel(
            translate(
                "ShortcutsDialog",
                "In a tab, Alt and the underlined letter of a button or field presses or "
                "reaches it; Tab and Shift+Tab move between them.",
            )
        )
        note.setWordWrap(True)
        layout.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(480, 520)  # every row of the window's keys without scrolling

    def rows(self) -> list[tuple[str, str]]:
        rows = []
        for r in range(self.table.rowCount()):
            what, keys = self.table.item(r, 0), self.table.item(r, 1)
            rows.append((what.text() if what else "", keys.text() if keys else ""))
        return rows
