"""The Monitor tab's process table: who holds VRAM/GTT and how busy they keep the GPU."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.units import format_mib
from rocmpanel.monitor.sample import ProcessSample

COLUMNS = (
    QT_TRANSLATE_NOOP("ProcessModel", "PID"),
    QT_TRANSLATE_NOOP("ProcessModel", "Process"),
    QT_TRANSLATE_NOOP("ProcessModel", "GPU"),
    QT_TRANSLATE_NOOP("ProcessModel", "VRAM"),
    QT_TRANSLATE_NOOP("ProcessModel", "GTT"),
    QT_TRANSLATE_NOOP("ProcessModel", "Engine %"),
    QT_TRANSLATE_NOOP("ProcessModel", "Source"),
)
_Index = QModelIndex | QPersistentModelIndex


class ProcessModel(QAbstractTableModel):
    """Rows of ProcessSample; ``set_rows`` replaces them all (a tick is a new picture)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ProcessSample] = []
        self.gpu_names: dict[str, str] = {}

    def set_rows(self, rows: Sequence[ProcessSample]) -> None:
        if list(rows) == self.rows:
            return
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return translate("ProcessModel", COLUMNS[section])
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        p = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(p, col)
        if role == Qt.ItemDataRole.UserRole:  # sort key
            keys: tuple[Any, ...] = (
                p.pid,
                p.name.lower(),
                p.pci_slot or "",
                p.vram_bytes or 0,
                p.gtt_bytes or 0,
                p.engine_percent if p.engine_percent is not None else -1.0,
                ",".join(p.sources),
            )
            return keys[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            engines = ", ".join(f"{k} {v:.1f} %" for k, v in p.engines) or translate(
                "ProcessModel", "no engine counters"
            )
            return translate("ProcessModel", "{name} (pid {pid}): {engines}").format(
                name=p.name, pid=p.pid, engines=engines
            )
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 3, 4, 5):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _text(self, p: ProcessSample, col: int) -> str:
        if col == 0:
            return str(p.pid)
        if col == 1:
            if not p.worker:
                return p.name
            return translate("ProcessModel", "{name}  [rocmpanel job: {job}]").format(
                name=p.name, job=p.worker
            )
        if col == 2:
            return self.gpu_names.get(p.pci_slot or "", p.pci_slot or "n/a")
        if col == 3:
            return format_mib(p.vram_bytes)
        if col == 4:
            return format_mib(p.gtt_bytes)
        if col == 5:
            return "n/a" if p.engine_percent is None else f"{p.engine_percent:.1f}"
        return ", ".join(p.sources)


class ProcessTable(QTableView):
    """Sortable view of the ProcessModel (sorted by VRAM, largest first, at start)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_ = ProcessModel(self)
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(self.model_)
        proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.setModel(proxy)
        self.setSortingEnabled(True)
        self.sortByColumn(3, Qt.SortOrder.DescendingOrder)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().hide()
        self.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.setAlternatingRowColors(True)
        self.setAccessibleName(translate("ProcessTable", "GPU processes"))
