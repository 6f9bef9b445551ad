"""The transcript stays bounded on the GUI thread: a reply's end, a new message and a long
reply redraw only what changed, and the conversation list is not read again per reply."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.settings import Settings
from rocmpanel.chat.protocol import LoadedModel
from rocmpanel.chat.session import SessionState
from rocmpanel.chat.store import ChatStore
from rocmpanel.chat.views import transcript
from rocmpanel.chat.views.store_queue import SavedChat
from rocmpanel.chat.views.transcript import BLOCK_CHARS, ChatView, split_blocks
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.protocol import ReplyDone
from rocmpanel.jobs.runner import JobManager

STORY = "\n\n".join(f"Paragraph {i}: the GPU fan spun `fast` all night." for i in range(12))


@pytest.fixture
def view(qtbot) -> ChatView:
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    return view


def settle() -> None:
    for _ in range(3):
        QApplication.processEvents()


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every block text rendered to HTML from now on."""
    rendered: list[str] = []
    real = transcript.render_message_html

    def counting(text: str) -> str:
        rendered.append(text)
        return real(text)

    monkeypatch.setattr(transcript, "render_message_html", counting)
    return rendered


def test_blocks_only_grow_at_the_end_as_text_streams_in() -> None:
    text = "Intro `x`:\n```python\n" + "print(1)\n" * 400 + "```\nDone.\n\n" + STORY
    previous: list[str] = []
    for end in range(0, len(text), 23):
        blocks = split_blocks(text[:end].rstrip())
        assert blocks[: len(previous) - 1] == previous[:-1], end
        previous = blocks
    assert max(len(block) for block in previous) < BLOCK_CHARS + 100
    assert previous[0] == "Intro `x`:" and previous[1].startswith("```python\nprint(1)")
    assert split_blocks("") == [""]


def test_a_long_message_is_drawn_in_pieces_with_its_code_boxes() -> None:
    blocks = split_blocks("```sh\n" + "echo hi\n" * 500)
    assert len(blocks) > 1 and all(block.startswith("```") for block in blocks)
    assert all("<pre" in transcript.render_message_html(block) for block in blocks)


def test_streaming_and_finishing_a_reply_render_only_what_changed(view, renders) -> None:
    view.add_message("user", "Tell me a story")
    view.add_message("assistant")
    for start in range(0, len(STORY), 40):
        view.append_to_last(STORY[start : start + 40])
        view.flush()
    assert len(view.last().blocks) == 12
    # Each render redrew the paragraph being streamed, never the ones before it.
    assert all(len(text) < 60 for text in renders)
    renders.clear()
    view.finish_last(STORY, "12 tokens")
    assert renders == []  # the reply as streamed: nothing to draw again
    view.finish_last(STORY + " The end.", "13 tokens")
    assert renders == ["Paragraph 11: the GPU fan spun `fast` all night. The end."]
    assert view.last().figures_label.text() == "13 tokens"
    assert view.last().text == STORY + " The end."


def test_adding_a_message_does_not_lay_out_the_ones_before(view) -> None:
    for index in range(10):
        view.add_message("user" if index % 2 == 0 else "assistant", STORY)
    settle()
    older = [block for widget in view.widgets for block in widget.blocks]
    before = [block.layouts for block in older]
    assert all(before)  # each was laid out for its width once...
    view.add_message("user", "One more")
    view.add_message("assistant")
    view.finish_last(STORY, "")
    settle()
    assert [block.layouts for block in older] == before  # ...and not again


class FakeWorker:
    running = True

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def send(self, op: str, **fields: Any) -> None:
        self.sent.append((op, fields))


def test_a_finished_reply_moves_its_conversation_up_without_reading_the_list(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rocmpanel.chat.views.tab import ChatTab

    store = ChatStore()
    older = store.create("Older chat", "m", "")
    store.add_message(older, "user", "hi")
    mine = store.create("My chat", "m", "")
    store.add_message(older, "user", "hi again")  # the older one is now the newest
    tab = ChatTab(AppContext(Settings.load(), JobManager(grace_s=1.0), lambda _m: None))
    qtbot.addWidget(tab)
    items = tab.conversations.list
    qtbot.waitUntil(lambda: items.count() == 2)
    assert items.item(0).text().startswith("Older chat")

    session = tab.session
    session.use_worker(FakeWorker(), False)
    session.loaded = LoadedModel(
        "m", Precision.FP32, Device.CPU, "CPU", None, None, 2048, 1.0, None, "ram"
    )
    session.state = SessionState.READY
    tab.saved_chat = SavedChat(mine)
    session.conversation_id = mine
    reads: list[object] = []
    monkeypatch.setattr(tab.conversations, "refresh", lambda select=None: reads.append(select))
    monkeypatch.setattr(tab.live_label, "start", lambda memory: None)

    tab.send_message("Hello")
    tab._on_job_reply(ReplyDone(session.request_id, "Hi there", {"new_tokens": 2}))
    assert tab.view.last().text == "Hi there"
    qtbot.waitUntil(lambda: tab.store_queue.idle)
    assert reads == []
    assert items.count() == 2 and items.item(0).text().startswith("My chat")
    assert [(m.role, m.content) for m in store.get(mine).messages] == [
        ("user", "Hello"),
        ("assistant", "Hi there"),
    ]
