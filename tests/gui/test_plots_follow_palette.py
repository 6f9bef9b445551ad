"""Plots drawn with the window's colours follow a switch between light and dark while the
panel runs (the system's scheme changed, or Settings → Colours)."""

from __future__ import annotations

from PySide6.QtGui import QPalette
from pytestqt.qtbot import QtBot

from rocmpanel.gui.palette import dark_palette, light_palette
from rocmpanel.monitor.views.gpu_plots import GpuPanel
from rocmpanel.tuning.bench import BenchPlan, BenchResult, CaseResult
from rocmpanel.tuning.views.bench_chart import BenchChart


def _background(widget: object) -> str:
    return widget.graphics.backgroundBrush().color().name()  # type: ignore[attr-defined]


def test_the_gpu_plots_take_the_new_colours(qtbot: QtBot) -> None:
    panel = GpuPanel("gpu")
    qtbot.addWidget(panel)
    panel.setPalette(light_palette())
    light = (_background(panel), panel._title_colour)
    panel.setPalette(dark_palette())
    dark_base = dark_palette().color(QPalette.ColorRole.Base).name()
    dark_text = dark_palette().color(QPalette.ColorRole.Text).name()
    assert (_background(panel), panel._title_colour) == (dark_base, dark_text) != light
    axis = next(iter(panel.plots.values())).getAxis("left")
    assert axis.textPen().color().name() == dark_text


def test_the_bench_chart_is_drawn_again_in_the_new_colours(qtbot: QtBot) -> None:
    chart = BenchChart()
    qtbot.addWidget(chart)
    chart.setPalette(light_palette())
    case = CaseResult.measured("gemm 256", "ms", False, (1.0, 1.1), (0.9, 1.0))
    plan = BenchPlan(a="none", b="none", workload="gemm", device="cpu")
    result = BenchResult(plan, "a", "b", "CPU", "", 0, 1, [case])
    chart.show_result(result)
    chart.setPalette(dark_palette())
    assert _background(chart) == dark_palette().color(QPalette.ColorRole.Base).name()
    axis = chart.plots[0].getAxis("left")
    assert axis.textPen().color() == dark_palette().color(QPalette.ColorRole.Text)
    assert chart.bar_count() == 2
