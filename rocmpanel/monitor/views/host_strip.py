"""The Monitor tab's host strip: CPU (overall and per core), RAM, swap, load, sparkline.

The sparkline shows the GPU plots' time range with their time axis (``AgoAxis``): the same
ticks, drawn as grid lines, so a spike here lines up by eye with one in a GPU plot."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QWidget

from rocmpanel.base.i18n import translate
from rocmpanel.base.units import MIB, format_gib
from rocmpanel.monitor.history import Window
from rocmpanel.monitor.sample import HostSample
from rocmpanel.monitor.views.gpu_plots import COLOURS, AgoAxis


class HostStrip(QFrame):
    """One line of host figures and a small CPU/RAM plot over the selected window."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 2, 8, 2)
        self.label = QLabel(translate("HostStrip", "Host: waiting for the first sample…"))
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 3)
        self.axis = AgoAxis(orientation="bottom")
        self.plot = pg.PlotWidget(axisItems={"bottom": self.axis})
        self.plot.setBackground(self.palette().color(QPalette.ColorRole.Base))
        self.plot.setFixedHeight(46)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        # The time ticks as grid lines only: labels would not fit the strip's height.
        self.axis.setStyle(showValues=False, tickLength=0)
        self.axis.setHeight(0)
        self.axis.setPen(pg.mkPen(self.palette().color(QPalette.ColorRole.Text)))  # grid colour
        self.plot.showGrid(x=True, alpha=0.25)
        self.plot.hideAxis("left")
        self.plot.setYRange(0, 100, padding=0.05)
        self.cpu_curve = pg.PlotCurveItem(pen=pg.mkPen(COLOURS[0], width=1.2))
        self.ram_curve = pg.PlotCurveItem(pen=pg.mkPen(COLOURS[1], width=1.2))
        self.plot.addItem(self.cpu_curve)
        self.plot.addItem(self.ram_curve)
        self.plot.setToolTip(
            translate("HostStrip", "CPU % (red) and RAM % (blue) over the selected time window")
        )
        layout.addWidget(self.plot, 2)
        self._x_span: float | None = None

    def show_sample(self, h: HostSample) -> None:
        cores = " ".join(f"{c:.0f}" for c in h.per_core_percent[:32])
        if len(h.per_core_percent) > 32:
            cores += " …"
        load = " ".join(f"{v:.2f}" for v in h.load_avg) if h.load_avg else "n/a"
        cpu = "n/a" if h.cpu_percent is None else f"{h.cpu_percent:.0f} %"
        self.label.setText(
            translate(
                "HostStrip",
                "<b>Host</b>  CPU {cpu}  <span style='color:gray'>(cores: {cores})</span>   "
                "RAM {ram_used} / {ram_total}   swap {swap_used} / {swap_total}   load {load}",
            ).format(
                cpu=cpu,
                cores=cores,
                ram_used=format_gib(h.ram_used_bytes),
                ram_total=format_gib(h.ram_total_bytes),
                swap_used=format_gib(h.swap_used_bytes),
                swap_total=format_gib(h.swap_total_bytes),
                load=load,
            )
        )

    def redraw(self, window: Window, t_from: float, t_to: float, ram_total: int | None) -> None:
        x = window.times - t_to
        if len(x):
            self.cpu_curve.setData(x, window.series("cpu_percent"), connect="finite")
        else:
            self.cpu_curve.setData()
        if len(x) and ram_total:
            ram = window.series("ram_used_mib") * (100.0 * MIB / ram_total)
            self.ram_curve.setData(x, np.asarray(ram), connect="finite")
        else:
            self.ram_curve.setData()
        span = t_to - t_from
        if span != self._x_span:
            self._x_span = span
            self.plot.setXRange(-span, 0.0, padding=0)

    def x_range(self) -> tuple[float, float]:
        """The time range shown, in seconds before the right edge of the last redraw."""
        low, high = self.plot.getViewBox().viewRange()[0]
        return float(low), float(high)
