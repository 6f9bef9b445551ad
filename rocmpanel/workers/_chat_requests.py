"""The chat worker's commands as typed records, checked once where they arrive.

A private sibling of ``chat.py``. The panel sends every value explicitly: the sampling
defaults and ranges are declared once, in ``rocmpanel.base.settings.ChatSettings``. When a
command leaves a sampling value out, the worker does not substitute a default of its own:
it switches that feature off (greedy decoding, no penalty, no top-k/top-p cut) and bounds
the reply at ``FALLBACK_MAX_NEW_TOKENS``, a safety net for hand-written commands.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _wire
from _chat_errors import WorkerFailure

FALLBACK_MAX_NEW_TOKENS = 256


def _number(cmd: Mapping[str, Any], key: str, kind: type, fallback: Any) -> Any:
    value = cmd.get(key)
    if value is None:
        return fallback
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WorkerFailure(f"{key} must be a number, not {value!r}.", "bad_command")
    return kind(value)


@dataclass(frozen=True)
class LoadCommand:
    """Load ``path`` at ``precision`` (``_wire.PRECISIONS``) on ``device`` (``_wire.DEVICES``)."""

    path: Path
    precision: str
    device: str
    context_length: int | None  # None: what the model was trained for
    trust_remote_code: bool

    @classmethod
    def parse(cls, cmd: Mapping[str, Any]) -> LoadCommand:
        precision = str(cmd.get("precision", ""))
        if precision not in _wire.PRECISIONS:
            raise WorkerFailure(f"Unknown precision {precision!r}.", "bad_command")
        device = str(cmd.get("device", "auto")).strip().lower()
        device = "gpu" if device == "cuda" else device  # torch's name, as older panels sent it
        if device not in _wire.DEVICES:
            raise WorkerFailure(f"Unknown device {device!r}.", "bad_command")
        context = _number(cmd, "context_length", int, None)
        return cls(
            path=Path(str(cmd.get("path", ""))).expanduser(),
            precision=precision,
            device=device,
            context_length=context if context else None,
            trust_remote_code=cmd.get("trust_remote_code") is True,
        )


@dataclass(frozen=True)
class Sampling:
    """How the next token is picked; ``temperature`` 0 is greedy, ``seed`` None random."""

    temperature: float
    top_p: float
    top_k: int
    repetition_penalty: float
    seed: int | None

    def generate_kwargs(self) -> dict[str, Any]:
        """The sampling arguments of ``model.generate``."""
        kwargs: dict[str, Any] = {"do_sample": self.temperature > 0}
        if self.temperature > 0:
            kwargs.update(temperature=self.temperature, top_p=self.top_p, top_k=self.top_k)
        kwargs["repetition_penalty"] = self.repetition_penalty
        return kwargs


@dataclass(frozen=True)
class GenerateCommand:
    """One reply to ``messages`` (role/content dicts, oldest first) for ``request_id``."""

    request_id: int | None
    messages: tuple[dict[str, str], ...]
    system: str
    max_new_tokens: int
    sampling: Sampling

    @classmethod
    def parse(cls, cmd: Mapping[str, Any]) -> GenerateCommand:
        raw_id = cmd.get("id")
        request_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
        messages = []
        raw_messages = cmd.get("messages")
        for message in raw_messages if isinstance(raw_messages, list) else []:
            if isinstance(message, dict) and message.get("role") in _wire.ROLES:
                messages.append(
                    {"role": str(message["role"]), "content": str(message.get("content", ""))}
                )
        seed = _number(cmd, "seed", int, None)
        return cls(
            request_id=request_id,
            messages=tuple(messages),
            system=str(cmd.get("system") or ""),
            max_new_tokens=max(1, _number(cmd, "max_new_tokens", int, FALLBACK_MAX_NEW_TOKENS)),
            sampling=Sampling(
                temperature=max(0.0, _number(cmd, "temperature", float, 0.0)),
                top_p=_number(cmd, "top_p", float, 1.0),
                top_k=_number(cmd, "top_k", int, 0),
                repetition_penalty=_number(cmd, "repetition_penalty", float, 1.0),
                seed=seed if seed is not None and seed >= 0 else None,
            ),
        )
