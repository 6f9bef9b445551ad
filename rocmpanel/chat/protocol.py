"""The chat worker's commands and answers as typed records (the worker itself is stdlib).

The panel builds a :class:`LoadRequest` or :class:`GenerateRequest` and sends
``request.op, **request.fields()`` through an interactive job; the worker answers with
result events whose ``kind`` is ``loaded``, ``reply`` or ``unloaded``, read back here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rocmpanel.chat.memory_estimate import SMALLER, Precision
from rocmpanel.chat.store import ReplyFigures

WORKER = "chat"
ALLOW_HUB_ARG = "--allow-hub"


@dataclass(frozen=True)
class Sampling:
    """How the next token is picked. ``temperature`` 0 means greedy; ``seed`` -1: random."""

    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 50
    repetition_penalty: float = 1.1
    max_new_tokens: int = 512
    seed: int = -1


@dataclass(frozen=True)
class LoadRequest:
    """Load a model folder at a precision on a device ("auto", "cuda" or "cpu")."""

    path: str
    precision: Precision = Precision.NF4
    device: str = "auto"
    context_length: int = 4096
    trust_remote_code: bool = False

    op: ClassVar[str] = "load"

    def fields(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "precision": self.precision.value,
            "device": self.device,
            "context_length": self.context_length,
            "trust_remote_code": self.trust_remote_code,
        }


@dataclass(frozen=True)
class GenerateRequest:
    """One reply to ``messages`` (role/content pairs, oldest first)."""

    id: int
    messages: tuple[tuple[str, str], ...]
    system: str = ""
    sampling: Sampling = Sampling()

    op: ClassVar[str] = "generate"

    def fields(self) -> dict[str, Any]:
        s = self.sampling
        return {
            "id": self.id,
            "messages": [{"role": r, "content": c} for r, c in self.messages],
            "system": self.system,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "top_k": s.top_k,
            "repetition_penalty": s.repetition_penalty,
            "max_new_tokens": s.max_new_tokens,
            "seed": s.seed if s.seed >= 0 else None,
        }


def messages_from(pairs: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple((str(r), str(c)) for r, c in pairs)


@dataclass(frozen=True)
class LoadedModel:
    """What the worker reported after a load."""

    path: str
    precision: str
    device: str
    device_name: str
    parameters: int | None
    context_length: int
    load_s: float | None
    memory_bytes: int | None
    memory_kind: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoadedModel:
        def opt_int(key: str) -> int | None:
            value = data.get(key)
            return int(value) if isinstance(value, (int, float)) else None

        load_s = data.get("load_s")
        return cls(
            path=str(data.get("path", "")),
            precision=str(data.get("precision", "")),
            device=str(data.get("device", "")),
            device_name=str(data.get("device_name", "")),
            parameters=opt_int("parameters"),
            context_length=opt_int("context_length") or 0,
            load_s=float(load_s) if isinstance(load_s, (int, float)) else None,
            memory_bytes=opt_int("memory_bytes"),
            memory_kind=str(data.get("memory_kind", "")),
        )


@dataclass(frozen=True)
class Reply:
    """A finished reply: its full text and figures."""

    id: int | None
    text: str
    figures: ReplyFigures
    finish: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reply:
        raw_id = data.get("id")
        return cls(
            id=int(raw_id) if isinstance(raw_id, int) else None,
            text=str(data.get("text", "")),
            figures=ReplyFigures.from_dict(data),
            finish=str(data.get("finish", "")),
        )


def result_kind(data: Mapping[str, Any]) -> str:
    return str(data.get("kind", ""))


def smaller_setting(precision: Precision, context_length: int) -> tuple[Precision, int]:
    """What to offer after an out-of-memory or a killed worker: less precision or context."""
    smaller = SMALLER.get(precision)
    if smaller is not None:
        return smaller, context_length
    return precision, max(512, context_length // 2)
