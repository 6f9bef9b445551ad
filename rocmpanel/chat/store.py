"""Saved chats in the panel's sqlite database: conversations, messages, recent models.

Tables are prefixed ``chat_`` because the database is shared with other features. Every
reply keeps its figures (tokens, time to first token, speed, peak memory), so a conversation
exported later still says how it was produced.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError

SCHEMA = """
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
ROLES = ("system", "user", "assistant")
RECENT_KEPT = 12
TITLE_CHARS = 60


@dataclass(frozen=True)
class ReplyFigures:
    """How one reply was produced (None: not reported)."""

    prompt_tokens: int | None = None
    new_tokens: int | None = None
    ttft_s: float | None = None
    tokens_per_s: float | None = None
    peak_memory_bytes: int | None = None
    memory_kind: str | None = None  # "vram" (torch allocator peak) or "rss" (process)
    device: str | None = None
    precision: str | None = None
    stopped: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReplyFigures:
        def num(key: str, kind: type) -> Any:
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return None
            return kind(value)

        def text(key: str) -> str | None:
            value = data.get(key)
            return str(value) if value is not None else None

        return cls(
            prompt_tokens=num("prompt_tokens", int),
            new_tokens=num("new_tokens", int),
            ttft_s=num("ttft_s", float),
            tokens_per_s=num("tokens_per_s", float),
            peak_memory_bytes=num("peak_memory_bytes", int),
            memory_kind=text("memory_kind"),
            device=text("device"),
            precision=text("precision"),
            stopped=bool(data.get("stopped", False)),
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        def fmt(value: float | int | None, pattern: str) -> str:
            return "n/a" if value is None else pattern.format(value)

        memory = "n/a"
        if self.peak_memory_bytes is not None:
            label = "VRAM" if self.memory_kind == "vram" else "RSS"
            memory = f"{self.peak_memory_bytes / 1024**2:.0f} MiB {label}"
        parts = [
            f"{fmt(self.new_tokens, '{}')} tokens",
            f"{fmt(self.tokens_per_s, '{:.1f}')} tok/s",
            f"TTFT {fmt(None if self.ttft_s is None else self.ttft_s * 1000, '{:.0f}')} ms",
            f"peak {memory}",
        ]
        if self.stopped:
            parts.append("stopped")
        return " · ".join(parts)


@dataclass(frozen=True)
class Message:
    """One message of a conversation."""

    role: str
    content: str
    figures: ReplyFigures | None = None
    id: int | None = None
    created: float = 0.0


@dataclass(frozen=True)
class Conversation:
    """A conversation's header and, when loaded with them, its messages."""

    id: int
    title: str
    model: str = ""
    system_prompt: str = ""
    created: float = 0.0
    updated: float = 0.0
    messages: tuple[Message, ...] = field(default=())


def title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


class ChatStore:
    """Conversations in sqlite; every method opens a short connection (thread-safe use)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else paths.database_file()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise PanelError(f"Could not open the chat history at {self.path}.", str(exc)) from exc

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=5.0)) as db:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA foreign_keys = ON")
            with db:  # one transaction, committed on success
                yield db

    # -- conversations -----------------------------------------------------------------
    def create(self, title: str = "New chat", model: str = "", system_prompt: str = "") -> int:
        now = time.time()
        with self._connect() as db:
            cursor = db.execute(
                "INSERT INTO chat_conversations (title, model, system_prompt, created, updated)"
                " VALUES (?, ?, ?, ?, ?)",
                (title, model, system_prompt, now, now),
            )
            return int(cursor.lastrowid or 0)

    def rename(self, conversation_id: int, title: str) -> None:
        with self._connect() as db:
            db.execute(
                "UPDATE chat_conversations SET title = ? WHERE id = ?", (title, conversation_id)
            )

    def update_header(self, conversation_id: int, *, model: str, system_prompt: str) -> None:
        with self._connect() as db:
            db.execute(
                "UPDATE chat_conversations SET model = ?, system_prompt = ? WHERE id = ?",
                (model, system_prompt, conversation_id),
            )

    def delete(self, conversation_id: int) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM chat_conversations WHERE id = ?", (conversation_id,))

    def _header(self, row: sqlite3.Row) -> Conversation:
        return Conversation(
            id=int(row["id"]),
            title=str(row["title"]),
            model=str(row["model"]),
            system_prompt=str(row["system_prompt"]),
            created=float(row["created"]),
            updated=float(row["updated"]),
        )

    def conversations(self, search: str = "", limit: int = 500) -> list[Conversation]:
        """Newest first; ``search`` matches titles and message text (case-insensitive)."""
        query = "SELECT * FROM chat_conversations"
        params: list[Any] = []
        if search.strip():
            pattern = (
                "%"
                + search.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                + "%"
            )
            query += (
                " WHERE title LIKE ? ESCAPE '\\' OR id IN (SELECT conversation_id FROM"
                " chat_messages WHERE content LIKE ? ESCAPE '\\')"
            )
            params += [pattern, pattern]
        query += " ORDER BY updated DESC, id DESC LIMIT ?"
        params.append(limit)
        with self._connect() as db:
            return [self._header(row) for row in db.execute(query, params)]

    def get(self, conversation_id: int) -> Conversation:
        with self._connect() as db:
            row = db.execute(
                "SELECT * FROM chat_conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
            if row is None:
                raise PanelError(f"Conversation {conversation_id} does not exist.")
            rows = db.execute(
                "SELECT * FROM chat_messages WHERE conversation_id = ? ORDER BY position, id",
                (conversation_id,),
            ).fetchall()
        messages = tuple(
            Message(
                role=str(r["role"]),
                content=str(r["content"]),
                figures=ReplyFigures.from_dict(json.loads(r["figures"])) if r["figures"] else None,
                id=int(r["id"]),
                created=float(r["created"]),
            )
            for r in rows
        )
        header = self._header(row)
        return Conversation(**{**asdict(header), "messages": messages})

    # -- messages ----------------------------------------------------------------------
    def add_message(
        self,
        conversation_id: int,
        role: str,
        content: str,
        figures: ReplyFigures | None = None,
    ) -> int:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        now = time.time()
        with self._connect() as db:
            (position,) = db.execute(
                "SELECT COALESCE(MAX(position), -1) + 1 FROM chat_messages"
                " WHERE conversation_id = ?",
                (conversation_id,),
            ).fetchone()
            cursor = db.execute(
                "INSERT INTO chat_messages (conversation_id, position, role, content, figures,"
                " created) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    conversation_id,
                    position,
                    role,
                    content,
                    json.dumps(figures.as_dict()) if figures else None,
                    now,
                ),
            )
            db.execute(
                "UPDATE chat_conversations SET updated = ? WHERE id = ?", (now, conversation_id)
            )
            return int(cursor.lastrowid or 0)

    def truncate(self, conversation_id: int, keep: int) -> None:
        """Keep the first ``keep`` messages (regenerate and edit-and-resend use this)."""
        with self._connect() as db:
            ids = [
                int(r[0])
                for r in db.execute(
                    "SELECT id FROM chat_messages WHERE conversation_id = ? ORDER BY position, id",
                    (conversation_id,),
                )
            ]
            for message_id in ids[max(0, keep) :]:
                db.execute("DELETE FROM chat_messages WHERE id = ?", (message_id,))

    # -- recent models -----------------------------------------------------------------
    def remember_model(self, path: str, precision: str = "") -> None:
        with self._connect() as db:
            db.execute(
                "INSERT INTO chat_recent_models (path, precision, last_used) VALUES (?, ?, ?)"
                " ON CONFLICT(path) DO UPDATE SET precision = excluded.precision,"
                " last_used = excluded.last_used",
                (path, precision, time.time()),
            )
            db.execute(
                "DELETE FROM chat_recent_models WHERE path NOT IN (SELECT path FROM"
                " chat_recent_models ORDER BY last_used DESC LIMIT ?)",
                (RECENT_KEPT,),
            )

    def recent_models(self) -> list[tuple[str, str]]:
        """(path, last precision) pairs, most recent first."""
        with self._connect() as db:
            return [
                (str(r["path"]), str(r["precision"]))
                for r in db.execute(
                    "SELECT path, precision FROM chat_recent_models ORDER BY last_used DESC"
                )
            ]


# -- export ----------------------------------------------------------------------------
def export_json(conversation: Conversation) -> str:
    data = {
        "title": conversation.title,
        "model": conversation.model,
        "system_prompt": conversation.system_prompt,
        "created": conversation.created,
        "messages": [
            {
                "role": m.role,
                "content": m.content,
                **({"figures": m.figures.as_dict()} if m.figures else {}),
            }
            for m in conversation.messages
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def export_markdown(conversation: Conversation) -> str:
    lines = [f"# {conversation.title}", ""]
    if conversation.model:
        lines += [f"Model: `{conversation.model}`", ""]
    if conversation.system_prompt:
        lines += ["**System:** " + conversation.system_prompt, ""]
    for message in conversation.messages:
        lines += [f"## {message.role.capitalize()}", "", message.content.rstrip(), ""]
        if message.figures:
            lines += [f"*{message.figures.summary()}*", ""]
    return "\n".join(lines)
