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

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.machine.pcie_link import describe
from rocmpanel.multigpu.topology import NO_PATH, SAME, Topology, link_kind_name, read_topology
from rocmpanel.multigpu.topology_warnings import Severity

NO_TOPOLOGY = QT_TRANSLATE_NOOP(
    "TopologyPanel",
    "No AMD GPU topology on this machine: the ROCm kernel driver (KFD) lists no GPU, so "
    "there are no links, NUMA nodes or PCIe figures to show.",
)
GPU_COLUMNS = (
    QT_TRANSLATE_NOOP("TopologyPanel", "GPU"),
    QT_TRANSLATE_NOOP("TopologyPanel", "Name"),
    QT_TRANSLATE_NOOP("TopologyPanel", "PCI address"),
    QT_TRANSLATE_NOOP("TopologyPanel", "NUMA node"),
    QT_TRANSLATE_NOOP("TopologyPanel", "PCIe now"),
    QT_TRANSLATE_NOOP("TopologyPanel", "PCIe max"),
    QT_TRANSLATE_NOOP("TopologyPanel", "Read at"),
)
# What each PCIe verdict means, in words (the cell's tooltip).
_VERDICTS = {
    "full": QT_TRANSLATE_NOOP("TopologyPanel", "full"),
    "unknown": QT_TRANSLATE_NOOP("TopologyPanel", "unknown"),
    "idle": QT_TRANSLATE_NOOP("TopologyPanel", "idle"),
    "below-max": QT_TRANSLATE_NOOP("TopologyPanel", "below-max"),
    "slot-limited": QT_TRANSLATE_NOOP("TopologyPanel", "slot-limited"),
    "driver-capped": QT_TRANSLATE_NOOP("TopologyPanel", "driver-capped"),
    "degraded": QT_TRANSLATE_NOOP("TopologyPanel", "degraded"),
}
# Cell colours by link kind (background, text): the text colour is set too, so a dark
# theme keeps the cells readable.
_COLOURS = {
    "XGMI": ("#c8e6c9", "#1b5e20"),
    "PCIe": ("#fff3c4", "#5d4037"),
    "far": ("#ffe0b2", "#bf360c"),  # PCIe across sockets (3 hops or more)
    NO_PATH: ("#eeeeee", "#616161"),
}


def status_text(topology: Topology) -> str:
    """The line above the tables: how many GPUs, where read, how many warnings."""
    count = len(topology.gpus)
    if count == 1:
        gpus = translate("TopologyPanel", "1 GPU")
    else:
        gpus = translate("TopologyPanel", "{count} GPUs").format(count=count)
    if topology.sysfs_root != "/sys":
        gpus = translate("TopologyPanel", "{gpus} (read from {path})").format(
            gpus=gpus, path=topology.sysfs_root
        )
    problems = sum(w.severity is Severity.WARNING for w in topology.warnings)
    if problems == 1:
        verdict = translate("TopologyPanel", "1 warning.")
    elif problems:
        verdict = translate("TopologyPanel", "{count} warnings.").format(count=problems)
    elif topology.warnings:
        verdict = translate("TopologyPanel", "notes only, nothing urgent.")
    else:
        verdict = translate("TopologyPanel", "nothing to act on.")
    return translate("TopologyPanel", "{gpus}; {verdict}").format(gpus=gpus, verdict=verdict)


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

        self.status_label = QLabel(translate("TopologyPanel", "Not read yet."))
        self.status_label.setWordWrap(True)
        self.status_label.setAccessibleName(translate("TopologyPanel", "Topology status"))
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.refresh_button = QPushButton(translate("TopologyPanel", "&Refresh"))
        self.refresh_button.setToolTip(translate("TopologyPanel", "Read the GPU topology again"))
        self.refresh_button.setAccessibleName(
            translate("TopologyPanel", "Refresh the GPU topology")
        )
        self.refresh_button.clicked.connect(self.refresh)

        self.matrix = _table(translate("TopologyPanel", "GPU link matrix"))
        self.matrix.setToolTip(
            translate(
                "TopologyPanel",
                "How each pair of GPUs is connected; hover a cell for hops and weight",
            )
        )
        self.gpu_table = _table(translate("TopologyPanel", "GPU NUMA nodes and PCIe links"))
        self.gpu_table.setColumnCount(len(GPU_COLUMNS))
        self.gpu_table.setHorizontalHeaderLabels(
            [translate("TopologyPanel", c) for c in GPU_COLUMNS]
        )
        self.gpu_table.verticalHeader().hide()
        self.gpu_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.warning_list = QListWidget()
        self.warning_list.setAccessibleName(translate("TopologyPanel", "Topology warnings"))
        self.warning_list.setWordWrap(True)

        self.matrix_title = QLabel(translate("TopologyPanel", "Lin&ks between GPUs"))
        self.matrix_title.setBuddy(self.matrix)
        gpus_title = QLabel(translate("TopologyPanel", "&GPUs: NUMA node and PCIe link"))
        gpus_title.setBuddy(self.gpu_table)
        warnings_title = QLabel(translate("TopologyPanel", "&Warnings and what to do"))
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
        self.status_label.setText(translate("TopologyPanel", "Reading the GPU topology…"))
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
                translate("TopologyPanel", "Reading the GPU topology"),
                label=self.status_label,
            )
            return
        self.show_topology(topology)
        self.topology_read.emit(topology)

    # -- showing -------------------------------------------------------------------------
    def show_topology(self, topology: Topology) -> None:
        """Fill the tables and the warnings from ``topology``."""
        self.topology = topology
        prefix = (
            translate("TopologyPanel", "Demo: the recorded GPUs, not this machine's.") + " "
            if self.ctx.demo
            else ""
        )
        if not topology.found:
            self.content.hide()
            self.status_label.setText(prefix + translate("TopologyPanel", NO_TOPOLOGY))
            return
        self.status_label.setText(prefix + status_text(topology))
        self._fill_matrix(topology)
        self._fill_gpus(topology)
        self._fill_warnings(topology)
        self.content.show()

    def _fill_matrix(self, topology: Topology) -> None:
        labels = [g.label for g in topology.gpus]
        single = len(labels) < 2
        self.matrix_title.setText(
            translate("TopologyPanel", "Lin&ks between GPUs (one GPU: nothing to compare)")
            if single
            else translate("TopologyPanel", "Lin&ks between GPUs")
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
                    kind = link_kind_name(pair.kind)
                    if pair.hops is None:
                        text = kind
                    elif pair.hops == 1:
                        text = translate("TopologyPanel", "{kind} · 1 hop").format(kind=kind)
                    else:
                        text = translate("TopologyPanel", "{kind} · {hops} hops").format(
                            kind=kind, hops=pair.hops
                        )
                    item = _item(text, pair.tooltip)
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
            if g.integrated:
                name = translate("TopologyPanel", "{name} (integrated)").format(name=g.name)
            else:
                name = g.name
            verdict = g.pcie_assessment.verdict.value if g.pcie_assessment else ""
            numa_tip = translate("TopologyPanel", "NUMA node of the PCI device")
            cells = (
                (g.label, translate("TopologyPanel", "KFD node {node}").format(node=g.node)),
                (name, g.gfx or ""),
                (g.bdf or "n/a", ""),
                ("n/a" if g.numa_node is None else str(g.numa_node), numa_tip),
                (
                    now,
                    translate("TopologyPanel", _VERDICTS.get(verdict, verdict)) if verdict else "",
                ),
                (most, ""),
                (pcie.source_bdf if pcie else "n/a", pcie.source_note if pcie else ""),
            )
            for column, (text, tip) in enumerate(cells):
                self.gpu_table.setItem(row, column, _item(text, tip))
        self.gpu_table.resizeColumnsToContents()

    def _fill_warnings(self, topology: Topology) -> None:
        self.warning_list.clear()
        if not topology.warnings:
            self.warning_list.addItem(translate("TopologyPanel", "Nothing to act on."))
        for w in topology.warnings:
            mark = "⚠" if w.severity is Severity.WARNING else "ℹ"
            todo = translate("TopologyPanel", "What to do: {action}").format(action=w.what_to_do)
            item = QListWidgetItem(f"{mark} {w.message}\n    {todo}")
            item.setToolTip(w.what_to_do)
            item.setData(Qt.ItemDataRole.UserRole, w.code)
            severity = (
                translate("TopologyPanel", "warning")
                if w.severity is Severity.WARNING
                else translate("TopologyPanel", "note")
            )
            item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{severity}: {w.message} {todo}")
            self.warning_list.addItem(item)
