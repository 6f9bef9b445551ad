"""The Multi-GPU tab's topology panel: the link matrix, each GPU's NUMA node and PCIe link,
and the warnings with what to do.

The topology is read with ``run_in_background`` when the panel is shown and on Refresh
(a few hundred small sysfs files: fast, but disk work all the same). The tree read is
``ROCMPANEL_SYSFS_ROOT`` when set (the demo's recorded GPUs, or a captured system), else
/sys, as the Monitor does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.machine.pcie_link import describe
from rocmpanel.multigpu.topology import NO_PATH, SAME, Topology, read_topology
from rocmpanel.multigpu.topology_warnings import Severity

NO_TOPOLOGY = (
    "No AMD GPU topology on this machine: the ROCm kernel driver (KFD) lists no GPU, so "
    "there are no links, NUMA nodes or PCIe figures to show."
)
GPU_COLUMNS = ("GPU", "Name", "PCI address", "NUMA node", "PCIe now", "PCIe max", "Read at")
# Cell colours by link kind (background, text): the text colour is set too, so a dark
# theme keeps the cells readable.
_COLOURS = {
    "XGMI": ("#c8e6c9", "#1b5e20"),
    "PCIe": ("#fff3c4", "#5d4037"),
    "far": ("#ffe0b2", "#bf360c"),  # PCIe across sockets (3 hops or more)
    NO_PATH: ("#eeeeee", "#616161"),
}


def tree_from_environment() -> str:
    """The /sys-like tree to read: ``ROCMPANEL_SYSFS_ROOT`` when set, else /sys."""
    return os.environ.get("ROCMPANEL_SYSFS_ROOT") or "/sys"


def _item(text: str, tooltip: str = "") -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if tooltip:
        item.setToolTip(tooltip)
    return item


def _table(name: str) -> QTableWidget:
    table = QTableWidget()
    table.setAccessibleName(name)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move inside it
    return table


class TopologyPanel(QWidget):
    """The GPU topology of this machine (or of the tree ``ROCMPANEL_SYSFS_ROOT`` names).

    ``topology_read`` carries each Topology once it is shown. ``read`` replaces the reader
    (tests; default: :func:`read_topology` of :func:`tree_from_environment`)."""

    topology_read = Signal(object)  # Topology

    def __init__(
        self,
        ctx: AppContext,
        parent: QWidget | None = None,
        *,
        read: Callable[[], Topology] | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self._read = read or (lambda: read_topology(tree_from_environment()))
        self._generation = 0  # of refresh(); older readings are dropped
        self.loading = False
        self.topology: Topology | None = None

        self.status_label = QLabel("Not read yet.")
        self.status_label.setWordWrap(True)
        self.status_label.setAccessibleName("Topology status")
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.refresh_button = QPushButton("&Refresh")
        self.refresh_button.setToolTip("Read the GPU topology again")
        self.refresh_button.setAccessibleName("Refresh the GPU topology")
        self.refresh_button.clicked.connect(self.refresh)

        self.matrix = _table("GPU link matrix")
        self.matrix.setToolTip(
            "How each pair of GPUs is connected; hover a cell for hops and weight"
        )
        self.gpu_table = _table("GPU NUMA nodes and PCIe links")
        self.gpu_table.setColumnCount(len(GPU_COLUMNS))
        self.gpu_table.setHorizontalHeaderLabels(GPU_COLUMNS)
        self.gpu_table.verticalHeader().hide()
        self.gpu_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.warning_list = QListWidget()
        self.warning_list.setAccessibleName("Topology warnings")
        self.warning_list.setWordWrap(True)

        self.matrix_title = QLabel("Lin&ks between GPUs")
        self.matrix_title.setBuddy(self.matrix)
        gpus_title = QLabel("&GPUs: NUMA node and PCIe link")
        gpus_title.setBuddy(self.gpu_table)
        warnings_title = QLabel("&Warnings and what to do")
        warnings_title.setBuddy(self.warning_list)

        top = QHBoxLayout()
        top.addWidget(self.status_label, 1)
        top.addWidget(self.refresh_button, alignment=Qt.AlignmentFlag.AlignTop)
        self.content = QWidget()
        body = QVBoxLayout(self.content)
        body.setContentsMargins(0, 0, 0, 0)
        for widget, stretch in (
            (self.matrix_title, 0),
            (self.matrix, 2),
            (gpus_title, 0),
            (self.gpu_table, 2),
            (warnings_title, 0),
            (self.warning_list, 2),
        ):
            body.addWidget(widget, stretch)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.content, 1)
        self.content.hide()

    # -- reading -------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.loading:
            self.refresh()

    @Slot()
    def refresh(self) -> None:
        """Read the topology again in the background."""
        self._generation += 1
        self.loading = True
        self.refresh_button.setEnabled(False)
        self.status_label.setText("Reading the GPU topology…")
        run_in_background(
            self._read,
            partial(self._on_topology_read, self._generation),
            owner=self,
            what="reading the GPU topology",
        )

    def _on_topology_read(
        self, generation: int, topology: Topology | None, error: BaseException | None
    ) -> None:
        if generation != self._generation:
            return
        self.loading = False
        self.refresh_button.setEnabled(True)
        if error is not None or topology is None:
            report(
                error or RuntimeError("no result"),
                "Reading the GPU topology",
                label=self.status_label,
            )
            return
        self.show_topology(topology)
        self.topology_read.emit(topology)

    # -- showing -------------------------------------------------------------------------
    def show_topology(self, topology: Topology) -> None:
        """Fill the tables and the warnings from ``topology``."""
        self.topology = topology
        prefix = "Demo: the recorded GPUs, not this machine's. " if self.ctx.demo else ""
        if not topology.found:
            self.content.hide()
            self.status_label.setText(prefix + NO_TOPOLOGY)
            return
        count = len(topology.gpus)
        where = "" if topology.sysfs_root == "/sys" else f" (read from {topology.sysfs_root})"
        problems = sum(w.severity is Severity.WARNING for w in topology.warnings)
        self.status_label.setText(
            f"{prefix}{count} GPU{'s' if count != 1 else ''}{where}; "
            + (
                f"{problems} warning{'s' if problems != 1 else ''}."
                if problems
                else "notes only, nothing urgent."
                if topology.warnings
                else "nothing to act on."
            )
        )
        self._fill_matrix(topology)
        self._fill_gpus(topology)
        self._fill_warnings(topology)
        self.content.show()

    def _fill_matrix(self, topology: Topology) -> None:
        labels = [g.label for g in topology.gpus]
        single = len(labels) < 2
        self.matrix_title.setText(
            "Lin&ks between GPUs" + (" (one GPU: nothing to compare)" if single else "")
        )
        self.matrix.setRowCount(len(labels))
        self.matrix.setColumnCount(len(labels))
        self.matrix.setHorizontalHeaderLabels(labels)
        self.matrix.setVerticalHeaderLabels(labels)
        for a in topology.gpus:
            for b in topology.gpus:
                pair = topology.link(a.index, b.index)
                if pair.kind == SAME:
                    item = _item("—", pair.tooltip)
                else:
                    hops = (
                        ""
                        if pair.hops is None
                        else f" · {pair.hops} hop{'s' if pair.hops != 1 else ''}"
                    )
                    item = _item(f"{pair.kind}{hops}", pair.tooltip)
                    key = pair.kind
                    if key == "PCIe" and (pair.hops or 0) >= 3:
                        key = "far"
                    colours = _COLOURS.get(key)
                    if colours:
                        item.setBackground(QBrush(QColor(colours[0])))
                        item.setForeground(QBrush(QColor(colours[1])))
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.matrix.setItem(a.index, b.index, item)
        self.matrix.resizeColumnsToContents()

    def _fill_gpus(self, topology: Topology) -> None:
        self.gpu_table.setRowCount(len(topology.gpus))
        for row, g in enumerate(topology.gpus):
            pcie = g.pcie
            now = describe(pcie.link.speed_gts, pcie.link.width) if pcie else "n/a"
            most = describe(pcie.link.max_speed_gts, pcie.link.max_width) if pcie else "n/a"
            name = g.name + (" (integrated)" if g.integrated else "")
            cells = (
                (g.label, f"KFD node {g.node}"),
                (name, g.gfx or ""),
                (g.bdf or "n/a", ""),
                ("n/a" if g.numa_node is None else str(g.numa_node), "NUMA node of the PCI device"),
                (now, g.pcie_assessment.verdict.value if g.pcie_assessment else ""),
                (most, ""),
                (pcie.source_bdf if pcie else "n/a", pcie.source_note if pcie else ""),
            )
            for column, (text, tip) in enumerate(cells):
                self.gpu_table.setItem(row, column, _item(text, tip))
        self.gpu_table.resizeColumnsToContents()

    def _fill_warnings(self, topology: Topology) -> None:
        self.warning_list.clear()
        if not topology.warnings:
            self.warning_list.addItem("Nothing to act on.")
        for w in topology.warnings:
            mark = "⚠" if w.severity is Severity.WARNING else "ℹ"
            item = QListWidgetItem(f"{mark} {w.message}\n    What to do: {w.what_to_do}")
            item.setToolTip(w.what_to_do)
            item.setData(Qt.ItemDataRole.UserRole, w.code)
            item.setData(
                Qt.ItemDataRole.AccessibleTextRole,
                f"{w.severity.value}: {w.message} What to do: {w.what_to_do}",
            )
            self.warning_list.addItem(item)
