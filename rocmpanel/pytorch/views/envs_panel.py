"""The list of workload interpreters: managed environments and registered ones.

The active one (setting ``workload_python``) is marked; the user can make another active,
register an interpreter, or remove a managed environment after confirming.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.gui.context import AppContext
from rocmpanel.pytorch import managed_envs

PANEL_OWN = ""  # the setting's value for "the panel's own interpreter"


class TorchEnvsPanel(QWidget):
    """Environment list with Make active, Register…, Remove…."""

    active_changed = Signal(str)  # the new workload Python ("" = the panel's own)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Environment", "torch", "Kind", "Interpreter"])
        self.tree.setRootIsDecorated(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.tree.itemSelectionChanged.connect(self._on_tree_selection_changed)
        self.tree.itemDoubleClicked.connect(lambda *_: self._on_activate_clicked())

        self.activate_button = QPushButton("Make &active")
        self.activate_button.setToolTip("GPU jobs (probe, validation, chat) will use this Python")
        self.activate_button.clicked.connect(self._on_activate_clicked)
        self.register_button = QPushButton("&Register…")
        self.register_button.setToolTip("Add an existing Python interpreter to the list")
        self.register_button.clicked.connect(self._on_register_clicked)
        self.remove_button = QPushButton("Re&move…")
        self.remove_button.clicked.connect(self._on_remove_clicked)

        buttons = QHBoxLayout()
        for button in (self.activate_button, self.register_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree, 1)
        layout.addLayout(buttons)
        self.refresh()

    # -- contents ----------------------------------------------------------------------
    def refresh(self) -> None:
        active = self.ctx.workload_python()
        selected = self.selected_python()
        self.tree.clear()
        own = QTreeWidgetItem(["Panel's own Python", "", "built-in", sys.executable])
        own.setData(0, Qt.ItemDataRole.UserRole, PANEL_OWN)
        own.setData(0, Qt.ItemDataRole.UserRole + 1, False)
        self.tree.addTopLevelItem(own)
        for env in managed_envs.list_envs():
            item = QTreeWidgetItem([env.name, env.torch_version or "?", "managed", str(env.python)])
            item.setData(0, Qt.ItemDataRole.UserRole, str(env.python))
            item.setData(0, Qt.ItemDataRole.UserRole + 1, True)
            item.setToolTip(0, f"{env.path}\nindex: {env.index_url or 'n/a'}")
            self.tree.addTopLevelItem(item)
        for python in managed_envs.registered_interpreters():
            kind = "registered" if Path(python).is_file() else "missing"
            item = QTreeWidgetItem([python.rsplit("/", 1)[-1], "", kind, python])
            item.setData(0, Qt.ItemDataRole.UserRole, python)
            item.setData(0, Qt.ItemDataRole.UserRole + 1, False)
            self.tree.addTopLevelItem(item)
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            python = item.data(0, Qt.ItemDataRole.UserRole)
            if python == active:
                item.setText(0, "● " + item.text(0))
                font = item.font(0)
                font.setBold(True)
                for col in range(4):
                    item.setFont(col, font)
                item.setToolTip(0, "Active: GPU jobs run in this Python")
            if python == selected or (selected is None and python == active):
                self.tree.setCurrentItem(item)
        self._on_tree_selection_changed()

    def selected_python(self) -> str | None:
        item = self.tree.currentItem()
        return None if item is None else str(item.data(0, Qt.ItemDataRole.UserRole))

    def _selected_is_managed(self) -> bool:
        item = self.tree.currentItem()
        return bool(item is not None and item.data(0, Qt.ItemDataRole.UserRole + 1))

    @Slot()
    def _on_tree_selection_changed(self) -> None:
        python = self.selected_python()
        self.activate_button.setEnabled(python is not None and python != self.ctx.workload_python())
        self.remove_button.setEnabled(self._selected_is_managed())

    # -- actions -----------------------------------------------------------------------
    def activate(self, python: str) -> None:
        try:
            managed_envs.activate(self.ctx.settings, python)
        except PanelError as exc:
            QMessageBox.warning(self, "Could not save the setting", str(exc))
            return
        self.ctx.notify(f"GPU jobs now use {python or 'the panel’s own Python'}.")
        self.refresh()
        self.active_changed.emit(python)

    @Slot()
    def _on_activate_clicked(self) -> None:
        python = self.selected_python()
        if python is not None:
            self.activate(python)

    @Slot()
    def _on_register_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a Python interpreter")
        if not path:
            return
        try:
            managed_envs.register_interpreter(path)
        except PanelError as exc:
            QMessageBox.warning(self, "Not an interpreter", exc.message)
            return
        self.refresh()

    @Slot()
    def _on_remove_clicked(self) -> None:
        item = self.tree.currentItem()
        if item is None or not self._selected_is_managed():
            return
        env = managed_envs.env_for_python(str(item.data(0, Qt.ItemDataRole.UserRole)))
        if env is None:
            self.refresh()
            return
        answer = QMessageBox.question(
            self,
            "Remove environment",
            f"Delete the environment “{env.name}” and all its files?\n{env.path}",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        was_active = self.ctx.workload_python() == str(env.python)
        try:
            managed_envs.remove_env(env.name)
        except PanelError as exc:
            QMessageBox.warning(self, "Could not remove", str(exc))
            return
        self.ctx.notify(f"Removed {env.name}.")
        if was_active:
            self.activate(PANEL_OWN)
        else:
            self.refresh()
