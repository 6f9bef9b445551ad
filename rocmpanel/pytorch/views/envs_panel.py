"""The list of workload interpreters: managed environments and registered ones.

The active one (setting ``workload_python``) is marked; the user can make another active,
register an interpreter, or remove a managed environment after confirming. Reading the
list, registering and deleting (an ``rmtree`` of gigabytes) run off the GUI thread; a row
being deleted says so and cannot be used meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor
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
from rocmpanel.base.frozen import own_python
from rocmpanel.base.i18n import translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.jobs import workload
from rocmpanel.jobs.workload import ManagedEnv
from rocmpanel.pytorch.environments import DamagedEnv, damaged_envs, remove_env

# px: "● Panel's own Python" in bold fits; longer names elide (the user can widen it)
ENV_COLUMN_WIDTH = 190
INTERPRETER_COLUMN_WIDTH = 220  # px
PANEL_OWN = ""  # the setting's value for "the panel's own interpreter"
PYTHON_ROLE = Qt.ItemDataRole.UserRole
MANAGED_ROLE = Qt.ItemDataRole.UserRole + 1
DAMAGED_ROLE = Qt.ItemDataRole.UserRole + 2


@dataclass(frozen=True)
class EnvListing:
    """What the list shows, read from the disk in one go."""

    envs: tuple[ManagedEnv, ...]
    registered: tuple[tuple[str, bool], ...]  # (interpreter, the file exists)
    damaged: tuple[DamagedEnv, ...] = ()  # listed as such: never made active
    problem: str | None = None  # the list of registered interpreters is damaged


def read_listing() -> EnvListing:
    """The managed environments and the registered interpreters (reads files)."""
    registered = tuple((p, Path(p).is_file()) for p in workload.registered_interpreters())
    damaged = tuple(damaged_envs())
    unusable = {d.python for d in damaged}
    envs = tuple(e for e in workload.list_envs() if e.python not in unusable)
    return EnvListing(envs, registered, damaged, workload.interpreters_damage())


class TorchEnvsPanel(QWidget):
    """Environment list with Make active, Register…, Remove…."""

    active_changed = Signal(str)  # the new workload Python ("" = the panel's own)
    refreshed = Signal()  # the list shows what is on the disk now
    removal_finished = Signal(str)  # the name of an environment whose deletion ended

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self._listing = EnvListing((), ())
        self._generation = 0  # of refresh(); older listings are dropped
        self._deleting: set[str] = set()  # interpreters of environments being deleted
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(
            [
                translate("TorchEnvsPanel", "Environment"),
                "torch",
                translate("TorchEnvsPanel", "Kind"),
                translate("TorchEnvsPanel", "Interpreter"),
            ]
        )
        self.tree.setRootIsDecorated(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # Long interpreter paths keep their start and their end; the tooltip has all of it.
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, ENV_COLUMN_WIDTH)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        # The interpreter column keeps a useful width (scroll sideways to it in a narrow
        # panel), takes any room left, and elides long paths in the middle.
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(3, INTERPRETER_COLUMN_WIDTH)
        header.setStretchLastSection(True)
        self.tree.itemSelectionChanged.connect(self._on_tree_selection_changed)
        self.tree.itemDoubleClicked.connect(lambda *_: self._on_activate_clicked())

        self.activate_button = QPushButton(translate("TorchEnvsPanel", "Make &active"))
        self.activate_button.setToolTip(
            translate("TorchEnvsPanel", "GPU jobs (probe, validation, chat) will use this Python")
        )
        self.activate_button.clicked.connect(self._on_activate_clicked)
        self.register_button = QPushButton(translate("TorchEnvsPanel", "&Register…"))
        self.register_button.setToolTip(
            translate("TorchEnvsPanel", "Add an existing Python interpreter to the list")
        )
        self.register_button.clicked.connect(self._on_register_clicked)
        self.remove_button = QPushButton(translate("TorchEnvsPanel", "Re&move…"))
        self.remove_button.clicked.connect(self._on_remove_clicked)

        buttons = QHBoxLayout()
        for button in (self.activate_button, self.register_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree, 1)
        layout.addLayout(buttons)
        ctx.probe_result.changed.connect(self._fill)
        self._fill()
        self.refresh()

    def _probed_torch(self, python: str) -> str:
        """torch's version in ``python`` as the app's last probe found it ("" unknown)."""
        probe = self.ctx.probe_result
        if probe.data is None or not probe.python:
            return ""
        if probe.python != (python or own_python()):
            return ""
        return str(probe.data.get("torch_version") or translate("TorchEnvsPanel", "not installed"))

    # -- contents ----------------------------------------------------------------------
    def refresh(self) -> None:
        """Read the list again in the background; ``refreshed`` follows."""
        self._generation += 1
        run_in_background(
            read_listing,
            partial(self._on_listing_read, self._generation),
            owner=self,
            what="listing the workload interpreters",
        )

    def _on_listing_read(
        self, generation: int, listing: EnvListing | None, error: BaseException | None
    ) -> None:
        if generation != self._generation:
            return
        if error is not None or listing is None:
            if error is not None:
                report(error, translate("TorchEnvsPanel", "Listing the PyTorch environments"))
            return
        self._listing = listing
        if listing.problem:
            self.ctx.notify(listing.problem)
        self._fill()
        self.refreshed.emit()

    def _fill(self) -> None:
        active = self.ctx.workload_python()
        selected = self.selected_python()
        self.tree.clear()
        own_torch = self._probed_torch(PANEL_OWN)
        own = QTreeWidgetItem(
            [
                translate("TorchEnvsPanel", "Panel's own Python"),
                own_torch,
                translate("TorchEnvsPanel", "built-in"),
                own_python(),
            ]
        )
        own.setData(0, PYTHON_ROLE, PANEL_OWN)
        own.setData(0, MANAGED_ROLE, False)
        self.tree.addTopLevelItem(own)
        for env in self._listing.envs:
            item = QTreeWidgetItem(
                [
                    env.name,
                    env.torch_version or "?",
                    translate("TorchEnvsPanel", "managed"),
                    str(env.python),
                ]
            )
            item.setData(0, PYTHON_ROLE, str(env.python))
            item.setData(0, MANAGED_ROLE, True)
            item.setToolTip(
                0,
                translate("TorchEnvsPanel", "{path}\nindex: {url}").format(
                    path=env.path, url=env.index_url or translate("TorchEnvsPanel", "n/a")
                ),
            )
            self.tree.addTopLevelItem(item)
        for damaged in self._listing.damaged:
            item = QTreeWidgetItem(
                [damaged.name, "?", translate("TorchEnvsPanel", "damaged"), str(damaged.record)]
            )
            item.setData(0, PYTHON_ROLE, str(damaged.python))
            item.setData(0, MANAGED_ROLE, True)
            item.setData(0, DAMAGED_ROLE, True)
            tip = translate(
                "TorchEnvsPanel", "Its record {record} is damaged: {problem}.\n{advice}"
            ).format(record=damaged.record, problem=damaged.problem, advice=damaged.advice)
            for col in range(4):
                item.setToolTip(col, tip)
                item.setForeground(col, QColor("#c62828"))
            self.tree.addTopLevelItem(item)
        for python, exists in self._listing.registered:
            kind = (
                translate("TorchEnvsPanel", "registered")
                if exists
                else translate("TorchEnvsPanel", "missing")
            )
            torch = self._probed_torch(python)
            item = QTreeWidgetItem([python.rsplit("/", 1)[-1], torch, kind, python])
            item.setData(0, PYTHON_ROLE, python)
            item.setData(0, MANAGED_ROLE, False)
            self.tree.addTopLevelItem(item)
        for i in range(self.tree.topLevelItemCount()):
            row = self.tree.topLevelItem(i)
            if row is None:
                continue
            if not row.toolTip(3):
                row.setToolTip(3, row.text(3))
            self._decorate(row, active, selected)
        self._on_tree_selection_changed()

    def _decorate(self, item: QTreeWidgetItem, active: str, selected: str | None) -> None:
        """Mark the active row and the rows being deleted; select the row to select."""
        python = str(item.data(0, PYTHON_ROLE))
        if python == active:
            item.setText(0, "● " + item.text(0))
            font = item.font(0)
            font.setBold(True)
            for col in range(4):
                item.setFont(col, font)
            item.setToolTip(0, translate("TorchEnvsPanel", "Active: GPU jobs run in this Python"))
        if python in self._deleting:
            item.setText(2, translate("TorchEnvsPanel", "deleting…"))
            item.setToolTip(0, translate("TorchEnvsPanel", "Being deleted"))
            item.setDisabled(True)
        if python == selected or (selected is None and python == active):
            self.tree.setCurrentItem(item)

    def selected_python(self) -> str | None:
        item = self.tree.currentItem()
        return None if item is None else str(item.data(0, PYTHON_ROLE))

    def _selected_is_managed(self) -> bool:
        item = self.tree.currentItem()
        return bool(item is not None and item.data(0, MANAGED_ROLE))

    def _selected_is_damaged(self) -> bool:
        item = self.tree.currentItem()
        return bool(item is not None and item.data(0, DAMAGED_ROLE))

    @Slot()
    def _on_tree_selection_changed(self) -> None:
        python = self.selected_python()
        usable = python is not None and python not in self._deleting
        self.activate_button.setEnabled(
            usable and python != self.ctx.workload_python() and not self._selected_is_damaged()
        )
        self.remove_button.setEnabled(usable and self._selected_is_managed())

    # -- actions -----------------------------------------------------------------------
    def activate(self, python: str) -> None:
        """Make ``python`` the workload Python (a small settings write)."""
        try:
            workload.activate(self.ctx.settings, python)
        except PanelError as exc:
            report(exc, translate("TorchEnvsPanel", "Saving the active Python"), dialog_parent=self)
            return
        self.ctx.notify(
            translate("TorchEnvsPanel", "GPU jobs now use {python}.").format(
                python=python or translate("TorchEnvsPanel", "the panel’s own Python")
            )
        )
        self._fill()
        self.active_changed.emit(python)

    @Slot()
    def _on_activate_clicked(self) -> None:
        python = self.selected_python()
        if python is not None and python not in self._deleting and not self._selected_is_damaged():
            self.activate(python)

    @Slot()
    def _on_register_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, translate("TorchEnvsPanel", "Choose a Python interpreter")
        )
        if path:
            self.register(path)

    def register(self, path: str) -> None:
        """Add the interpreter at ``path`` to the list (checked and saved off the GUI thread)."""

        def done(result: tuple[str, Path | None] | None, error: BaseException | None) -> None:
            if error is not None:
                report(
                    error,
                    translate("TorchEnvsPanel", "Registering an interpreter"),
                    dialog_parent=self,
                )
                return
            if result is not None and result[1] is not None:
                self.ctx.notify(
                    translate(
                        "TorchEnvsPanel",
                        "The damaged list of registered interpreters was kept as {path}; "
                        "a new list was started.",
                    ).format(path=result[1])
                )
            self.refresh()

        run_in_background(
            partial(workload.add_interpreter, path),
            done,
            owner=self,
            what="registering an interpreter",
        )

    def _selected_env(self) -> ManagedEnv | DamagedEnv | None:
        python = self.selected_python()
        found: list[ManagedEnv | DamagedEnv] = [*self._listing.envs, *self._listing.damaged]
        return next((e for e in found if str(e.python) == python), None)

    @Slot()
    def _on_remove_clicked(self) -> None:
        env = self._selected_env()
        if env is None or not self._selected_is_managed() or str(env.python) in self._deleting:
            return
        answer = QMessageBox.question(
            self,
            translate("TorchEnvsPanel", "Remove environment"),
            translate(
                "TorchEnvsPanel", "Delete the environment “{name}” and all its files?\n{path}"
            ).format(name=env.name, path=env.path),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.remove(env)

    def remove(self, env: ManagedEnv | DamagedEnv) -> None:
        """Delete ``env`` in the background; its row says "deleting…" until it is gone."""
        python = str(env.python)
        if self.ctx.workload_python() == python:
            # Before deleting: a deletion cut short must not leave GPU jobs pointed at a
            # half-deleted environment.
            self.activate(PANEL_OWN)
        self._deleting.add(python)
        self._fill()
        self.ctx.notify(translate("TorchEnvsPanel", "Deleting {name}…").format(name=env.name))
        run_in_background(
            partial(remove_env, env.name),
            partial(self._on_removed, env),
            owner=self,
            what=f"deleting environment {env.name}",
        )

    def _on_removed(
        self,
        env: ManagedEnv | DamagedEnv,
        _removed: ManagedEnv | DamagedEnv | None,
        error: BaseException | None,
    ) -> None:
        python = str(env.python)
        self._deleting.discard(python)
        if error is not None:
            report(
                error,
                translate("TorchEnvsPanel", "Deleting {name}").format(name=env.name),
                dialog_parent=self,
            )
        else:
            self.ctx.notify(translate("TorchEnvsPanel", "Removed {name}.").format(name=env.name))
            if self.ctx.workload_python() == python:
                self.activate(PANEL_OWN)
        self.refresh()
        self.removal_finished.emit(env.name)
