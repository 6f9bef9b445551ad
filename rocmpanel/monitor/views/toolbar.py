"""The Monitor tab's bar: time window, pause, CSV export, sampling interval, source."""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSpinBox,
    QWidget,
)

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.monitor.interval import MAX_INTERVAL_MS, MIN_INTERVAL_MS

# (label, seconds): the label is translated where shown; code finds a window by seconds.
WINDOWS: tuple[tuple[str, float], ...] = (
    (QT_TRANSLATE_NOOP("MonitorToolbar", "1 min"), 60.0),
    (QT_TRANSLATE_NOOP("MonitorToolbar", "10 min"), 600.0),
    (QT_TRANSLATE_NOOP("MonitorToolbar", "1 h"), 3600.0),
    (QT_TRANSLATE_NOOP("MonitorToolbar", "24 h"), 86400.0),
)


class MonitorToolbar(QWidget):
    """Emits what the user asked for; the tab does it."""

    window_changed = Signal()
    paused = Signal(bool)
    export_requested = Signal(str, float)  # file name, seconds of history
    interval_edited = Signal(int)  # ms

    def __init__(self, interval_ms: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        bar = QHBoxLayout(self)
        bar.setContentsMargins(0, 0, 0, 0)
        window_label = QLabel(translate("MonitorToolbar", "&Window:"))
        bar.addWidget(window_label)
        self.window_combo = QComboBox()
        for label, seconds in WINDOWS:
            self.window_combo.addItem(translate("MonitorToolbar", label), seconds)
        self.window_combo.setToolTip(translate("MonitorToolbar", "How much history the plots show"))
        self.window_combo.currentIndexChanged.connect(self._on_window_combo_changed)
        window_label.setBuddy(self.window_combo)
        bar.addWidget(self.window_combo)
        self.pause_button = QPushButton(translate("MonitorToolbar", "&Pause"))
        self.pause_button.setCheckable(True)
        self.pause_button.setToolTip(
            translate("MonitorToolbar", "Freeze the plots; sampling and alerts go on")
        )
        self.pause_button.toggled.connect(self._on_pause_button_toggled)
        bar.addWidget(self.pause_button)
        self.export_button = QPushButton(translate("MonitorToolbar", "&Export CSV…"))
        menu = QMenu(self.export_button)
        for label, seconds in WINDOWS:
            shown = translate("MonitorToolbar", label)
            action = QAction(
                translate("MonitorToolbar", "Last {window}").format(window=shown), menu
            )
            action.triggered.connect(lambda _=False, s=seconds: self._on_export_chosen(s))
            menu.addAction(action)
        self.export_button.setMenu(menu)
        bar.addWidget(self.export_button)
        bar.addSpacing(12)
        interval_label = QLabel(translate("MonitorToolbar", "&Interval:"))
        self.interval_spin = QSpinBox()
        self.interval_spin.setRange(MIN_INTERVAL_MS, MAX_INTERVAL_MS)
        self.interval_spin.setSingleStep(100)
        self.interval_spin.setSuffix(" ms")
        self.interval_spin.setValue(int(interval_ms))
        self.interval_spin.setToolTip(
            translate(
                "MonitorToolbar",
                "How often the Monitor reads the GPUs (slower while the window is hidden)",
            )
        )
        self.interval_spin.editingFinished.connect(self._on_interval_spin_edited)
        interval_label.setBuddy(self.interval_spin)
        bar.addWidget(interval_label)
        bar.addWidget(self.interval_spin)
        bar.addStretch(1)
        self.source_label = QLabel()
        self.source_label.setStyleSheet("color: gray;")
        bar.addWidget(self.source_label)

    def window_seconds(self) -> float:
        return WINDOWS[self.window_combo.currentIndex()][1]

    def select_window(self, seconds: float) -> None:
        """Show the window of ``seconds`` (one of WINDOWS; another is ignored)."""
        index = self.window_combo.findData(seconds)
        if index >= 0:
            self.window_combo.setCurrentIndex(index)

    @Slot(int)
    def _on_window_combo_changed(self, _index: int) -> None:
        self.window_changed.emit()

    @Slot(bool)
    def _on_pause_button_toggled(self, paused: bool) -> None:
        self.pause_button.setText(
            translate("MonitorToolbar", "&Resume")
            if paused
            else translate("MonitorToolbar", "&Pause")
        )
        self.paused.emit(paused)

    @Slot()
    def _on_interval_spin_edited(self) -> None:
        self.interval_edited.emit(self.interval_spin.value())

    def _on_export_chosen(self, seconds: float) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self,
            translate("MonitorToolbar", "Export telemetry as CSV"),
            "rocmpanel-telemetry.csv",
            translate("MonitorToolbar", "CSV files") + " (*.csv)",
        )
        if name:
            self.export_requested.emit(name, seconds)
