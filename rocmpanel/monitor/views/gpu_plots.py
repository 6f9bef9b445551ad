"""One GPU in the Monitor tab: a header card with current figures and six plots.

The plots (utilisation; VRAM/GTT against their totals; temperatures with crit lines; power
against its cap; sclk/mclk; fan) show one time range with the same ticks. The panel draws
only what it is given: ``redraw`` takes a history ``Window`` and the last ``GpuSample``; it
never reads sysfs. A crosshair follows the mouse and a line below the plots reads out the
values.

The mouse wheel over the plots scrolls the list of GPUs around them; Ctrl+wheel zooms the
time axis, and so does the plain wheel after a click on a plot, until the mouse leaves the
plots or Esc is pressed. A double click shows the whole time window again. Every y axis
starts at 0 and spans at least a sensible minimum, so a flat line (a fan at 0 rpm) lies on
the floor of a readable axis instead of in the middle of one squeezed around its value.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QKeyEvent, QPalette, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QFrame,
    QGridLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.units import GIB, MIB, format_gib
from rocmpanel.monitor.alerts import sensor_name
from rocmpanel.monitor.history import Window
from rocmpanel.monitor.pdh_source import NO_DATA
from rocmpanel.monitor.sample import GpuSample

# Colours that read on light and dark themes alike.
COLOURS = ("#e4572e", "#2e86ab", "#8ac926", "#b07aa1", "#f2a541")

# (plot id, title, unit, ((series, label), ...), fixed y range or None); titles and labels
# are translated where shown.
PLOTS: tuple[tuple[str, str, str, tuple[tuple[str, str], ...], tuple[float, float] | None], ...] = (
    (
        "util",
        QT_TRANSLATE_NOOP("GpuPanel", "Utilisation"),
        "%",
        (
            ("busy_percent", QT_TRANSLATE_NOOP("GpuPanel", "GPU busy")),
            ("mem_busy_percent", QT_TRANSLATE_NOOP("GpuPanel", "memory bandwidth")),
        ),
        (0.0, 100.0),
    ),
    (
        "memory",
        QT_TRANSLATE_NOOP("GpuPanel", "Memory"),
        "GiB",
        (("vram_used_mib", "VRAM"), ("gtt_used_mib", "GTT")),
        None,
    ),
    (
        "temp",
        QT_TRANSLATE_NOOP("GpuPanel", "Temperature"),
        "°C",
        (
            ("temp_edge_c", QT_TRANSLATE_NOOP("GpuPanel", "edge")),
            ("temp_junction_c", QT_TRANSLATE_NOOP("GpuPanel", "junction")),
            ("temp_mem_c", QT_TRANSLATE_NOOP("GpuPanel", "mem")),
        ),
        None,
    ),
    (
        "power",
        QT_TRANSLATE_NOOP("GpuPanel", "Power"),
        "W",
        (("power_w", QT_TRANSLATE_NOOP("GpuPanel", "power")),),
        None,
    ),
    (
        "clock",
        QT_TRANSLATE_NOOP("GpuPanel", "Clocks"),
        "MHz",
        (("sclk_mhz", "sclk"), ("mclk_mhz", "mclk")),
        None,
    ),
    (
        "fan",
        QT_TRANSLATE_NOOP("GpuPanel", "Fan"),
        "rpm",
        (("fan_rpm", QT_TRANSLATE_NOOP("GpuPanel", "fan")),),
        None,
    ),
)
# The least top of each y axis without a fixed range (its unit): a flat or empty series
# still gets a readable axis from 0. Limits (VRAM total, crit, power cap) raise it.
MIN_TOP = {"memory": 1.0, "temp": 100.0, "power": 50.0, "clock": 1000.0, "fan": 1000.0}
HEADROOM = 1.05  # above the highest value or limit
AXIS_WIDTH = 46  # px for every left axis, so the plots of a column line up
MIN_ZOOM_S = 5.0  # the narrowest time range a zoom reaches
ZOOM_PER_STEP = 0.8  # the range shrinks to this per wheel step (120 eighths of a degree)
_ROUND = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
_MIB_SERIES = ("vram_used_mib", "gtt_used_mib")
_MIB_PER_GIB = GIB / MIB  # the history keeps bytes in MiB; the plots show GiB
_UNITS = {series: unit for _, _, unit, items, _ in PLOTS for series, _ in items}


def fmt(value: float | None, unit: str = "", digits: int = 0) -> str:
    """A figure for display; None is "n/a" (the same in every language)."""
    return "n/a" if value is None else f"{value:.{digits}f}{(' ' + unit) if unit else ''}"


def nice_top(value: float) -> float:
    """The smallest round number (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten) at or
    above ``value`` (> 0): an axis top moves in a few steps as values grow, not with every
    sample."""
    power = 10.0 ** math.floor(math.log10(value))
    return next(m * power for m in _ROUND if m * power >= value * (1 - 1e-9))


def y_top(plot_id: str, data_max: float | None, limit: float | None) -> float:
    """The top of ``plot_id``'s y axis (its bottom is 0): room for the data and the limit
    line, never under the plot's minimum span."""
    top = MIN_TOP[plot_id]
    if data_max is not None and data_max > 0:
        top = max(top, nice_top(data_max * HEADROOM))
    if limit:
        top = max(top, limit * HEADROOM)
    return top


def ago_text(seconds_ago: float) -> str:
    """A tick label for a time before now: "now", "-45 s", "-10 min", "-2 h"."""
    ago = -seconds_ago
    if abs(ago) < 0.5:
        return translate("AgoAxis", "now")
    if ago < 120:
        return f"-{ago:.0f} s"
    if ago < 7200:
        return f"-{ago / 60:.0f} min"
    return f"-{ago / 3600:.0f} h"


class AgoAxis(pg.AxisItem):
    """Time axis in seconds before now, so the range only changes with the time window."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [ago_text(v) for v in values]

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        span = maxVal - minVal
        for major in (10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600):
            if span / major <= 6:
                return [(float(major), 0.0), (major / 2.0, 0.0)]
        return [(43200.0, 0.0)]


class GpuHeader(QFrame):
    """Name, gfx target, slot, asleep/active and the current figures of one GPU."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QGridLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        self.name = QLabel()
        self.name.setStyleSheet("font-weight: bold; font-size: 110%;")
        self.name.setWordWrap(True)
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.state = QLabel()
        self.state.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.figures = QLabel()
        self.figures.setWordWrap(True)
        self.figures.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.name, 0, 0)
        layout.addWidget(self.details, 0, 1)
        layout.addWidget(self.state, 0, 2)
        layout.addWidget(self.figures, 1, 0, 1, 3)
        layout.setColumnStretch(1, 1)

    def show_sample(self, g: GpuSample) -> None:
        ident = g.identity
        self.name.setText(ident.name)
        parts = [ident.gfx or "gfx n/a", ident.pci_slot or ident.key]
        if ident.card:
            parts.append(ident.card)
        if g.link:
            parts.append(f"PCIe {g.link}")
        if g.perf_level:
            parts.append(translate("GpuHeader", "perf level {level}").format(level=g.perf_level))
        self.details.setText("  ·  ".join(parts))
        missing = dict(g.invalid).get(NO_DATA)
        if missing is not None:  # the source read nothing this tick: say why, show no figures
            self.state.setText(translate("GpuHeader", "no data"))
            self.state.setStyleSheet("color: #b03a2e; font-weight: bold;")
            self.figures.setText(missing[:1].upper() + missing[1:])
            return
        if g.asleep:
            self.state.setText(translate("GpuHeader", "asleep (not woken)"))
            self.state.setStyleSheet("color: #2e86ab; font-weight: bold;")
        else:
            self.state.setText(translate("GpuHeader", "active"))
            self.state.setStyleSheet("color: #3a8a1f; font-weight: bold;")
        temps = "  ".join(
            f"{sensor_name(sensor)} {fmt(g.temp_c(sensor), '°C')}"
            for sensor in ("edge", "junction", "mem")
        )
        fan = fmt(g.fan_rpm, "rpm")
        if g.fan_percent is not None:
            fan += f" ({g.fan_percent:.0f} %)"
        items = [
            translate("GpuHeader", "Busy {value}").format(value=fmt(g.busy_percent, "%")),
            translate("GpuHeader", "Mem bandwidth {value}").format(
                value=fmt(g.mem_busy_percent, "%")
            ),
            f"VRAM {format_gib(g.vram_used_bytes)} / {format_gib(g.vram_total_bytes)}",
            f"GTT {format_gib(g.gtt_used_bytes)} / {format_gib(g.gtt_total_bytes)}",
            temps,
            translate("GpuHeader", "Power {value} / {cap}").format(
                value=fmt(g.power_w, "W"), cap=fmt(g.power_cap_w, "W")
            ),
            f"sclk {fmt(g.sclk_mhz, 'MHz')}  mclk {fmt(g.mclk_mhz, 'MHz')}",
            translate("GpuHeader", "Fan {value}").format(value=fan),
        ]
        self.figures.setText(figures_line(items))


def figures_line(items: list[str]) -> str:
    """The header's figures, one line that wraps only between items: a narrow window
    gets two lines instead of a horizontal scroll bar that hides the plots' right edge."""
    return "   ".join(item.replace(" ", "\u00a0") for item in items)


class GpuPanel(QFrame):
    """Header card plus the linked plots of one GPU."""

    def __init__(self, key: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.key = key
        self.header = GpuHeader()
        palette = self.palette()
        background = palette.color(QPalette.ColorRole.Base)
        foreground = palette.color(QPalette.ColorRole.Text)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(background)
        self.graphics.setMinimumHeight(360)
        self.graphics.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # Esc ends a zoom
        self.graphics.setToolTip(
            translate(
                "GpuPanel",
                "Wheel: scroll the GPU list. Ctrl+wheel, or click then wheel: zoom in time. "
                "Double click: the whole window.",
            )
        )
        self.readout = QLabel(translate("GpuPanel", "Move the mouse over a plot to read values."))
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 6)
        layout.addWidget(self.header)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.readout)

        self.plots: dict[str, pg.PlotItem] = {}
        self.curves: dict[str, pg.PlotCurveItem] = {}
        self.limit_lines: dict[str, pg.InfiniteLine] = {}
        self.cursor_lines: list[pg.InfiniteLine] = []
        self._titles: dict[str, str] = {}
        self._missing: dict[str, bool] = {}
        self._title_colour = foreground.name()
        self._window: Window | None = None
        self._t_ref = 0.0  # x = time - _t_ref: the right edge of the last redraw
        self._x_span: float | None = None
        self.zoomed = False  # the time range is narrower than the window
        self.engaged = False  # clicked: the plain wheel zooms until the mouse leaves
        self._limits: tuple[float | None, ...] | None = None
        self._limit_tops: dict[str, float | None] = {}  # VRAM total, crit, power cap
        self._tops: dict[str, float] = {}  # the y axis tops shown
        axis_pen = pg.mkPen(foreground)
        for index, (plot_id, title, unit, series, fixed) in enumerate(PLOTS):
            row, col = divmod(index, 3)
            axis = AgoAxis(orientation="bottom")
            plot = self.graphics.addPlot(row=row, col=col, axisItems={"bottom": axis})
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            plot.setMenuEnabled(False)
            plot.showGrid(x=True, y=True, alpha=0.15)
            for name in ("left", "bottom"):
                plot.getAxis(name).setPen(axis_pen)
                plot.getAxis(name).setTextPen(axis_pen)
                # A changing SI prefix would re-render the axis label on every redraw.
                plot.getAxis(name).enableAutoSIPrefix(False)
            # One width for every left axis: "100" and "2500" take the same room, so the
            # plots of a column line up and show the same ticks at the same places.
            plot.getAxis("left").setWidth(AXIS_WIDTH)
            plot.setLimits(yMin=0)  # every figure here is non-negative
            if fixed is not None:  # room above 100 % for a line at 100 %
                plot.setYRange(fixed[0], fixed[1] * HEADROOM, padding=0)
            else:
                self._tops[plot_id] = MIN_TOP[plot_id]
                plot.setYRange(0.0, MIN_TOP[plot_id], padding=0)
            # No setXLink: pyqtgraph lines linked views up pixel by pixel where they overlap
            # on screen (ViewBox.linkedViewChanged), so plots whose axes differ in width
            # would show different ranges; every plot gets the same range instead. See
            # https://github.com/pyqtgraph/pyqtgraph/blob/master/pyqtgraph/graphicsItems/ViewBox/ViewBox.py
            legend = "  ".join(
                f"<span style='color:{COLOURS[i]}'>■ {translate('GpuPanel', label)}</span>"
                for i, (_, label) in enumerate(series)
            )
            self._titles[plot_id] = f"<b>{translate('GpuPanel', title)}</b> ({unit})  {legend}"
            plot.setTitle(self._titles[plot_id], color=foreground.name(), size="9pt")
            for i, (name, _) in enumerate(series):
                curve = pg.PlotCurveItem(pen=pg.mkPen(COLOURS[i], width=1.5))
                plot.addItem(curve)
                self.curves[name] = curve
            cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(foreground, width=0.8))
            cursor.setVisible(False)
            plot.addItem(cursor, ignoreBounds=True)
            self.cursor_lines.append(cursor)
            self.plots[plot_id] = plot
        dash = Qt.PenStyle.DashLine
        for name, plot_id, colour in (
            ("vram_total", "memory", COLOURS[0]),
            ("gtt_total", "memory", COLOURS[1]),
            ("crit_edge", "temp", COLOURS[0]),
            ("crit_junction", "temp", COLOURS[1]),
            ("crit_mem", "temp", COLOURS[2]),
            ("power_cap", "power", COLOURS[0]),
        ):
            line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(colour, style=dash))
            line.setVisible(False)
            self.plots[plot_id].addItem(line, ignoreBounds=True)
            self.limit_lines[name] = line
        self.graphics.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        self.graphics.viewport().installEventFilter(self)  # wheel, click, leave
        self.graphics.installEventFilter(self)  # Esc

    def redraw(self, window: Window, t_from: float, t_to: float, last: GpuSample | None) -> None:
        """Show ``window`` over ``[t_from, t_to]``; ``last`` fills the header and limits."""
        self._window = window
        self._t_ref = t_to
        x = window.times - t_to
        present: dict[str, float] = {}  # series shown -> its highest value
        for name, curve in self.curves.items():
            y = window.series(name)
            if name in _MIB_SERIES:
                y = y / _MIB_PER_GIB
            if len(x) and not np.isnan(y).all():
                curve.setData(x, y, connect="finite")
                present[name] = float(np.nanmax(y))
            else:
                curve.setData([], [])
        if len(x):
            for plot_id, _, _, series, _ in PLOTS:
                self._mark_missing(plot_id, not any(name in present for name, _ in series))
        span = t_to - t_from
        if span != self._x_span:  # the x range moves only when the time window changes
            self._x_span = span
            self.zoomed = False
            self.set_x_range(-span, 0.0)
        if last is not None:
            self.header.show_sample(last)
            self._set_limits(last)
        for plot_id, _, _, series, fixed in PLOTS:
            if fixed is None:
                highest = [present[name] for name, _ in series if name in present]
                top = y_top(plot_id, max(highest, default=None), self._limit_tops.get(plot_id))
                if top != self._tops.get(plot_id):  # moving an axis costs a re-layout
                    self._tops[plot_id] = top
                    self.plots[plot_id].setYRange(0.0, top, padding=0)

    def x_range(self) -> tuple[float, float]:
        """The time range shown, in seconds before the right edge of the last redraw."""
        low, high = self.plots["util"].vb.viewRange()[0]
        return float(low), float(high)

    def set_x_range(self, low: float, high: float) -> None:
        """Show ``[low, high]`` on every plot: one range, so the same ticks everywhere."""
        for plot in self.plots.values():
            plot.setXRange(low, high, padding=0)

    def zoom(self, steps: float, centre: float | None = None) -> None:
        """Narrow the time range by ``steps`` wheel steps (negative: widen it) around
        ``centre``, within the time window and no narrower than MIN_ZOOM_S."""
        if self._x_span is None:
            return
        low, high = self.x_range()
        span = self._x_span
        centre = (low + high) / 2 if centre is None else min(max(centre, low), high)
        width = min(max((high - low) * ZOOM_PER_STEP**steps, min(MIN_ZOOM_S, span)), span)
        low = centre - (centre - low) * width / (high - low)
        low = min(max(low, -span), -width)  # inside [-span, 0]
        self.zoomed = width < span
        self.set_x_range(low, low + width)

    def reset_zoom(self) -> None:
        """Show the whole time window again."""
        if self._x_span is not None:
            self.zoomed = False
            self.set_x_range(-self._x_span, 0.0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The wheel scrolls the GPU list unless a zoom is asked for (see the module)."""
        kind = event.type()
        if kind == QEvent.Type.Wheel and isinstance(event, QWheelEvent):
            self._on_wheel(event)
            return True
        if kind == QEvent.Type.MouseButtonPress:
            self.engaged = True
        elif kind == QEvent.Type.MouseButtonDblClick:
            self.reset_zoom()
        elif kind == QEvent.Type.Leave and watched is self.graphics.viewport():
            self.engaged = False
        elif (
            kind == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
            and self.engaged
        ):
            self.engaged = False
            return True
        return super().eventFilter(watched, event)

    def _on_wheel(self, event: QWheelEvent) -> None:
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if ctrl or self.engaged:
            steps = event.angleDelta().y() / 120
            if steps:
                scene_pos = self.graphics.mapToScene(event.position().toPoint())
                centre = None
                for plot in self.plots.values():
                    if plot.sceneBoundingRect().contains(scene_pos):
                        centre = plot.vb.mapSceneToView(scene_pos).x()
                        break
                self.zoom(steps, centre)
            return
        area = self._scroll_area()
        if area is not None:  # the list of GPU panels scrolls as if the plots were not there
            QApplication.sendEvent(area.verticalScrollBar(), event)

    def _scroll_area(self) -> QAbstractScrollArea | None:
        """The scroll area that holds this panel (the Monitor's GPU list), if any."""
        widget = self.parentWidget()
        while widget is not None:
            if isinstance(widget, QAbstractScrollArea):
                return widget
            widget = widget.parentWidget()
        return None

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()

    def _apply_palette(self) -> None:
        """The plots in the window's colours again: the system or the user switched
        between light and dark while the panel runs (gui/palette.py)."""
        palette = self.palette()
        foreground = palette.color(QPalette.ColorRole.Text)
        self.graphics.setBackground(palette.color(QPalette.ColorRole.Base))
        self._title_colour = foreground.name()
        pen = pg.mkPen(foreground)
        for plot_id, plot in self.plots.items():
            for name in ("left", "bottom"):
                plot.getAxis(name).setPen(pen)
                plot.getAxis(name).setTextPen(pen)
            self._show_title(plot_id)
        for line in self.cursor_lines:
            line.setPen(pg.mkPen(foreground, width=0.8))

    def _mark_missing(self, plot_id: str, missing: bool) -> None:
        if self._missing.get(plot_id) == missing:
            return
        self._missing[plot_id] = missing
        self._show_title(plot_id)

    def _show_title(self, plot_id: str) -> None:
        missing = self._missing.get(plot_id, False)
        title = self._titles[plot_id]
        if missing:
            missing_text = translate("GpuPanel", "not reported by this GPU")
            title += f"  <span style='color:gray'>— {missing_text}</span>"
        self.plots[plot_id].setTitle(title, color=self._title_colour, size="9pt")

    def _set_limits(self, g: GpuSample) -> None:
        vram_total = g.vram_total_bytes / GIB if g.vram_total_bytes else None
        gtt_total = g.gtt_total_bytes / GIB if g.gtt_total_bytes else None
        crits = {s: g.crit_c(s) for s in ("edge", "junction", "mem")}
        limits = (vram_total, gtt_total, *crits.values(), g.power_cap_w)
        if limits == self._limits:  # unchanged: moving lines and ranges costs a re-layout
            return
        self._limits = limits

        def show(name: str, value: float | None) -> None:
            line = self.limit_lines[name]
            line.setVisible(value is not None)
            if value is not None:
                line.setValue(value)

        show("vram_total", vram_total)
        show("gtt_total", gtt_total)
        for sensor, crit in crits.items():
            show(f"crit_{sensor}", crit)
        show("power_cap", g.power_cap_w)
        self._limit_tops = {
            "memory": max((v for v in (vram_total, gtt_total) if v), default=None),
            "temp": max((c for c in crits.values() if c is not None), default=None),
            "power": g.power_cap_w,
        }

    def _on_scene_mouse_moved(self, pos: QPointF) -> None:
        for plot in self.plots.values():
            if plot.sceneBoundingRect().contains(pos):
                x = plot.vb.mapSceneToView(pos).x()
                for line in self.cursor_lines:
                    line.setValue(x)
                    line.setVisible(True)
                self.readout.setText(self.values_at(self._t_ref + x))
                return

    def values_at(self, t: float) -> str:
        """The readout text for the sample nearest to time ``t``."""
        window = self._window
        if window is None or not len(window.times):
            return translate("GpuPanel", "No data yet.")
        i = int(np.clip(np.searchsorted(window.times, t), 0, len(window.times) - 1))
        if i > 0 and abs(window.times[i - 1] - t) < abs(window.times[i] - t):
            i -= 1
        from datetime import datetime

        stamp = datetime.fromtimestamp(float(window.times[i])).strftime("%H:%M:%S")
        parts = [stamp]
        for name in self.curves:
            value = float(window.values[i, window.names.index(name)])
            if np.isnan(value):
                continue
            unit = _UNITS[name]
            if name in _MIB_SERIES:
                value, unit = value / _MIB_PER_GIB, "GiB"
            label = name.removesuffix("_mib").removesuffix("_c").removesuffix("_mhz")
            parts.append(f"{label.removesuffix('_w').removesuffix('_percent')} {value:.1f} {unit}")
        return "   ".join(parts)
