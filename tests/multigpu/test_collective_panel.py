"""The collective panel: a real run on the CPU end to end (torchrun, gloo, 2 processes) at
small sizes, a failure shown with its cause, and a saved run picked from the list."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QLabel

from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager
from rocmpanel.multigpu.collective import SizeResult
from rocmpanel.multigpu.collective_store import CollectiveStore
from rocmpanel.multigpu.views.collective_panel import BandwidthChart, CollectivePanel


@pytest.fixture
def two_gpus(tmp_path: Any, kfd: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorded /sys with two RX 7900 XTX: the GPU choice finds them (no real GPU)."""
    root = kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX, kfd.RX7900XTX_2)
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(root))


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
    assert panel.cpu_check.isChecked() and not panel.cpu_check.isEnabled()  # no GPU: CPU only
    run_to_end(qtbot, panel, "16 KiB")  # 1 KiB doubling to 16 KiB
    labels = ["1 KiB", "2 KiB", "4 KiB", "8 KiB", "16 KiB"]
    assert [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())] == labels
    for row in range(5):
        assert float(panel.table.item(row, 4).text()) > 0
    assert panel.chart is not None
    assert len(panel.chart.busbw.getData()[0]) == 5
    assert panel.status_label.text().startswith("Done: 2 processes, gloo; peak bus bandwidth")
    assert "No AMD GPU" not in panel.status_label.text()  # said once, above the controls
    assert not panel.table.isHidden() and not panel.chart.isHidden()
    assert panel.error_label.isHidden()
    assert not panel.cancel_button.isEnabled() and panel.run_button.isEnabled()
    [saved] = CollectiveStore().list_runs()
    assert [s.bytes for s in saved.sizes] == [1024 << k for k in range(5)]
    # A saved run picked from the list is shown.
    panel.table.setRowCount(0)
    panel.saved_list.setCurrentRow(0)
    assert panel.table.rowCount() == 5 and panel.shown == saved
    assert "No AMD GPU" in panel.status_label.text()  # a saved run says where it ran


def test_a_failure_shows_its_cause(qtbot: Any, make_panel: Any, python_without_torch: str) -> None:
    panel = make_panel(python_without_torch)
    run_to_end(qtbot, panel, "4 KiB")
    assert not panel.error_label.isHidden()
    assert panel.error_label.text().startswith("PyTorch is not installed in the workload Python.")
    assert panel.status_label.text().startswith("Failed: 2 processes, gloo.")
    assert panel.table.rowCount() == 0
    # No size finished: no empty grid, no empty axes.
    assert panel.table.isHidden()
    assert panel.chart is None or panel.chart.isHidden()


def test_gpus_chosen_run_with_rccl_and_say_so(
    qtbot: Any, make_panel: Any, python_without_torch: str, two_gpus: None
) -> None:
    panel = make_panel(python_without_torch)
    qtbot.waitUntil(lambda: panel.where_label.text().startswith("Runs on"), timeout=5000)
    assert panel.cpu_check.isEnabled() and not panel.cpu_check.isChecked()
    assert not panel.procs_spin.isEnabled()
    run_to_end(qtbot, panel, "4 KiB")
    assert panel.plan is not None and panel.plan.device == "gpu"
    assert panel.status_label.text().startswith("Failed: 2 processes, RCCL.")
    title = panel.saved_list.item(0).text()
    assert "RCCL" in title and "nccl" not in (panel.status_label.text() + title).lower()
    assert panel.table.isHidden()
    assert panel.chart is None or panel.chart.isHidden()


def test_the_cpu_box_runs_on_the_cpu_next_to_gpus(
    qtbot: Any, make_panel: Any, python_without_torch: str, two_gpus: None
) -> None:
    panel = make_panel(python_without_torch)
    qtbot.waitUntil(panel.cpu_check.isEnabled, timeout=5000)
    panel.cpu_check.click()  # as a user does: emits clicked
    assert panel.cpu_check.isChecked() and panel.procs_spin.isEnabled()
    panel.procs_spin.setValue(3)
    assert panel.where_label.text().startswith("The test runs on the CPU with gloo and 3")
    run_to_end(qtbot, panel, "4 KiB")
    assert panel.plan is not None
    assert (panel.plan.device, panel.plan.processes) == ("cpu", 3)
    assert "as asked" in panel.plan.where
    assert panel.status_label.text().startswith("Failed: 3 processes, gloo.")
    # The choice stays after the run; unticking goes back to the GPUs.
    assert panel.cpu_check.isChecked() and panel.cpu_check.isEnabled()
    panel.cpu_check.click()  # as a user does: emits clicked
    assert not panel.procs_spin.isEnabled()
    assert panel.where_label.text().startswith("Runs on")


def test_mnemonics_do_not_clash(make_panel: Any) -> None:
    panel = make_panel(sys.executable)
    texts = [w.text() for w in panel.findChildren(QLabel) if "&" in w.text()]
    texts += [w.text() for w in panel.findChildren(QAbstractButton) if "&" in w.text()]
    letters = [t[t.index("&") + 1].lower() for t in texts]
    assert len(letters) >= 6 and len(set(letters)) == len(letters), texts
    # The Multi-GPU tab's pages (Topology, All-reduce test, Launch scripts) and the main
    # window's menus (File, View, Help) hold these.
    assert not set(letters) & set("talfvh"), texts


def test_the_chart_reads_in_bytes_per_second_units(qtbot: Any) -> None:
    chart = BandwidthChart()
    qtbot.addWidget(chart)
    sizes = tuple(
        SizeResult(1024 << k, 256 << k, 1000.0, 0.001 * (k + 1), 0.002 * (k + 1), 1)
        for k in range(4)
    )
    chart.show_sizes(sizes)
    item = chart.plot.getPlotItem()
    item.getViewBox().autoRange()
    label = item.getAxis("left").labelString()
    assert "MB/s" in label and "(x" not in label, label
    assert max(chart.busbw.getData()[1]) == pytest.approx(8e6)


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
        panel.cpu_check,
        panel.progress,
    ):
        assert widget.accessibleName()
    assert panel.run_button.text() == "&Run"  # Alt+R
