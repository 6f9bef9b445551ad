"""The chat history in sqlite: conversations, messages with figures, search, export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.chat.memory_estimate import Precision
from rocmpanel.chat.protocol import GenerateRequest, LoadRequest, Reply, Sampling
from rocmpanel.chat.store import (
    RECENT_KEPT,
    ChatStore,
    ReplyFigures,
    export_json,
    export_markdown,
    title_from,
)

FIGURES = ReplyFigures(
    prompt_tokens=12,
    new_tokens=40,
    ttft_s=0.12,
    tokens_per_s=25.5,
    peak_memory_bytes=5 * 1024**3,
    memory_kind="vram",
    device="cuda",
    precision="nf4",
)


def test_the_store_lives_in_the_panel_database() -> None:
    store = ChatStore()
    assert store.path == paths.database_file()
    assert store.path.is_file()


def test_conversation_round_trip(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "db.sqlite3")
    cid = store.create("Greeting", model="/models/llama", system_prompt="Be brief.")
    store.add_message(cid, "user", "Hello")
    store.add_message(cid, "assistant", "Hi! ```py\nprint(1)\n```", FIGURES)
    # A second store on the same file sees it: nothing is kept only in memory.
    again = ChatStore(tmp_path / "db.sqlite3").get(cid)
    assert again.title == "Greeting"
    assert again.system_prompt == "Be brief."
    assert [(m.role, m.content) for m in again.messages] == [
        ("user", "Hello"),
        ("assistant", "Hi! ```py\nprint(1)\n```"),
    ]
    assert again.messages[0].figures is None
    assert again.messages[1].figures == FIGURES


def test_truncate_rename_delete(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "db.sqlite3")
    cid = store.create()
    for i in range(4):
        store.add_message(cid, "user" if i % 2 == 0 else "assistant", f"m{i}")
    store.truncate(cid, 2)
    assert [m.content for m in store.get(cid).messages] == ["m0", "m1"]
    store.add_message(cid, "user", "m2 again")
    assert [m.content for m in store.get(cid).messages][-1] == "m2 again"
    store.rename(cid, "Renamed")
    store.update_header(cid, model="/m", system_prompt="S")
    assert store.get(cid).title == "Renamed" and store.get(cid).model == "/m"
    store.delete(cid)
    with pytest.raises(PanelError, match="does not exist"):
        store.get(cid)
    with pytest.raises(ValueError):
        store.add_message(store.create(), "robot", "x")


def test_search_matches_titles_and_messages_newest_first(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "db.sqlite3")
    a = store.create("About ROCm")
    b = store.create("Cooking")
    store.add_message(b, "user", "How long to boil 100% pasta_shapes?")
    c = store.create("Other")
    assert [x.id for x in store.conversations()] == [c, b, a]
    assert [x.id for x in store.conversations("rocm")] == [a]
    assert [x.id for x in store.conversations("PASTA")] == [b]
    # LIKE wildcards in the query are taken literally.
    assert [x.id for x in store.conversations("100%")] == [b]
    assert [x.id for x in store.conversations("a_s")] == [b]
    assert store.conversations("nothing like this") == []


def test_recent_models_most_recent_first_and_bounded(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "db.sqlite3")
    store.remember_model("/a", "nf4")
    store.remember_model("/b", "bf16")
    store.remember_model("/a", "int8")
    assert store.recent_models()[:2] == [("/a", "int8"), ("/b", "bf16")]
    for i in range(RECENT_KEPT + 5):
        store.remember_model(f"/m{i}", "nf4")
    assert len(store.recent_models()) == RECENT_KEPT


def test_exports(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "db.sqlite3")
    cid = store.create("Code", model="/models/tiny", system_prompt="You write Python.")
    store.add_message(cid, "user", "Add two numbers")
    store.add_message(cid, "assistant", "```python\ndef add(a, b):\n    return a + b\n```", FIGURES)
    conversation = store.get(cid)
    data = json.loads(export_json(conversation))
    assert data["title"] == "Code" and data["model"] == "/models/tiny"
    assert data["messages"][1]["figures"]["tokens_per_s"] == 25.5
    assert "figures" not in data["messages"][0]
    markdown = export_markdown(conversation)
    assert markdown.startswith("# Code\n")
    assert "## Assistant" in markdown and "def add(a, b):" in markdown
    assert "25.5 tok/s" in markdown and "TTFT 120 ms" in markdown


def test_figures_from_worker_data_tolerate_gaps() -> None:
    figures = ReplyFigures.from_dict({"new_tokens": 3, "tokens_per_s": None, "ttft_s": "x"})
    assert figures.new_tokens == 3 and figures.tokens_per_s is None and figures.ttft_s is None
    assert "n/a tok/s" in figures.summary()
    assert "stopped" in ReplyFigures(stopped=True).summary()
    assert title_from("  a\nlong   message  ") == "a long message"
    assert title_from("x" * 100).endswith("…") and len(title_from("x" * 100)) == 60


def test_protocol_records() -> None:
    load = LoadRequest("/m", Precision.INT8, "cpu", 2048)
    assert load.op == "load"
    assert load.fields()["precision"] == "int8" and load.fields()["trust_remote_code"] is False
    request = GenerateRequest(3, (("user", "hi"),), "sys", Sampling(seed=-1, temperature=0.0))
    fields = request.fields()
    assert fields["messages"] == [{"role": "user", "content": "hi"}]
    assert fields["seed"] is None and fields["temperature"] == 0.0
    reply = Reply.from_dict({"id": 3, "text": "ok", "new_tokens": 2, "finish": "eos"})
    assert reply.id == 3 and reply.figures.new_tokens == 2 and reply.finish == "eos"
