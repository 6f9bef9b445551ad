"""The Chat tab's Serve switch: what it sends, what it shows, and how it goes off.

Most tests drive a real Chat tab whose worker is a recording stand-in, with the typed serve
events the chat worker sends (contract of issue 15); the last one serves the tiny LLaMA from
a real chat worker and asks the URL shown for /health.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, Qt, QTranslator
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox

from rocmpanel.base import api_key
from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.settings import Settings
from rocmpanel.chat.installed import Installed
from rocmpanel.chat.protocol import LoadRequest
from rocmpanel.chat.session import SessionState
from rocmpanel.chat.views.serve_panel import State
from rocmpanel.chat.views.serve_vllm import target_for
from rocmpanel.chat.views.serve_words import DEMO_TIP, NOT_READY_TIP, STOPPED, SWITCH_TIP
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.protocol import Result, WorkerError
from rocmpanel.jobs.runner import JobManager

KEY = "rp-Test0Key1For2The3Serve4Panel5abcdefghijWXYZ"
NEW_KEY_PREFIX = "rp-"
SERVE_FIELDS = {
    "host": "127.0.0.1",
    "port": 8000,
    "api_key": KEY,
    "cors_origins": [],
    "max_queue": 16,
    "request_timeout_s": 300.0,
    "max_body_bytes": 4 * 1024 * 1024,
    "model_id": "",
}
MODEL = "/models/tiny-chat"


class FakeWorker:
    """The chat worker as the tab talks to it: it records every command."""

    def __init__(self) -> None:
        self.running = True
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def send(self, op: str, **fields: Any) -> None:
        self.sent.append((op, fields))

    def ops(self) -> list[str]:
        return [op for op, _ in self.sent]


def write_key(value: str = KEY) -> Path:
    path = api_key.key_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(value + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path


@pytest.fixture
def make_tab(qtbot):
    from rocmpanel.chat.views.tab import ChatTab

    tabs: list[ChatTab] = []

    def make(*, demo: bool = False, installs: list[str] | None = None) -> ChatTab:
        ctx = AppContext(Settings.load(), JobManager(grace_s=1.0), lambda _m: None)
        ctx.demo = demo
        if installs is not None:
            ctx.install_packages = installs.append
        tab = ChatTab(ctx)
        qtbot.addWidget(tab)
        tabs.append(tab)
        return tab

    yield make
    for tab in tabs:
        tab.shutdown()


def loaded_tab(make_tab, **kwargs: Any) -> tuple[Any, FakeWorker]:
    """A tab whose (fake) worker has loaded MODEL on the CPU."""
    tab = make_tab(**kwargs)
    worker = FakeWorker()
    tab.session.use_worker(worker, False)
    tab.session.load(LoadRequest(MODEL, Precision.BF16, Device.CPU, 2048))
    tab._on_job_result(
        Result(
            {
                "kind": "loaded",
                "path": MODEL,
                "precision": "bf16",
                "device": "cpu",
                "device_name": "CPU",
                "context_length": 2048,
                "load_s": 1.0,
            }
        )
    )
    assert tab.session.loaded is not None
    worker.sent.clear()
    return tab, worker


def serving(port: int = 8000) -> Result:
    return Result(
        {
            "kind": "serving",
            "url": f"http://127.0.0.1:{port}",
            "host": "127.0.0.1",
            "port": port,
            "model_id": "tiny-chat",
            "context_length": 2048,
            "max_queue": 16,
            "request_timeout_s": 300,
            "cors_origins": [],
        }
    )


def served(at: float, **fields: Any) -> Result:
    data = {
        "kind": "served",
        "at": at,
        "method": "POST",
        "path": "/v1/chat/completions",
        "status": 200,
        "stream": False,
        "prompt_tokens": 12,
        "completion_tokens": 40,
        "latency_s": 0.85,
        "ttft_s": 0.031,
        "tokens_per_s": 39.0,
        "finish_reason": "stop",
        "client": "127.0.0.1",
        "error": None,
        "disconnected": False,
    }
    data.update(fields)
    return Result(data)


def switch_on(qtbot, tab, worker: FakeWorker) -> None:
    """Press the switch and wait for the serve command (the key is read off the GUI thread)."""
    panel = tab.serve_panel
    qtbot.mouseClick(panel.switch, Qt.MouseButton.LeftButton)
    assert panel.switch.isChecked() and panel.message_label.text() == "Starting…"
    qtbot.waitUntil(lambda: "serve" in worker.ops(), timeout=5000)


def test_the_switch_is_disabled_without_a_model(qtbot, make_tab) -> None:
    tab = make_tab()
    panel = tab.serve_panel
    assert not panel.switch.isEnabled() and not panel.switch.isChecked()
    assert panel.switch.toolTip() == NOT_READY_TIP
    assert panel.switch.text() == "Serve over HTTP"
    assert panel.switch.accessibleName() == "Serve over HTTP"
    assert panel.switch.accessibleDescription() == SWITCH_TIP
    panel.start()  # even asked directly, nothing happens
    assert panel.state is State.OFF and not panel.switch.isChecked()
    # A worker without a model: still off; the model loaded: on.
    worker = FakeWorker()
    tab.session.use_worker(worker, False)
    tab._update_buttons()
    assert not panel.switch.isEnabled()
    tab2, _worker = loaded_tab(make_tab)
    assert tab2.serve_panel.switch.isEnabled()
    assert tab2.serve_panel.switch.toolTip() == SWITCH_TIP


def test_switching_on_sends_the_serve_command_with_the_stored_key(qtbot, make_tab) -> None:
    write_key()
    tab, worker = loaded_tab(make_tab)
    panel = tab.serve_panel
    panel.port_spin.setValue(8123)
    switch_on(qtbot, tab, worker)
    assert worker.sent == [("serve", {**SERVE_FIELDS, "port": 8123})]
    assert panel.state is State.STARTING and panel.status.isHidden()
    assert not panel.port_spin.isEnabled()  # the port is fixed while it runs
    # The port is kept for next time.
    assert tab.ctx.settings.chat.serve_port == 8123
    assert Settings.load().chat.serve_port == 8123


def test_serving_shows_the_url_and_the_masked_key(qtbot, make_tab) -> None:
    write_key()
    tab, worker = loaded_tab(make_tab)
    panel, status = tab.serve_panel, tab.serve_panel.status
    switch_on(qtbot, tab, worker)
    tab._on_job_result(serving(8000))
    assert panel.state is State.SERVING and panel.switch.isChecked()
    assert panel.message_label.text() == "Serving tiny-chat."
    assert not status.isHidden() and panel.timer.isActive()
    assert status.url_edit.text() == "http://127.0.0.1:8000/v1"
    qtbot.mouseClick(status.copy_url_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "http://127.0.0.1:8000/v1"
    # The key is masked until Show is pressed; Copy copies all of it either way.
    assert status.key_edit.text() == "••••WXYZ"
    qtbot.mouseClick(status.copy_key_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == KEY
    qtbot.mouseClick(status.show_key_button, Qt.MouseButton.LeftButton)
    assert status.key_edit.text() == KEY and status.show_key_button.text() == "Hide"
    qtbot.mouseClick(status.show_key_button, Qt.MouseButton.LeftButton)
    assert status.key_edit.text() == "••••WXYZ" and status.show_key_button.text() == "Show"
    # The serve events never reached the chat session.
    assert tab.session.state is SessionState.READY


def test_served_events_fill_the_table_and_the_figures(qtbot, make_tab) -> None:
    write_key()
    tab, worker = loaded_tab(make_tab)
    panel, status = tab.serve_panel, tab.serve_panel.status
    now = 1_800_000_000.0
    panel.clock = lambda: now
    switch_on(qtbot, tab, worker)
    tab._on_job_result(serving())
    assert status.figures_label.text() == (
        "Requests/min: 0 · Tokens/s: – · Queue: 0 waiting, none running"
    )
    assert status.cells() == []
    events = [
        served(now - 75.0, completion_tokens=10, tokens_per_s=18.0),  # older than a minute
        served(now - 30.0),  # 39 tokens after the first, in 1 s
        served(now - 20.0, completion_tokens=10, tokens_per_s=18.0, latency_s=1.234),  # 9 in 0.5 s
        served(
            now - 10.0,
            status=499,
            stream=True,
            completion_tokens=3,
            tokens_per_s=None,
            finish_reason=None,
            disconnected=True,
        ),
        served(
            now - 5.0,
            path="/v1/models",
            method="GET",
            status=401,
            prompt_tokens=0,
            completion_tokens=0,
            latency_s=0.002,
            ttft_s=None,
            tokens_per_s=None,
            finish_reason=None,
            error="Incorrect API key provided.",
        ),
    ]
    for event in events:
        tab._on_job_result(event)
    tab._on_job_result(Result({"kind": "serve_queue", "waiting": 2, "running": True}))
    # 4 requests in the last minute; tokens/s over the successful ones: (39 + 9 + 9) tokens in
    # (1 + 0.5 + 0.5) s = 28.5.
    assert status.figures_label.text() == (
        "Requests/min: 4 · Tokens/s: 28.5 · Queue: 2 waiting, 1 running"
    )

    def clock(at: float) -> str:
        return time.strftime("%H:%M:%S", time.localtime(at))

    assert status.cells() == [
        [clock(now - 5.0), "models", "401", "0", "0.00 s"],
        [clock(now - 10.0), "chat", "client left", "3", "0.85 s"],
        [clock(now - 20.0), "chat", "200", "10", "1.23 s"],
        [clock(now - 30.0), "chat", "200", "40", "0.85 s"],
        [clock(now - 75.0), "chat", "200", "10", "0.85 s"],
    ]
    assert status.table.item(0, 2).toolTip() == (
        "GET /v1/models from 127.0.0.1\n0 prompt tokens, 0 generated\n"
        "error: Incorrect API key provided."
    )
    # A minute later the 1 s timer has the older requests age out.
    now += 45.0
    panel.refresh_figures()
    assert status.figures_label.text().startswith("Requests/min: 2 · ")
    assert panel.timer.interval() == 1000


def test_port_in_use_goes_to_the_panel_not_to_the_chat(qtbot, make_tab) -> None:
    write_key()
    tab, worker = loaded_tab(make_tab)
    panel = tab.serve_panel
    model_status = tab.model_panel.status_label.text()
    switch_on(qtbot, tab, worker)
    tab._on_job_error(
        WorkerError(
            "Port 8000 is taken.",
            kind="port_in_use",
            data={"op": "serve", "kind": "port_in_use"},
        )
    )
    assert panel.message_label.text() == (
        "Port 8000 is already in use by another program. Pick another port and switch Serve "
        "on again."
    )
    assert panel.state is State.OFF and not panel.switch.isChecked()
    assert panel.switch.isEnabled() and panel.port_spin.isEnabled()  # pick another, retry
    # The chat session did not see it: the model is loaded, nothing failed.
    assert tab.session.state is SessionState.READY and tab.session.loaded is not None
    assert tab.banner.isHidden()
    assert tab.model_panel.status_label.text() == model_status
    assert tab.model_panel.unload_button.isEnabled()


def test_switching_off_sends_serve_stop_and_says_the_model_stays(qtbot, make_tab) -> None:
    write_key()
    tab, worker = loaded_tab(make_tab)
    panel = tab.serve_panel
    switch_on(qtbot, tab, worker)
    tab._on_job_result(serving())
    worker.sent.clear()
    qtbot.mouseClick(panel.switch, Qt.MouseButton.LeftButton)
    assert worker.sent == [("serve_stop", {})]
    assert panel.state is State.STOPPING and panel.message_label.text() == "Stopping…"
    assert not panel.timer.isActive()
    tab._on_job_result(Result({"kind": "serve_stopped", "reason": "asked", "served_requests": 3}))
    assert panel.state is State.OFF and not panel.switch.isChecked()
    assert panel.message_label.text() == STOPPED
    assert panel.status.isHidden() and tab.session.loaded is not None


def test_a_serve_that_answers_after_the_switch_went_off_is_stopped(qtbot, make_tab) -> None:
    write_key()
    tab, worker = loaded_tab(make_tab)
    panel = tab.serve_panel
    switch_on(qtbot, tab, worker)
    qtbot.mouseClick(panel.switch, Qt.MouseButton.LeftButton)  # off before it answered
    tab._on_job_result(Result({"kind": "serve_stopped", "reason": "not_serving"}))
    assert panel.state is State.OFF
    worker.sent.clear()
    tab._on_job_result(serving())  # the queued serve started after all: stop it
    assert worker.sent == [("serve_stop", {})]
    assert panel.state is State.OFF and not panel.switch.isChecked()


def test_switching_off_while_the_key_is_read_sends_nothing(qtbot, make_tab) -> None:
    write_key()
    tab, worker = loaded_tab(make_tab)
    panel = tab.serve_panel
    panel.load_key = lambda: (time.sleep(0.3), api_key.load_or_create())[1]
    qtbot.mouseClick(panel.switch, Qt.MouseButton.LeftButton)
    assert panel.state is State.GETTING_KEY
    qtbot.mouseClick(panel.switch, Qt.MouseButton.LeftButton)
    assert panel.state is State.OFF and panel.message_label.text() == STOPPED
    qtbot.wait(600)
    assert worker.sent == []


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("serve_stopped_exit", "Stopped: the chat worker ended, and the server with it."),
        ("unload", "Stopped: the model was unloaded."),
        ("load", "Stopped: another model is loading. Switch Serve on again when it is ready."),
    ],
)
def test_an_unload_a_load_or_the_worker_ending_turns_the_switch_off(
    qtbot, make_tab, how: str, message: str
) -> None:
    write_key()
    tab, worker = loaded_tab(make_tab)
    panel = tab.serve_panel
    switch_on(qtbot, tab, worker)
    tab._on_job_result(serving())
    if how == "serve_stopped_exit":
        tab._on_job_result(Result({"kind": "serve_stopped", "reason": "exit"}))
    elif how == "unload":
        qtbot.mouseClick(tab.model_panel.unload_button, Qt.MouseButton.LeftButton)
        assert worker.ops()[-1] == "unload"
    else:
        tab.load_model(LoadRequest("/models/other", Precision.BF16, Device.CPU, 2048))
        assert worker.ops()[-1] == "load"
    assert panel.state is State.OFF and not panel.switch.isChecked()
    assert panel.message_label.text() == message
    assert not panel.timer.isActive() and panel.status.isHidden()
    if how != "serve_stopped_exit":
        assert not panel.switch.isEnabled()  # no model (yet)
        # The worker's own serve_stopped later changes nothing.
        tab._on_job_result(Result({"kind": "serve_stopped", "reason": how}))
        assert panel.message_label.text() == message


def test_other_serve_errors_show_the_workers_message(qtbot, make_tab) -> None:
    write_key()
    tab, worker = loaded_tab(make_tab)
    panel = tab.serve_panel
    switch_on(qtbot, tab, worker)
    tab._on_job_error(
        WorkerError(
            "The server could not start: boom.",
            kind="serve_failed",
            data={"op": "serve", "suggestion": "See the log."},
        )
    )
    assert panel.message_label.text() == "The server could not start: boom. See the log."
    assert panel.state is State.OFF and tab.session.state is SessionState.READY


def test_missing_fastapi_is_said_and_the_install_offered(qtbot, make_tab) -> None:
    installs: list[str] = []
    tab, worker = loaded_tab(make_tab, installs=installs)
    panel, box = tab.serve_panel, tab.model_panel.packages_box
    versions = {"torch": "2.13.0", "transformers": "5.24.0", "accelerate": "1.2.0"}
    versions |= {"safetensors": "0.5.0", "tokenizers": "0.22.0", "uvicorn": "0.55.0"}
    box.installed = Installed("python", "3.11.0", versions)
    box.checked.emit(True)
    expected = (
        "Serving needs packages the workload Python lacks. The workload Python lacks fastapi. "
        "The install button below installs them."
    )
    assert panel.message_label.text() == expected
    assert not panel.switch.isEnabled() and panel.switch.toolTip() == expected
    assert not panel.install_button.isHidden()
    qtbot.mouseClick(panel.install_button, Qt.MouseButton.LeftButton)
    assert installs == ["llm"]
    # Installed: the check after the install clears it.
    box.installed = Installed("python", "3.11.0", versions | {"fastapi": "0.165.0"})
    box.checked.emit(True)
    assert panel.message_label.text() == "Not serving."
    assert panel.switch.isEnabled() and panel.install_button.isHidden()
    # The worker's own missing_package answer says the same.
    write_key()
    switch_on(qtbot, tab, worker)
    tab._on_job_error(
        WorkerError(
            "fastapi is missing.",
            kind="missing_package",
            data={"op": "serve", "missing": ["fastapi", "uvicorn"]},
        )
    )
    assert panel.message_label.text() == (
        "Serving needs packages the workload Python lacks. The workload Python lacks "
        "fastapi, uvicorn. The install button below installs them."
    )
    assert panel.state is State.OFF and tab.session.loaded is not None


def test_a_new_key_restarts_a_running_server_with_it(
    qtbot, make_tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_path = write_key()
    tab, worker = loaded_tab(make_tab)
    panel, status = tab.serve_panel, tab.serve_panel.status
    switch_on(qtbot, tab, worker)
    tab._on_job_result(serving())
    worker.sent.clear()
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    monkeypatch.setattr(QMessageBox, "question", lambda *_a, **_k: answers.pop(0))
    qtbot.mouseClick(status.new_key_button, Qt.MouseButton.LeftButton)  # No: nothing
    qtbot.wait(100)
    assert worker.sent == [] and key_path.read_text(encoding="utf-8").strip() == KEY
    qtbot.mouseClick(status.new_key_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: worker.sent != [], timeout=5000)
    new_key = key_path.read_text(encoding="utf-8").strip()
    assert new_key != KEY and new_key.startswith(NEW_KEY_PREFIX)
    assert worker.sent == [("serve", {**SERVE_FIELDS, "api_key": new_key})]
    assert panel.state is State.RESTARTING
    assert panel.message_label.text() == "Restarting with the new key…"
    assert status.key_edit.text() == "••••" + new_key[-4:]
    # Another new key before the restart is done: a serve with it follows the first.
    monkeypatch.setattr(QMessageBox, "question", lambda *_a, **_k: QMessageBox.StandardButton.Yes)
    worker.sent.clear()
    qtbot.mouseClick(status.new_key_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: worker.sent != [], timeout=5000)
    newest = key_path.read_text(encoding="utf-8").strip()
    assert newest != new_key
    assert worker.sent == [("serve", {**SERVE_FIELDS, "api_key": newest})]
    assert status.key_edit.text() == "••••" + newest[-4:]
    # The worker answers in order: the old server's stop (part of the restart), the first
    # restart, its replacement's stop and the second: the switch stays on throughout.
    for event in ("restart", "serving", "restart", "serving"):
        if event == "restart":
            tab._on_job_result(Result({"kind": "serve_stopped", "reason": "restart"}))
        else:
            tab._on_job_result(serving())
        assert panel.switch.isChecked() and panel.state in (State.RESTARTING, State.SERVING)
    assert panel.state is State.SERVING
    assert panel.key is not None and panel.key.value == newest


def test_demo_mode_shows_the_panel_but_never_serves(qtbot, make_tab) -> None:
    tab, worker = loaded_tab(make_tab, demo=True)
    panel = tab.serve_panel
    assert panel.isVisibleTo(tab) or not panel.isHidden()
    assert not panel.switch.isEnabled() and panel.switch.toolTip() == DEMO_TIP
    assert not panel.port_spin.isEnabled()
    assert panel.message_label.text() == DEMO_TIP
    # Whatever the packages check finds, the demo offers no install here.
    box = tab.model_panel.packages_box
    box.installed = Installed("python", "3.11.0", {})
    box.checked.emit(False)
    assert panel.message_label.text() == DEMO_TIP and panel.install_button.isHidden()
    panel.start()
    qtbot.wait(100)
    assert worker.sent == [] and panel.state is State.OFF


def test_the_switch_is_reached_by_tab_and_toggled_by_space(qtbot, make_tab) -> None:
    write_key()
    tab, worker = loaded_tab(make_tab)
    panel = tab.serve_panel
    tab.resize(1200, 800)
    tab.show()
    qtbot.waitExposed(tab)
    tab.activateWindow()
    unload = tab.model_panel.unload_button
    unload.setFocus()
    qtbot.waitUntil(unload.hasFocus)
    for _ in range(10):  # the next few controls lead to it
        if panel.switch.hasFocus():
            break
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert panel.switch.hasFocus()
    qtbot.keyClick(panel.switch, Qt.Key.Key_Space)
    assert panel.switch.isChecked() and panel.state is State.GETTING_KEY
    qtbot.waitUntil(lambda: "serve" in worker.ops(), timeout=5000)
    tab._on_job_result(serving())
    qtbot.keyClick(panel.switch, Qt.Key.Key_Space)
    assert worker.ops()[-1] == "serve_stop" and not panel.switch.isChecked()


def test_the_vllm_box_shows_the_command_for_the_loaded_model(qtbot, make_tab) -> None:
    from rocmpanel.chat import vllm

    tab, _worker = loaded_tab(make_tab)
    box = tab.serve_panel.vllm_box
    assert box.body.isHidden()
    box.toggle.click()
    target = target_for(tab.ctx, MODEL, 8000)
    expected = vllm.vllm_command(
        MODEL, target.gpus, port=8000, gfx=target.gfx, os_name=target.os_name
    )
    qtbot.waitUntil(lambda: box.command_edit.toPlainText() == expected.text, timeout=5000)
    assert box.intro_label.text().startswith("Run this instead (vLLM on ROCm, ")
    assert box.notes_label.text() == "\n".join(f"• {n}" for n in expected.notes)
    for source in expected.sources:
        assert f'<a href="{source}">' in box.sources_label.text()
    assert box.docker_edit.toPlainText() == expected.docker_text
    box.copy_button.click()
    assert QGuiApplication.clipboard().text() == expected.text
    box.copy_docker_button.click()
    assert QGuiApplication.clipboard().text() == expected.docker_text
    # Unloaded: the command goes (there is no model to serve).
    tab.unload_model()
    assert box.intro_label.text() == "Load a model to see the vLLM command for it."
    assert box.command_edit.isHidden()


# -- a real chat worker ----------------------------------------------------------------------


@pytest.mark.torch
@pytest.mark.slow
def test_the_switch_serves_the_tiny_model_end_to_end(qtbot, make_tab, tiny_model: Path) -> None:
    tab = make_tab()
    panel = tab.model_panel
    with qtbot.waitSignal(panel.check_finished, timeout=10_000):
        panel.set_folder(str(tiny_model))
    panel.set_precision(Precision.FP32)
    panel.device_combo.setCurrentIndex(panel.device_combo.findData("cpu"))
    qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.session.loaded is not None, timeout=120_000)
    serve = tab.serve_panel
    serve.port_spin.setValue(0)  # any free port
    qtbot.waitUntil(serve.switch.isEnabled, timeout=30_000)
    qtbot.mouseClick(serve.switch, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: serve.state is State.SERVING, timeout=60_000)
    url = serve.status.url_edit.text()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    health = url[: -len("/v1")] + "/health"
    with urllib.request.urlopen(health, timeout=10) as response:
        assert response.status == 200
        assert json.loads(response.read()) == {"status": "ok"}
    key = api_key.load_or_create().value
    request = urllib.request.Request(url + "/models", headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.loads(response.read())["data"][0]["id"] == tiny_model.name
    # The request shows in the table (the worker's `served` event); /health is not listed.
    qtbot.waitUntil(lambda: len(serve.status.cells()) == 1, timeout=10_000)
    row = serve.status.cells()[0]
    assert row[1:4] == ["models", "200", "0"] and re.fullmatch(r"\d+\.\d\d s", row[4])
    assert serve.status.figures_label.text().startswith("Requests/min: 1 · ")
    qtbot.mouseClick(serve.switch, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: serve.state is State.OFF, timeout=30_000)
    assert serve.message_label.text() == STOPPED
    with pytest.raises(OSError):
        urllib.request.urlopen(health, timeout=5)
    assert tab.session.loaded is not None  # the model stays for Chat
    # On again, then the worker is killed: the switch goes off and says why.
    qtbot.mouseClick(serve.switch, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: serve.state is State.SERVING, timeout=60_000)
    assert tab.job is not None and tab.job.pid is not None
    os.kill(tab.job.pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: serve.state is State.OFF, timeout=30_000)
    assert serve.message_label.text() == "Stopped: the chat worker ended, and the server with it."
    assert not serve.switch.isEnabled()


class _Brackets(QTranslator):
    """Every text in brackets: a language the panel's logic must not read."""

    def translate(  # type: ignore[override]
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        del context, disambiguation, n
        return f"[{source}]"


def test_the_missing_message_clears_in_another_language(qtbot, make_tab) -> None:
    """What the panel decides never depends on the words it shows (they change with the
    window's language): the message of what serving lacks goes when the packages come."""
    translator = _Brackets()
    QCoreApplication.installTranslator(translator)
    try:
        tab, _worker = loaded_tab(make_tab)
        panel, box = tab.serve_panel, tab.model_panel.packages_box
        versions = {"torch": "2.13.0", "transformers": "5.24.0", "accelerate": "1.2.0"}
        versions |= {"safetensors": "0.5.0", "tokenizers": "0.22.0", "uvicorn": "0.55.0"}
        box.installed = Installed("python", "3.11.0", versions)
        box.checked.emit(True)
        assert panel.message_label.text().startswith("[Serving needs packages")
        assert panel.switch.text() == "[Serve over HTTP]"
        box.installed = Installed("python", "3.11.0", versions | {"fastapi": "0.165.0"})
        box.checked.emit(True)
        assert panel.message_label.text() == "[Not serving.]"
    finally:
        QCoreApplication.removeTranslator(translator)
