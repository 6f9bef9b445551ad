"""The collective panel: a real run on the CPU end to end (torchrun, gloo, 2 processes) at
small sizes, a failure shown with its cause, and a saved run picked from the list."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt

from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager
from rocmpanel.multigpu.collective_store import CollectiveStore
from rocmpanel.multigpu.views.collective_panel import CollectivePanel


@pytest.fixture
def make_panel(qtbot: Any) -> Iterator[Callable[[str], CollectivePanel]]:
    made: list[CollectivePanel] = []

    def make(python: str) -> CollectivePanel:
        settings = Settings.load()
        settings.general.workload_python = python
        ctx = AppContext(settings, JobManager(grace_s=1.0), lambda _m: None)
        panel = CollectivePanel(ctx)
        qtbot.addWidget(panel)
        qtbot.waitUntil(panel.run_button.isEnabled, timeout=5000)
        made.append(panel)
        return panel

    yield make
    for panel in made:
        panel.ctx.jobs.shutdown()
    wait_for_background()


def run_to_end(qtbot: Any, panel: CollectivePanel, largest: str) -> None:
    panel.max_combo.setCurrentIndex(panel.max_combo.findText(largest))
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert panel.job is not None, panel.error_label.text()
    assert panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    with qtbot.waitSignal(panel.job.finished, timeout=120_000):
        pass
    qtbot.waitUntil(lambda: panel.saved_list.count() > 0, timeout=10_000)


@pytest.mark.torch
def test_a_cpu_run_end_to_end(qtbot: Any, make_panel: Any) -> None:
    pytest.importorskip("torch")
    panel = make_panel(sys.executable)
    assert panel.where_label.text().startswith(
        "No AMD GPU: the test runs on the CPU with gloo and 2 processes"
    )
    assert panel.procs_spin.isEnabled()
    run_to_end(qtbot, panel, "16 KiB")  # 1 KiB doubling to 16 KiB
    labels = ["1 KiB", "2 KiB", "4 KiB", "8 KiB", "16 KiB"]
    assert [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())] == labels
    for row in range(5):
        assert float(panel.table.item(row, 4).text()) > 0
    assert panel.chart is not None
    assert len(panel.chart.busbw.getData()[0]) == 5
    assert panel.status_label.text().startswith("Done: 2 processes, gloo; peak bus bandwidth")
    assert panel.error_label.isHidden()
    assert not panel.cancel_button.isEnabled() and panel.run_button.isEnabled()
    [saved] = CollectiveStore().list_runs()
    assert [s.bytes for s in saved.sizes] == [1024 << k for k in range(5)]
    # A saved run picked from the list is shown.
    panel.table.setRowCount(0)
    panel.saved_list.setCurrentRow(0)
    assert panel.table.rowCount() == 5 and panel.shown == saved


def test_a_failure_shows_its_cause(qtbot: Any, make_panel: Any, python_without_torch: str) -> None:
    panel = make_panel(python_without_torch)
    run_to_end(qtbot, panel, "4 KiB")
    assert not panel.error_label.isHidden()
    assert panel.error_label.text().startswith("PyTorch is not installed in the workload Python.")
    assert panel.status_label.text().startswith("Failed:")
    assert panel.table.rowCount() == 0


def test_widgets_have_accessible_names(make_panel: Any) -> None:
    panel = make_panel(sys.executable)
    for widget in (
        panel.run_button,
        panel.cancel_button,
        panel.table,
        panel.saved_list,
        panel.min_combo,
        panel.max_combo,
        panel.procs_spin,
        panel.progress,
    ):
        assert widget.accessibleName()
    assert panel.run_button.text() == "&Run"  # Alt+R
