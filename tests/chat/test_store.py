"""The chat history in sqlite: conversations, messages with figures, search, export, and
its own file with a schema version, carried over from the legacy shared file."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.errors import PanelError
from rocmpanel.chat.export import export_json, export_markdown
from rocmpanel.chat.store import (
    RECENT_KEPT,
    ChatStore,
    ReplyFigures,
    title_from,
)

FIGURES = ReplyFigures(
    prompt_tokens=12,
    new_tokens=40,
    ttft_s=0.12,
    tokens_per_s=25.5,
    peak_memory_bytes=5 * 1024**3,
    memory_kind="vram",
    device=Device.GPU,
    precision=Precision.NF4,
)


def test_the_store_has_its_own_file_with_a_schema_version() -> None:
    store = ChatStore()
    assert store.path == paths.chat_database_file() != paths.database_file()
    # Reading a history that does not exist yet writes nothing; the first write makes it.
    assert store.conversations() == [] and store.recent_models() == []
    assert not store.path.parent.exists()
    store.create("first")
    assert store.path.is_file()
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    assert not paths.database_file().exists()  # no legacy file: none is made


def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "chat.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    before = path.read_bytes()
    with pytest.raises(PanelError, match="made by a newer rocmpanel"):
        ChatStore(path).conversations()
    assert path.read_bytes() == before  # left as it is, not moved aside
    assert [p.name for p in tmp_path.iterdir()] == ["chat.sqlite3"]


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


def test_truncate_update_delete(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "db.sqlite3")
    cid = store.create()
    for i in range(4):
        store.add_message(cid, "user" if i % 2 == 0 else "assistant", f"m{i}")
    store.truncate(cid, 2)
    assert [m.content for m in store.get(cid).messages] == ["m0", "m1"]
    store.add_message(cid, "user", "m2 again")
    assert [m.content for m in store.get(cid).messages][-1] == "m2 again"
    store.update_header(cid, model="/m", system_prompt="S")
    assert store.get(cid).model == "/m" and store.get(cid).system_prompt == "S"
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
    store.remember_model("/a", Precision.NF4)
    store.remember_model("/b", Precision.BF16)
    store.remember_model("/a", Precision.INT8)
    assert store.recent_models()[:2] == [("/a", Precision.INT8), ("/b", Precision.BF16)]
    for i in range(RECENT_KEPT + 5):
        store.remember_model(f"/m{i}", Precision.NF4)
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


def test_figures_keep_device_and_precision_as_enums(tmp_path: Path) -> None:
    # Records written before the enums said "cuda"; unknown text is not an error.
    old = ReplyFigures.from_dict({"device": "cuda", "precision": "nf4", "new_tokens": 1})
    assert old.device is Device.GPU and old.precision is Precision.NF4
    assert ReplyFigures.from_dict({"device": "tpu", "precision": "q2"}).device is None
    assert FIGURES.as_dict()["device"] == "gpu" and FIGURES.as_dict()["precision"] == "nf4"
    assert json.loads(json.dumps(FIGURES.as_dict()))["device"] == "gpu"


# The legacy shared file, exactly as rocmpanel wrote it before chats had their own file:
# the schema by executescript, then rows as ChatStore inserted them.
LEGACY_SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_conversations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    system_prompt TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chat_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER NOT NULL REFERENCES chat_conversations(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    figures TEXT,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_messages_by_conversation
    ON chat_messages(conversation_id, position);
CREATE TABLE IF NOT EXISTS chat_recent_models (
    path TEXT PRIMARY KEY,
    precision TEXT NOT NULL DEFAULT '',
    last_used REAL NOT NULL
);
"""
OLD_FIGURES = {
    "prompt_tokens": 12,
    "new_tokens": 40,
    "ttft_s": 0.12,
    "tokens_per_s": 25.5,
    "peak_memory_bytes": 5 * 1024**3,
    "memory_kind": "vram",
    "device": "cuda",
    "precision": "nf4",
    "stopped": False,
}


def write_legacy_file(path: Path) -> None:
    now = time.time()
    with sqlite3.connect(path) as db:
        db.executescript(LEGACY_SCHEMA)
        # The validation store shared the file; its tables must not bother the chat.
        db.execute("CREATE TABLE validation_runs (id INTEGER PRIMARY KEY, data TEXT)")
        for title in ("First chat", "Second chat"):
            cid = db.execute(
                "INSERT INTO chat_conversations (title, model, system_prompt, created, updated)"
                " VALUES (?, ?, ?, ?, ?)",
                (title, "/models/llama", "Be brief.", now, now),
            ).lastrowid
            for position, (role, content, figures) in enumerate(
                [("user", f"Hello from {title}", None), ("assistant", "Hi!", OLD_FIGURES)]
            ):
                db.execute(
                    "INSERT INTO chat_messages (conversation_id, position, role, content,"
                    " figures, created) VALUES (?, ?, ?, ?, ?, ?)",
                    (cid, position, role, content, json.dumps(figures) if figures else None, now),
                )
        db.execute(
            "INSERT INTO chat_recent_models (path, precision, last_used) VALUES (?, ?, ?)",
            ("/models/llama", "nf4", now),
        )


def test_chats_of_the_legacy_shared_file_are_carried_over() -> None:
    legacy = paths.database_file()
    legacy.parent.mkdir(parents=True, exist_ok=True)
    write_legacy_file(legacy)
    store = ChatStore()
    assert store.path == paths.chat_database_file()
    titles = [c.title for c in store.conversations()]
    assert sorted(titles) == ["First chat", "Second chat"]
    first = next(c for c in store.conversations() if c.title == "First chat")
    conversation = store.get(first.id)
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("user", "Hello from First chat"),
        ("assistant", "Hi!"),
    ]
    assert conversation.system_prompt == "Be brief."
    assert conversation.messages[1].figures == FIGURES
    assert store.recent_models() == [("/models/llama", Precision.NF4)]
    # New rows get new ids after the carried ones; the legacy file is left as it was.
    new = store.create("Third")
    assert new > max(c.id for c in store.conversations() if c.title != "Third")
    with sqlite3.connect(legacy) as db:
        assert db.execute("SELECT COUNT(*) FROM chat_conversations").fetchone()[0] == 2
    # Carried over once, when the file was made: a second store does not copy again.
    assert len(ChatStore().conversations()) == 3


def test_a_damaged_legacy_file_is_left_alone_and_the_history_works(tmp_path: Path) -> None:
    legacy = tmp_path / "rocmpanel.sqlite3"
    garbage = b"not a database at all " * 200
    legacy.write_bytes(garbage)
    store = ChatStore(tmp_path / "chat.sqlite3", legacy=legacy)
    new = store.create("Works")
    assert [c.id for c in store.conversations()] == [new]
    assert legacy.read_bytes() == garbage


def test_a_legacy_file_without_chats_carries_nothing(tmp_path: Path) -> None:
    legacy = tmp_path / "rocmpanel.sqlite3"
    with sqlite3.connect(legacy) as db:
        db.execute("CREATE TABLE validation_runs (id INTEGER PRIMARY KEY, data TEXT)")
    store = ChatStore(tmp_path / "chat.sqlite3", legacy=legacy)
    assert store.conversations() == [] and store.recent_models() == []


def test_peak_memory_is_shown_in_binary_units() -> None:
    vram = ReplyFigures(peak_memory_bytes=3 * 1024**3 + 512 * 1024**2, memory_kind="vram")
    assert "peak 3.50 GiB VRAM" in vram.summary()
    assert "peak 900.00 MiB RSS" in ReplyFigures(peak_memory_bytes=900 * 1024**2).summary()
