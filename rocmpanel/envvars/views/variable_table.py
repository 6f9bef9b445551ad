"""The environment editor's table: one row per variable, one column per store.

Columns: the variable, its value in this process, its value in each store (a staged change
shown as "old → new" in the stores it will be written to), and the catalogue's verdict. The
table only shows what the editor hands it; staging and writing stay in the editor.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from rocmpanel.base.i18n import translate
from rocmpanel.envvars.catalogue import Catalogue, Verdict
from rocmpanel.envvars.store import EnvStore, StoreSnapshot
from rocmpanel.envvars.views.table_items import staged_item, status_item, value_item

MAX_VALUE_COLUMN_WIDTH = 260


class VariableTable(QTableWidget):
    """Variables × stores, read-only; rows are selected whole, one at a time."""

    def __init__(
        self,
        catalogue: Catalogue,
        stores: Mapping[str, EnvStore],
        environ: Mapping[str, str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.catalogue = catalogue
        self.stores = stores
        self.environ = environ
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().setVisible(False)
        self.setAlternatingRowColors(True)
        self.setAccessibleName(translate("VariableTable", "Environment variables"))

    def show_rows(
        self,
        names: Sequence[str],
        snapshots: Mapping[str, StoreSnapshot],
        staged: Mapping[str, str | None],
        targets: Collection[str],
        verdict_for: Callable[[str], Verdict | None],
    ) -> None:
        """Rebuild every row; the selected variable stays selected when it is still shown.
        No selection signal is sent while the rows are rebuilt."""
        selected = self.selected_name()
        keys = list(self.stores)
        headers = [
            translate("VariableTable", "Variable"),
            translate("VariableTable", "This process"),
            *[translate("stores", self.stores[k].label) for k in keys],
            translate("VariableTable", "Status"),
        ]
        self.blockSignals(True)
        self.clear()
        self.setColumnCount(len(headers))
        self.setHorizontalHeaderLabels(headers)
        for column, key in enumerate(keys, start=2):
            header_item = self.horizontalHeaderItem(column)
            tip = [self.stores[key].target(), translate("stores", self.stores[key].help)]
            snapshot = snapshots.get(key)
            if snapshot is not None and snapshot.problem:
                tip.append(
                    translate("VariableTable", "Problem: {problem}").format(
                        problem=snapshot.problem
                    )
                )
            if header_item is not None:
                header_item.setToolTip("\n".join(tip))
        self.setRowCount(len(names))
        for row, name in enumerate(names):
            self._fill_row(row, name, keys, snapshots, staged, targets)
            self.setItem(row, len(keys) + 2, status_item(verdict_for(name)))
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.resizeColumnsToContents()
        for column in range(1, len(headers) - 1):
            self.setColumnWidth(column, min(self.columnWidth(column), MAX_VALUE_COLUMN_WIDTH))
        header.setSectionResizeMode(len(headers) - 1, QHeaderView.ResizeMode.Stretch)
        if selected is not None and selected in names:
            self.selectRow(list(names).index(selected))
        self.blockSignals(False)

    def _fill_row(
        self,
        row: int,
        name: str,
        keys: list[str],
        snapshots: Mapping[str, StoreSnapshot],
        staged: Mapping[str, str | None],
        targets: Collection[str],
    ) -> None:
        name_item = QTableWidgetItem(name)
        name_item.setToolTip(self.catalogue.describe(name))
        name_item.setData(Qt.ItemDataRole.UserRole, name)
        if self.catalogue.lookup(name) is None:
            name_item.setForeground(QBrush(QColor("#555555")))
        self.setItem(row, 0, name_item)
        self.setItem(
            row, 1, value_item(self.environ.get(name), translate("VariableTable", "not set"))
        )
        for column, key in enumerate(keys, start=2):
            snapshot = snapshots.get(key)
            current = snapshot.values.get(name) if snapshot is not None else None
            if name in staged and key in targets and staged[name] != current:
                item = staged_item(current, staged[name])
            else:
                item = value_item(current, "")
            self.setItem(row, column, item)

    def selected_name(self) -> str | None:
        model = self.selectionModel()
        rows = model.selectedRows() if model is not None else []
        if not rows:
            return None
        item = self.item(rows[0].row(), 0)
        return None if item is None else str(item.data(Qt.ItemDataRole.UserRole))

    def select(self, name: str) -> None:
        for row in range(self.rowCount()):
            item = self.item(row, 0)
            if item is not None and item.text() == name:
                self.selectRow(row)
                self.scrollToItem(item)
                return
