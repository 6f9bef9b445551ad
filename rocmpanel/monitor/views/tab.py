"""The Monitor tab: live GPU and host telemetry, history, processes, alerts, CSV export.

Samples come from a ``SamplerThread`` (its own QThread), which runs from the moment the
tab is built, shown or not: alerts, the process table and the VRAM other tabs read
(``ctx.live_memory``) stay current while another tab is in front. Each sample is appended
to the numpy history on the GUI thread; the plots redraw from it on a GUI timer (10 fps),
only while the tab is visible.

Start-up cost: numpy and pyqtgraph are imported only when needed. The history module
(numpy) is loaded off the GUI thread when the first sample arrives; the plots (pyqtgraph)
are built on the first show, after the tab's frame has painted.

Which GPUs: the app's machine inventory (``ctx.inventory``), so the Monitor lists the same
cards under the same names as the other tabs. The trees read are
``ROCMPANEL_SYSFS_ROOT``/``ROCMPANEL_PROC_ROOT`` when set (a captured system, which the
inventory does not describe: then the GPUs are found in that tree), else /sys and /proc.

Demo mode (``ctx.demo``): the tree is the demo's, and the minutes before the tab opened
are computed off the GUI thread (``monitor/demo_replay.py``) and put into the history
before the first live sample, so the plots show minutes of history at once; live samples
that arrive meanwhile wait, keeping the history in time order.

No GPU: where the plots would be, what was looked for and why nothing was found, what
still works, and a "Show a demo" button (``ctx.show_demo``; hidden without one).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QPaintEvent, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.monitor.alerts import AlertMonitor, AlertRules
from rocmpanel.monitor.pdh_source import CAPABILITIES as PDH_CAPABILITIES
from rocmpanel.monitor.sample import GpuIdentity, Sample
from rocmpanel.monitor.sampler import SamplerThread
from rocmpanel.monitor.source import FoundGpus, source_name
from rocmpanel.monitor.source_factory import LIVE_SYSFS
from rocmpanel.monitor.views.alert_panel import AlertPanel
from rocmpanel.monitor.views.gpu_roster import GpuRoster
from rocmpanel.monitor.views.lazy_history import LazyHistory
from rocmpanel.monitor.views.process_table import ProcessTable
from rocmpanel.monitor.views.toolbar import MonitorToolbar

if TYPE_CHECKING:  # imported lazily at run time (numpy, pyqtgraph)
    from rocmpanel.monitor.csv_export import Snapshot
    from rocmpanel.monitor.history import TelemetryHistory
    from rocmpanel.monitor.views.gpu_plots import GpuPanel
    from rocmpanel.monitor.views.host_strip import HostStrip
    from rocmpanel.monitor.views.nodes_view import NodesView

log = logging.getLogger(__name__)

REDRAW_MS = 100  # 10 fps, under the 15 fps ceiling
MAX_POINTS = 800  # per curve per redraw: about one per pixel of a plot
PLOTS_FALLBACK_MS = 250  # build the plots this long after the first show at the latest
DEMO_WINDOW_S = 600.0  # the plots' window in demo mode: the replayed minutes at a glance


def no_gpu_explanation(sysfs_root: Path, platform: str = sys.platform) -> str:
    """What the Monitor looked for and why it may have found nothing (shown under the
    reason when there is no GPU), and what still works."""
    if platform == "win32" and sysfs_root == LIVE_SYSFS:
        looked = translate(
            "MonitorTab",
            "The Monitor reads AMD GPUs through Windows' GPU performance counters. None is "
            "listed when the machine has no AMD GPU, the AMD graphics driver is not "
            "installed, or the counters cannot be read (the reason above says which).",
        )
    else:
        looked = translate(
            "MonitorTab",
            "The Monitor looks for GPUs driven by the amdgpu kernel driver under {folder}. "
            "None is there when the machine has no AMD GPU, the amdgpu driver is not loaded, "
            "or this is a virtual machine or container without the GPU passed through.",
        ).format(folder=sysfs_root / "class" / "drm")
    still = translate(
        "MonitorTab",
        "Still working: host CPU and memory telemetry above, and the Setup tab's checklist.",
    )
    return f"{looked} {still}"


def _titled(label: QLabel, body: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    layout.addWidget(label)
    layout.addWidget(body, 1)
    return box


def trees_from_environment() -> tuple[Path, Path]:
    """The /sys- and /proc-like trees to read: the environment's, else the real ones."""
    return (
        Path(os.environ.get("ROCMPANEL_SYSFS_ROOT") or "/sys"),
        Path(os.environ.get("ROCMPANEL_PROC_ROOT") or "/proc"),
    )


class MonitorTab(QWidget):
    """Per-GPU plots and header cards, host strip, process table and alerts.

    ``follow_inventory``: take the GPU list from ``ctx.inventory`` (default: when reading
    the live /sys); else find the GPUs in the tree, as ``rocmpanel telemetry`` does.
    """

    title: ClassVar[str] = "Monitor"
    alert_raised = Signal(str)

    def __init__(
        self,
        ctx: AppContext,
        parent: QWidget | None = None,
        *,
        follow_inventory: bool | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.sysfs_root, self.proc_root = trees_from_environment()
        if follow_inventory is None:
            follow_inventory = self.sysfs_root == LIVE_SYSFS
        self.follow_inventory = follow_inventory
        self._history = LazyHistory(self)
        self.alerts = AlertMonitor(self._rules())
        self.roster = GpuRoster(ctx.inventory, follow_inventory, self)
        self.roster.changed.connect(self._on_roster_changed)
        self.panels: dict[str, GpuPanel] = {}
        self.host_strip: HostStrip | None = None
        self.plots_built = False
        self._plots_scheduled = False
        self.paused = False
        self._dirty = False
        self._view_end: float | None = None  # the right edge while paused
        self._last_failure = ""
        # Demo mode: live samples wait here until the replayed past is in the history.
        self._held: list[Sample] | None = [] if ctx.demo else None
        self._build()
        if ctx.demo:
            self._start_demo_history()
        self.sampler = SamplerThread(
            self.sysfs_root,
            self.proc_root,
            ctx.settings.monitor.interval_ms,
            self,
            gpus=self.roster.initial(),
            live_memory=ctx.live_memory,
        )
        self.roster.attach(self.sampler)
        self._on_roster_changed()
        self.sampler.sample_ready.connect(self._on_sampler_sample_ready)
        self.sampler.failed.connect(self._on_sampler_failed)
        self.redraw_timer = QTimer(self)
        self.redraw_timer.setInterval(REDRAW_MS)
        self.redraw_timer.timeout.connect(self._on_redraw_timer_timeout)
        self.redraw_timer.start()
        self.sampler.start()

    # -- layout -------------------------------------------------------------------------
    def _build(self) -> None:
        self.toolbar = MonitorToolbar(self.ctx.settings.monitor.interval_ms)
        self.toolbar.window_changed.connect(self._on_toolbar_window_changed)
        self.toolbar.paused.connect(self._on_toolbar_paused)
        self.toolbar.export_requested.connect(self._on_toolbar_export_requested)
        self.toolbar.interval_edited.connect(self._on_toolbar_interval_edited)
        # Aliases the tests and the benchmarks use.
        self.window_combo = self.toolbar.window_combo
        self.pause_button = self.toolbar.pause_button
        self.interval_spin = self.toolbar.interval_spin
        self.source_label = self.toolbar.source_label

        self.host_placeholder = QLabel(
            translate("HostStrip", "Host: waiting for the first sample…")
        )
        self.alert_panel = AlertPanel(self)
        self.alert_banner = self.alert_panel.banner
        self.alert_list = self.alert_panel.list

        self.no_gpu_label = QLabel()
        self.no_gpu_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_gpu_label.setWordWrap(True)
        self.no_gpu_help = QLabel(no_gpu_explanation(self.sysfs_root))
        self.no_gpu_help.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_gpu_help.setWordWrap(True)
        self.demo_button = QPushButton(translate("MonitorTab", "Show a &demo"))
        self.demo_button.setToolTip(
            translate(
                "MonitorTab",
                "Open a second window that runs rocmpanel on recorded GPUs with a replayed "
                "workload; this machine's settings stay as they are",
            )
        )
        self.demo_button.clicked.connect(self._on_demo_button_clicked)
        self.no_gpu_box = QWidget()
        box_layout = QVBoxLayout(self.no_gpu_box)
        box_layout.addWidget(self.no_gpu_label)
        box_layout.addWidget(self.no_gpu_help)
        button_row = QHBoxLayout()
        button_row.addStretch(1)
        button_row.addWidget(self.demo_button)
        button_row.addStretch(1)
        box_layout.addLayout(button_row)
        self.no_gpu_box.hide()
        self.gpu_area = QWidget()
        self.gpu_layout = QVBoxLayout(self.gpu_area)
        self.gpu_layout.setContentsMargins(0, 0, 0, 0)
        self.gpu_layout.addWidget(self.no_gpu_box)
        self.gpu_layout.addStretch(0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.gpu_area)

        self.process_table = ProcessTable()
        self.process_label = QLabel(translate("MonitorTab", "Processes using a GPU (yours only)"))
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(_titled(self.process_label, self.process_table))
        bottom.addWidget(_titled(self.alert_panel.label, self.alert_list))
        bottom.setSizes([800, 400])
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(scroll)
        split.addWidget(bottom)
        split.setSizes([640, 160])
        split.setChildrenCollapsible(False)

        self._layout = QVBoxLayout(self)
        if self.ctx.demo:
            self.toolbar.select_window(DEMO_WINDOW_S)
        self._layout.addWidget(self.toolbar)
        self._layout.addWidget(self.host_placeholder)
        self._layout.addWidget(self.alert_banner)
        # Other machines' GPUs: built on first view (its history module imports numpy).
        self.pages = QTabWidget()
        self.pages.setAccessibleName(translate("MonitorTab", "Monitor pages"))
        self.pages.addTab(split, translate("MonitorTab", "This &machine"))
        self.pages.addTab(QWidget(), translate("MonitorTab", "&Nodes"))
        self.nodes_view: NodesView | None = None
        self.pages.currentChanged.connect(self._on_pages_current_changed)
        self._layout.addWidget(self.pages, 1)

    @Slot(int)
    def _on_pages_current_changed(self, index: int) -> None:
        if index != 1 or self.nodes_view is not None:
            return
        from rocmpanel.monitor.views.nodes_view import NodesView

        self.nodes_view = NodesView(self.ctx)
        placeholder = self.pages.widget(1)
        self.pages.insertTab(1, self.nodes_view, translate("MonitorTab", "&Nodes"))
        self.pages.removeTab(2)
        if placeholder is not None:
            placeholder.deleteLater()
        self.pages.setCurrentIndex(1)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.plots_built and not self._plots_scheduled:
            # Paint the frame first; the plots (and pyqtgraph) follow after that paint
            # (paintEvent), or after a moment should no paint come (a zero-size tab).
            self._plots_scheduled = True
            QTimer.singleShot(PLOTS_FALLBACK_MS, self, self._build_plots)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self._plots_scheduled and not self.plots_built:
            QTimer.singleShot(0, self, self._build_plots)

    @Slot()
    def _build_plots(self) -> None:
        if self.plots_built:
            return
        from rocmpanel.monitor.views.host_strip import HostStrip

        self._history.ensure()
        self.host_strip = HostStrip()
        self._layout.replaceWidget(self.host_placeholder, self.host_strip)
        self.host_placeholder.deleteLater()
        self.plots_built = True
        self._sync_panels()
        self._dirty = True
        self.redraw()

    # -- GPU list -----------------------------------------------------------------------
    @property
    def history(self) -> TelemetryHistory | None:
        """The telemetry history; None until its module (numpy) has loaded."""
        return self._history.current

    @property
    def identities(self) -> dict[str, GpuIdentity]:
        """The GPUs sampled now, by key."""
        return self.roster.identities

    @property
    def found(self) -> FoundGpus | None:
        return self.roster.found

    @Slot()
    def _on_roster_changed(self) -> None:
        text = self.roster.no_gpu_text()
        self.no_gpu_label.setText(text)
        self.no_gpu_box.setVisible(bool(text))
        # Looking: no explanation, no button yet; found none: both.
        nothing = bool(text) and not self.roster.waiting
        self.no_gpu_help.setVisible(nothing)
        self.demo_button.setVisible(nothing and self.ctx.show_demo is not None)
        live = self.sysfs_root == LIVE_SYSFS
        where = translate("MonitorTab", "live") if live else str(self.sysfs_root)
        found = self.roster.found
        source = source_name(found.capabilities.source) if found else "…"
        self.source_label.setText(
            translate("MonitorTab", "{count} GPU(s) · {source} · {where}").format(
                count=len(self.identities), source=source, where=where
            )
        )
        self.source_label.setToolTip(found.note if found else "")
        self._sync_panels()

    def _sync_panels(self) -> None:
        """One panel per GPU now sampled (panels exist once the plots are built)."""
        if not self.plots_built:
            return
        from rocmpanel.monitor.views.gpu_plots import GpuPanel

        for key in [k for k in self.panels if k not in self.identities]:
            panel = self.panels.pop(key)
            panel.setParent(None)
            panel.deleteLater()
        for key in self.identities:
            if key not in self.panels:
                panel = GpuPanel(key)
                self.panels[key] = panel
                self.gpu_layout.insertWidget(self.gpu_layout.count() - 1, panel)

    @Slot()
    def _on_demo_button_clicked(self) -> None:
        if self.ctx.show_demo is not None:
            self.ctx.show_demo()

    # -- demo mode: the replayed past ------------------------------------------------------
    def _start_demo_history(self) -> None:
        from rocmpanel.monitor.demo_replay import past_samples

        run_in_background(
            partial(past_samples, time.time()),
            self._on_demo_history,
            owner=self,
            what="replaying the demo's past minutes",
        )

    def _on_demo_history(self, past: list[Sample] | None, error: BaseException | None) -> None:
        held, self._held = self._held or [], None
        if error is not None:
            report(error, translate("MonitorTab", "Replaying the demo's past minutes"))
        first = held[0].t if held else float("inf")
        for sample in past or ():
            if sample.t < first:
                self._history.add(sample)
        for sample in held:
            self._history.add(sample)
        self._dirty = True

    # -- samples ------------------------------------------------------------------------
    @Slot(object)
    def _on_sampler_sample_ready(self, sample: Sample) -> None:
        if self._held is not None:
            self._held.append(sample)
        else:
            self._history.add(sample)
        # Sources that learn their GPUs while reading (Windows PDH) add them late.
        self.roster.learn([g.identity for g in sample.gpus])
        self.alerts.rules = self._rules()
        for alert in self.alerts.check(sample):
            self.alert_panel.show_alert(
                alert, desktop=self.ctx.settings.monitor.alert_desktop_notify
            )
            log.warning("telemetry alert: %s", alert.message)
            self.ctx.notify(alert.message)
            self.alert_raised.emit(alert.message)
        model = self.process_table.model_
        model.gpu_names = {}
        for g in sample.gpus:  # Linux rows name the PCI slot, Windows rows the adapter key
            model.gpu_names[g.identity.key] = g.identity.name
            if g.identity.pci_slot:
                model.gpu_names[g.identity.pci_slot] = g.identity.name
        model.set_rows(sample.processes)
        count = len(sample.processes)
        found = self.roster.found
        # Windows' PDH counters list every user's processes; /proc shows only yours.
        if found and found.capabilities == PDH_CAPABILITIES:
            text = translate("MonitorTab", "Processes using a GPU (all users): {count}")
            none = translate("MonitorTab", "Processes using a GPU (all users): none right now")
        else:
            text = translate("MonitorTab", "Processes using a GPU (yours only): {count}")
            none = translate("MonitorTab", "Processes using a GPU (yours only): none right now")
        self.process_label.setText(text.format(count=count) if count else none)
        self.sampler.set_workers(self._worker_pids())
        self._dirty = True

    @Slot(object)
    def _on_sampler_failed(self, error: BaseException) -> None:
        message = f"{type(error).__name__}: {error}"
        if message != self._last_failure:  # a failing tick repeats: report it once
            self._last_failure = message
            report(error, translate("MonitorTab", "Reading telemetry"))

    def _worker_pids(self) -> dict[int, str]:
        try:
            return {job.pid: job.name for job in self.ctx.jobs.running() if job.pid is not None}
        except RuntimeError:  # the job manager is being torn down
            return {}

    def _rules(self) -> AlertRules:
        s = self.ctx.settings.monitor
        return AlertRules.from_settings(s)

    # -- drawing ------------------------------------------------------------------------
    def window_seconds(self) -> float:
        return self.toolbar.window_seconds()

    @Slot()
    def _on_redraw_timer_timeout(self) -> None:
        window = self.window()
        window_shown = window.isVisible() and not window.isMinimized()
        # Slower sampling only with the whole window out of sight: another tab in front
        # still needs fresh alerts, processes and VRAM figures.
        self.sampler.set_hidden(not window_shown)
        if self.isVisible() and window_shown and self._dirty and not self.paused:
            self.redraw()

    def redraw(self) -> None:
        """Draw every panel and the host strip from the history (GUI thread)."""
        if not self.plots_built or self.history is None or self.host_strip is None:
            return
        self._dirty = False
        last = self.history.last
        t_to = self._view_end if self.paused and self._view_end else time.time()
        if last is not None and not self.paused:
            t_to = max(t_to, last.t)
        t_from = t_to - self.window_seconds()
        by_key = {g.identity.key: g for g in last.gpus} if last is not None else {}
        for key, panel in self.panels.items():
            series = self.history.gpus.get(key)
            if series is None or not panel.isVisible():
                continue
            panel.redraw(series.window(t_from, t_to, MAX_POINTS), t_from, t_to, by_key.get(key))
        if last is not None and last.host is not None:
            self.host_strip.show_sample(last.host)
            window = self.history.host.window(t_from, t_to, MAX_POINTS)
            self.host_strip.redraw(window, t_from, t_to, last.host.ram_total_bytes)

    @Slot()
    def _on_toolbar_window_changed(self) -> None:
        self._dirty = True
        self.redraw()

    @Slot(bool)
    def _on_toolbar_paused(self, paused: bool) -> None:
        self.paused = paused
        self._view_end = time.time() if paused else None
        if not paused:
            self._dirty = True

    @Slot(int)
    def _on_toolbar_interval_edited(self, value: int) -> None:
        self.sampler.set_interval(value)
        try:
            self.ctx.settings.monitor.interval_ms = value
            self.ctx.settings.save()
        except (PanelError, ValueError) as exc:
            report(exc, translate("MonitorTab", "Saving the sampling interval"))

    # -- export -------------------------------------------------------------------------
    def _export_snapshot(self, seconds: float) -> Snapshot:
        """The last ``seconds`` of history (ending now, or at the pause), copied."""
        from rocmpanel.monitor.csv_export import snapshot

        t_to = self._view_end if self.paused and self._view_end else time.time()
        return snapshot(self._history.ensure(), t_to - seconds, t_to)

    def export_csv(self, path: Path, seconds: float) -> int:
        """Write the last ``seconds`` of history to ``path`` on this thread (tests,
        scripts); the Export button goes through :meth:`start_export`."""
        from rocmpanel.monitor.csv_export import write_csv

        return write_csv(path, self._export_snapshot(seconds))

    def start_export(self, path: Path, seconds: float) -> None:
        """Copy the range here, format and write it on the thread pool; the Export button
        stays disabled until it is done, then the result or the error is reported."""
        from rocmpanel.monitor.csv_export import write_csv

        windows = self._export_snapshot(seconds)
        self.toolbar.export_button.setEnabled(False)
        run_in_background(
            partial(write_csv, path, windows),
            partial(self._on_export_done, path),
            owner=self,
            what=f"exporting telemetry to {path}",
        )

    def _on_export_done(self, path: Path, rows: int | None, error: BaseException | None) -> None:
        self.toolbar.export_button.setEnabled(True)
        if error is not None:
            report(error, translate("MonitorTab", "Exporting telemetry"))
            return
        self.ctx.notify(
            translate("MonitorTab", "Exported {rows} rows of telemetry to {path}").format(
                rows=rows, path=path
            )
        )

    @Slot(str, float)
    def _on_toolbar_export_requested(self, name: str, seconds: float) -> None:
        self.start_export(Path(name), seconds)

    def shutdown(self) -> None:
        nodes = getattr(self, "nodes_view", None)  # None until the Nodes page was opened
        if nodes is not None:
            nodes.shutdown()
        self.redraw_timer.stop()
        self.sampler.stop()
        self.alert_panel.shutdown()
