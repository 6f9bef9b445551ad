"""The environment-variable editor (a page of the Setup tab).

One row per variable: the value in this process, in each store, and whether the catalogue
accepts it. Changes are staged first (shown as "old → new"), can be previewed as diffs,
and are written to the ticked stores in one step that can be undone.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.envvars.catalogue import Status, Verdict, load_catalogue
from rocmpanel.envvars.plan import EnvChange, FilePlan
from rocmpanel.envvars.store import (
    EnvConflictError,
    EnvStore,
    StoreSnapshot,
    apply_plans,
    make_stores,
    undo_last,
)
from rocmpanel.envvars.views.dialogs import DiffDialog, ValueDialog
from rocmpanel.envvars.views.table_items import STATUS_COLORS, staged_item, status_item, value_item


class EnvEditor(QWidget):
    """Table of variables × stores with staged edits, preview, apply and undo."""

    applied = Signal()

    def __init__(
        self,
        ctx: object | None = None,
        parent: QWidget | None = None,
        *,
        stores: Mapping[str, EnvStore] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.catalogue = load_catalogue()
        self.stores: dict[str, EnvStore] = dict(stores if stores is not None else make_stores())
        self.environ = environ if environ is not None else os.environ
        notify = getattr(ctx, "notify", None)
        self._notify: Callable[[str], None] | None = notify if callable(notify) else None
        self.platform = next(iter(self.stores.values())).platform if self.stores else "linux"
        self.snapshots: dict[str, StoreSnapshot] = {}
        self.staged: dict[str, str | None] = {}
        self._build()
        self.reload()

    # ---- layout -----------------------------------------------------------------------------

    def _build(self) -> None:
        targets = QHBoxLayout()
        targets.addWidget(QLabel("Write to:", self))
        self.target_boxes: dict[str, QCheckBox] = {}
        for key, store in self.stores.items():
            box = QCheckBox(store.label, self)
            box.setChecked(store.persistent)
            box.setToolTip(store.help)
            box.toggled.connect(self._refresh)
            self.target_boxes[key] = box
            targets.addWidget(box)
        targets.addStretch(1)
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter variables")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._refresh)
        self.only_set = QCheckBox("Only variables that are set", self)
        self.only_set.toggled.connect(self._refresh)
        targets.addWidget(self.only_set)
        targets.addWidget(self.filter)

        self.table = QTableWidget(self)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setAlternatingRowColors(True)
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)
        self.table.itemDoubleClicked.connect(lambda _item: self.edit_selected())
        self.table.setAccessibleName("Environment variables")

        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setMinimumHeight(70)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.message = QLabel(self)
        self.message.setWordWrap(True)

        buttons = QHBoxLayout()
        self.add_button = self._button("&Add…", self.add_variable, buttons)
        self.edit_button = self._button("&Edit…", self.edit_selected, buttons)
        self.remove_button = self._button("&Remove", self.remove_selected, buttons)
        self.discard_button = self._button("&Discard changes", self.discard, buttons)
        buttons.addStretch(1)
        self.reload_button = self._button("Re&load", self.reload, buttons)
        self.preview_button = self._button("&Preview changes…", self.show_preview, buttons)
        self.apply_button = self._button("A&pply", self.apply, buttons)
        self.undo_button = self._button("&Undo last apply", self.undo, buttons)
        self.apply_button.setDefault(True)

        layout = QVBoxLayout(self)
        layout.addLayout(targets)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.details)
        layout.addWidget(self.message)
        layout.addLayout(buttons)

    def _button(self, text: str, slot: Callable[[], object], row: QHBoxLayout) -> QPushButton:
        button = QPushButton(text, self)
        button.clicked.connect(lambda _checked=False: slot())
        row.addWidget(button)
        return button

    # ---- data -------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read every store again (staged changes stay staged)."""
        self.snapshots = {}
        problems = []
        for key, store in self.stores.items():
            try:
                snapshot = store.read()
            except PanelError as exc:
                snapshot = StoreSnapshot(key, store.target(), {}, None, exc.message)
            self.snapshots[key] = snapshot
            if snapshot.problem:
                problems.append(snapshot.problem)
        self._show_message(" ".join(problems), error=bool(problems))
        self._refresh()

    def target_keys(self) -> list[str]:
        return [key for key, box in self.target_boxes.items() if box.isChecked()]

    def _names(self) -> list[str]:
        names = set(self.staged)
        for snapshot in self.snapshots.values():
            names |= set(snapshot.values)
        if not self.only_set.isChecked():
            names |= set(self.catalogue.known_names())
        else:
            names |= {n for n in self.catalogue.known_names() if n in self.environ}
        needle = self.filter.text().strip().upper()
        return sorted(n for n in names if needle in n.upper())

    def verdict_for(self, name: str) -> Verdict | None:
        """The check of the value that matters: the staged one, else the stored one."""
        if name in self.staged:
            value = self.staged[name]
            if value is None:
                return Verdict(Status.VALID, "Will be unset.")
            return self.catalogue.validate(name, value, self.platform)
        for snapshot in self.snapshots.values():
            if name in snapshot.values:
                return self.catalogue.validate(name, snapshot.values[name], self.platform)
        return None

    # ---- table ------------------------------------------------------------------------------

    def _refresh(self) -> None:
        selected = self.selected_name()
        keys = list(self.stores)
        headers = ["Variable", "This process", *[self.stores[k].label for k in keys], "Status"]
        names = self._names()
        self.table.blockSignals(True)
        self.table.clear()
        self.table.setColumnCount(len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        for column, key in enumerate(keys, start=2):
            header_item = self.table.horizontalHeaderItem(column)
            tip = [self.stores[key].target(), self.stores[key].help]
            if self.snapshots.get(key) and self.snapshots[key].problem:
                tip.append("Problem: " + self.snapshots[key].problem)
            if header_item is not None:
                header_item.setToolTip("\n".join(tip))
        self.table.setRowCount(len(names))
        targets = set(self.target_keys())
        for row, name in enumerate(names):
            self._fill_row(row, name, keys, targets)
        self.table.blockSignals(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.resizeColumnsToContents()
        for column in range(1, len(headers) - 1):
            self.table.setColumnWidth(column, min(self.table.columnWidth(column), 260))
        header.setSectionResizeMode(len(headers) - 1, QHeaderView.ResizeMode.Stretch)
        if selected in names:
            self.table.selectRow(names.index(selected))
        self._update_buttons()
        self._on_table_selection_changed()

    def _fill_row(self, row: int, name: str, keys: list[str], targets: set[str]) -> None:
        info = self.catalogue.lookup(name)
        description = self.catalogue.describe(name)
        name_item = QTableWidgetItem(name)
        name_item.setToolTip(description)
        name_item.setData(Qt.ItemDataRole.UserRole, name)
        if info is None:
            name_item.setForeground(QBrush(QColor("#555555")))
        self.table.setItem(row, 0, name_item)
        process = self.environ.get(name)
        self.table.setItem(row, 1, value_item(process, "not set"))
        staged = name in self.staged
        for column, key in enumerate(keys, start=2):
            current = self.snapshots[key].values.get(name) if key in self.snapshots else None
            if staged and key in targets and self.staged[name] != current:
                item = staged_item(current, self.staged[name])
            else:
                item = value_item(current, "")
            self.table.setItem(row, column, item)
        self.table.setItem(row, len(keys) + 2, status_item(self.verdict_for(name)))

    def selected_name(self) -> str | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        if not rows:
            return None
        item = self.table.item(rows[0].row(), 0)
        return None if item is None else str(item.data(Qt.ItemDataRole.UserRole))

    def select(self, name: str) -> None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.text() == name:
                self.table.selectRow(row)
                self.table.scrollToItem(item)
                return

    def _on_table_selection_changed(self) -> None:
        name = self.selected_name()
        if name is None:
            self.details.setText("Select a variable to see what it does.")
        else:
            verdict = self.verdict_for(name)
            note = f"\n\nCheck: {verdict.message}" if verdict and verdict.message else ""
            self.details.setText(self.catalogue.describe(name) + note)
        self._update_buttons()

    def _update_buttons(self) -> None:
        has_row = self.selected_name() is not None
        self.edit_button.setEnabled(has_row)
        self.remove_button.setEnabled(has_row)
        staged = bool(self.staged)
        valid = all((v := self.verdict_for(n)) is None or v.accepted for n in self.staged)
        self.discard_button.setEnabled(staged)
        self.preview_button.setEnabled(staged)
        self.apply_button.setEnabled(staged and valid and bool(self.target_keys()))

    # ---- staging ----------------------------------------------------------------------------

    def propose(self, name: str, value: str | None) -> None:
        """Stage a set (or an unset when ``value`` is None) and select its row; nothing is
        written until Apply. Used by the Setup checklist's Fix buttons."""
        self.staged[name] = value
        self._refresh()
        self.select(name)
        verdict = self.verdict_for(name)
        if verdict is not None and not verdict.accepted:
            self._show_message(verdict.message, error=True)
        else:
            what = f"unset {name}" if value is None else f"{name}={value}"
            self._show_message(f"Staged: {what}. Review with Preview changes, then Apply.")

    def discard(self) -> None:
        self.staged.clear()
        self._show_message("")
        self._refresh()

    def _base_value(self, name: str) -> str:
        if name in self.staged and self.staged[name] is not None:
            return str(self.staged[name])
        for key in self.target_keys() or list(self.stores):
            value = self.snapshots.get(key, StoreSnapshot(key, "", {}, None)).values.get(name)
            if value is not None:
                return value
        return ""

    def _run_dialog(self, dialog: QDialog) -> bool:
        return dialog.exec() == QDialog.DialogCode.Accepted

    def add_variable(self) -> None:
        dialog = ValueDialog(self.catalogue, self.platform, parent=self)
        if self._run_dialog(dialog) and dialog.name():
            self.propose(dialog.name(), dialog.value())

    def edit_selected(self) -> None:
        name = self.selected_name()
        if name is None:
            return
        dialog = ValueDialog(self.catalogue, self.platform, name, self._base_value(name), self)
        if self._run_dialog(dialog):
            self.propose(name, dialog.value())

    def remove_selected(self) -> None:
        name = self.selected_name()
        if name is not None:
            self.propose(name, None)

    # ---- plan, apply, undo ------------------------------------------------------------------

    def plans(self) -> list[FilePlan]:
        """The plans of the staged changes for the ticked stores (PanelError if refused)."""
        changes = [EnvChange(name, value) for name, value in self.staged.items()]
        plans = []
        for key in self.target_keys():
            snapshot = self.snapshots[key]
            if snapshot.problem:
                raise PanelError(snapshot.problem)
            plans.append(self.stores[key].plan(snapshot, changes))
        return plans

    def preview_text(self) -> str:
        parts = [plan.diff for plan in self.plans() if plan.changed]
        return "\n".join(parts) if parts else "Nothing would change."

    def show_preview(self) -> None:
        try:
            text = self.preview_text()
        except PanelError as exc:
            self._show_message(exc.message, error=True)
            return
        dialog = DiffDialog(text, "Changes to be written", self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def apply(self) -> bool:
        """Write the staged changes; True on success. Failures change nothing."""
        try:
            result = apply_plans(self.stores, self.plans())
        except EnvConflictError as exc:
            self._show_conflict(exc)
            return False
        except PanelError as exc:
            self._show_message(exc.message, error=True)
            return False
        self.staged.clear()
        self.reload()
        self._show_message(
            result.message + " New programs get the change; a new login "
            "is needed for desktop programs (environment.d)."
        )
        self.applied.emit()
        return True

    def undo(self) -> bool:
        try:
            result = undo_last(self.stores)
        except EnvConflictError as exc:
            self._show_conflict(exc)
            return False
        except PanelError as exc:
            self._show_message(exc.message, error=True)
            return False
        self.reload()
        self._show_message(result.message)
        self.applied.emit()
        return True

    def _show_conflict(self, exc: EnvConflictError) -> None:
        self._show_message(exc.message, error=True)
        box = QMessageBox(QMessageBox.Icon.Warning, "Changed on disk", exc.message, parent=self)
        box.setDetailedText(exc.diff)
        reload_button = box.addButton("Reload", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.buttonClicked.connect(lambda b: self.reload() if b is reload_button else None)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def _show_message(self, text: str, *, error: bool = False) -> None:
        self.message.setStyleSheet(f"color: {STATUS_COLORS[Status.INVALID]};" if error else "")
        self.message.setText(text)
        if text and self._notify is not None and not error:
            self._notify(text)
