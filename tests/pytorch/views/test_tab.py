"""The PyTorch tab, offscreen: plan, refusal, a real failing install, envs, validation."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from rocmpanel.base.settings import Settings
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager
from rocmpanel.pytorch import managed_envs
from rocmpanel.pytorch.operations import Machine
from rocmpanel.pytorch.validation_store import ValidationRun, ValidationStore
from rocmpanel.pytorch.views.tab import PyTorchTab

RX7900 = Machine("linux", "gfx1100", None, "Radeon RX 7900 XTX", 24 * 2**30)


@pytest.fixture
def ctx(qtbot):
    manager = JobManager(grace_s=2.0)
    messages: list[str] = []
    context = AppContext(Settings.load(), manager, messages.append)
    context.messages = messages  # type: ignore[attr-defined]
    yield context
    manager.shutdown()


def make_tab(qtbot, ctx, machine: Machine = RX7900) -> PyTorchTab:
    tab = PyTorchTab(ctx, detect=lambda: machine)
    qtbot.addWidget(tab)
    tab.show()
    qtbot.waitUntil(lambda: tab.plan is not None, timeout=10_000)
    return tab


def test_plan_is_shown_before_install(qtbot, ctx):
    tab = make_tab(qtbot, ctx)
    assert tab.plan is not None and tab.plan.supported
    assert "rocm7.2" in tab.command_edit.text()
    assert "Radeon RX 7900 XTX" in tab.gpu_label.text()
    assert tab.install_button.isEnabled() and not tab.cancel_button.isEnabled()
    assert tab.name_edit.text() == "pytorch-2.12-rocm7.2"
    assert "free disk needed" in tab.size_label.text()


def test_unsupported_gpu_is_refused_and_install_disabled(qtbot, ctx):
    tab = make_tab(qtbot, ctx)
    with qtbot.waitSignal(tab.plan_changed, timeout=5000):
        tab.gfx_edit.setText("gfx1010")
        tab.replan()
    assert tab.plan is not None and not tab.plan.supported
    assert "No install" in tab.build_label.text() and "RDNA1" in tab.build_label.text()
    assert not tab.install_button.isEnabled()


def test_no_gpu_says_so(qtbot, ctx):
    tab = make_tab(qtbot, ctx, Machine("linux", None, None, note="No GPU with a known gfx."))
    assert "No AMD GPU detected" in tab.gpu_label.text()
    assert not tab.install_button.isEnabled()


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
        with qtbot.waitSignal(tab.plan_changed, timeout=5000):
            tab.index_edit.setText(f"http://127.0.0.1:{server.server_address[1]}/simple/")
            tab.replan()
        before = ctx.settings.general.workload_python
        with qtbot.waitSignal(tab.install_finished, timeout=120_000) as blocker:
            tab.install_button.click()
            assert tab.cancel_button.isEnabled()
        outcome = blocker.args[0]
        assert not outcome.was_successful()
        assert "Install failed" in tab.step_label.text() and "partial" in tab.step_label.text()
        assert not (managed_envs.envs_dir() / "pytorch-2.12-rocm7.2").exists()
        assert ctx.settings.general.workload_python == before
        assert "python -m venv" in tab.log_text.toPlainText()
        assert tab.install_button.isEnabled()
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
        with qtbot.waitSignal(tab.plan_changed, timeout=5000):
            tab.index_edit.setText(f"http://127.0.0.1:{server.server_address[1]}/simple/")
            tab.replan()
        tab.install_button.click()
        qtbot.waitUntil(asked.is_set, timeout=60_000)
        qtbot.waitUntil(
            lambda: "Creating" in tab.log_text.toPlainText() or tab.progress.value() > 0,
            timeout=10_000,
        )
        with qtbot.waitSignal(tab.install_finished, timeout=60_000) as blocker:
            tab.cancel_button.click()
        assert blocker.args[0].state.value == "cancelled"
        assert tab.step_label.text().startswith("Cancelled")
        assert not (managed_envs.envs_dir() / "pytorch-2.12-rocm7.2").exists()
        assert not tab.cancel_button.isEnabled() and tab.install_button.isEnabled()
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def _wheel(folder: Path, name: str, version: str) -> Path:
    """A tiny pure-Python wheel standing in for a real one (the install mechanics are the
    same; no network here)."""
    dist = f"{name}-{version}"
    files = {
        f"{name}/__init__.py": f"__version__ = {version!r}\n",
        f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [
        f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()).rstrip(b'=').decode()},{len(t.encode())}"
        for p, t in files.items()
    ]
    files[f"{dist}.dist-info/RECORD"] = "\n".join([*record, f"{dist}.dist-info/RECORD,,"]) + "\n"
    path = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member, text in files.items():
            zf.writestr(member, text)
    return path


@pytest.mark.slow
def test_successful_install_becomes_active_and_listed(qtbot, ctx, tmp_path):
    wheels = {
        w.name: w
        for w in (
            _wheel(tmp_path, n, v)
            for n, v in (("torch", "2.12.0"), ("torchvision", "0.27.0"), ("torchaudio", "2.12.0"))
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
        with qtbot.waitSignal(tab.plan_changed, timeout=5000):
            tab.index_edit.setText(f"http://127.0.0.1:{server.server_address[1]}/simple/")
            tab.replan()
        with qtbot.waitSignal(tab.install_finished, timeout=120_000) as blocker:
            tab.install_button.click()
        assert blocker.args[0].was_successful(), str(blocker.args[0])
        env = managed_envs.find_env("pytorch-2.12-rocm7.2")
        assert env is not None and env.installed["torch"] == "2.12.0"
        assert ctx.settings.general.workload_python == str(env.python)
        assert "now active" in tab.step_label.text()
        assert tab.progress.value() == 1000
        listed = [
            tab.envs.tree.topLevelItem(i).text(0) for i in range(tab.envs.tree.topLevelItemCount())
        ]
        assert "● pytorch-2.12-rocm7.2" in listed
        assert tab.name_edit.text() == "pytorch-2.12-rocm7.2-2"  # the next install gets a new name
    finally:
        server.shutdown()
        server.server_close()


def _fake_managed_env(name: str) -> Path:
    """A managed environment record whose interpreter is this Python (for the list only)."""
    path = managed_envs.envs_dir() / name
    (path / "bin").mkdir(parents=True)
    os.symlink(sys.executable, path / "bin" / "python")
    record = {"name": name, "created_at": 1.0, "torch_version": "2.12.0+rocm7.2"}
    (path / managed_envs.RECORD).write_text(json.dumps(record), encoding="utf-8")
    return path


def test_env_list_activate_and_remove_with_confirmation(qtbot, ctx, monkeypatch):
    path = _fake_managed_env("torch-a")
    tab = make_tab(qtbot, ctx)
    envs = tab.envs
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
    envs.remove_button.click()
    assert not path.exists()
    assert ctx.settings.general.workload_python == ""


@pytest.mark.torch
def test_cpu_validation_run_shows_not_rocm_with_fix_and_history(qtbot, ctx):
    pytest.importorskip("torch")
    tab = make_tab(qtbot, ctx)
    panel = tab.validation
    panel.validate_button.click()
    assert panel.job is not None
    with qtbot.waitSignal(panel.job.finished, timeout=120_000):
        pass
    qtbot.waitUntil(lambda: panel.validate_button.isEnabled(), timeout=5000)
    rows = {panel.table.item(r, 0).text(): r for r in range(panel.table.rowCount())}
    build_row = rows["ROCm build"]
    assert panel.table.item(build_row, 1).text() == "FAIL"
    assert "not a ROCm build" in panel.table.item(build_row, 2).text()
    assert "Install the ROCm build" in panel.table.item(build_row, 3).text()
    assert panel.table.item(rows["GEMM float16 vs CPU"], 1).text() == "skip"
    assert panel.history.count() == 1
    assert "1 fail" in panel.summary_label.text()


def test_history_compare_and_export_buttons(qtbot, ctx):
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
    panel.reload_history()
    assert panel.history.count() == 2
    panel.history.item(0).setSelected(True)
    assert panel.export_button.isEnabled() and not panel.compare_button.isEnabled()
    assert panel.table.rowCount() == 1  # selecting a run shows it
    panel.history.item(1).setSelected(True)
    assert panel.compare_button.isEnabled()
    text = panel.compare_text()
    assert text is not None and "+25.0%" in text
