"""Saved chats in their own sqlite file (``data/chat.sqlite3``): conversations, messages,
recent models.

The file has a schema version (``PRAGMA user_version``) and migrations
(:mod:`rocmpanel.base.sqlite`): 1 is the schema of the shared ``rocmpanel.sqlite3`` that
earlier versions kept chats in (hence the ``chat_`` table prefix), 2 carries the chats a
user already has over from that legacy file when this one is created. Every reply keeps its
figures (tokens, time to first token, speed, peak memory), so a conversation exported later
still says how it was produced.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, closing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rocmpanel.base import paths
from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.sqlite import Migration, connect, recovery_notice
from rocmpanel.base.units import format_memory

log = logging.getLogger(__name__)

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
LEGACY_TABLES = ("chat_conversations", "chat_messages", "chat_recent_models")
WHAT = "chat history"
# The roles of a chat message, declared once on the panel's side (here, where messages are
# kept: chat.protocol imports this module). The chat worker keeps a copy in workers/_wire.py;
# tests/base/test_enums.py checks that it matches.
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
    device: Device | None = None
    precision: Precision | None = None
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
            device=_parsed(Device.parse, data.get("device")),
            precision=_parsed(Precision, data.get("precision")),
            stopped=bool(data.get("stopped", False)),
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain values (enums as their text), as exports and the database keep them."""
        data = asdict(self)
        data["device"] = self.device.value if self.device is not None else None
        data["precision"] = self.precision.value if self.precision is not None else None
        return data

    def summary(self) -> str:
        """The figures in one line, in English (exported files, the CLI)."""
        return self._summary(lambda text: text)

    def shown_summary(self) -> str:
        """The figures in one line, in the window's language."""
        return self._summary(lambda text: translate("ReplyFigures", text))

    def _summary(self, words: Callable[[str], str]) -> str:
        def fmt(value: float | int | None, pattern: str) -> str:
            return "n/a" if value is None else pattern.format(value)

        memory = "n/a"
        if self.peak_memory_bytes is not None:
            label = "VRAM" if self.memory_kind == "vram" else "RSS"
            memory = f"{format_memory(self.peak_memory_bytes)} {label}"
        ttft = None if self.ttft_s is None else self.ttft_s * 1000
        parts = [
            words(QT_TRANSLATE_NOOP("ReplyFigures", "{count} tokens")).format(
                count=fmt(self.new_tokens, "{}")
            ),
            words(QT_TRANSLATE_NOOP("ReplyFigures", "{rate} tok/s")).format(
                rate=fmt(self.tokens_per_s, "{:.1f}")
            ),
            words(QT_TRANSLATE_NOOP("ReplyFigures", "TTFT {ms} ms")).format(ms=fmt(ttft, "{:.0f}")),
            words(QT_TRANSLATE_NOOP("ReplyFigures", "peak {memory}")).format(memory=memory),
        ]
        if self.stopped:
            parts.append(words(QT_TRANSLATE_NOOP("ReplyFigures", "stopped")))
        return " · ".join(parts)


def _parsed(parse: Callable[[str], Any], value: object) -> Any:
    """``parse(value)``, or None for a missing or unknown value (an old or odd record)."""
    if value is None:
        return None
    try:
        return parse(str(value))
    except ValueError:
        return None


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


_LEGACY_COPIES = (
    ("chat_conversations", "id, title, model, system_prompt, created, updated"),
    ("chat_messages", "id, conversation_id, position, role, content, figures, created"),
    ("chat_recent_models", "path, precision, last_used"),
)


def _read_legacy(legacy: Path) -> list[tuple[str, str, list[tuple[Any, ...]]]] | None:
    """The chat rows of the legacy file, read-only; None when it has none or is unreadable
    (a damaged old file must not make the new history unusable: it is left as it is)."""
    try:
        uri = legacy.resolve().as_uri() + "?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=10)) as old:
            present = {
                str(row[0])
                for row in old.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if not set(LEGACY_TABLES) <= present:
                return None
            return [
                (table, columns, old.execute(f"SELECT {columns} FROM {table}").fetchall())
                for table, columns in _LEGACY_COPIES
            ]
    except sqlite3.DatabaseError as exc:
        log.warning("Could not carry over the chat history of %s: %s", legacy, exc)
        return None


def _carry_over_legacy(legacy: Path | None) -> Callable[[sqlite3.Connection], None]:
    """Migration 2: copy the chats of the legacy shared file, when it has any."""

    def carry_over(db: sqlite3.Connection) -> None:
        if legacy is None or not legacy.is_file():
            return
        tables = _read_legacy(legacy)
        if tables is None:
            return
        conversation_ids = {row[0] for row in tables[0][2]}
        for table, columns, rows in tables:
            if table == "chat_messages":  # orphans would break the foreign key
                rows = [r for r in rows if r[1] in conversation_ids]
            marks = ", ".join("?" for _ in columns.split(","))
            db.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)
        log.info("carried the chat history over from %s", legacy)

    return carry_over


def migrations(legacy: Path | None) -> tuple[Migration, ...]:
    """The chat file's migrations; ``legacy`` is the shared file earlier versions used."""
    return (
        Migration(1, "conversations, messages and recent models", SCHEMA),
        Migration(2, "carry over the chats of rocmpanel.sqlite3", _carry_over_legacy(legacy)),
    )


class ChatStore:
    """Conversations in sqlite; every method opens a short connection (thread-safe use).

    ``path`` defaults to ``data/chat.sqlite3``; ``legacy`` (by default the shared
    ``data/rocmpanel.sqlite3`` when ``path`` is the default) is read once, when the file
    is created. The file is made by the first write: reading a history that does not
    exist yet writes nothing (opening the Chat tab leaves the disk alone). A damaged file is
    moved aside and a new one started (:mod:`rocmpanel.base.sqlite`), which :attr:`notice`
    then says. Failures are PanelErrors that name the file.
    """

    def __init__(self, path: Path | None = None, legacy: Path | None = None) -> None:
        if path is None:
            path = paths.chat_database_file()
            legacy = legacy if legacy is not None else paths.database_file()
        self.path = path
        self._legacy = legacy
        self._migrations = migrations(legacy)

    @property
    def notice(self) -> str | None:
        """What was done about a damaged file in this process (moved aside, a new one
        started), for the user; None when nothing was."""
        return recovery_notice(self.path)

    def _nothing_saved(self) -> bool:
        """No file yet and no legacy chats to carry over: a read need not create one."""
        return not os.path.lexists(self.path) and not (
            self._legacy is not None and self._legacy.is_file()
        )

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        return connect(self.path, self._migrations, WHAT)

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

    def update_header(self, conversation_id: int, *, model: str, system_prompt: str) -> None:
        with self._connect() as db:
            db.execute(
                "UPDATE chat_conversations SET model = ?, system_prompt = ? WHERE id = ?",
                (model, system_prompt, conversation_id),
            )

    def delete(self, conversation_id: int) -> None:
        if self._nothing_saved():
            return
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
        if self._nothing_saved():
            return []
        with self._connect() as db:
            return [self._header(row) for row in db.execute(query, params)]

    def get(self, conversation_id: int) -> Conversation:
        if self._nothing_saved():
            raise PanelError(
                translate("ChatStore", "Conversation {id} does not exist.").format(
                    id=conversation_id
                )
            )
        with self._connect() as db:
            row = db.execute(
                "SELECT * FROM chat_conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
            if row is None:
                raise PanelError(
                    translate("ChatStore", "Conversation {id} does not exist.").format(
                        id=conversation_id
                    )
                )
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
        if self._nothing_saved():
            return
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
    def remember_model(self, path: str, precision: Precision) -> None:
        """Put ``path`` first among the recent models, with the precision it was loaded at."""
        with self._connect() as db:
            db.execute(
                "INSERT INTO chat_recent_models (path, precision, last_used) VALUES (?, ?, ?)"
                " ON CONFLICT(path) DO UPDATE SET precision = excluded.precision,"
                " last_used = excluded.last_used",
                (path, Precision(precision).value, time.time()),
            )
            db.execute(
                "DELETE FROM chat_recent_models WHERE path NOT IN (SELECT path FROM"
                " chat_recent_models ORDER BY last_used DESC LIMIT ?)",
                (RECENT_KEPT,),
            )

    def recent_models(self) -> list[tuple[str, Precision | None]]:
        """(path, last precision) pairs, most recent first (None: not recorded)."""
        if self._nothing_saved():
            return []
        with self._connect() as db:
            return [
                (str(r["path"]), _parsed(Precision, r["precision"] or None))
                for r in db.execute(
                    "SELECT path, precision FROM chat_recent_models ORDER BY last_used DESC"
                )
            ]
