"""The undo journal of environment applies: newest last, a few kept, written atomically."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rocmpanel.base import paths
from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.errors import PanelError

KEEP_ENTRIES = 10


def journal_path() -> Path:
    return paths.data_dir() / "env_undo.json"


def load() -> list[dict[str, Any]]:
    path = journal_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise PanelError(f"The undo journal {path} cannot be read.", str(exc)) from exc
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise PanelError(f"The undo journal {path} is damaged.", repr(data)[:200])
    return entries


def _save(entries: list[dict[str, Any]]) -> None:
    text = json.dumps({"version": 1, "entries": entries[-KEEP_ENTRIES:]}, indent=2)
    write_atomic(journal_path(), (text + "\n").encode("utf-8"))


def push(entry: dict[str, Any]) -> None:
    _save([*load(), entry])


def peek() -> dict[str, Any] | None:
    entries = load()
    return entries[-1] if entries else None


def pop() -> None:
    entries = load()
    if entries:
        _save(entries[:-1])
