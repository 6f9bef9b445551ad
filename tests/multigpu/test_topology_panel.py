"""The topology panel, offscreen: reading on show and on Refresh, matrix cells, GPU rows,
warnings, the no-topology state, a failed reading, keyboard and accessible names."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager
from rocmpanel.multigpu.topology import read_topology
from rocmpanel.multigpu.views.topology_panel import NO_TOPOLOGY, TopologyPanel


@pytest.fixture
def ctx(qtbot):
    manager = JobManager(grace_s=2.0)
    context = AppContext(Settings.load(), manager, lambda _message: None)
    yield context
    manager.shutdown()
    assert wait_for_background(10_000)


def _shown(qtbot, panel: TopologyPanel) -> TopologyPanel:
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.topology_read, timeout=10_000):
        panel.show()
    return panel


def test_reads_the_environment_tree_on_show(qtbot, ctx, tmp_path: Path, monkeypatch, topo_trees):
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(topo_trees.two_socket_radeons(tmp_path)))
    panel = _shown(qtbot, TopologyPanel(ctx))
    assert panel.content.isVisible()
    assert "2 GPUs" in panel.status_label.text() and "1 warning" in panel.status_label.text()
    assert (panel.matrix.rowCount(), panel.matrix.columnCount()) == (2, 2)
    cell = panel.matrix.item(0, 1)
    assert cell.text() == "PCIe · 3 hops"
    assert "weight 61" in cell.toolTip()
    assert panel.matrix.item(0, 0).text() == "—"
    # 3 hops over PCIe: the "across sockets" colour, not the plain PCIe one
    assert cell.background().color().name() == "#ffe0b2"
    assert panel.gpu_table.item(1, 3).text() == "1"  # GPU 1's NUMA node
    assert panel.gpu_table.item(0, 4).text() == "PCIe 4.0 x16"
    first = panel.warning_list.item(0)
    assert first.data(Qt.ItemDataRole.UserRole) == "numa-pair"
    assert "What to do:" in first.text()


def test_xgmi_cells(qtbot, ctx, tmp_path: Path, topo_trees):
    root = topo_trees.mi300x_box(tmp_path, 4)
    panel = _shown(qtbot, TopologyPanel(ctx, read=lambda: read_topology(root, check_process=False)))
    cell = panel.matrix.item(2, 3)
    assert cell.text() == "XGMI · 1 hop"
    assert cell.background().color().name() == "#c8e6c9"
    assert "64000 MB/s" in cell.toolTip()
    assert panel.warning_list.item(0).text() == "Nothing to act on."
    assert "nothing to act on" in panel.status_label.text()


def test_refresh_reads_again_and_shows_progress(qtbot, ctx, tmp_path: Path, topo_trees):
    roots = iter(
        [topo_trees.mi300x_box(tmp_path / "a", 1), topo_trees.navi_behind_switch(tmp_path / "b")]
    )
    panel = _shown(qtbot, TopologyPanel(ctx, read=lambda: read_topology(next(roots))))
    assert "one GPU: nothing to compare" in panel.matrix_title.text()
    assert panel.refresh_button.isEnabled()
    with qtbot.waitSignal(panel.topology_read, timeout=10_000) as blocker:
        qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
        assert not panel.refresh_button.isEnabled()
        assert panel.status_label.text() == "Reading the GPU topology…"
    codes = [w.code for w in blocker.args[0].warnings]
    assert codes[0] == "pcie-degraded"
    assert panel.gpu_table.item(0, 6).text() == "0000:01:00.0"  # where the figure came from
    assert "upstream port" in panel.gpu_table.item(0, 6).toolTip()


def test_no_topology_state(qtbot, ctx, tmp_path: Path):
    panel = _shown(qtbot, TopologyPanel(ctx, read=lambda: read_topology(tmp_path)))
    assert panel.status_label.text() == NO_TOPOLOGY
    assert not panel.content.isVisible()


def test_demo_says_so(qtbot, ctx, tmp_path: Path):
    ctx.demo = True
    panel = _shown(qtbot, TopologyPanel(ctx, read=lambda: read_topology(tmp_path)))
    assert panel.status_label.text().startswith("Demo: the recorded GPUs")


def test_a_failed_reading_is_reported_not_raised(qtbot, ctx):
    def broken():
        raise OSError("Input/output error")

    panel = TopologyPanel(ctx, read=broken)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: not panel.loading, timeout=10_000)
    assert "Reading the GPU topology failed: Input/output error" in panel.status_label.text()
    assert panel.refresh_button.isEnabled()


def test_keyboard_and_accessible_names(qtbot, ctx, tmp_path: Path, topo_trees):
    root = topo_trees.two_socket_radeons(tmp_path)
    panel = _shown(qtbot, TopologyPanel(ctx, read=lambda: read_topology(root)))
    names = {
        w.accessibleName()
        for w in (panel.refresh_button, panel.matrix, panel.gpu_table, panel.warning_list)
    }
    assert names == {
        "Refresh the GPU topology",
        "GPU link matrix",
        "GPU NUMA nodes and PCIe links",
        "Topology warnings",
    }
    for widget in (panel.refresh_button, panel.matrix, panel.gpu_table, panel.warning_list):
        assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus
    assert panel.refresh_button.text() == "&Refresh"  # Alt+R


def test_notes_only_are_not_called_nothing_to_act_on(qtbot, ctx, tmp_path: Path, topo_trees):
    topo_trees.cpu_node(tmp_path, 0)
    topo_trees.gpu_node(tmp_path, 1, "0000:03:00.0")
    topo_trees.gpu_node(tmp_path, 2, "0000:04:00.0")  # no links listed: an info note
    panel = _shown(qtbot, TopologyPanel(ctx, read=lambda: read_topology(tmp_path)))
    assert panel.status_label.text().endswith("notes only, nothing urgent.")
    assert panel.warning_list.item(0).text().startswith("ℹ ")
