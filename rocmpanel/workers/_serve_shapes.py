"""What the chat worker's HTTP server sends back, in the OpenAI API's shapes (stdlib).

A private sibling of ``chat.py``: the non-streaming ``chat.completion`` and
``text_completion`` objects, the stream chunks, usage, the model list, and
:class:`StopMatcher`, which cuts the reply at the first stop sequence and holds back text
that may still become one. The requests are read in ``_serve_api``.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

from _serve_api import ApiRequest


class StopMatcher:
    """Cuts streamed text at the first stop sequence, never sending a stop sequence's start.

    ``feed(text)`` returns the text that is safe to send now and whether a stop sequence was
    reached (then generation should stop); ``flush()`` returns what was held back at the end.
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(s for s in stops if s)
        self._held = ""
        self.hit = False

    def feed(self, text: str) -> tuple[str, bool]:
        """The text safe to send now, and whether a stop sequence was reached."""
        if self.hit:
            return "", True
        if not self.stops:
            return text, False
        held = self._held + text
        # The stop sequence completed first wins (the longest of those ending together),
        # so the cut does not depend on how the text was split into pieces.
        found = [(i + len(s), i) for s, i in ((s, held.find(s)) for s in self.stops) if i >= 0]
        if found:
            self.hit = True
            self._held = ""
            return held[: min(found)[1]], True
        keep = self._partial(held)
        self._held = held[len(held) - keep :]
        return held[: len(held) - keep], False

    def _partial(self, held: str) -> int:
        """The length of the longest end of ``held`` that starts some stop sequence."""
        longest = min(len(held), max(len(s) for s in self.stops) - 1)
        for size in range(longest, 0, -1):
            tail = held[-size:]
            if any(s.startswith(tail) for s in self.stops):
                return size
        return 0

    def flush(self) -> str:
        """What was held back, once generation ended without reaching a stop sequence."""
        held, self._held = self._held, ""
        return "" if self.hit else held


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    """OpenAI's CompletionUsage (openai/types/completion_usage.py)."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def completion_id(kind: str) -> str:
    """``chatcmpl-<hex>`` or ``cmpl-<hex>``."""
    prefixes = {"chat": "chatcmpl-", "completion": "cmpl-"}
    if kind not in prefixes:
        raise ValueError(f"kind must be 'chat' or 'completion', not {kind!r}")
    return prefixes[kind] + secrets.token_hex(12)


def _envelope(req: ApiRequest, id: str, created: int, model: str, stream: bool) -> dict[str, Any]:
    if req.kind == "chat":
        obj = "chat.completion.chunk" if stream else "chat.completion"
    else:
        obj = "text_completion"  # streamed or not (openai/types/completion.py)
    return {"id": id, "object": obj, "created": created, "model": model}


def response(
    req: ApiRequest,
    *,
    id: str,
    created: int,
    model: str,
    text: str,
    finish_reason: str,
    prompt_tokens: int,
    completion_tokens: int,
) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` or ``text_completion`` object."""
    choice: dict[str, Any]
    if req.kind == "chat":
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": finish_reason,
            "logprobs": None,
        }
    else:
        choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": finish_reason}
    return {
        **_envelope(req, id, created, model, False),
        "choices": [choice],
        "usage": usage(prompt_tokens, completion_tokens),
    }


def chunk(
    req: ApiRequest,
    *,
    id: str,
    created: int,
    model: str,
    text: str | None = None,
    role: bool = False,
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """One streaming chunk (``chat.completion.chunk`` / ``text_completion``).

    With ``include_usage`` every chunk carries ``"usage": null``, as OpenAI documents for
    ``stream_options`` (openai/types/chat/chat_completion_stream_options_param.py).
    """
    choice: dict[str, Any]
    if req.kind == "chat":
        delta: dict[str, str] = {}
        if role:
            delta["role"] = "assistant"
        if text is not None:
            delta["content"] = text
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
    else:
        choice = {
            "text": text or "",
            "index": 0,
            "logprobs": None,
            "finish_reason": finish_reason,
        }
    out = {**_envelope(req, id, created, model, True), "choices": [choice]}
    if req.include_usage:
        out["usage"] = None
    return out


def usage_chunk(
    req: ApiRequest,
    *,
    id: str,
    created: int,
    model: str,
    prompt_tokens: int,
    completion_tokens: int,
) -> dict[str, Any]:
    """The last chunk when ``stream_options.include_usage``: empty choices, usage set."""
    return {
        **_envelope(req, id, created, model, True),
        "choices": [],
        "usage": usage(prompt_tokens, completion_tokens),
    }


def models_list(model_id: str, created: int) -> dict[str, Any]:
    """``GET /v1/models``: the one loaded model (openai/types/model.py)."""
    return {
        "object": "list",
        "data": [{"id": model_id, "object": "model", "created": created, "owned_by": "rocmpanel"}],
    }
