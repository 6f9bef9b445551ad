"""The PyTorch tab, offscreen: plan, refusal, a real failing install, envs, validation.

The GPU comes from the app's inventory (a detector given here); every disk step runs in
the background, so the tests wait for its result instead of reading it at once.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMessageBox

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.gui.report import set_sink
from rocmpanel.jobs import workload
from rocmpanel.jobs.runner import JobManager
from rocmpanel.machine.gpu_model import GpuInfo, SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.pytorch import environments
from rocmpanel.pytorch.validation_run import ValidationRun
from rocmpanel.pytorch.validation_store import ValidationStore
from rocmpanel.pytorch.views import envs_panel
from rocmpanel.pytorch.views.tab import PyTorchTab

RX7900 = Inventory(
    SystemInfo(
        "linux",
        rocm_version="7.2.4",
        gpus=(
            GpuInfo("Radeon 780M", gfx="gfx1103", vram_bytes=2**29, integrated=True),
            GpuInfo("Radeon RX 7900 XTX", gfx="gfx1100", vram_bytes=24 * 2**30, integrated=False),
        ),
    )
)
NO_GPU = Inventory(SystemInfo("linux"))


class Detector:
    """Stands in for the machine detection: counts its calls, returns ``inventory``."""

    def __init__(self, inventory: Inventory = RX7900) -> None:
        self.inventory = inventory
        self.calls = 0

    def __call__(self) -> Inventory:
        self.calls += 1
        return self.inventory


@pytest.fixture
def detector() -> Detector:
    return Detector()


@pytest.fixture
def ctx(qtbot, detector):
    manager = JobManager(grace_s=2.0)
    messages: list[str] = []
    context = AppContext(
        Settings.load(), manager, messages.append, inventory=InventoryHolder(detector)
    )
    context.messages = messages  # type: ignore[attr-defined]
    yield context
    manager.shutdown()
    assert wait_for_background(10_000)  # nothing of this test runs on in the next one


def make_tab(qtbot, ctx, inventory: Inventory | None = RX7900) -> PyTorchTab:
    """The tab with ``inventory`` already detected (None: it asks for a detection)."""
    if inventory is not None:
        ctx.inventory.set_current(inventory)
    tab = PyTorchTab(ctx)
    qtbot.addWidget(tab)
    tab.show()
    qtbot.waitUntil(lambda: tab.planner.plan is not None, timeout=10_000)
    if tab.planner.plan is not None and tab.planner.plan.supported:
        qtbot.waitUntil(lambda: tab.installer.name_edit.text() != "", timeout=10_000)
    return tab


def test_plan_is_shown_before_install(qtbot, ctx):
    tab = make_tab(qtbot, ctx)
    assert tab.planner.plan is not None and tab.planner.plan.supported
    assert "rocm7.2" in tab.planner.command_edit.text()
    assert "Radeon RX 7900 XTX" in tab.planner.gpu_label.text()
    assert tab.installer.install_button.isEnabled() and not tab.installer.cancel_button.isEnabled()
    assert tab.installer.name_edit.text() == "pytorch-2.13-rocm7.2"
    assert "free disk needed" in tab.planner.size_label.text()
    assert "GB" in tab.planner.size_label.text()  # downloads in decimal units


def test_the_gpu_comes_from_the_inventory_and_detect_again_refreshes_it(qtbot, ctx, detector):
    tab = make_tab(qtbot, ctx, inventory=None)  # nothing detected yet: the tab asks once
    assert detector.calls == 1
    assert "Radeon RX 7900 XTX" in tab.planner.gpu_label.text()  # the discrete card, not the iGPU
    assert tab.planner.machine is not None and tab.planner.machine.vram_bytes == 24 * 2**30
    detector.inventory = NO_GPU
    with qtbot.waitSignal(tab.planner.plan_changed, timeout=10_000):
        tab.planner.redetect_button.click()
        assert not tab.planner.redetect_button.isEnabled()
    qtbot.waitUntil(lambda: "No AMD GPU detected" in tab.planner.gpu_label.text(), timeout=10_000)
    assert detector.calls == 2 and tab.planner.redetect_button.isEnabled()
    assert tab.planner.plan is not None and not tab.planner.plan.supported


def test_a_failed_detection_is_reported_and_planned_as_no_gpu(qtbot, ctx, detector):
    def broken() -> Inventory:
        raise PanelError("rocminfo did not answer.", "timeout after 10 s")

    ctx.inventory = InventoryHolder(broken)
    shown: list[str] = []
    set_sink(shown.append)
    try:
        tab = make_tab(qtbot, ctx, inventory=None)
    finally:
        set_sink(None)
    assert "GPU detection failed: rocminfo did not answer." in tab.planner.gpu_label.text()
    assert shown == ["rocminfo did not answer."]
    assert tab.planner.plan is not None and not tab.planner.plan.supported


def test_unsupported_gpu_is_refused_and_install_disabled(qtbot, ctx):
    tab = make_tab(qtbot, ctx)
    with qtbot.waitSignal(tab.planner.plan_changed, timeout=5000):
        tab.planner.gfx_edit.setText("gfx1010")
        tab.planner.replan()
    assert tab.planner.plan is not None and not tab.planner.plan.supported
    assert (
        "No install" in tab.planner.build_label.text() and "RDNA1" in tab.planner.build_label.text()
    )
    assert not tab.installer.install_button.isEnabled()


def test_no_gpu_says_so(qtbot, ctx):
    tab = make_tab(qtbot, ctx, NO_GPU)
    assert "No AMD GPU detected" in tab.planner.gpu_label.text()
    assert not tab.installer.install_button.isEnabled()


class _EmptyIndex(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_error(404)


@pytest.mark.slow
def test_failed_install_keeps_active_env_and_removes_partial(qtbot, ctx):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmptyIndex)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        tab = make_tab(qtbot, ctx)
        with qtbot.waitSignal(tab.planner.plan_changed, timeout=5000):
            tab.planner.index_edit.setText(f"http://127.0.0.1:{server.server_address[1]}/simple/")
            tab.planner.replan()
        before = ctx.settings.general.workload_python
        with qtbot.waitSignal(tab.installer.install_finished, timeout=120_000) as blocker:
            tab.installer.install_button.click()
            assert tab.installer.cancel_button.isEnabled()
        outcome = blocker.args[0]
        assert not outcome.was_successful()
        assert (
            "Install failed" in tab.installer.step_label.text()
            and "partial" in tab.installer.step_label.text()
        )
        assert not (workload.envs_dir() / "pytorch-2.13-rocm7.2").exists()
        assert ctx.settings.general.workload_python == before
        assert "python -m venv" in tab.installer.log_text.toPlainText()
        assert tab.installer.install_button.isEnabled()
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_cancel_install_from_the_tab(qtbot, ctx):
    asked, release = threading.Event(), threading.Event()

    class SlowIndex(_EmptyIndex):
        def do_GET(self) -> None:
            asked.set()
            release.wait(60)
            self.send_error(404)

    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowIndex)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        tab = make_tab(qtbot, ctx)
        with qtbot.waitSignal(tab.planner.plan_changed, timeout=5000):
            tab.planner.index_edit.setText(f"http://127.0.0.1:{server.server_address[1]}/simple/")
            tab.planner.replan()
        tab.installer.install_button.click()
        qtbot.waitUntil(asked.is_set, timeout=60_000)
        qtbot.waitUntil(
            lambda: (
                "Creating" in tab.installer.log_text.toPlainText()
                or tab.installer.progress.value() > 0
            ),
            timeout=10_000,
        )
        with qtbot.waitSignal(tab.installer.install_finished, timeout=60_000) as blocker:
            tab.installer.cancel_button.click()
        assert blocker.args[0].state.value == "cancelled"
        assert tab.installer.step_label.text().startswith("Cancelled")
        assert not (workload.envs_dir() / "pytorch-2.13-rocm7.2").exists()
        assert (
            not tab.installer.cancel_button.isEnabled() and tab.installer.install_button.isEnabled()
        )
    finally:
        release.set()
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_successful_install_becomes_active_and_listed(qtbot, ctx, tmp_path, detector, tiny_wheel):
    wheels = {
        w.name: w
        for w in (
            tiny_wheel(tmp_path, n, v)
            for n, v in (("torch", "2.13.0"), ("torchvision", "0.28.0"), ("torchaudio", "2.13.0"))
        )
    }

    class Index(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            parts = [p for p in self.path.split("/") if p]
            if parts[:1] == ["simple"] and len(parts) == 2:
                body = "".join(
                    f'<a href="/f/{n}">{n}</a>' for n in wheels if n.split("-")[0] == parts[1]
                ).encode()
            elif parts[:1] == ["f"] and parts[-1] in wheels:
                body = wheels[parts[-1]].read_bytes()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header(
                "Content-Type", "text/html" if parts[0] == "simple" else "application/zip"
            )
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        tab = make_tab(qtbot, ctx)
        with qtbot.waitSignal(tab.planner.plan_changed, timeout=5000):
            tab.planner.index_edit.setText(f"http://127.0.0.1:{server.server_address[1]}/simple/")
            tab.planner.replan()
        with qtbot.waitSignal(tab.installer.install_finished, timeout=120_000) as blocker:
            tab.installer.install_button.click()
        assert blocker.args[0].was_successful(), str(blocker.args[0])
        env = workload.find_env("pytorch-2.13-rocm7.2")
        assert env is not None and env.installed["torch"] == "2.13.0"
        assert ctx.settings.general.workload_python == str(env.python)
        assert "now active" in tab.installer.step_label.text()
        assert tab.installer.progress.value() == 1000
        qtbot.waitUntil(lambda: "● pytorch-2.13-rocm7.2" in _listed(tab.envs), timeout=10_000)
        # the next install gets a new name
        qtbot.waitUntil(
            lambda: tab.installer.name_edit.text() == "pytorch-2.13-rocm7.2-2", timeout=10_000
        )
        qtbot.waitUntil(lambda: detector.calls == 1, timeout=10_000)  # the inventory refreshed
    finally:
        server.shutdown()
        server.server_close()


def _listed(envs) -> list[str]:
    return [envs.tree.topLevelItem(i).text(0) for i in range(envs.tree.topLevelItemCount())]


def _fake_managed_env(name: str) -> Path:
    """A managed environment record whose interpreter is this Python (for the list only)."""
    path = workload.envs_dir() / name
    (path / "bin").mkdir(parents=True)
    os.symlink(sys.executable, path / "bin" / "python")
    record = {"name": name, "created_at": 1.0, "torch_version": "2.13.0+rocm7.2"}
    (path / workload.RECORD).write_text(json.dumps(record), encoding="utf-8")
    return path


def test_env_list_activate_and_remove_with_confirmation(qtbot, ctx, monkeypatch):
    path = _fake_managed_env("torch-a")
    tab = make_tab(qtbot, ctx)
    envs = tab.envs
    with qtbot.waitSignal(envs.refreshed, timeout=10_000):
        envs.refresh()
    items = [envs.tree.topLevelItem(i) for i in range(envs.tree.topLevelItemCount())]
    managed = next(i for i in items if "torch-a" in i.text(0))
    envs.tree.setCurrentItem(managed)
    assert envs.remove_button.isEnabled()
    envs.activate_button.click()
    assert ctx.settings.general.workload_python == str(path / "bin" / "python")
    assert Settings.load().general.workload_python == str(path / "bin" / "python")

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    envs.tree.setCurrentItem(
        next(
            envs.tree.topLevelItem(i)
            for i in range(envs.tree.topLevelItemCount())
            if "torch-a" in envs.tree.topLevelItem(i).text(0)
        )
    )
    envs.remove_button.click()
    assert path.exists()
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(envs.removal_finished, timeout=10_000):
        envs.remove_button.click()
    assert not path.exists()
    assert ctx.settings.general.workload_python == ""
    qtbot.waitUntil(lambda: not any("torch-a" in t for t in _listed(envs)), timeout=10_000)


def test_deleting_an_env_runs_in_the_background_and_says_so(qtbot, ctx, monkeypatch):
    path = _fake_managed_env("torch-big")
    started, release = threading.Event(), threading.Event()
    real_remove = envs_panel.remove_env

    def slow_remove(name: str):
        started.set()
        release.wait(10)  # the rmtree of gigabytes
        return real_remove(name)

    monkeypatch.setattr(envs_panel, "remove_env", slow_remove)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    tab = make_tab(qtbot, ctx)
    envs = tab.envs
    qtbot.waitUntil(lambda: any("torch-big" in t for t in _listed(envs)), timeout=10_000)
    row = next(
        envs.tree.topLevelItem(i)
        for i in range(envs.tree.topLevelItemCount())
        if "torch-big" in envs.tree.topLevelItem(i).text(0)
    )
    envs.tree.setCurrentItem(row)
    try:
        envs.remove_button.click()  # returns at once: the GUI thread does not delete
        assert started.wait(10)
        row = next(
            envs.tree.topLevelItem(i)
            for i in range(envs.tree.topLevelItemCount())
            if "torch-big" in envs.tree.topLevelItem(i).text(0)
        )
        assert row.text(2) == "deleting…" and row.isDisabled()
        assert not envs.remove_button.isEnabled() and not envs.activate_button.isEnabled()
        assert path.exists()
    finally:
        release.set()
    qtbot.waitUntil(lambda: not any("torch-big" in t for t in _listed(envs)), timeout=10_000)
    assert not path.exists()
    assert "Removed torch-big." in ctx.messages


def test_removing_the_active_env_resets_the_setting_before_deleting(qtbot, ctx, monkeypatch):
    path = _fake_managed_env("torch-on")
    ctx.settings.general.workload_python = str(path / "bin" / "python")
    ctx.settings.save()
    seen: list[str] = []

    def killed_remove(name: str):  # what the file says when the deletion starts
        seen.append(Settings.load().general.workload_python)
        raise PanelError("killed during the rmtree")

    monkeypatch.setattr(envs_panel, "remove_env", killed_remove)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    monkeypatch.setattr(envs_panel, "report", lambda *a, **k: None)
    tab = make_tab(qtbot, ctx)
    envs = tab.envs
    qtbot.waitUntil(lambda: "● torch-on" in _listed(envs), timeout=10_000)
    row = next(
        envs.tree.topLevelItem(i)
        for i in range(envs.tree.topLevelItemCount())
        if "torch-on" in envs.tree.topLevelItem(i).text(0)
    )
    envs.tree.setCurrentItem(row)
    with qtbot.waitSignal(envs.removal_finished, timeout=10_000):
        envs.remove_button.click()
    assert seen == [""]
    assert ctx.settings.general.workload_python == ""


@pytest.mark.torch
def test_cpu_validation_run_shows_not_rocm_with_fix_and_history(qtbot, ctx):
    pytest.importorskip("torch")
    tab = make_tab(qtbot, ctx)
    panel = tab.validation
    panel.validate_button.click()
    qtbot.waitUntil(lambda: panel.job is not None, timeout=10_000)
    assert panel.job is not None
    with qtbot.waitSignal(panel.job.finished, timeout=120_000):
        pass
    qtbot.waitUntil(lambda: panel.validate_button.isEnabled(), timeout=5000)
    qtbot.waitUntil(lambda: panel.history.list.count() == 1, timeout=10_000)
    rows = {panel.table.item(r, 0).text(): r for r in range(panel.table.rowCount())}
    build_row = rows["ROCm build"]
    assert panel.table.item(build_row, 1).text() == "FAIL"
    assert "not a ROCm build" in panel.table.item(build_row, 2).text()
    assert "Install the planned ROCm build of PyTorch" in panel.table.item(build_row, 3).text()
    assert panel.table.item(rows["GEMM float16 vs CPU"], 1).text() == "skip"
    assert panel.history.list.count() == 1
    assert "1 fail" in panel.summary_label.text()
    assert "; preset: none" in panel.summary_label.text()  # no preset was active


def test_a_shown_run_names_its_preset(qtbot, ctx):
    run = ValidationRun.from_result(
        {"started_at": 1.0, "checks": [], "preset": {"id": "r3", "name": "RDNA3 <consumer>"}},
        python="/p",
    )
    tab = make_tab(qtbot, ctx)
    tab.validation.show_run(run)
    label = tab.validation.summary_label
    assert label.text() == (
        "<b>0 pass, 0 fail, 0 skip</b> — torch n/a (n/a build) in /p; no GPU visible; "
        "preset: RDNA3 &lt;consumer&gt;"
    )


def test_history_compare_and_export_buttons(qtbot, ctx, tmp_path):
    store = ValidationStore()
    for tflops in (10.0, 12.5):
        store.save(
            ValidationRun.from_result(
                {
                    "started_at": 1.0,
                    "python": "/p",
                    "checks": [
                        {
                            "id": "tflops_float16",
                            "name": "GEMM TFLOPS float16",
                            "status": "pass",
                            "figure": f"{tflops} TFLOPS",
                            "value": tflops,
                            "unit": "TFLOPS",
                        }
                    ],
                }
            )
        )
    tab = make_tab(qtbot, ctx)
    panel = tab.validation
    with qtbot.waitSignal(panel.history.loaded, timeout=10_000):
        panel.history.reload()
    assert panel.history.list.count() == 2
    panel.history.list.item(0).setSelected(True)
    assert panel.history.export_button.isEnabled() and not panel.history.compare_button.isEnabled()
    assert panel.table.rowCount() == 1  # selecting a run shows it
    panel.history.list.item(1).setSelected(True)
    assert panel.history.compare_button.isEnabled()
    text = panel.history.compare_text()
    assert text is not None and "+25.0%" in text
    target = tmp_path / "run.md"
    assert panel.shown_run is not None
    panel.history.export(panel.shown_run, target)
    qtbot.waitUntil(target.exists, timeout=10_000)
    assert "| GEMM TFLOPS float16 | PASS |" in target.read_text(encoding="utf-8")


def test_vram_is_shown_in_binary_units(qtbot, ctx):
    igpu_only = Inventory(
        SystemInfo("linux", gpus=(GpuInfo("Radeon 780M", gfx="gfx1103", vram_bytes=2**29),))
    )
    tab = make_tab(qtbot, ctx, igpu_only)
    assert "gfx1103, 512.0 MiB" in tab.planner.gpu_label.text()
    ctx.inventory.set_current(RX7900)
    qtbot.waitUntil(lambda: "gfx1100, 24.0 GiB" in tab.planner.gpu_label.text(), timeout=5000)


def test_a_folder_left_by_an_install_cut_short_is_removed_when_the_tab_is_built(qtbot, ctx):
    # The panel quit (or was killed) during an install: its folder and marker stayed.
    left = workload.envs_dir() / "pytorch-2.13-rocm7.2"
    (left / "lib").mkdir(parents=True)
    marker = workload.envs_dir() / environments.INSTALLING / left.name
    marker.parent.mkdir()
    marker.write_text(json.dumps({"pid": 2**22 + 1, "created": 1.0}), encoding="utf-8")
    tab = make_tab(qtbot, ctx)
    assert not left.exists() and not marker.exists()
    assert tab.installer.name_edit.text() == "pytorch-2.13-rocm7.2"  # its name is free again


class _StuckJob:
    """An install job that ends only when ``ended`` is set (a child slow to go)."""

    def __init__(self) -> None:
        self.running = True
        self.cancelled = False
        self.ended = threading.Event()

    def cancel(self) -> None:
        self.cancelled = True

    def wait(self, timeout: float | None = None) -> None:
        self.ended.wait(timeout)

    def waiter(self):
        return self.wait


def test_closing_during_an_install_leaves_the_wait_and_the_removal_to_the_background(qtbot, ctx):
    tab = make_tab(qtbot, ctx)
    ticket = environments.begin_install("cut-short", ["x"], needed_bytes=1)
    (ticket.path / "lib").mkdir(parents=True)
    job = _StuckJob()
    tab.installer.install_job, tab.installer._ticket = job, ticket  # type: ignore[assignment]
    started = time.monotonic()
    tab.shutdown()
    assert time.monotonic() - started < 1.0  # the GUI thread neither waits nor deletes
    assert job.cancelled and ticket.path.exists()
    job.ended.set()
    qtbot.waitUntil(lambda: not ticket.path.exists(), timeout=10_000)
    assert not environments.install_running("cut-short")


def test_cancel_while_reserving_drops_the_reservation(qtbot, ctx):
    tab = make_tab(qtbot, ctx)
    name = tab.installer.name_edit.text()
    tab.installer.install_button.click()
    tab.installer.cancel_button.click()  # before the reservation's result is delivered
    qtbot.waitUntil(
        lambda: tab.installer.step_label.text().startswith("Cancelled before"), timeout=10_000
    )
    qtbot.waitUntil(lambda: not environments.install_running(name), timeout=10_000)
    assert not (workload.envs_dir() / environments.INSTALLING / name).exists()
    assert tab.installer.install_button.isEnabled()


# -- install profiles, demo mode, adding packages, layout ----------------------------------
def test_the_profile_defaults_to_local_llm_and_switching_replans(qtbot, ctx):
    tab = make_tab(qtbot, ctx)
    combo = tab.installer.profile_combo
    assert [combo.itemText(i) for i in range(combo.count())] == [
        "PyTorch",
        "PyTorch + local LLM",
    ]
    assert combo.currentText() == "PyTorch + local LLM" and tab.installer.profile() == "llm"
    plan = tab.planner.plan
    assert plan is not None and plan.profile == "llm"
    assert tab.planner.command_edit.text().endswith(
        "&& python -m pip install 'transformers>=4.45' 'accelerate>=1.1.0' safetensors "
        "tokenizers 'fastapi>=0.110' 'uvicorn>=0.29' 'bitsandbytes>=0.50' "
        "--index-url https://pypi.org/simple"
    )
    assert tab.planner.packages_label.text() == (
        "transformers&gt;=4.45, accelerate&gt;=1.1.0, safetensors, tokenizers, "
        "fastapi&gt;=0.110, uvicorn&gt;=0.29, bitsandbytes&gt;=0.50<br>"
        "<span style='color:#2e7d32'>4-bit on the GPU: available (gfx1100, torch built for "
        "ROCm 7.2).</span>"
    )
    assert tab.planner.packages_label.toolTip().splitlines()[2] == (
        "safetensors: reads .safetensors weight files"
    )
    with qtbot.waitSignal(tab.planner.plan_changed, timeout=5000) as blocker:
        combo.setCurrentIndex(0)
    assert blocker.args[0].profile == "pytorch" and tab.installer.plan is blocker.args[0]
    assert tab.planner.command_edit.text() == (
        "python -m pip install 'torch==2.13.*' torchvision torchaudio "
        "--index-url https://download.pytorch.org/whl/rocm7.2"
    )
    assert tab.planner.packages_label.text() == (
        "nothing else (torch, torchvision, torchaudio only)"
    )


def test_a_gfx906_plan_says_4bit_is_not_available(qtbot, ctx):
    # gfx906's torch is built for ROCm 6.3 (on this ROCm 7.2 host): no bitsandbytes kernels
    tab = make_tab(qtbot, ctx)
    with qtbot.waitSignal(tab.planner.plan_changed, timeout=5000):
        tab.planner.gfx_edit.setText("gfx906")
        tab.planner.replan()
    assert tab.planner.plan is not None and tab.planner.plan.rocm_build == "6.3"
    assert tab.planner.packages_label.text() == (
        "transformers&gt;=4.45, accelerate&gt;=1.1.0, safetensors, tokenizers, "
        "fastapi&gt;=0.110, uvicorn&gt;=0.29<br>"
        "<span style='color:#8d5b00'>4-bit on the GPU: not available for gfx906 with torch "
        "built for ROCm 6.3 on Linux, so bitsandbytes is not installed: its PyPI wheels for "
        "Linux have no ROCm 6.3 kernels for gfx906. Chat still works in bf16/fp16 on the GPU "
        "if the model fits its memory, or on the CPU.</span>"
    )


def test_a_demo_shows_the_plan_but_installs_nothing(qtbot, ctx, monkeypatch):
    ctx.demo = True
    started: list[object] = []
    monkeypatch.setattr(ctx.jobs, "start", started.append)
    tab = make_tab(qtbot, ctx)
    assert tab.planner.plan is not None and tab.planner.plan.supported
    assert not tab.installer.install_button.isEnabled()
    assert tab.installer.install_button.toolTip() == (
        "This is a demo: it shows the plan for the demo GPUs but installs nothing."
    )
    assert tab.installer.demo_label.isVisible()
    tab.installer.start_install()
    tab.install_packages("llm")
    assert started == [] and ctx.messages[-1] == "This is a demo: it installs nothing."
    assert tab.installer.step_label.text() == "Nothing is being installed."


def test_install_packages_adds_the_missing_ones_to_the_active_env_as_a_job(
    qtbot, ctx, monkeypatch, tmp_path
):
    from rocmpanel.pytorch.add_packages import PackagesPlan
    from rocmpanel.pytorch.views import tab as tab_module

    python = sys.executable  # the active environment; pip finds nothing, so nothing changes
    monkeypatch.setattr(ctx, "workload_python", lambda: python)
    asked: list[tuple[object, ...]] = []
    pip_args = ("no-such-dist-xyz", "--no-index", "--find-links", str(tmp_path))

    def fake_plan(python_: str, profile: str, *, os_name: str, gfx: str | None, mirrors):
        asked.append((python_, profile, os_name, gfx, mirrors.pypi))
        return PackagesPlan(
            python_,
            profile,
            ("no-such-dist-xyz",),
            {"torch": "2.13.0+rocm7.2"},
            pip_args,
            "4-bit on the GPU: available (gfx1100, torch built for ROCm 7.2).",
        )

    monkeypatch.setattr(tab_module, "plan_packages", fake_plan)
    specs = []
    real_start = ctx.jobs.start
    monkeypatch.setattr(ctx.jobs, "start", lambda spec: specs.append(spec) or real_start(spec))
    tab = make_tab(qtbot, ctx)
    tab.resize(1004, 590)  # a 1024x700 window: pip's output starts below the fold
    viewport = tab.plan_scroll.viewport()

    def pip_output_in_view() -> bool:
        """pip's output shows its first ten lines (it grows with the room it has)."""
        log = tab.installer.log_text
        top = log.mapTo(viewport, QPoint(0, 0)).y()
        return top >= 0 and top + log.minimumHeight() <= viewport.height()

    qtbot.waitUntil(lambda: tab.plan_scroll.verticalScrollBar().maximum() > 0, timeout=5000)
    assert not pip_output_in_view()
    before = ctx.settings.general.workload_python
    with qtbot.waitSignal(tab.installer.packages_finished, timeout=60_000) as blocker:
        tab.install_packages("llm")
        qtbot.waitUntil(lambda: tab.installer.packages_job is not None, timeout=10_000)
        assert tab.installer.cancel_button.isEnabled()
        assert not tab.installer.install_button.isEnabled()
        qtbot.waitUntil(pip_output_in_view, timeout=5000)  # brought into view at the start
    assert asked == [(python, "llm", "linux", "gfx1100", "https://pypi.org/simple")]
    assert [s.args for s in specs] == [("--python", python, "--isolated-config", "--", *pip_args)]
    assert specs[0].worker == "pip_install" and specs[0].python == python
    assert not blocker.args[0].was_successful()
    assert tab.installer.step_label.text() == (
        "Install failed: pip found no version of no-such-dist-xyz on the package index (it "
        "offers none). Check the index URL, the version asked for, and that the build has "
        "wheels for this Python."
    )
    assert not tab.installer.cancel_button.isEnabled() and tab.installer.install_button.isEnabled()
    assert ctx.settings.general.workload_python == before  # nothing else switched
    assert "4-bit on the GPU: available (gfx1100, torch built for ROCm 7.2)." in ctx.messages


def test_install_packages_with_nothing_missing_starts_nothing(qtbot, ctx, monkeypatch):
    from rocmpanel.pytorch.add_packages import PackagesPlan
    from rocmpanel.pytorch.views import tab as tab_module

    monkeypatch.setattr(
        tab_module,
        "plan_packages",
        lambda python, profile, **_: PackagesPlan(python, profile, (), {"torch": "2"}, ()),
    )
    started: list[object] = []
    monkeypatch.setattr(ctx.jobs, "start", started.append)
    tab = make_tab(qtbot, ctx)
    tab.install_packages("llm")
    text = "The active environment has every package of this profile already."
    qtbot.waitUntil(lambda: tab.installer.step_label.text() == text, timeout=10_000)
    assert started == []


def test_the_env_table_shows_the_probed_torch_and_the_full_path_as_tooltip(qtbot, ctx):
    tab = make_tab(qtbot, ctx)
    own = tab.envs.tree.topLevelItem(0)
    assert own is not None and own.text(1) == ""  # nothing probed yet
    ctx.probe_result.set({"torch_version": "2.13.0+cpu"}, sys.executable)
    own = tab.envs.tree.topLevelItem(0)
    assert own is not None
    assert (own.text(1), own.text(3), own.toolTip(3)) == (
        "2.13.0+cpu",
        sys.executable,
        sys.executable,
    )
    assert tab.envs.tree.textElideMode() == tab.envs.tree.textElideMode().ElideMiddle
    ctx.probe_result.set({"torch_version": None}, sys.executable)
    own = tab.envs.tree.topLevelItem(0)
    assert own is not None and own.text(1) == "not installed"
    ctx.probe_result.set({"torch_version": "2.9.1"}, "/elsewhere/python")
    own = tab.envs.tree.topLevelItem(0)
    assert own is not None and own.text(1) == ""  # a probe of another interpreter


@pytest.mark.parametrize("size", [(1260, 690), (1004, 590)])  # 1280x800, 1024x700 windows
def test_no_plan_line_is_cut_and_pips_output_shows_ten_lines(qtbot, ctx, size):
    tab = make_tab(qtbot, ctx)
    tab.resize(*size)
    log_view = tab.installer.log_text
    qtbot.waitUntil(lambda: tab.planner.build_label.height() > 0, timeout=5000)
    for label in (
        tab.planner.gpu_label,
        tab.planner.build_label,
        tab.planner.packages_label,
        tab.planner.warnings_label,
        tab.installer.step_label,
    ):
        qtbot.waitUntil(
            lambda label=label: label.height() >= label.heightForWidth(label.width()),
            timeout=5000,
        )
    assert "Wheels for Python 3.10, 3.11, 3.12, 3.13, 3.14" in tab.planner.build_label.text()
    assert log_view.viewport().height() >= 10 * log_view.fontMetrics().lineSpacing()


def test_install_packages_without_torch_points_at_the_plan_not_an_error(qtbot, ctx, monkeypatch):
    from rocmpanel.pytorch import add_packages
    from rocmpanel.pytorch.views import tab as tab_module

    monkeypatch.setattr(add_packages, "installed_versions", lambda python, names: {})
    started: list[object] = []
    monkeypatch.setattr(ctx.jobs, "start", started.append)
    dialogs: list[object] = []
    monkeypatch.setattr(tab_module, "report", lambda *a, **k: dialogs.append(a))
    tab = make_tab(qtbot, ctx)
    tab.installer.profile_combo.setCurrentIndex(tab.installer.profile_combo.findData("pytorch"))
    tab.install_packages("llm")
    qtbot.waitUntil(
        lambda: tab.installer.step_label.text() == tab_module.NO_TORCH_YET, timeout=10_000
    )
    assert started == [] and dialogs == []  # no job, no error dialog: the plan is the way
    assert tab.installer.profile() == "llm"


def test_the_panels_own_python_fits_its_column_unelided(qtbot, ctx):
    from PySide6.QtGui import QFontMetrics

    tab = make_tab(qtbot, ctx)
    tree = tab.envs.tree
    own = tree.topLevelItem(0)
    assert own is not None and own.text(0).endswith("Panel's own Python")
    needed = QFontMetrics(own.font(0)).horizontalAdvance(own.text(0))
    # The text, the tree's indentation and the cell's margins (a few px each side).
    assert needed + tree.indentation() + 12 <= tree.header().sectionSize(0)
