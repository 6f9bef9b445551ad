"""The Monitor's Nodes page: other machines' GPUs, read from their Prometheus pages.

The user adds a node by URL (AMD's GPU metrics exporter, port 5000 by default, or another
rocmpanel's ``telemetry --prometheus``, port 9400), an optional API key and a name. Every
``interval_ms`` all nodes are polled at once on the thread pool (``run_in_background``;
never on the GUI thread), and each answer feeds that node's history and alerts
(:class:`~rocmpanel.monitor.nodes.RemoteNode`, the same history and alert rules as local
GPUs). The table lists every node's GPUs (utilisation, VRAM, temperature, power, ECC
errors, state); a node that does not answer is one row that says since when and why. The
selected GPU's history is drawn with the Monitor's own GPU panel; alerts go to the same
kind of list as the Monitor's.

The list is saved in the config folder with the keys, readable only by the user (0600),
and loaded (off the GUI thread) when the page is built.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.units import format_gib
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.report import report
from rocmpanel.monitor.alerts import AlertRules, sensor_name
from rocmpanel.monitor.nodes import (
    LoadedNodes,
    NodeSpec,
    NodeState,
    PollResult,
    RemoteNode,
    check_name,
    check_url,
    load_nodes,
    nodes_file,
    poll_all,
    save_nodes,
)
from rocmpanel.monitor.prometheus_read import RemoteGpu
from rocmpanel.monitor.views.alert_panel import AlertPanel

if TYPE_CHECKING:
    from rocmpanel.gui.context import AppContext
    from rocmpanel.monitor.views.gpu_plots import GpuPanel

POLL_MS = 5000
PLOT_WINDOW_S = 600.0
MAX_POINTS = 800
COLUMNS = (
    QT_TRANSLATE_NOOP("NodesView", "Node"),
    QT_TRANSLATE_NOOP("NodesView", "GPU"),
    QT_TRANSLATE_NOOP("NodesView", "State"),
    QT_TRANSLATE_NOOP("NodesView", "Utilisation"),
    QT_TRANSLATE_NOOP("NodesView", "VRAM used / total"),
    QT_TRANSLATE_NOOP("NodesView", "Temperature"),
    QT_TRANSLATE_NOOP("NodesView", "Power"),
    QT_TRANSLATE_NOOP("NodesView", "ECC corr. / uncorr."),
)
TABLE_ROWS = 4  # rows the table keeps on a 1280x820 window; the plots scroll below it
ROLE = Qt.ItemDataRole.UserRole


def _num(value: float | None, unit: str) -> str:
    return "n/a" if value is None else f"{value:.0f} {unit}"


def gpu_cells(gpu: RemoteGpu) -> tuple[str, ...]:
    """The figures of one GPU's row, as shown (State first)."""
    g = gpu.sample
    temps = [(sensor_name(sensor), g.temp_c(sensor)) for sensor in ("edge", "junction", "mem")]
    temp = "  ".join(f"{label} {t:.0f} °C" for label, t in temps if t is not None) or "n/a"
    power = _num(g.power_w, "W")
    if g.power_w is not None and g.power_cap_w:
        power = f"{g.power_w:.0f} / {g.power_cap_w:.0f} W"
    errors = "n/a"
    if gpu.ecc_correctable is not None or gpu.ecc_uncorrectable is not None:
        errors = f"{_count(gpu.ecc_correctable)} / {_count(gpu.ecc_uncorrectable)}"
    state = (
        translate("NodesView", "up")
        if gpu.healthy is not False
        else translate("NodesView", "up, UNHEALTHY (exporter's health check)")
    )
    return (
        state,
        _num(g.busy_percent, "%"),
        f"{format_gib(g.vram_used_bytes)} / {format_gib(g.vram_total_bytes)}",
        temp,
        power,
        errors,
    )


def _count(value: int | None) -> str:
    return "n/a" if value is None else str(value)


class NodesView(QWidget):
    """Add and remove nodes; their GPUs in a table, with history plots and alerts."""

    polled = Signal()  # a poll's results are in the table
    loaded = Signal()  # the saved list is in (or could not be read: the message says so)

    def __init__(
        self,
        ctx: AppContext | None = None,
        parent: QWidget | None = None,
        *,
        interval_ms: int = POLL_MS,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.nodes: dict[str, RemoteNode] = {}
        self.panel: GpuPanel | None = None
        self._selected: tuple[str, str] | None = None  # (node, GPU key)
        self._just_added: str | None = None  # its first poll replaces "reading it…"
        self._reading_message = ""  # that message, as shown
        self._polling = False
        self._saving = False
        self._save_again = False
        self._interval_ms = interval_ms
        self._build()
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.poll_now)
        run_in_background(load_nodes, self._on_nodes_loaded, owner=self, what="reading the nodes")

    # -- layout -------------------------------------------------------------------------
    def _build(self) -> None:
        intro = QLabel(
            translate(
                "NodesView",
                "Other machines' GPUs, read every {seconds} s from their Prometheus pages: "
                "AMD's GPU metrics exporter (http://HOST:5000/metrics) or "
                "'rocmpanel telemetry --prometheus HOST:9400' (no AMD GPU needed here).",
            ).format(seconds=f"{self._interval_ms / 1000:g}")
        )
        intro.setWordWrap(True)
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("http://node1:5000/metrics")
        self.url_edit.setAccessibleName(translate("NodesView", "Node URL"))
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText(translate("NodesView", "name (optional)"))
        self.name_edit.setAccessibleName(translate("NodesView", "Node name"))
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText(translate("NodesView", "API key (optional)"))
        self.key_edit.setAccessibleName(translate("NodesView", "Node API key"))
        self.add_button = QPushButton(translate("NodesView", "&Add node"))
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.url_edit.returnPressed.connect(self._on_add_button_clicked)
        self.remove_button = QPushButton(translate("NodesView", "&Remove node"))
        self.remove_button.setToolTip(
            translate("NodesView", "Remove the node of the selected row from the list")
        )
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        # Alt+N is the Monitor's Nodes tab.
        self.poll_button = QPushButton(translate("NodesView", "Read no&w"))
        self.poll_button.clicked.connect(self.poll_now)
        form = QHBoxLayout()
        url_label = QLabel(translate("NodesView", "&URL:"))
        url_label.setBuddy(self.url_edit)
        for widget in (url_label, self.url_edit):
            form.addWidget(widget)
        form.addWidget(self.name_edit)
        form.addWidget(self.key_edit)
        form.addWidget(self.add_button)
        form.addWidget(self.remove_button)
        form.addWidget(self.poll_button)
        self.key_note = QLabel(
            translate(
                "NodesView",
                "Keys are saved with the list in {path}, readable only by you (mode 0600); "
                "they are sent only to their own node.",
            ).format(path=nodes_file())
        )
        self.key_note.setWordWrap(True)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setAccessibleName(translate("NodesView", "Nodes status"))
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([translate("NodesView", c) for c in COLUMNS])
        ecc_header = self.table.horizontalHeaderItem(len(COLUMNS) - 1)
        if ecc_header is not None:
            ecc_header.setToolTip(translate("NodesView", "ECC errors: corrected / uncorrected"))
        self.table.setAccessibleName(translate("NodesView", "Nodes and their GPUs"))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # The GPU's name takes what is left (elided, whole in its tooltip), so the figures
        # to its right stay in view without a horizontal scroll.
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(False)
        self.table.itemSelectionChanged.connect(self._on_table_item_selection_changed)
        # A few rows always show: the GPU panel below is taller than what is left of a
        # 1280x820 window, so it scrolls rather than squeezing the table to one row.
        row_h = self.table.verticalHeader().defaultSectionSize()
        header_h = self.table.horizontalHeader().sizeHint().height()
        self.table.setMinimumHeight(header_h + TABLE_ROWS * row_h + 4)
        self.plot_placeholder = QLabel(
            translate("NodesView", "Select a GPU in the table to see its history.")
        )
        self.plot_placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.plot_box = QWidget()
        self._plot_layout = QVBoxLayout(self.plot_box)
        self._plot_layout.setContentsMargins(0, 0, 0, 0)
        self._plot_layout.addWidget(self.plot_placeholder)
        self.alert_panel = AlertPanel(self)
        alerts = QWidget()
        alerts_layout = QVBoxLayout(alerts)
        alerts_layout.setContentsMargins(0, 0, 0, 0)
        alerts_layout.addWidget(self.alert_panel.label)
        alerts_layout.addWidget(self.alert_panel.list, 1)
        # Alerts beside the table, so the plots get the full width (three plots a row:
        # their legends are cut below about 400 px each).
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.table)
        top.addWidget(alerts)
        top.setStretchFactor(0, 1)
        top.setSizes([950, 280])
        self.plot_scroll = QScrollArea()
        self.plot_scroll.setWidgetResizable(True)
        self.plot_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.plot_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.plot_scroll.setWidget(self.plot_box)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.plot_scroll)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        split.setSizes([1, 10_000])  # the table at its minimum: the plots get the rest
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.key_note)
        layout.addWidget(self.message)
        layout.addWidget(self.alert_panel.banner)
        layout.addWidget(split, 1)
        self._fill_table()

    # -- the list -----------------------------------------------------------------------
    def _rules(self) -> AlertRules:
        if self.ctx is None:
            return AlertRules()
        s = self.ctx.settings.monitor
        return AlertRules.from_settings(s)

    def _on_nodes_loaded(self, loaded: LoadedNodes | None, error: BaseException | None) -> None:
        if error is not None:
            report(error, translate("NodesView", "Reading the node list"), label=self.message)
        elif loaded is not None:
            for spec in loaded.specs:
                self.nodes.setdefault(spec.name, RemoteNode(spec, self._rules()))
            if loaded.note:
                self.message.setText(loaded.note)
        self._fill_table()
        self.timer.start()
        self.loaded.emit()
        self.poll_now()

    @Slot()
    def _on_add_button_clicked(self) -> None:
        try:
            url = check_url(self.url_edit.text())
        except PanelError as exc:
            report(exc, label=self.message)
            self.url_edit.setFocus()
            return
        name = check_name(self.name_edit.text(), url)
        if name in self.nodes:
            self.message.setText(
                translate(
                    "NodesView", "A node named {name} is already in the list: give another name."
                ).format(name=name)
            )
            self.name_edit.setFocus()
            return
        key = self.key_edit.text().strip() or None
        if key is not None and not key.isprintable():
            self.message.setText(
                translate("NodesView", "The key holds characters that cannot go in an HTTP header.")
            )
            return
        self.add_node(NodeSpec(name, url, key))
        self.url_edit.clear()
        self.name_edit.clear()
        self.key_edit.clear()
        self._reading_message = translate("NodesView", "Added {name}; reading it…").format(
            name=name
        )
        self.message.setText(self._reading_message)
        self._just_added = name

    def add_node(self, spec: NodeSpec) -> None:
        """Add ``spec``, save the list, and read every node now."""
        self.nodes[spec.name] = RemoteNode(spec, self._rules())
        self._fill_table()
        self._save()
        self.poll_now()

    @Slot()
    def _on_remove_button_clicked(self) -> None:
        row = self.table.currentRow()
        item = self.table.item(row, 0) if row >= 0 else None
        if item is None:
            self.message.setText(
                translate("NodesView", "Select a row of the node to remove first.")
            )
            return
        self.remove_node(str(item.data(ROLE)[0]))

    def remove_node(self, name: str) -> None:
        if self.nodes.pop(name, None) is None:
            return
        if self._selected and self._selected[0] == name:
            self._show_panel(None)
        self._fill_table()
        self._save()
        self.message.setText(translate("NodesView", "Removed {name}.").format(name=name))

    def _save(self) -> None:
        """Save on the pool, one save at a time (the last list wins)."""
        if self._saving:
            self._save_again = True
            return
        self._saving = True
        specs = tuple(node.spec for node in self.nodes.values())
        run_in_background(partial(save_nodes, specs), self._on_saved, owner=self,
                          what="saving the node list")  # fmt: skip

    def _on_saved(self, _path: object, error: BaseException | None) -> None:
        self._saving = False
        if error is not None:
            report(error, translate("NodesView", "Saving the node list"), label=self.message)
        if self._save_again:
            self._save_again = False
            self._save()

    # -- polling ------------------------------------------------------------------------
    @Slot()
    def poll_now(self) -> None:
        """Read every node on the pool (skipped while the previous read runs)."""
        if self._polling or not self.nodes:
            return
        self._polling = True
        specs = tuple(node.spec for node in self.nodes.values())
        run_in_background(partial(poll_all, specs), self._on_polled, owner=self,
                          what="reading the other nodes")  # fmt: skip

    def _on_polled(
        self, results: tuple[PollResult, ...] | None, error: BaseException | None
    ) -> None:
        self._polling = False
        if error is not None:
            self._just_added = None
            report(error, translate("NodesView", "Reading the other nodes"), label=self.message)
            return
        desktop = self.ctx.settings.monitor.alert_desktop_notify if self.ctx else False
        for result in results or ():
            node = self.nodes.get(result.spec.name)
            if node is None or node.spec != result.spec:
                continue  # removed or replaced while it was read
            node.rules = self._rules()
            for alert in node.apply(result):
                self.alert_panel.show_alert(alert, desktop=desktop)
                if self.ctx is not None:
                    self.ctx.notify(alert.message)
        self._fill_table()
        self._redraw_panel()
        self._say_first_reading()
        self.polled.emit()

    def _say_first_reading(self) -> None:
        """Replace "Added X; reading it…" by what the first read found (a later poll, or
        another message since, leaves the message alone)."""
        name = self._just_added
        node = self.nodes.get(name) if name else None
        if node is not None and node.status.state is NodeState.WAITING:
            QTimer.singleShot(0, self.poll_now)  # added while an earlier poll ran
            return
        self._just_added = None
        if node is None or self.message.text() != self._reading_message:
            return
        if node.status.state is NodeState.UP:
            count = len(node.gpus)
            if count == 1:
                text = translate("NodesView", "Added {name}: 1 GPU read.")
            else:
                text = translate("NodesView", "Added {name}: {count} GPUs read.")
            self.message.setText(text.format(name=name, count=count))
        else:
            self.message.setText(
                translate("NodesView", "Added {name}, but it does not answer: {error}").format(
                    name=name, error=node.status.error
                )
            )

    # -- table and plots ----------------------------------------------------------------
    def _fill_table(self) -> None:
        rows: list[tuple[tuple[str, str], tuple[str, ...]]] = []
        for name, node in self.nodes.items():
            if node.status.state is NodeState.UP and node.gpus:
                for gpu in node.gpus:
                    label = gpu.sample.identity.name.removesuffix(f" on {name}")
                    rows.append(((name, gpu.sample.identity.key), (name, label, *gpu_cells(gpu))))
            else:
                rows.append(((name, ""), (name, "—", node.status.text(), *("",) * 5)))
        self.table.setRowCount(len(rows))
        selected_row = -1
        for r, (ref, cells) in enumerate(rows):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(ROLE, ref)
                if c == 1:
                    item.setToolTip(text)  # the whole name when the column elides it
                if c == 2:
                    item.setToolTip(self.nodes[ref[0]].spec.url)
                self.table.setItem(r, c, item)
            if ref == self._selected:
                selected_row = r
        if not rows:
            self.message.setText(
                self.message.text() or translate("NodesView", "No node yet: add one above.")
            )
        if selected_row >= 0:
            self.table.blockSignals(True)
            self.table.selectRow(selected_row)
            self.table.blockSignals(False)

    @Slot()
    def _on_table_item_selection_changed(self) -> None:
        items = self.table.selectedItems()
        ref = items[0].data(ROLE) if items else None
        self._show_panel(tuple(ref) if ref and ref[1] else None)

    def _show_panel(self, ref: tuple[str, str] | None) -> None:
        if ref == self._selected and (ref is None or self.panel is not None):
            return
        self._selected = ref
        if self.panel is not None:
            self._plot_layout.removeWidget(self.panel)
            self.panel.deleteLater()
            self.panel = None
        self.plot_placeholder.setVisible(ref is None)
        if ref is None:
            return
        from rocmpanel.monitor.views.gpu_plots import GpuPanel  # pyqtgraph: on first use

        self.panel = GpuPanel(ref[1])
        self._plot_layout.addWidget(self.panel)
        self._redraw_panel()

    def _redraw_panel(self) -> None:
        if self.panel is None or self._selected is None:
            return
        node = self.nodes.get(self._selected[0])
        if node is None:
            return
        series = node.history.gpus.get(self._selected[1])
        last = next((g.sample for g in node.gpus if g.sample.identity.key == self._selected[1]),
                    None)  # fmt: skip
        if series is None:
            return
        t_to = time.time()
        t_from = t_to - PLOT_WINDOW_S
        self.panel.redraw(series.window(t_from, t_to, MAX_POINTS), t_from, t_to, last)

    def shutdown(self) -> None:
        self.timer.stop()
        self.alert_panel.shutdown()
