"""The Chat tab with a real chat worker and a tiny LLaMA: stream, stop, persist, crash."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from types import ModuleType

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.settings import Settings
from rocmpanel.chat.store import ChatStore
from rocmpanel.chat.views.transcript import ChatInput, render_message_html
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager

pytestmark = [pytest.mark.torch, pytest.mark.slow]
LOAD_MS = 120_000


@pytest.fixture
def make_tab(qtbot):
    from rocmpanel.chat.views.tab import ChatTab

    tabs = []
    messages: list[str] = []

    def make():
        ctx = AppContext(Settings.load(), JobManager(grace_s=1.0), messages.append)
        tab = ChatTab(ctx)
        qtbot.addWidget(tab)
        tab.resize(1200, 800)
        tab.show()
        tabs.append(tab)
        return tab

    yield make
    for tab in tabs:
        tab.shutdown()


def set_folder(qtbot, panel, folder: Path) -> None:
    """Pick ``folder`` and wait for its check (it runs off the GUI thread)."""
    with qtbot.waitSignal(panel.check_finished, timeout=10_000):
        panel.set_folder(str(folder))


def load(qtbot, tab, model: Path, precision: Precision = Precision.FP32) -> None:
    panel = tab.model_panel
    set_folder(qtbot, panel, model)
    panel.set_precision(precision)
    panel.device_combo.setCurrentIndex(panel.device_combo.findData("cpu"))
    panel.sampling_box.temperature_spin.setValue(0.0)
    panel.sampling_box.max_new_spin.setValue(16)
    assert panel.check is not None and panel.check.ok, panel.check
    assert panel.load_button.isEnabled()
    qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.session.loaded is not None, timeout=LOAD_MS)
    assert tab.session.loaded.precision == precision.value


def test_stream_a_reply_persist_and_reload_it(qtbot, make_tab, tiny_model: Path) -> None:
    tab = make_tab()
    load(qtbot, tab, tiny_model)
    # The check and the memory estimate were shown before loading.
    assert "LlamaForCausalLM" in tab.model_panel.check_label.text()
    assert "RAM is free" in tab.model_panel.check_label.text()
    batches: list[int] = []
    tab.job.tokens_received.connect(lambda tokens: batches.append(len(tokens)))
    tab.input.setPlainText("Hello there")
    qtbot.keyClick(tab.input, Qt.Key.Key_Return)
    assert tab.session.generating
    qtbot.waitUntil(lambda: not tab.session.generating, timeout=LOAD_MS)
    assert batches, "no tokens were streamed"
    reply = tab.view.last()
    assert reply is not None and reply.role == "assistant" and reply.text
    assert "tok/s" in reply.figures_label.text()
    qtbot.mouseClick(reply.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == reply.text
    assert tab.input.toPlainText() == ""
    assert tab.session.history == [("user", "Hello there"), ("assistant", reply.text)]

    # Regenerate replaces the reply (greedy: the same text again).
    first_text = reply.text
    qtbot.mouseClick(tab.regenerate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not tab.session.generating, timeout=LOAD_MS)
    assert len(tab.view.widgets) == 2 and tab.view.last().text == first_text

    # Persisted (off the GUI thread): a fresh store and a fresh tab see the same conversation.
    qtbot.waitUntil(lambda: tab.store_queue.idle)
    conversation_id = tab.session.conversation_id
    saved = ChatStore().get(conversation_id)
    assert [(m.role, m.content) for m in saved.messages] == tab.session.history
    assert saved.messages[1].figures is not None and saved.messages[1].figures.new_tokens
    other = make_tab()
    qtbot.waitUntil(lambda: other.conversations.list.count() == 1)
    other.open_conversation(conversation_id)
    qtbot.waitUntil(lambda: len(other.view.widgets) == 2)
    assert [w.text for w in other.view.widgets] == ["Hello there", first_text]
    assert other.model_panel.recent_combo.count() == 1

    # Edit the last message: it comes back into the box and leaves the conversation.
    qtbot.mouseClick(tab.edit_button, Qt.MouseButton.LeftButton)
    assert tab.input.toPlainText() == "Hello there"
    assert tab.session.history == [] and tab.view.widgets == []
    qtbot.waitUntil(lambda: tab.store_queue.idle)
    assert ChatStore().get(conversation_id).messages == ()


def test_stop_button_and_a_killed_worker(qtbot, make_tab, tiny_model: Path) -> None:
    tab = make_tab()
    load(qtbot, tab, tiny_model)
    tab.model_panel.sampling_box.max_new_spin.setValue(3000)
    tab.model_panel.sampling_box.temperature_spin.setValue(1.0)
    tab.send_message("Tell me a long story")
    qtbot.waitUntil(lambda: bool(tab.view.last().text), timeout=LOAD_MS)
    assert tab.stop_button.isEnabled()
    qtbot.mouseClick(tab.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not tab.session.generating, timeout=LOAD_MS)
    assert "stopped" in tab.view.last().figures_label.text()

    # Kill the worker mid-reply: the tab says so and offers a smaller setting.
    tab.send_message("Another long one")
    qtbot.waitUntil(lambda: bool(tab.view.last().text), timeout=LOAD_MS)
    os.kill(tab.job.pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: tab.banner.isVisible(), timeout=LOAD_MS)
    assert "killed (SIGKILL" in tab.banner_label.text()
    assert (
        tab.session.loaded is None
        and not tab.session.generating
        and not tab.send_button.isEnabled()
    )
    assert tab.reload_smaller_button.isVisible()
    assert "bf16" in tab.reload_smaller_button.text()
    qtbot.mouseClick(tab.reload_smaller_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.session.loaded is not None, timeout=LOAD_MS)
    assert tab.session.loaded.precision == "bf16"
    # The unanswered message can be retried with the reloaded model.
    assert tab.session.history[-1] == ("user", "Another long one")
    tab.model_panel.sampling_box.max_new_spin.setValue(8)
    qtbot.mouseClick(tab.regenerate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not tab.session.generating, timeout=LOAD_MS)
    assert tab.session.history[-1][0] == "assistant"
    assert [w.text for w in tab.view.widgets] == [c for _, c in tab.session.history]


def test_enter_sends_and_shift_enter_adds_a_line(qtbot) -> None:
    box = ChatInput()
    qtbot.addWidget(box)
    sent: list[str] = []
    box.submitted.connect(sent.append)
    qtbot.keyClicks(box, "one")
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(box, "two")
    assert sent == [] and box.toPlainText() == "one\ntwo"
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert sent == ["one\ntwo"]


def test_code_blocks_render_as_monospace_and_escaped() -> None:
    html = render_message_html("Use `x<y`:\n```python\nif a < b:\n    pass\n```\nDone")
    assert "<pre" in html and "monospace" in html
    assert "if a &lt; b:\n    pass" in html
    assert "x&lt;y" in html and "Done" in html
    # An unfinished fence (mid-stream) is still shown as code.
    assert "<pre" in render_message_html("```\nprint(1)")


def test_export_writes_markdown_and_json(qtbot, make_tab, tmp_path: Path) -> None:
    store = ChatStore()
    cid = store.create("Exported")
    store.add_message(cid, "user", "hi")
    tab = make_tab()
    tab.conversations.refresh()
    tab.conversations.export_to(cid, tmp_path / "c.md")
    tab.conversations.export_to(cid, tmp_path / "c.json")
    qtbot.waitUntil(lambda: tab.store_queue.idle)
    assert (tmp_path / "c.md").read_text().startswith("# Exported")
    assert json.loads((tmp_path / "c.json").read_text())["messages"][0]["content"] == "hi"
    tab.conversations.search_edit.setText("zzz")
    qtbot.waitUntil(lambda: tab.conversations.list.count() == 0)


def test_a_load_that_cannot_fit_asks_first(qtbot, make_tab, tiny_model: Path, monkeypatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    from rocmpanel.chat.memory_estimate import estimate_memory, judge_fit

    tab = make_tab()
    set_folder(qtbot, tab.model_panel, tiny_model)
    check = tab.model_panel.check
    estimate = estimate_memory(check.parameters, check.shape, Precision.FP32, 4096)
    tab.model_panel.verdict = judge_fit(estimate, Device.GPU, 1024)  # as if 1 KiB were free
    asked: list[str] = []

    def answer_no(*args, **kwargs):
        asked.append(args[2])
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "warning", answer_no)
    tab.load_model(tab.model_panel.load_request())
    assert asked and "will not fit" in asked[0]
    assert tab.job is None and tab.session.loaded is None


def test_an_out_of_memory_error_offers_a_smaller_setting(make_tab) -> None:
    from rocmpanel.chat.protocol import LoadRequest
    from rocmpanel.jobs.protocol import WorkerError

    tab = make_tab()
    tab.session.last_load = LoadRequest("/models/llama", Precision.FP16, Device.AUTO, 8192)
    error = WorkerError(
        "Out of memory while generating: HIP out of memory.",
        "oom",
        data={"op": "generate", "suggestion": "Reload with a smaller precision."},
    )
    tab._on_job_error(error)
    assert tab.banner.isVisible()
    assert "Out of memory" in tab.banner_label.text()
    assert "smaller precision" in tab.banner_label.text()
    assert tab.reload_smaller_button.isVisible()
    assert tab.reload_smaller_button.text() == "Reload with int8, context 8192"
    # A plain error (not memory) offers no reload.
    tab._on_job_error(WorkerError("The message needs 9000 tokens.", "context", data={"op": "x"}))
    assert not tab.reload_smaller_button.isVisible()


def test_remote_code_and_hub_are_allowed_per_model(
    qtbot, make_tab, tiny_llama: ModuleType, tiny_model: Path, tmp_path
) -> None:
    tab = make_tab()
    panel = tab.model_panel
    remote = tiny_llama.needing_remote_code(tiny_model, tmp_path)
    set_folder(qtbot, panel, remote)
    assert not panel.check.ok and not panel.load_button.isEnabled()
    assert "own Python code" in panel.check_label.text()
    with qtbot.waitSignal(panel.check_finished, timeout=10_000):
        panel.remote_code_check.setChecked(True)
    panel.hub_check.setChecked(True)
    assert panel.check.ok and panel.load_button.isEnabled()
    assert "your user's rights" in panel.check_label.text()
    assert "Hub access is on" in panel.check_label.text()
    assert panel.load_request().trust_remote_code
    # Another folder starts without either permission.
    set_folder(qtbot, panel, tiny_model)
    assert not panel.remote_code_check.isChecked() and not panel.hub_check.isChecked()
    assert not panel.load_request().trust_remote_code


def test_the_chip_of_a_loaded_model_says_unload_and_unloads(
    qtbot, make_tab, tiny_model: Path
) -> None:
    from rocmpanel.jobs.job_env import job_env_for

    tab = make_tab()
    # As the main window does: every job runs under the active preset.
    tab.ctx.jobs.env_provider = lambda spec: job_env_for(spec, active="safe-defaults")
    labels: list[str] = []
    panel = tab.model_panel
    set_folder(qtbot, panel, tiny_model)
    panel.set_precision(Precision.FP32)
    panel.device_combo.setCurrentIndex(panel.device_combo.findData("cpu"))
    qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.job is not None, timeout=LOAD_MS)
    job = tab.job
    job.cancel_label_changed.connect(labels.append)
    assert job.cancel_label == "Cancel"  # while loading, cancelling stops the load
    qtbot.waitUntil(lambda: tab.session.loaded is not None, timeout=LOAD_MS)
    assert job.cancel_label == "Unload" and labels == ["Unload"]
    assert tab.live_label.text() == "Ready: fp32 on CPU. · preset: Safe defaults"
    with qtbot.waitSignal(job.finished, timeout=LOAD_MS):
        job.cancel()  # what the jobs strip's button does
    assert tab.live_label.text() == "Model unloaded."
    assert not tab.banner.isVisibleTo(tab)  # not reported as a failure
    assert panel.status_label.text() == "No model loaded."
    assert panel.load_button.isEnabled() and not panel.unload_button.isEnabled()


def test_the_figures_line_names_the_preset_the_model_runs_under(qtbot) -> None:
    from rocmpanel.chat.views.figures import LiveFigures

    line = LiveFigures()
    qtbot.addWidget(line)
    line.stop("Last reply: 12 tokens")
    assert line.text() == "Last reply: 12 tokens · preset: none"
    line.set_preset("RDNA3 consumer")
    line.stop("Last reply: 12 tokens")
    assert line.text() == "Last reply: 12 tokens · preset: RDNA3 consumer"
    line.start(lambda: "VRAM used 1.0 GiB")
    assert line.running
    assert line.text().startswith("Generating… 0 tokens · waiting for the first token (")
    assert line.text().endswith(" ms) · VRAM used 1.0 GiB · preset: RDNA3 consumer")
    line.stop("")  # nothing to show stays empty
    assert line.text() == "" and not line.running
