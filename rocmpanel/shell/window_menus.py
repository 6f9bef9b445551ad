"""The main window's menus and keyboard shortcuts (a part of MainWindow, kept apart).

The menu bar is in the first frame; the menus' actions follow it (``_fill_menus`` after the
first paint). The keys come from :mod:`rocmpanel.shell.shortcuts`, and Help → Keyboard
shortcuts lists them from the actions themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from rocmpanel.base.i18n import translate
from rocmpanel.shell import shortcuts as keys
from rocmpanel.shell.first_run_host import GuideHost

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDockWidget


class WindowMenus(GuideHost):
    """File, View and Help, with the window's shortcuts; mixed into MainWindow, whose
    tabs, log dock and dialogs the entries open."""

    if TYPE_CHECKING:  # what MainWindow provides
        _tab_actions: dict[Any, QAction]

        @property
        def log_dock(self) -> QDockWidget: ...
        def _slots(self) -> list[Any]: ...
        def open_settings(self) -> None: ...
        def export_health_report(self) -> None: ...
        def open_about(self) -> None: ...

    _file_menu: QMenu
    _view_menu: QMenu
    _help_menu: QMenu
    export_report_action: QAction

    def _add_menus(self) -> None:
        bar = self.menuBar()
        self._file_menu = bar.addMenu(translate("MainWindow", "&File"))
        self._view_menu = bar.addMenu(translate("MainWindow", "&View"))
        self._help_menu = bar.addMenu(translate("MainWindow", "&Help"))
        self._menus_filled = False

    def _action(self, text: str, shortcut: str, slot: Callable[[], object]) -> QAction:
        action = QAction(text, self)
        if shortcut:
            keys.set_keys(action, shortcut)
        action.triggered.connect(lambda _=False: slot())
        return action

    def _fill_menus(self) -> None:
        """The menus' entries and the window's shortcuts (see shell/shortcuts.py)."""
        if self._menus_filled:
            return
        self._menus_filled = True
        file_menu = self._file_menu
        file_menu.addAction(
            self._action(translate("MainWindow", "&Settings…"), keys.SETTINGS, self.open_settings)
        )
        self.export_report_action = self._action(
            translate("MainWindow", "&Export health report…"),
            keys.EXPORT_REPORT,
            self.export_health_report,
        )
        file_menu.addAction(self.export_report_action)
        file_menu.addSeparator()
        file_menu.addAction(self._action(translate("MainWindow", "&Quit"), keys.QUIT, self.close))

        view_menu = self._view_menu
        toggle_log = self.log_dock.toggleViewAction()
        toggle_log.setText(translate("MainWindow", "&Log"))
        keys.set_keys(toggle_log, keys.LOG)
        view_menu.addAction(toggle_log)
        view_menu.addSeparator()
        for index, slot in enumerate(self._slots()):
            action = self._action(
                translate("Tabs", slot.title),
                keys.tab_key(index),
                partial(self.tabs.setCurrentWidget, slot),
            )
            view_menu.addAction(action)
            self._tab_actions[slot] = action
        view_menu.addSeparator()
        view_menu.addAction(
            self._action(translate("MainWindow", "&Next tab"), keys.NEXT_TAB, self.next_tab)
        )
        view_menu.addAction(
            self._action(
                translate("MainWindow", "&Previous tab"), keys.PREVIOUS_TAB, self.previous_tab
            )
        )

        help_menu = self._help_menu
        help_menu.addAction(
            self._action(
                translate("MainWindow", "&Keyboard shortcuts"), keys.SHORTCUTS, self.open_shortcuts
            )
        )
        help_menu.addAction(
            self._action(translate("MainWindow", "&First-run guide"), "", self.show_guide)
        )
        help_menu.addSeparator()
        help_menu.addAction(
            self._action(translate("MainWindow", "&About rocmpanel"), "", self.open_about)
        )

    def next_tab(self) -> None:
        if self.tabs.count():
            self.tabs.setCurrentIndex((self.tabs.currentIndex() + 1) % self.tabs.count())

    def previous_tab(self) -> None:
        if self.tabs.count():
            self.tabs.setCurrentIndex((self.tabs.currentIndex() - 1) % self.tabs.count())

    def shortcut_rows(self) -> list[tuple[str, str]]:
        """(what, keys) of every menu action with a key, read from the actions."""
        menus = [self._file_menu, self._view_menu, self._help_menu]
        return keys.shortcut_rows(keys.menu_actions(menus))

    def open_shortcuts(self) -> keys.ShortcutsDialog:
        dialog = keys.ShortcutsDialog(self.shortcut_rows(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog
