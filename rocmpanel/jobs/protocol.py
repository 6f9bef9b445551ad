"""The JSON-lines protocol between the panel and a worker, as typed events.

Child → panel: one JSON object per line with an ``event`` key:

- ``progress`` ``{fraction, step}``, ``log`` ``{message, level}``, ``result`` ``{data}``,
  ``error`` ``{message, kind, detail, ...}``: every job;
- ``check`` ``{check: {id, name, status, ...}}``: one finished check of a suite (validation);
- ``token`` ``{text, id, n}`` and ``reply`` ``{id, text, ...figures}``: a streamed chat reply
  and its end, both carrying the request id they answer.

Panel → child (interactive jobs): ``{"op": ...}``. A line that is not such an object, or
an event this panel does not know, becomes a :class:`RawLine`: logged, never fatal.
Workers cannot import this module; ``workers/_wire.py`` writes the same shapes and
``tests/jobs/test_protocol.py`` checks the two agree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rocmpanel.base.enums import CheckStatus


@dataclass(frozen=True)
class Progress:
    """How far a job is: ``fraction`` in 0..1 (None: unknown), and the current step."""

    fraction: float | None
    step: str = ""


@dataclass(frozen=True)
class LogLine:
    """A line for the job's log, from the worker's own log events or its stderr."""

    message: str
    level: str = "info"
    stream: str = "worker"  # "worker" (a log event), "stderr", or "stdout" (a raw line)


@dataclass(frozen=True)
class Result:
    """The job's result payload (what a worker reports when it is done)."""

    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkerError:
    """A failure the worker itself reported, with its kind (e.g. ``oom``) and detail."""

    message: str
    kind: str = "error"
    detail: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Token:
    """A piece of streamed text (chat): ``request_id`` is the request it answers,
    ``count`` the tokens it holds (None: not reported)."""

    text: str
    data: Mapping[str, Any] = field(default_factory=dict)
    request_id: int | None = None
    count: int | None = None


@dataclass(frozen=True)
class CheckDone:
    """One finished check of a suite, sent the moment it ends; ``record`` is the whole
    check as the worker reported it (figure, value, unit, detail, error, fix id)."""

    id: str
    name: str
    status: CheckStatus
    record: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReplyDone:
    """The end of a chat reply to request ``request_id``: its text and figures."""

    request_id: int | None
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RawLine:
    """A stdout line that was not a protocol object."""

    text: str


Event = Progress | LogLine | Result | WorkerError | Token | CheckDone | ReplyDone | RawLine

MAX_LINE_CHARS = 1_000_000


def _extra(obj: Mapping[str, Any], *known: str) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in known and k != "event"}


def _opt_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_line(line: str) -> Event:
    """Turn one stdout line into an event; anything unexpected becomes a RawLine."""
    text = line.rstrip("\r\n")
    if len(text) > MAX_LINE_CHARS:
        return RawLine(text[:200] + f"… ({len(text)} characters)")
    stripped = text.strip()
    if not stripped.startswith("{"):
        return RawLine(text)
    try:
        obj = json.loads(stripped)
    except ValueError:
        return RawLine(text)
    if not isinstance(obj, dict):
        return RawLine(text)
    kind = obj.get("event")
    try:
        if kind == "progress":
            raw = obj.get("fraction")
            fraction = None if raw is None else min(1.0, max(0.0, float(raw)))
            return Progress(fraction, str(obj.get("step", "")))
        if kind == "log":
            return LogLine(str(obj.get("message", "")), str(obj.get("level", "info")))
        if kind == "result":
            data = obj.get("data", _extra(obj))
            return Result(data if isinstance(data, dict) else {"value": data})
        if kind == "error":
            return WorkerError(
                str(obj.get("message", "the worker reported an error")),
                str(obj.get("kind", "error")),
                str(obj.get("detail", "")),
                _extra(obj, "message", "kind", "detail"),
            )
        if kind == "token":
            return Token(
                str(obj.get("text", "")),
                _extra(obj, "text"),
                request_id=_opt_int(obj.get("id")),
                count=_opt_int(obj.get("n")),
            )
        if kind == "check":
            record = obj.get("check")
            if not isinstance(record, dict) or not record.get("id"):
                return RawLine(text)
            return CheckDone(
                str(record["id"]),
                str(record.get("name") or record["id"]),
                CheckStatus.parse(record.get("status")),
                record,
            )
        if kind == "reply":
            return ReplyDone(_opt_int(obj.get("id")), str(obj.get("text", "")), _extra(obj, "text"))
    except (TypeError, ValueError):
        return RawLine(text)
    return RawLine(text)


def encode_command(op: str, **fields: Any) -> bytes:
    """One panel → worker command line."""
    return (json.dumps({"op": op, **fields}, ensure_ascii=False) + "\n").encode("utf-8")
