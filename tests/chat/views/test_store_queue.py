"""Saved chats are read and written off the GUI thread, one call at a time, in order, and a
reply that arrives just before the window closes is still saved."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.chat import store as store_module
from rocmpanel.chat.protocol import LoadRequest
from rocmpanel.chat.store import ChatStore
from rocmpanel.chat.views.store_queue import StoreQueue
from rocmpanel.gui import report
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.protocol import ReplyDone, Result
from rocmpanel.jobs.runner import JobManager

LOADED = {
    "kind": "loaded",
    "path": "/models/tiny",
    "precision": "fp32",
    "device": "cpu",
    "device_name": "CPU",
    "context_length": 2048,
}


class FakeWorker:
    """What the session needs of a worker: it takes every command."""

    running = True

    def __init__(self) -> None:
        self.ops: list[str] = []

    def send(self, op: str, **fields: Any) -> None:
        self.ops.append(op)


def on_gui_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def test_calls_run_in_order_off_the_gui_thread_and_answer_in_order(qtbot) -> None:
    opened: list[bool] = []

    def open_store() -> ChatStore:
        opened.append(on_gui_thread())
        if len(opened) == 1:
            raise PanelError("The chat history could not be opened.")
        return ChatStore()

    queue = StoreQueue(open_store)
    ran: list[tuple[int, bool]] = []
    answered: list[int] = []
    errors: list[str] = []

    def call(index: int) -> Any:
        def run(store: ChatStore) -> int:
            time.sleep(0.02 if index % 2 else 0.0)  # a slow call is not overtaken
            ran.append((index, on_gui_thread()))
            return index

        return run

    queue.submit("Opening", call(0), answered.append, lambda e: errors.append(str(e)))
    for index in range(1, 8):
        queue.submit(f"Call {index}", call(index), answered.append)
    assert not queue.idle
    qtbot.waitUntil(lambda: queue.idle)
    # The first open failed and was reported; the next call opened the store again.
    assert errors == ["The chat history could not be opened."] and opened == [False, False]
    assert ran == [(i, False) for i in range(1, 8)]
    assert answered == list(range(1, 8))


def test_a_failure_is_reported_and_the_calls_after_it_still_run(qtbot) -> None:
    shown: list[str] = []
    report.set_sink(shown.append)
    try:
        queue = StoreQueue()
        answered: list[object] = []
        queue.submit("Opening the conversation", lambda store: store.get(42), answered.append)
        queue.submit("Reading", lambda store: store.conversations(), answered.append)
        qtbot.waitUntil(lambda: queue.idle)
    finally:
        report.set_sink(None)
    assert shown == ["Conversation 42 does not exist."] and answered == [[]]


@pytest.fixture
def tab(qtbot):
    from rocmpanel.chat.views.tab import ChatTab

    ctx = AppContext(Settings.load(), JobManager(grace_s=1.0), lambda _message: None)
    made = ChatTab(ctx)
    qtbot.addWidget(made)
    qtbot.waitUntil(lambda: made.store_queue.idle)
    return made


def loaded(tab: Any) -> FakeWorker:
    worker = FakeWorker()
    tab.session.use_worker(worker, False)
    tab.session.load(LoadRequest("/models/tiny", Precision.FP32, Device.CPU, 2048))
    tab._on_job_result(Result(LOADED))
    return worker


def reply(tab: Any, text: str) -> None:
    request_id = tab.session.request_id
    tab._on_job_reply(ReplyDone(request_id, text, {"id": request_id, "new_tokens": 2}))


def test_the_tab_never_runs_sqlite_on_the_gui_thread(
    qtbot, tab, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    threads: list[bool] = []
    real_connect = store_module.connect

    def recording_connect(*args: Any, **kwargs: Any) -> Any:
        threads.append(on_gui_thread())
        return real_connect(*args, **kwargs)

    monkeypatch.setattr(store_module, "connect", recording_connect)
    loaded(tab)
    tab.send_message("Hello")
    reply(tab, "Hi!")
    tab.regenerate()
    reply(tab, "Hi again!")
    qtbot.waitUntil(lambda: tab.store_queue.idle)
    conversation_id = tab.session.conversation_id
    assert conversation_id is not None
    assert tab.conversations.selected_id() == conversation_id
    assert tab.model_panel.recent_combo.count() == 1

    tab.new_chat()
    tab.open_conversation(conversation_id)
    qtbot.waitUntil(lambda: len(tab.view.widgets) == 2)
    assert tab.session.history == [("user", "Hello"), ("assistant", "Hi again!")]
    tab.conversations.export_to(conversation_id, tmp_path / "chat.md")
    tab.conversations.search_edit.setText("again")
    qtbot.waitUntil(lambda: tab.conversations.list.count() == 1)
    tab.conversations.search_edit.setText("nowhere")
    qtbot.waitUntil(lambda: tab.conversations.list.count() == 0)
    qtbot.waitUntil(lambda: tab.store_queue.idle)
    assert threads and not any(threads), "sqlite ran on the GUI thread"

    assert "Hi again!" in (tmp_path / "chat.md").read_text()
    saved = ChatStore().get(conversation_id)
    assert [(m.role, m.content) for m in saved.messages] == [
        ("user", "Hello"),
        ("assistant", "Hi again!"),
    ]


def test_a_reply_saved_just_before_the_window_closes_is_kept(
    qtbot, tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded(tab)
    tab.send_message("Hello")
    qtbot.waitUntil(lambda: tab.store_queue.idle)
    real_add = ChatStore.add_message

    def slow_add(self: ChatStore, *args: Any, **kwargs: Any) -> int:
        time.sleep(0.3)  # still being written when the window closes
        return real_add(self, *args, **kwargs)

    monkeypatch.setattr(ChatStore, "add_message", slow_add)
    reply(tab, "Goodbye!")
    tab.send_message("One more")  # queued behind the reply
    reply(tab, "Last word.")
    # What the main window's close does, with no event processed in between.
    tab.shutdown()
    assert wait_for_background(2000)
    (conversation,) = ChatStore().conversations()
    saved = ChatStore().get(conversation.id)
    assert [(m.role, m.content) for m in saved.messages] == [
        ("user", "Hello"),
        ("assistant", "Goodbye!"),
        ("user", "One more"),
        ("assistant", "Last word."),
    ]


def test_a_conversation_that_could_not_be_saved_is_tried_again(
    qtbot, tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[str] = []
    real_create = ChatStore.create

    def create_once_failing(self: ChatStore, *args: Any, **kwargs: Any) -> int:
        if not shown:
            raise PanelError("The disk is full.")
        return real_create(self, *args, **kwargs)

    monkeypatch.setattr(ChatStore, "create", create_once_failing)
    report.set_sink(shown.append)
    try:
        loaded(tab)
        tab.send_message("Hello")
        reply(tab, "Hi!")
        qtbot.waitUntil(lambda: tab.store_queue.idle)
        assert shown == ["The disk is full."] and tab.session.conversation_id is None
        tab.send_message("Again")
        qtbot.waitUntil(lambda: tab.store_queue.idle)
    finally:
        report.set_sink(None)
    (conversation,) = ChatStore().conversations()
    assert conversation.id == tab.session.conversation_id and conversation.title == "Again"
    assert [m.content for m in ChatStore().get(conversation.id).messages] == ["Again"]


def test_deleting_the_open_conversation_starts_a_new_one(
    qtbot, tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QMessageBox

    loaded(tab)
    tab.send_message("Hello")
    reply(tab, "Hi!")
    qtbot.waitUntil(lambda: tab.store_queue.idle)
    assert tab.conversations.selected_id() == tab.session.conversation_id is not None
    monkeypatch.setattr(QMessageBox, "question", lambda *a: QMessageBox.StandardButton.Yes)
    tab.conversations._delete()
    qtbot.waitUntil(lambda: tab.store_queue.idle)
    assert tab.conversations.list.count() == 0 and ChatStore().conversations() == []
    assert tab.saved_chat is None and tab.session.history == [] and tab.view.widgets == []
