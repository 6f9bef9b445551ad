"""The A/B bar chart: per case, A's and B's median side by side, each with the range of
its runs as an error bar.

Cases are grouped by unit, one plot per unit (GEMM's TFLOP/s and the allocation churn's
ms do not share an axis), each axis labelled with its unit. This module imports pyqtgraph;
the benchmark panel imports it only when it first shows a result, so opening the Tuning
tab does not pay for it.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

from rocmpanel.base.i18n import translate
from rocmpanel.tuning.bench import BenchResult, CaseResult
from rocmpanel.tuning.views.bench_table import side_name

#: The colours of side A and side B (the monitor's first two, so the panel looks one).
A_COLOUR = "#e4572e"
B_COLOUR = "#2e86ab"
BAR_WIDTH = 0.35
OFFSET = 0.2  # A left of the case's tick, B right of it


def side_range(values: tuple[float, ...]) -> tuple[float, float] | None:
    """The lowest and highest run of one side (None when it has no finite run)."""
    finite = [v for v in values if math.isfinite(v)]
    return (min(finite), max(finite)) if finite else None


def _finite(value: float) -> bool:
    return isinstance(value, float | int) and math.isfinite(value)


def units_in_order(cases: list[CaseResult]) -> list[str]:
    """The units of ``cases``, each once, in the order they first appear."""
    return list(dict.fromkeys(case.unit for case in cases))


def chart_title(unit: str, higher_is_better: bool, device_label: str) -> str:
    """A plot's title: the unit, which way is better, and where it ran (``CPU`` on CPU)."""
    device = device_label or translate("bench_chart", "device unknown")
    text = (
        translate("bench_chart", "{unit}, higher is better — {device}")
        if higher_is_better
        else translate("bench_chart", "{unit}, lower is better — {device}")
    )
    return text.format(unit=unit, device=device)


class BenchChart(QWidget):
    """One bar plot per unit; ``bars`` and ``error_bars`` are kept for tests and reads."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        palette = self.palette()
        self._foreground = palette.color(QPalette.ColorRole.Text)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(palette.color(QPalette.ColorRole.Base))
        self.graphics.setMinimumHeight(220)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)
        self.plots: list[pg.PlotItem] = []
        self._result: BenchResult | None = None
        self.bars: list[pg.BarGraphItem] = []
        self.error_bars: list[pg.ErrorBarItem] = []
        self.titles: list[str] = []

    def changeEvent(self, event: QEvent) -> None:
        """Light and dark switched while the panel runs: the chart is drawn again in the
        new colours."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            palette = self.palette()
            self._foreground = palette.color(QPalette.ColorRole.Text)
            self.graphics.setBackground(palette.color(QPalette.ColorRole.Base))
            if self._result is not None:
                self.show_result(self._result)

    def bar_count(self) -> int:
        """Bars drawn over all plots (two per case with runs on both sides)."""
        return sum(len(item.opts["x"]) for item in self.bars)

    def clear(self) -> None:
        self._result = None
        self.graphics.clear()
        self.plots.clear()
        self.bars.clear()
        self.error_bars.clear()
        self.titles.clear()

    def show_result(self, result: BenchResult) -> None:
        """Draw ``result`` (replacing what was shown)."""
        self.clear()
        self._result = result
        for column, unit in enumerate(units_in_order(result.cases)):
            cases = [case for case in result.cases if case.unit == unit]
            self._add_plot(column, unit, cases, result)

    def _add_plot(
        self, column: int, unit: str, cases: list[CaseResult], result: BenchResult
    ) -> None:
        pen = pg.mkPen(self._foreground)
        plot = self.graphics.addPlot(row=0, col=column)
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.showGrid(y=True, alpha=0.15)
        for name in ("left", "bottom"):
            plot.getAxis(name).setPen(pen)
            plot.getAxis(name).setTextPen(pen)
        plot.getAxis("left").enableAutoSIPrefix(False)
        plot.setLabel("left", unit)
        plot.getAxis("bottom").setTicks([[(i, case.case) for i, case in enumerate(cases)]])
        title = chart_title(unit, cases[0].higher_is_better, result.device_label)
        legend = (
            f"<span style='color:{A_COLOUR}'>■ A: {html.escape(side_name(result.a_name))}</span>  "
            f"<span style='color:{B_COLOUR}'>■ B: {html.escape(side_name(result.b_name))}</span>"
        )
        plot.setTitle(f"<b>{title}</b><br>{legend}", color=self._foreground.name(), size="9pt")
        self.titles.append(title)
        for side, colour, offset in (("a", A_COLOUR, -OFFSET), ("b", B_COLOUR, OFFSET)):
            xs: list[float] = []
            heights: list[float] = []
            lows: list[float] = []
            highs: list[float] = []
            for i, case in enumerate(cases):
                median = case.a_median if side == "a" else case.b_median
                spread = side_range(case.a if side == "a" else case.b)
                if not _finite(median) or spread is None:
                    continue  # this side has no run of the case (a cancelled run)
                xs.append(i + offset)
                heights.append(median)
                lows.append(median - spread[0])
                highs.append(spread[1] - median)
            if not xs:
                continue
            # ErrorBarItem's top/bottom are lengths from y, not ends; it wants arrays.
            x, height = np.array(xs), np.array(heights)
            bars = pg.BarGraphItem(
                x=x, height=height, width=BAR_WIDTH, brush=pg.mkBrush(colour), pen=pen
            )
            errors = pg.ErrorBarItem(
                x=x,
                y=height,
                bottom=np.array(lows),
                top=np.array(highs),
                beam=BAR_WIDTH / 3,
                pen=pen,
            )
            plot.addItem(bars)
            plot.addItem(errors)
            self.bars.append(bars)
            self.error_bars.append(errors)
        plot.setXRange(-0.6, len(cases) - 0.4, padding=0)
        plot.setLimits(yMin=0)
        self.plots.append(plot)
