"""The OpenAI API's request and response shapes, for the chat worker's HTTP server (stdlib).

A private sibling of ``chat.py`` (workers import nothing of rocmpanel). Requests are read
once, here, into typed records, and every problem becomes an :class:`ApiError` with the
HTTP status and OpenAI's error body; responses and stream chunks are built here too, so
the HTTP layer (``_serve_front``) only moves them. :class:`StopMatcher` cuts the reply at
the first stop sequence and holds back text that may still become one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_STOP_SEQUENCES = 4


class ApiError(Exception):
    """A request the server refuses: status, OpenAI error body, extra headers."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        """``{"error": {"message", "type", "param", "code"}}``."""
        raise NotImplementedError


@dataclass(frozen=True)
class SamplingParams:
    """``temperature`` 0 = greedy; ``seed`` None = random."""

    temperature: float
    top_p: float
    seed: int | None


@dataclass(frozen=True)
class ApiRequest:
    """One checked completion request.

    ``kind`` "chat" (``messages`` set, role/content dicts after the role mapping) or
    "completion" (``prompt`` set). ``max_tokens`` None = what is left of the context.
    """

    kind: str
    model: str
    messages: tuple[dict[str, str], ...] = ()
    prompt: str = ""
    max_tokens: int | None = None
    sampling: SamplingParams = field(default_factory=lambda: SamplingParams(1.0, 1.0, None))
    stop: tuple[str, ...] = ()
    stream: bool = False
    include_usage: bool = False


def parse_chat(body: Any) -> ApiRequest:
    """A ``/v1/chat/completions`` body (already JSON-decoded); ApiError 400 naming the field."""
    raise NotImplementedError


def parse_completion(body: Any) -> ApiRequest:
    """A ``/v1/completions`` body (already JSON-decoded); ApiError 400 naming the field."""
    raise NotImplementedError


def check_context(prompt_tokens: int, max_tokens: int | None, context_length: int) -> int:
    """The number of new tokens to generate; ApiError 400 ``context_length_exceeded`` (with
    the numbers) when the prompt and ``max_tokens`` do not fit ``context_length``."""
    raise NotImplementedError


class StopMatcher:
    """Cuts streamed text at the first stop sequence, never sending a stop sequence's start.

    ``feed(text)`` returns the text that is safe to send now and whether a stop sequence was
    reached (then generation should stop); ``flush()`` returns what was held back at the end.
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(s for s in stops if s)

    def feed(self, text: str) -> tuple[str, bool]:
        raise NotImplementedError

    def flush(self) -> str:
        raise NotImplementedError


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    raise NotImplementedError


def completion_id(kind: str) -> str:
    """``chatcmpl-<hex>`` or ``cmpl-<hex>``."""
    raise NotImplementedError


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
    raise NotImplementedError


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
    """One streaming chunk (``chat.completion.chunk`` / ``text_completion``)."""
    raise NotImplementedError


def usage_chunk(
    req: ApiRequest, *, id: str, created: int, model: str, prompt_tokens: int, completion_tokens: int
) -> dict[str, Any]:
    """The last chunk when ``stream_options.include_usage``: empty choices, usage set."""
    raise NotImplementedError


def models_list(model_id: str, created: int) -> dict[str, Any]:
    raise NotImplementedError
