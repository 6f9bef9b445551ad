"""The undo journal of environment applies: a write-ahead log, newest entry last.

An apply writes its entry as ``pending`` (every store's path, backup and before/after
sha256) before it touches any store, and marks it ``complete`` after; an undo marks the
entry ``undoing`` before it restores anything and drops it after. An entry that is not
``complete`` means a rocmpanel was stopped half-way: ``transaction.recover`` finishes or
rolls back its work. The file is written atomically; it is read through a bounded read and
checked entry by entry, and a damaged one is named with what to do (never overwritten:
``move_aside`` keeps it beside as ``env_undo.json.bad-<time>``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rocmpanel.base import paths
from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import CONFIG_LIMIT, read_bytes

KEEP_ENTRIES = 50
VERSION = 2
PENDING = "pending"
COMPLETE = "complete"
UNDOING = "undoing"
STATES = (PENDING, COMPLETE, UNDOING)

Entry = dict[str, Any]


class JournalError(PanelError):
    """The journal file cannot be read or does not have the expected shape."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"rocmpanel cannot read its undo journal {path}: {why}. Move it aside "
            f"(mv {path} {path}.bad) to continue; nothing was changed.",
            why,
        )
        self.path = path
        self.why = why


def journal_path() -> Path:
    return paths.data_dir() / "env_undo.json"


def _read() -> Any:
    path = journal_path()
    try:
        raw = read_bytes(path, CONFIG_LIMIT)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise JournalError(path, str(exc.strerror or exc)) from exc
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise JournalError(path, f"it is not UTF-8 text (byte {exc.start})") from exc
    except ValueError as exc:
        raise JournalError(path, f"it is not valid JSON ({exc})") from exc


def load() -> list[Entry]:
    """Every entry, oldest first ([] when there is no journal); JournalError when damaged."""
    data = _read()
    if data is None:
        return []
    return check(data, journal_path())


def _where(index: int, record: int | None = None) -> str:
    return f"entry {index + 1}" + ("" if record is None else f", record {record + 1}")


def _check_record(record: Any, where: str) -> str | None:
    if not isinstance(record, dict):
        return f"{where} is not an object"
    for key in ("store", "path", "written_sha256"):
        if not isinstance(record.get(key), str):
            return f"{where}: {key!r} is missing or not a string"
    for key in ("backup", "before_sha256"):
        if record.get(key) is not None and not isinstance(record[key], str):
            return f"{where}: {key!r} is not a string"
    if record["store"] == "registry":
        written = record.get("written")
        if not isinstance(written, dict):
            return f"{where}: 'written' is missing or not an object"
        for name, value in written.items():
            ok = value is None or (
                isinstance(value, list)
                and len(value) == 2
                and isinstance(value[0], str)
                and isinstance(value[1], int)
                and not isinstance(value[1], bool)
            )
            if not ok:
                return f"{where}: the written value of {name!r} is not [text, type]"
        if not isinstance(record.get("backup"), str):
            return f"{where}: 'backup' is missing or not a string"
    return None


def check(data: Any, path: Path) -> list[Entry]:
    """The entries of the parsed journal ``data``; JournalError naming what is wrong."""
    if not isinstance(data, dict):
        raise JournalError(path, "it is not a JSON object with an 'entries' list")
    version = data.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise JournalError(path, "its 'version' is not a number")
    if version > VERSION:
        raise JournalError(path, f"it was written by a newer rocmpanel (version {version})")
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise JournalError(path, "'entries' is missing or not a list")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise JournalError(path, f"{_where(index)} is not an object")
        state = entry.get("state", COMPLETE)
        if state not in STATES:
            raise JournalError(path, f"{_where(index)}: unknown state {state!r}")
        for key in ("summary", "time", "id"):
            if entry.get(key) is not None and not isinstance(entry[key], str):
                raise JournalError(path, f"{_where(index)}: {key!r} is not a string")
        records = entry.get("records")
        if not isinstance(records, list) or not records:
            raise JournalError(path, f"{_where(index)}: 'records' is missing or empty")
        for number, record in enumerate(records):
            problem = _check_record(record, _where(index, number))
            if problem:
                raise JournalError(path, problem)
    return [{**entry, "state": entry.get("state", COMPLETE)} for entry in entries]


def save(entries: list[Entry]) -> None:
    """Write the newest :data:`KEEP_ENTRIES` entries (atomically)."""
    text = json.dumps({"version": VERSION, "entries": entries[-KEEP_ENTRIES:]}, indent=2)
    write_atomic(journal_path(), (text + "\n").encode("utf-8"), follow_symlinks=False)


def move_aside() -> Path:
    """Rename the (damaged) journal to ``env_undo.json.bad-<time>``; returns the new path."""
    path = journal_path()
    target = paths.aside(path, "bad")
    try:
        os.replace(path, target)
    except OSError as exc:
        raise PanelError(
            f"rocmpanel cannot read its undo journal {path} and could not move it aside "
            f"({exc.strerror or exc}). Move it aside yourself (mv {path} {path}.bad); "
            "nothing was changed.",
            str(exc),
        ) from exc
    return target


def referenced_backups(entries: Iterable[Mapping[str, Any]]) -> set[str]:
    """The backups the entries still need (never pruned)."""
    return {
        str(record["backup"])
        for entry in entries
        for record in entry.get("records", [])
        if record.get("backup")
    }


# ---- the simple stack view (tests, tools) ---------------------------------------------------


def push(entry: Entry) -> None:
    save([*load(), {"state": COMPLETE, **entry}])


def peek() -> Entry | None:
    entries = load()
    return entries[-1] if entries else None


def pop() -> None:
    entries = load()
    if entries:
        save(entries[:-1])
