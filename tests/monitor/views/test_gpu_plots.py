"""The GPU panels' plots: the wheel scrolls the GPU list and zooms only when asked (Ctrl, or
after a click), every plot and the host strip show one time range with the same ticks, and
every y axis starts at 0 with a readable span (a fan at 0 rpm included)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication, QScrollArea, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from rocmpanel.base.units import GIB
from rocmpanel.monitor.history import GPU_SERIES_NAMES, HOST_SERIES_NAMES, Window
from rocmpanel.monitor.sample import GpuIdentity, GpuSample
from rocmpanel.monitor.views.gpu_plots import (
    AXIS_WIDTH,
    MIN_TOP,
    MIN_ZOOM_S,
    PLOTS,
    ZOOM_PER_STEP,
    GpuHeader,
    GpuPanel,
    figures_line,
    nice_top,
    y_top,
)
from rocmpanel.monitor.views.host_strip import HostStrip

T_TO = 1_000_000.0
IDENTITY = GpuIdentity("0000:03:00.0", "card0", "0000:03:00.0", "1002:744c", "Radeon RX 7900 XTX")


def window(names: tuple[str, ...], seconds: float = 60.0, **series: float) -> Window:
    """Samples every second over the last ``seconds``; a series not named is not reported."""
    times = np.arange(T_TO - seconds, T_TO + 0.5, 1.0)
    values = np.full((len(times), len(names)), np.nan, dtype=np.float32)
    for name, value in series.items():
        values[:, names.index(name)] = value
    return Window(names, times, values)


def gpu_window(seconds: float = 60.0, **series: float) -> Window:
    return window(GPU_SERIES_NAMES, seconds, **series)


def sample(**figures: object) -> GpuSample:
    return GpuSample(IDENTITY, asleep=False, **figures)  # type: ignore[arg-type]


def y_range(panel: GpuPanel, plot_id: str) -> tuple[float, float]:
    low, high = panel.plots[plot_id].vb.viewRange()[1]
    return float(low), float(high)


@pytest.fixture
def gpu_list(qtbot: QtBot) -> tuple[QScrollArea, list[GpuPanel]]:
    """Three panels in a scroll area too short for them, as the Monitor tab holds them."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    inner = QWidget()
    layout = QVBoxLayout(inner)
    panels = [GpuPanel(f"gpu{n}") for n in range(3)]
    for panel in panels:
        layout.addWidget(panel)
    area.setWidget(inner)
    qtbot.addWidget(area)
    area.resize(1100, 500)
    area.show()
    qtbot.waitExposed(area)
    for panel in panels:
        panel.redraw(gpu_window(busy_percent=50.0), T_TO - 60.0, T_TO, None)
    return area, panels


def click(panel: GpuPanel, at: QPoint, double: bool = False) -> None:
    kind = QEvent.Type.MouseButtonDblClick if double else QEvent.Type.MouseButtonPress
    left = Qt.MouseButton.LeftButton
    viewport = panel.graphics.viewport()
    event = QMouseEvent(
        kind,
        QPointF(at),
        QPointF(viewport.mapToGlobal(at)),
        left,
        left,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(viewport, event)


def over_plot(panel: GpuPanel, plot_id: str = "power") -> QPoint:
    """A point in the middle of a plot's data area, in the graphics view's coordinates."""
    centre = panel.plots[plot_id].vb.sceneBoundingRect().center()
    return panel.graphics.mapFromScene(centre)


def wheel(panel: GpuPanel, at: QPoint, steps: int = -1, ctrl: bool = False) -> None:
    modifiers = Qt.KeyboardModifier.ControlModifier if ctrl else Qt.KeyboardModifier.NoModifier
    viewport = panel.graphics.viewport()
    event = QWheelEvent(
        QPointF(at),
        QPointF(viewport.mapToGlobal(at)),
        QPoint(),
        QPoint(0, 120 * steps),
        Qt.MouseButton.NoButton,
        modifiers,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(viewport, event)


def centre_of(panel: GpuPanel, at: QPoint, plot_id: str = "power") -> float:
    return float(panel.plots[plot_id].vb.mapSceneToView(panel.graphics.mapToScene(at)).x())


def test_the_wheel_over_a_plot_scrolls_the_gpu_list_and_never_zooms(gpu_list) -> None:  # type: ignore[no-untyped-def]
    area, panels = gpu_list
    bar = area.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == 0
    wheel(panels[0], over_plot(panels[0]))
    step = min(QApplication.wheelScrollLines() * bar.singleStep(), bar.pageStep())
    assert bar.value() == step
    assert panels[0].x_range() == (-60.0, 0.0) and not panels[0].zoomed
    wheel(panels[0], over_plot(panels[0]), steps=1)  # and back up
    assert bar.value() == 0


def test_ctrl_wheel_zooms_the_time_axis_of_every_plot_around_the_mouse(gpu_list) -> None:  # type: ignore[no-untyped-def]
    area, panels = gpu_list
    panel = panels[0]
    at = over_plot(panel)
    centre = centre_of(panel, at)
    wheel(panel, at, steps=1, ctrl=True)
    assert area.verticalScrollBar().value() == 0  # the list stays
    width = 60.0 * ZOOM_PER_STEP
    low = centre - (centre + 60.0) * ZOOM_PER_STEP
    assert panel.x_range() == pytest.approx((low, low + width))
    assert panel.zoomed
    ranges = {plot_id: plot.vb.viewRange()[0] for plot_id, plot in panel.plots.items()}
    assert all(r == ranges["util"] for r in ranges.values()), ranges
    assert panels[1].x_range() == (-60.0, 0.0)  # another GPU's panel is not zoomed
    wheel(panel, at, steps=-1, ctrl=True)  # zoom out: the whole window again
    assert panel.x_range() == pytest.approx((-60.0, 0.0)) and not panel.zoomed


def test_a_clicked_plot_takes_the_wheel_until_the_mouse_leaves_or_esc(
    qtbot: QtBot, gpu_list
) -> None:  # type: ignore[no-untyped-def]
    area, panels = gpu_list
    panel, bar = panels[0], area.verticalScrollBar()
    at = over_plot(panel)
    click(panel, at)
    assert panel.engaged
    wheel(panel, at, steps=1)
    assert panel.zoomed and bar.value() == 0
    QApplication.sendEvent(panel.graphics.viewport(), QEvent(QEvent.Type.Leave))
    assert not panel.engaged
    zoomed = panel.x_range()
    wheel(panel, at)
    assert bar.value() > 0 and panel.x_range() == zoomed  # scrolls; the zoom is kept
    bar.setValue(0)
    at = over_plot(panel)
    click(panel, at)
    assert panel.engaged
    qtbot.keyClick(panel.graphics, Qt.Key.Key_Escape)
    assert not panel.engaged
    wheel(panel, at)
    assert bar.value() > 0 and panel.x_range() == zoomed


def test_a_double_click_shows_the_whole_window_again(qtbot: QtBot, gpu_list) -> None:  # type: ignore[no-untyped-def]
    _, panels = gpu_list
    panel = panels[0]
    wheel(panel, over_plot(panel), steps=2, ctrl=True)
    assert panel.zoomed
    click(panel, over_plot(panel), double=True)
    assert panel.x_range() == (-60.0, 0.0) and not panel.zoomed


def test_a_zoom_stays_inside_the_window_and_above_its_least_width(qtbot: QtBot) -> None:
    panel = GpuPanel("gpu")
    qtbot.addWidget(panel)
    panel.redraw(gpu_window(), T_TO - 60.0, T_TO, None)
    panel.zoom(40, centre=-1.0)  # far in, at the right edge
    low = -1.0 - 59.0 * MIN_ZOOM_S / 60.0  # the point under the mouse stays in place
    assert panel.x_range() == pytest.approx((low, low + MIN_ZOOM_S))
    panel.zoom(-1, centre=low)  # out around the left edge: would pass "now"
    assert panel.x_range() == pytest.approx((-MIN_ZOOM_S / ZOOM_PER_STEP, 0.0))
    panel.zoom(-40)  # far out: never wider than the window
    assert panel.x_range() == pytest.approx((-60.0, 0.0)) and not panel.zoomed
    panel.zoom(1, centre=-60.0)
    panel.zoom(-1, centre=0.0)  # out around the right edge: would pass the window's start
    assert panel.x_range() == pytest.approx((-60.0, 0.0))
    panel.redraw(gpu_window(600.0), T_TO - 600.0, T_TO, None)  # another window: unzoomed
    assert panel.x_range() == (-600.0, 0.0) and not panel.zoomed


def test_every_plot_and_the_host_strip_share_one_range_and_the_same_ticks(
    qtbot: QtBot, gpu_list
) -> None:  # type: ignore[no-untyped-def]
    _, panels = gpu_list
    strip = HostStrip()
    qtbot.addWidget(strip)
    strip.resize(1100, 60)
    strip.show()
    for panel in panels:
        panel.redraw(gpu_window(600.0, fan_rpm=2200.0), T_TO - 600.0, T_TO, None)
    host = window(HOST_SERIES_NAMES, 600.0, cpu_percent=30.0)
    strip.redraw(host, T_TO - 600.0, T_TO, 16 * GIB)
    assert strip.x_range() == (-600.0, 0.0)
    expected = [(120.0, [-600.0, -480.0, -360.0, -240.0, -120.0, 0.0])]
    axes = [plot.getAxis("bottom") for panel in panels for plot in panel.plots.values()]
    axes.append(strip.axis)
    for axis in axes:
        assert tuple(axis.linkedView().viewRange()[0]) == (-600.0, 0.0)
        values = axis.tickValues(-600.0, 0.0, axis.width() or 100.0)
        assert [(spacing, list(ticks)) for spacing, ticks in values[:1]] == expected
    # The plots of a column line up on screen (one left-axis width), so the ticks do too.
    panel = panels[0]
    assert {plot.getAxis("left").width() for plot in panel.plots.values()} == {AXIS_WIDTH}
    for col in range(3):
        top, bottom = (panel.plots[PLOTS[row * 3 + col][0]].vb for row in (0, 1))

        def lined_up() -> bool:
            a, b = top.sceneBoundingRect(), bottom.sceneBoundingRect()  # noqa: B023
            return (a.left(), a.width()) == (b.left(), b.width())

        qtbot.waitUntil(lined_up, timeout=2000)  # once the layout has placed them


def test_a_fan_at_0_rpm_gets_an_axis_from_0(qtbot: QtBot) -> None:
    panel = GpuPanel("gpu")
    qtbot.addWidget(panel)
    panel.redraw(gpu_window(fan_rpm=0.0, sclk_mhz=500.0, mclk_mhz=96.0), T_TO - 60.0, T_TO, None)
    assert y_range(panel, "fan") == (0.0, 1000.0)
    assert y_range(panel, "clock") == (0.0, 1000.0)  # flat clocks: the least span too
    assert y_range(panel, "power") == (0.0, MIN_TOP["power"])  # not reported at all
    assert y_range(panel, "util") == pytest.approx((0.0, 105.0))  # fixed: 0-100 and room
    panel.redraw(gpu_window(fan_rpm=2625.0), T_TO - 60.0, T_TO, None)
    assert y_range(panel, "fan") == (0.0, 3000.0)  # a spinning fan: a round top above it


def test_limits_set_the_tops_and_data_above_them_raise_them(qtbot: QtBot) -> None:
    panel = GpuPanel("gpu")
    qtbot.addWidget(panel)
    last = sample(vram_total_bytes=24 * GIB, crit_edge_c=110.0, power_cap_w=300.0)
    panel.redraw(
        gpu_window(vram_used_mib=1024.0, temp_edge_c=45.0, power_w=0.0), T_TO - 60, T_TO, last
    )
    assert y_range(panel, "memory") == pytest.approx((0.0, 24 * 1.05))
    assert y_range(panel, "temp") == pytest.approx((0.0, 110 * 1.05))
    assert y_range(panel, "power") == pytest.approx((0.0, 300 * 1.05))
    panel.redraw(gpu_window(power_w=330.0), T_TO - 60, T_TO, last)  # above the cap
    assert y_range(panel, "power") == (0.0, 400.0)


@pytest.mark.parametrize(
    ("value", "top"),
    [(0.42, 0.5), (1.0, 1.0), (1.01, 1.5), (2625.0, 3000.0), (7.0, 8.0), (81.0, 100.0)],
)
def test_nice_top_rounds_up_to_a_round_number(value: float, top: float) -> None:
    assert nice_top(value) == pytest.approx(top)


def test_y_top_takes_the_highest_of_minimum_data_and_limit() -> None:
    assert y_top("fan", None, None) == 1000.0
    assert y_top("fan", 0.0, None) == 1000.0
    assert y_top("temp", 45.0, 90.0) == pytest.approx(100.0)  # the minimum
    assert y_top("temp", 45.0, 110.0) == pytest.approx(115.5)  # the crit line
    assert y_top("clock", 2500.0, None) == 3000.0  # the data (2625 rounded up)


def test_the_header_wraps_between_figures_instead_of_widening_the_panel(qtbot: QtBot) -> None:
    assert figures_line(["Busy 97 %", "Fan 1110 rpm (34 %)"]) == (
        "Busy\u00a097\u00a0%   Fan\u00a01110\u00a0rpm\u00a0(34\u00a0%)"
    )
    header = GpuHeader()
    qtbot.addWidget(header)
    header.show_sample(
        sample(
            busy_percent=97.0,
            mem_busy_percent=45.0,
            vram_used_bytes=19 * GIB,
            vram_total_bytes=20 * GIB,
            power_w=289.0,
            power_cap_w=290.0,
            sclk_mhz=2394.0,
            mclk_mhz=1249.0,
            fan_rpm=1110.0,
            fan_percent=34.0,
        )
    )
    one_line = header.figures.fontMetrics().horizontalAdvance(header.figures.text())
    assert one_line > 700  # the figures are longer than the width asked for below
    assert header.minimumSizeHint().width() < 500  # so a narrow window wraps them
