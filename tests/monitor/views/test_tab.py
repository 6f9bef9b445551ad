"""The Monitor tab driven by captured sysfs trees (ROCMPANEL_SYSFS_ROOT): the sampler thread
feeds the history, the plots receive data, alerts reach the status line, CSV works; the
GPU list follows the machine inventory; sampling goes on while the tab is hidden, and the
plots (pyqtgraph) are built only once it is shown."""

from __future__ import annotations

import csv
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.jobs.runner import JobManager
from rocmpanel.machine.gpu_model import GpuInfo, SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.monitor.views.tab import MonitorTab


def points(curve) -> int:  # type: ignore[no-untyped-def]
    x, _ = curve.getData()
    return 0 if x is None else len(x)


def link_tree(root: Path, devices: list[Path]) -> Path:
    for index, device in enumerate(devices):
        card = root / "class" / "drm" / f"card{index}"
        card.mkdir(parents=True)
        (card / "device").symlink_to(device, target_is_directory=True)
    return root


class Notes(list[str]):
    """What the tab sent to the status line (``ctx.notify``); ``signalled``: what its
    ``alert_raised`` signal carried."""

    def __init__(self) -> None:
        super().__init__()
        self.signalled: list[str] = []


@pytest.fixture
def make_tab(qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    tabs: list[MonitorTab] = []

    def make(sysfs_root: Path, **settings: object) -> tuple[MonitorTab, Notes]:
        monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(sysfs_root))
        monkeypatch.setenv("ROCMPANEL_PROC_ROOT", str(tmp_path / "proc"))
        s = Settings()
        s.monitor.interval_ms = 100
        for name, value in settings.items():
            setattr(s.monitor, name, value)
        notes = Notes()
        tab = MonitorTab(AppContext(s, JobManager(), notes.append))
        tab.alert_raised.connect(notes.signalled.append)  # before any sample can arrive
        qtbot.addWidget(tab)
        tab.resize(1200, 800)
        tabs.append(tab)
        assert not tab.plots_built  # built on the first show, after the frame paints
        tab.show()
        qtbot.waitUntil(lambda: tab.plots_built, timeout=5000)
        return tab, notes

    yield make
    for tab in tabs:
        tab.shutdown()


def test_plots_receive_data_from_captured_trees(
    make_tab, shared_fixtures: Path, tmp_path: Path, qtbot
) -> None:  # type: ignore[no-untyped-def]
    sysfs = shared_fixtures / "sysfs"
    root = link_tree(tmp_path / "sys", [sysfs / "rx7900xt", sysfs / "rx6900xt"])
    tab, _ = make_tab(root)

    def plotted() -> bool:
        if len(tab.panels) != 2:
            return False
        return all(points(p.curves["temp_edge_c"]) >= 3 for p in tab.panels.values())

    qtbot.waitUntil(plotted, timeout=10_000)
    assert not tab.no_gpu_label.isVisible()
    first = tab.panels["0000:03:00.0"]
    _, edge = first.curves["temp_edge_c"].getData()
    assert set(edge.tolist()) == {53.0}
    _, sclk = first.curves["sclk_mhz"].getData()
    assert set(sclk.tolist()) == {31.0}
    assert points(first.curves["vram_used_mib"]) == 0  # the rx7900xt snapshot has no VRAM
    assert "not reported" in first.plots["memory"].titleLabel.text
    second = tab.panels["0000:0c:00.0"]
    _, vram = second.curves["vram_used_mib"].getData()
    assert vram[-1] == pytest.approx(668274688 / 2**20 / 1024)
    assert "16.0 GT/s x16" in second.header.details.text()
    assert "edge\u00a056\u00a0°C" in second.header.figures.text()  # no break inside a figure
    assert second.limit_lines["crit_junction"].value() == 110.0
    assert second.limit_lines["power_cap"].value() == 289.0
    assert "CPU" in tab.host_strip.label.text()
    assert "°C" in first.values_at(tab.history.last.t)  # type: ignore[union-attr]

    tab.window_combo.setCurrentIndex(3)  # 24 h
    view = first.plots["util"].viewRange()[0]
    assert view[1] - view[0] == pytest.approx(86400.0)

    out = tmp_path / "export.csv"
    rows = tab.export_csv(out, 60.0)
    with out.open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert rows == len(table) >= 6
    assert {r["source"] for r in table} == {"0000:03:00.0", "0000:0c:00.0", "host"}


def test_pause_freezes_the_plots(make_tab, shared_fixtures: Path, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    root = link_tree(tmp_path / "sys", [shared_fixtures / "sysfs" / "rx6900xt"])
    tab, _ = make_tab(root)
    qtbot.waitUntil(lambda: len(tab.panels) == 1 and len(tab.history.gpus) == 1, timeout=10_000)
    panel = next(iter(tab.panels.values()))
    busy = panel.curves["busy_percent"]
    qtbot.waitUntil(lambda: points(busy) >= 2)
    tab.pause_button.setChecked(True)
    frozen = points(busy)
    samples = len(tab.history.gpus["0000:0c:00.0"])
    qtbot.waitUntil(lambda: len(tab.history.gpus["0000:0c:00.0"]) >= samples + 3)
    assert points(busy) == frozen  # while sampling goes on
    tab.pause_button.setChecked(False)
    qtbot.waitUntil(lambda: points(busy) > frozen)


def test_no_gpu_is_said_plainly_and_host_still_shown(make_tab, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    tab, _ = make_tab(tmp_path / "empty-sys")
    qtbot.waitUntil(lambda: tab.no_gpu_label.isVisible(), timeout=10_000)
    assert "No AMD GPU found" in tab.no_gpu_label.text()
    qtbot.waitUntil(lambda: "RAM" in tab.host_strip.label.text(), timeout=10_000)
    qtbot.waitUntil(lambda: points(tab.host_strip.cpu_curve) >= 2)
    assert tab.panels == {}


def _hot_gpu(root: Path) -> Path:
    """A small synthetic device: junction 107 °C against a 110 °C crit limit."""
    device = root / "device"
    hwmon = device / "hwmon" / "hwmon1"
    hwmon.mkdir(parents=True)
    (device / "uevent").write_text("DRIVER=amdgpu\nPCI_ID=1002:744C\nPCI_SLOT_NAME=0000:03:00.0\n")
    (device / "gpu_busy_percent").write_text("99\n")
    for name, text in {
        "temp1_label": "junction",
        "temp1_input": "107000",
        "temp1_crit": "110000",
    }.items():
        (hwmon / name).write_text(text + "\n")
    return device


def test_alert_reaches_the_status_line_and_the_tab(make_tab, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    root = link_tree(tmp_path / "sys", [_hot_gpu(tmp_path / "hot")])
    tab, notes = make_tab(root, alert_desktop_notify=False)
    qtbot.waitUntil(lambda: len(notes.signalled) == 1, timeout=10_000)
    assert "junction temperature 107 °C" in notes.signalled[0]
    assert notes == notes.signalled  # the tab tells the status line itself
    assert tab.alert_banner.isVisible()
    assert tab.alert_list.count() == 1
    QApplication.processEvents()


def test_crosshair_reads_out_values(make_tab, shared_fixtures: Path, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    root = link_tree(tmp_path / "sys", [shared_fixtures / "sysfs" / "rx6900xt"])
    tab, _ = make_tab(root)
    qtbot.waitUntil(lambda: len(tab.panels) == 1, timeout=10_000)
    panel = next(iter(tab.panels.values()))
    qtbot.waitUntil(lambda: points(panel.curves["power_w"]) >= 2, timeout=10_000)
    plot = panel.plots["power"]
    near_now = plot.vb.mapViewToScene(QPointF(-0.01, 100.0))
    panel.graphics.scene().sigMouseMoved.emit(near_now)
    assert all(line.isVisible() for line in panel.cursor_lines)
    text = panel.readout.text()
    assert "power 36.0 W" in text and "temp_edge 56.0 °C" in text


def _inventory(*gpus: GpuInfo) -> Inventory:
    return Inventory(SystemInfo("linux", gpus=gpus))


def test_gpus_and_names_follow_the_inventory_and_sampling_goes_on_hidden(
    qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    root = link_tree(tmp_path / "sys", [_hot_gpu(tmp_path / "hot")])
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(root))
    monkeypatch.setenv("ROCMPANEL_PROC_ROOT", str(tmp_path / "proc"))
    detected: list[Inventory] = []
    holder = InventoryHolder(detector=lambda: detected[0])
    s = Settings()
    s.monitor.interval_ms = 100
    ctx = AppContext(s, JobManager(), lambda _m: None, inventory=holder)
    named = GpuInfo("Radeon RX 7900 XTX (inventory)", gfx="gfx1100", bdf="0000:03:00.0")
    detected.append(_inventory(named))
    tab = MonitorTab(ctx, follow_inventory=True)  # never shown: like a tab behind Setup
    qtbot.addWidget(tab)
    try:
        qtbot.waitUntil(lambda: tab.found is not None and len(tab.identities) == 1, timeout=5000)
        (identity,) = tab.identities.values()
        assert identity.name == "Radeon RX 7900 XTX (inventory)" and identity.card == "card0"
        # Hidden, the sampler still feeds Chat's VRAM figures, history and alerts.
        qtbot.waitUntil(lambda: ctx.live_memory.reading("0000:03:00.0") is not None, timeout=5000)
        qtbot.waitUntil(lambda: tab.history is not None and len(tab.history.gpus) == 1)
        ticks = len(tab.history.gpus["0000:03:00.0"])
        qtbot.waitUntil(lambda: len(tab.history.gpus["0000:03:00.0"]) >= ticks + 2)
        assert not tab.plots_built and tab.panels == {}
        assert tab.alert_list.count() == 1  # junction 107 °C of 110

        # A refresh that finds no GPU any more: the Monitor follows it.
        holder.set_current(_inventory())
        qtbot.waitUntil(lambda: tab.identities == {}, timeout=5000)
        assert "machine detection lists none" in tab.no_gpu_label.text()
    finally:
        tab.shutdown()


def test_plotting_is_imported_only_when_the_tab_is_shown(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import os, sys
        os.environ["ROCMPANEL_SYSFS_ROOT"] = {str(tmp_path)!r}
        os.environ["ROCMPANEL_PROC_ROOT"] = {str(tmp_path)!r}
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        from PySide6.QtWidgets import QApplication
        from rocmpanel.base.settings import Settings
        from rocmpanel.gui.context import AppContext
        from rocmpanel.jobs.runner import JobManager
        from rocmpanel.monitor.views.tab import MonitorTab
        app = QApplication([])
        tab = MonitorTab(AppContext(Settings(), JobManager()))
        heavy = [m for m in ("numpy", "pyqtgraph") if m in sys.modules]
        tab.show()
        while not tab.plots_built:
            app.processEvents()
        tab.shutdown()
        print(heavy, "pyqtgraph" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "[] True"


def test_a_failed_detection_falls_back_to_the_tree(
    qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    root = link_tree(tmp_path / "sys", [_hot_gpu(tmp_path / "hot")])
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(root))
    monkeypatch.setenv("ROCMPANEL_PROC_ROOT", str(tmp_path / "proc"))

    def broken() -> Inventory:
        raise RuntimeError("rocminfo crashed")

    ctx = AppContext(Settings(), JobManager(), lambda _m: None, inventory=InventoryHolder(broken))
    tab = MonitorTab(ctx, follow_inventory=True)
    qtbot.addWidget(tab)
    try:
        assert tab.no_gpu_label.text() == "Looking for GPUs…"
        qtbot.waitUntil(lambda: list(tab.identities) == ["0000:03:00.0"], timeout=5000)
        assert tab.no_gpu_label.text() == ""
    finally:
        tab.shutdown()


def test_csv_export_is_written_off_the_gui_thread_with_the_button_disabled(
    make_tab, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, qtbot
) -> None:  # type: ignore[no-untyped-def]
    from rocmpanel.monitor import csv_export

    root = link_tree(tmp_path / "sys", [_hot_gpu(tmp_path / "hot")])
    tab, notes = make_tab(root, alerts_enabled=False)
    qtbot.waitUntil(lambda: tab.history is not None and len(tab.history.host) >= 2, timeout=10_000)
    writers: list[threading.Thread] = []
    real_write = csv_export.write_atomic

    def recording_write(path: Path, data: bytes) -> None:
        writers.append(threading.current_thread())
        real_write(path, data)

    monkeypatch.setattr(csv_export, "write_atomic", recording_write)
    out = tmp_path / "export.csv"
    tab.toolbar.export_requested.emit(str(out), 60.0)
    assert not tab.toolbar.export_button.isEnabled()  # until the pool is done
    qtbot.waitUntil(lambda: tab.toolbar.export_button.isEnabled(), timeout=5000)
    assert writers and writers[0] is not threading.main_thread()
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and {r["source"] for r in rows} == {"0000:03:00.0", "host"}
    assert f"Exported {len(rows)} rows of telemetry to {out}" in notes


def test_a_failed_csv_export_is_reported_and_the_button_comes_back(
    make_tab, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, qtbot
) -> None:  # type: ignore[no-untyped-def]
    from rocmpanel.monitor.views import tab as tab_module

    reported: list[tuple[BaseException, str]] = []
    monkeypatch.setattr(tab_module, "report", lambda e, doing="", **_: reported.append((e, doing)))
    tab, notes = make_tab(tmp_path / "empty-sys")
    qtbot.waitUntil(lambda: tab.history is not None and len(tab.history.host) >= 1, timeout=10_000)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    tab.toolbar.export_requested.emit(str(blocker / "export.csv"), 60.0)
    assert not tab.toolbar.export_button.isEnabled()
    qtbot.waitUntil(lambda: tab.toolbar.export_button.isEnabled(), timeout=5000)
    ((error, doing),) = reported
    assert isinstance(error, PanelError) and doing == "Exporting telemetry"
    assert not [n for n in notes if n.startswith("Exported")]


def test_no_gpu_explains_what_was_looked_for_and_offers_the_demo(
    qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "empty-sys"
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(root))
    monkeypatch.setenv("ROCMPANEL_PROC_ROOT", str(tmp_path / "proc"))
    asked: list[str] = []
    ctx = AppContext(Settings(), JobManager(), lambda _m: None)
    ctx.show_demo = lambda: asked.append("demo")
    tab = MonitorTab(ctx)
    qtbot.addWidget(tab)
    tab.show()
    try:
        qtbot.waitUntil(lambda: tab.no_gpu_box.isVisible(), timeout=10_000)
        assert tab.no_gpu_label.text() == (
            f"No AMD GPU found: no amdgpu device under {root / 'class' / 'drm'}. "
            "Host telemetry is still shown above."
        )
        assert tab.no_gpu_help.isVisible()
        assert tab.no_gpu_help.text() == (
            "The Monitor looks for GPUs driven by the amdgpu kernel driver under "
            f"{root / 'class' / 'drm'}. None is there when the machine has no AMD GPU, the "
            "amdgpu driver is not loaded, or this is a virtual machine or container without "
            "the GPU passed through. Still working: host CPU and memory telemetry above, and "
            "the Setup tab's checklist."
        )
        assert tab.demo_button.isVisible()
        tab.demo_button.click()
        assert asked == ["demo"]
    finally:
        tab.shutdown()


def test_without_a_demo_hook_the_button_is_hidden(
    qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(tmp_path / "empty-sys"))
    monkeypatch.setenv("ROCMPANEL_PROC_ROOT", str(tmp_path / "proc"))
    tab = MonitorTab(AppContext(Settings(), JobManager(), lambda _m: None))
    qtbot.addWidget(tab)
    tab.show()
    try:
        qtbot.waitUntil(lambda: tab.no_gpu_help.isVisible(), timeout=10_000)
        assert not tab.demo_button.isVisible()
    finally:
        tab.shutdown()


def test_demo_mode_puts_the_replayed_past_before_live_samples(
    qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Live samples that arrive while the past is computed wait; none is lost, and the
    history stays in time order."""
    from rocmpanel.machine import demo
    from rocmpanel.monitor import demo_replay
    from rocmpanel.monitor.sample import Sample

    root = demo.build_tree(tmp_path / "sys", demo.load_recording())
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(root))
    monkeypatch.setenv("ROCMPANEL_PROC_ROOT", str(tmp_path / "proc"))
    gate = threading.Event()
    real = demo_replay.past_samples

    def slow_past(now: float) -> list[Sample]:
        gate.wait(10)
        return real(now, minutes=2.5, step_s=5.0)

    monkeypatch.setattr(demo_replay, "past_samples", slow_past)
    s = Settings()
    s.monitor.interval_ms = 100
    ctx = AppContext(s, JobManager(), lambda _m: None, demo=True)
    tab = MonitorTab(ctx)
    qtbot.addWidget(tab)
    try:
        assert tab.window_combo.currentText() == "10 min"
        qtbot.waitUntil(lambda: len(tab._held or []) >= 2, timeout=10_000)
        held = list(tab._held or [])
        assert tab.history is None or "0000:03:00.0" not in tab.history.gpus
        gate.set()
        qtbot.waitUntil(lambda: tab._held is None, timeout=10_000)
        series = tab._history.ensure().gpus["0000:03:00.0"]
        oldest = series.oldest_full_time()
        assert oldest is not None
        times = series.window(oldest, held[-1].t + 3600, 100_000).times  # full resolution
        assert list(times) == sorted(times)
        assert times[0] == pytest.approx(held[0].t - 150.0, abs=5.0)
        assert set(s.t for s in held) <= set(times.tolist())
    finally:
        gate.set()
        tab.shutdown()


def test_the_no_gpu_explanation_on_windows_names_the_counters() -> None:
    from rocmpanel.monitor.views.tab import no_gpu_explanation

    assert no_gpu_explanation(Path("/sys"), "win32") == (
        "The Monitor reads AMD GPUs through Windows' GPU performance counters. None is listed "
        "when the machine has no AMD GPU, the AMD graphics driver is not installed, or the "
        "counters cannot be read (the reason above says which). Still working: host CPU and "
        "memory telemetry above, and the Setup tab's checklist."
    )
    assert no_gpu_explanation(Path("/captured"), "win32").startswith(
        "The Monitor looks for GPUs driven by the amdgpu kernel driver under /captured/class/drm."
    )
