"""The Monitor tab: live GPU and host telemetry, history, processes, alerts, CSV export.

Samples come from a ``SamplerThread`` (its own QThread); each one is appended to the
numpy history, checked for alerts and shown in the process table on the GUI thread. The
plots redraw from the history on a GUI timer (10 fps) and only while the tab is visible.
The trees read are ``ROCMPANEL_SYSFS_ROOT``/``ROCMPANEL_PROC_ROOT`` when set (a captured
system), else /sys and /proc.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMenu,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QStyle,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.gui.context import AppContext
from rocmpanel.monitor.alerts import Alert, AlertMonitor, AlertRules
from rocmpanel.monitor.csv_export import export_csv
from rocmpanel.monitor.history import TelemetryHistory
from rocmpanel.monitor.sample import GpuIdentity, Sample
from rocmpanel.monitor.sampler import SamplerThread
from rocmpanel.monitor.views.gpu_plots import GpuPanel
from rocmpanel.monitor.views.host_strip import HostStrip
from rocmpanel.monitor.views.process_table import ProcessTable

log = logging.getLogger(__name__)

WINDOWS: tuple[tuple[str, float], ...] = (
    ("1 min", 60.0),
    ("10 min", 600.0),
    ("1 h", 3600.0),
    ("24 h", 86400.0),
)
REDRAW_MS = 100  # 10 fps, under the 15 fps ceiling
MAX_POINTS = 800  # per curve per redraw: about one per pixel of a plot
MAX_ALERTS_SHOWN = 200


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
    """Per-GPU plots and header cards, host strip, process table and alerts."""

    title = "Monitor"
    alert_raised = Signal(str)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.sysfs_root, self.proc_root = trees_from_environment()
        self.history = TelemetryHistory()
        self.alerts = AlertMonitor(self._rules())
        self.panels: dict[str, GpuPanel] = {}
        self.paused = False
        self._dirty = False
        self._view_end: float | None = None  # the right edge while paused
        self._tray: QSystemTrayIcon | None = None
        self._build()
        self.sampler = SamplerThread(
            self.sysfs_root, self.proc_root, ctx.settings.monitor.interval_ms, self
        )
        self.sampler.gpus_found.connect(self._on_sampler_gpus_found)
        self.sampler.sample_ready.connect(self._on_sampler_sample_ready)
        self.sampler.failed.connect(self._on_sampler_failed)
        self.redraw_timer = QTimer(self)
        self.redraw_timer.setInterval(REDRAW_MS)
        self.redraw_timer.timeout.connect(self._on_redraw_timer_timeout)
        self.redraw_timer.start()
        self.sampler.start()

    # -- layout -------------------------------------------------------------------------
    def _build(self) -> None:
        bar = QHBoxLayout()
        window_label = QLabel("&Window:")
        bar.addWidget(window_label)
        self.window_combo = QComboBox()
        for label, _ in WINDOWS:
            self.window_combo.addItem(label)
        self.window_combo.setToolTip("How much history the plots show")
        self.window_combo.currentIndexChanged.connect(self._on_window_combo_changed)
        window_label.setBuddy(self.window_combo)
        bar.addWidget(self.window_combo)
        self.pause_button = QPushButton("&Pause")
        self.pause_button.setCheckable(True)
        self.pause_button.setToolTip("Freeze the plots; sampling and alerts go on")
        self.pause_button.toggled.connect(self._on_pause_button_toggled)
        bar.addWidget(self.pause_button)
        self.export_button = QPushButton("&Export CSV…")
        menu = QMenu(self.export_button)
        for label, seconds in WINDOWS:
            action = QAction(f"Last {label}", menu)
            action.triggered.connect(lambda _=False, s=seconds: self._on_export_requested(s))
            menu.addAction(action)
        self.export_button.setMenu(menu)
        bar.addWidget(self.export_button)
        bar.addSpacing(12)
        interval_label = QLabel("&Interval:")
        self.interval_spin = QSpinBox()
        self.interval_spin.setRange(100, 5000)
        self.interval_spin.setSingleStep(100)
        self.interval_spin.setSuffix(" ms")
        self.interval_spin.setValue(int(self.ctx.settings.monitor.interval_ms))
        self.interval_spin.setToolTip("Sampling interval (slower while the window is hidden)")
        self.interval_spin.editingFinished.connect(self._on_interval_spin_edited)
        interval_label.setBuddy(self.interval_spin)
        bar.addWidget(interval_label)
        bar.addWidget(self.interval_spin)
        bar.addStretch(1)
        self.source_label = QLabel()
        self.source_label.setStyleSheet("color: gray;")
        bar.addWidget(self.source_label)

        self.host_strip = HostStrip()
        self.alert_banner = QLabel()
        self.alert_banner.setWordWrap(True)
        self.alert_banner.setStyleSheet(
            "background: #fdecea; color: #8a1c12; padding: 4px; border-radius: 3px;"
        )
        self.alert_banner.hide()

        self.no_gpu_label = QLabel(
            "No AMD GPU found: no amdgpu device under "
            f"{self.sysfs_root / 'class' / 'drm'}. Host telemetry is still shown above."
        )
        self.no_gpu_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_gpu_label.setWordWrap(True)
        self.no_gpu_label.hide()
        self.gpu_area = QWidget()
        self.gpu_layout = QVBoxLayout(self.gpu_area)
        self.gpu_layout.setContentsMargins(0, 0, 0, 0)
        self.gpu_layout.addWidget(self.no_gpu_label)
        self.gpu_layout.addStretch(0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.gpu_area)

        self.process_table = ProcessTable()
        self.process_label = QLabel("Processes using a GPU (yours only)")
        self.alert_list = QListWidget()
        self.alert_list.setAccessibleName("Alerts")
        self.alert_list.setToolTip("Alerts raised since the panel started (newest first)")
        self.alert_label = QLabel("Alerts: none so far")
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(_titled(self.process_label, self.process_table))
        bottom.addWidget(_titled(self.alert_label, self.alert_list))
        bottom.setSizes([800, 400])
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(scroll)
        split.addWidget(bottom)
        split.setSizes([640, 160])
        split.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.host_strip)
        layout.addWidget(self.alert_banner)
        layout.addWidget(split, 1)

    # -- sampler ------------------------------------------------------------------------
    @Slot(object)
    def _on_sampler_gpus_found(self, identities: list[GpuIdentity]) -> None:
        for identity in identities:
            self._panel(identity.key)
        self.no_gpu_label.setVisible(not self.panels)
        where = f"{self.sysfs_root}" if str(self.sysfs_root) != "/sys" else "live"
        self.source_label.setText(f"{len(self.panels)} GPU(s) · {where}")

    def _panel(self, key: str) -> GpuPanel:
        panel = self.panels.get(key)
        if panel is None:
            panel = GpuPanel(key)
            self.panels[key] = panel
            self.gpu_layout.insertWidget(self.gpu_layout.count() - 1, panel)
        return panel

    @Slot(object)
    def _on_sampler_sample_ready(self, sample: Sample) -> None:
        self.history.add(sample)
        if any(g.identity.key not in self.panels for g in sample.gpus):
            # Sources that learn their GPUs while reading (Windows PDH) add panels late.
            self._on_sampler_gpus_found([g.identity for g in sample.gpus])
        self.alerts.rules = self._rules()
        for alert in self.alerts.check(sample):
            self._raise_alert(alert)
        model = self.process_table.model_
        model.gpu_names = {g.identity.pci_slot or "": g.identity.name for g in sample.gpus}
        model.set_rows(sample.processes)
        count = len(sample.processes)
        self.process_label.setText(
            f"Processes using a GPU (yours only): {count}"
            if count
            else "Processes using a GPU (yours only): none right now"
        )
        self.sampler.set_workers(self._worker_pids())
        self._dirty = True

    @Slot(str)
    def _on_sampler_failed(self, message: str) -> None:
        log.error(message)
        self.ctx.notify(message)

    def _worker_pids(self) -> dict[int, str]:
        try:
            return {job.pid: job.name for job in self.ctx.jobs.running() if job.pid is not None}
        except RuntimeError:  # the job manager is being torn down
            return {}

    # -- alerts -------------------------------------------------------------------------
    def _rules(self) -> AlertRules:
        s = self.ctx.settings
        return AlertRules(
            enabled=s.monitor.alerts_enabled,
            temp_margin_c=s.monitor.alert_temp_margin_c,
            vram_percent=s.monitor.alert_vram_percent,
            vram_hold_s=s.monitor.alert_vram_hold_s,
            power_hold_s=s.monitor.alert_power_hold_s,
            cooldown_s=s.monitor.alert_cooldown_s,
        )

    def _raise_alert(self, alert: Alert) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(alert.t))
        self.alert_list.insertItem(0, f"{stamp}  {alert.message}")
        while self.alert_list.count() > MAX_ALERTS_SHOWN:
            self.alert_list.takeItem(self.alert_list.count() - 1)
        self.alert_banner.setText(f"⚠ {stamp}  {alert.message}")
        self.alert_label.setText(f"Alerts: {self.alert_list.count()}")
        self.alert_banner.show()
        log.warning("telemetry alert: %s", alert.message)
        self.alert_raised.emit(alert.message)
        if self.ctx.settings.monitor.alert_desktop_notify:
            self._notify_desktop(alert.message)

    def _notify_desktop(self, message: str) -> None:
        if not QSystemTrayIcon.isSystemTrayAvailable():
            return
        if self._tray is None:
            icon = self.window().windowIcon()
            if icon.isNull():
                icon = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
            self._tray = QSystemTrayIcon(icon, self)
            self._tray.setToolTip("rocmpanel telemetry alerts")
            self._tray.show()
        self._tray.showMessage("rocmpanel", message, QSystemTrayIcon.MessageIcon.Warning, 10_000)

    # -- drawing ------------------------------------------------------------------------
    def window_seconds(self) -> float:
        return WINDOWS[self.window_combo.currentIndex()][1]

    @Slot()
    def _on_redraw_timer_timeout(self) -> None:
        shown = self.isVisible() and not self.window().isMinimized()
        self.sampler.set_hidden(not shown)
        if shown and self._dirty and not self.paused:
            self.redraw()

    def redraw(self) -> None:
        """Draw every panel and the host strip from the history (GUI thread)."""
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

    @Slot(int)
    def _on_window_combo_changed(self, _index: int) -> None:
        self._dirty = True
        self.redraw()

    @Slot(bool)
    def _on_pause_button_toggled(self, paused: bool) -> None:
        self.paused = paused
        self._view_end = time.time() if paused else None
        self.pause_button.setText("&Resume" if paused else "&Pause")
        if not paused:
            self._dirty = True

    @Slot()
    def _on_interval_spin_edited(self) -> None:
        value = self.interval_spin.value()
        self.sampler.set_interval(value)
        try:
            self.ctx.settings.monitor.interval_ms = value
            self.ctx.settings.save()
        except (PanelError, ValueError) as exc:
            self.ctx.notify(f"Could not save the sampling interval: {exc}")

    # -- export -------------------------------------------------------------------------
    def export_csv(self, path: Path, seconds: float) -> int:
        """Write the last ``seconds`` of history (ending now, or at the pause) to ``path``."""
        t_to = self._view_end if self.paused and self._view_end else time.time()
        return export_csv(self.history, path, t_to - seconds, t_to)

    def _on_export_requested(self, seconds: float) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self, "Export telemetry as CSV", "rocmpanel-telemetry.csv", "CSV files (*.csv)"
        )
        if not name:
            return
        try:
            rows = self.export_csv(Path(name), seconds)
        except PanelError as exc:
            self.ctx.notify(exc.message)
            return
        self.ctx.notify(f"Exported {rows} rows of telemetry to {name}")

    def shutdown(self) -> None:
        self.redraw_timer.stop()
        self.sampler.stop()
        if self._tray is not None:
            self._tray.hide()
