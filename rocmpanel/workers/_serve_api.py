"""The OpenAI API's request and response shapes, for the chat worker's HTTP server (stdlib).

A private sibling of ``chat.py`` (workers import nothing of rocmpanel). Requests are read
once, here, into typed records, and every problem becomes an :class:`ApiError` with the
HTTP status and OpenAI's error body. What goes back (responses, stream chunks, the stop
sequence cut) is built in ``_serve_shapes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_STOP_SEQUENCES = 4
# transformers.set_seed also seeds numpy, whose seeds run from 0 to 2**32 - 1.
MAX_SEED = 2**32 - 1
# Roles of OpenAI's ChatCompletionMessageParam; "developer" replaces "system" for newer
# models (openai/types/chat/chat_completion_developer_message_param.py).
ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
NO_TOOLS = "it serves no tools or functions"
# Content part types of OpenAI's message params that carry something other than text.
MEDIA_PARTS = frozenset({"image_url", "input_audio", "file", "image", "audio", "input_image"})


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
        # The shape of openai/types/shared/error_object.py (ErrorObject).
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


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


def _shown(value: Any) -> str:
    """A value as the client wrote it in JSON, short, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return repr(text)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "an empty list" if not value else "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _bad(param: str, message: str) -> ApiError:
    return ApiError(400, message, param=param)


def _unsupported(param: str, message: str) -> ApiError:
    return ApiError(400, message, param=param, code="unsupported_parameter")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _model(body: dict[str, Any]) -> str:
    model = body.get("model")
    if model is None:
        raise _bad("model", "'model' is required: name any model; the loaded model answers.")
    if not isinstance(model, str):
        raise _bad("model", f"'model' must be a string, not {_shown(model)}.")
    return model


def _max_tokens(body: dict[str, Any], names: tuple[str, ...]) -> int | None:
    """``max_tokens`` (and chat's ``max_completion_tokens``): an int >= 1, or None."""
    found: dict[str, int] = {}
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        if not _is_int(value) or value < 1:
            raise _bad(name, f"'{name}' must be an integer of at least 1, not {_shown(value)}.")
        found[name] = value
    if len(set(found.values())) > 1:
        a, b = names
        raise _bad(
            b,
            f"'{a}' ({found[a]}) and '{b}' ({found[b]}) disagree: send only one of them.",
        )
    return next(iter(found.values()), None)


def _sampling(body: dict[str, Any]) -> SamplingParams:
    temperature = body.get("temperature")
    if temperature is None:
        temperature = 1.0  # OpenAI's default
    elif not _is_number(temperature) or not 0 <= temperature <= 2:
        raise _bad(
            "temperature",
            f"'temperature' must be a number from 0 to 2, not {_shown(temperature)}.",
        )
    top_p = body.get("top_p")
    if top_p is None:
        top_p = 1.0
    elif not _is_number(top_p) or not 0 < top_p <= 1:
        raise _bad(
            "top_p",
            f"'top_p' must be a number greater than 0 and at most 1, not {_shown(top_p)}.",
        )
    seed = body.get("seed")
    if seed is not None and (not _is_int(seed) or not 0 <= seed <= MAX_SEED):
        raise _bad(
            "seed", f"'seed' must be an integer from 0 to {MAX_SEED} or null, not {_shown(seed)}."
        )
    return SamplingParams(float(temperature), float(top_p), seed)


def _stops(body: dict[str, Any]) -> tuple[str, ...]:
    stop = body.get("stop")
    if stop is None:
        return ()
    if isinstance(stop, str):
        return (stop,) if stop else ()
    if not isinstance(stop, list):
        raise _bad(
            "stop",
            f"'stop' must be a string or a list of up to {MAX_STOP_SEQUENCES} strings, "
            f"not {_shown(stop)}.",
        )
    if len(stop) > MAX_STOP_SEQUENCES:
        raise _bad(
            "stop",
            f"'stop' may hold at most {MAX_STOP_SEQUENCES} sequences, not {len(stop)}.",
        )
    for i, item in enumerate(stop):
        if not isinstance(item, str):
            raise _bad("stop", f"'stop[{i}]' must be a string, not {_shown(item)}.")
    return tuple(s for s in stop if s)


def _stream(body: dict[str, Any]) -> tuple[bool, bool]:
    """``stream`` and ``stream_options.include_usage``."""
    stream = body.get("stream")
    if stream is None:
        stream = False
    elif not isinstance(stream, bool):
        raise _bad("stream", f"'stream' must be true or false, not {_shown(stream)}.")
    options = body.get("stream_options")
    if options is None:
        return stream, False
    if not stream:
        raise _bad("stream_options", "'stream_options' is only allowed when 'stream' is true.")
    if not isinstance(options, dict):
        raise _bad(
            "stream_options",
            "'stream_options' must be an object like {\"include_usage\": true}, "
            f"not {_shown(options)}.",
        )
    usage_on = options.get("include_usage")
    if usage_on is not None and not isinstance(usage_on, bool):
        raise _bad(
            "stream_options.include_usage",
            f"'stream_options.include_usage' must be true or false, not {_shown(usage_on)}.",
        )
    return stream, bool(usage_on)


def _only(body: dict[str, Any], name: str, allowed: tuple[Any, ...], why: str) -> None:
    """Refuse ``name`` unless absent, null or one of ``allowed`` (``True`` is not ``1``)."""
    value = body.get(name)
    if value is None or any(type(value) is type(a) and value == a for a in allowed):
        return
    raise _unsupported(name, f"'{name}' is not supported by rocmpanel's server: {why}.")


def _common(body: Any, kind: str, token_names: tuple[str, ...]) -> dict[str, Any]:
    """The fields both endpoints share, checked, as ApiRequest keyword arguments."""
    if not isinstance(body, dict):
        raise ApiError(400, f"The request body must be a JSON object, not {_shown(body)}.")
    _only(body, "n", (1,), "it returns one choice per request; send one request per choice")
    stream, include_usage = _stream(body)
    return {
        "kind": kind,
        "model": _model(body),
        "max_tokens": _max_tokens(body, token_names),
        "sampling": _sampling(body),
        "stop": _stops(body),
        "stream": stream,
        "include_usage": include_usage,
    }


def _content(value: Any, where: str) -> str:
    """A message's content: a string, or a list of text parts joined with ""."""
    if isinstance(value, str):
        return value
    if value is None:
        raise _bad(where, f"'{where}' is required: a string or a list of text parts.")
    if not isinstance(value, list):
        raise _bad(
            where, f"'{where}' must be a string or a list of text parts, not {_shown(value)}."
        )
    texts: list[str] = []
    for j, part in enumerate(value):
        at = f"{where}[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(kind, str) and kind in MEDIA_PARTS:
            raise _unsupported(
                at, f"rocmpanel serves text-only models: {kind} parts are not supported."
            )
        if kind != "text":
            raise _bad(
                at,
                f'\'{at}\' must be a text part {{"type": "text", "text": ...}}, '
                f"not {_shown(part) if kind is None else 'of type ' + _shown(kind)}.",
            )
        text = part.get("text")
        if not isinstance(text, str):
            raise _bad(f"{at}.text", f"'{at}.text' must be a string, not {_shown(text)}.")
        texts.append(text)
    return "".join(texts)


def _message(value: Any, i: int) -> dict[str, str]:
    where = f"messages[{i}]"
    if not isinstance(value, dict):
        raise _bad(
            where, f"'{where}' must be an object with 'role' and 'content', not {_shown(value)}."
        )
    role = value.get("role")
    if isinstance(role, str) and role in ("tool", "function"):
        raise _unsupported(
            f"{where}.role",
            f"The '{role}' role is not supported by rocmpanel's server: {NO_TOOLS}.",
        )
    if not isinstance(role, str) or role not in ROLES:
        raise _bad(
            f"{where}.role",
            f"'{where}.role' must be one of system, developer, user, assistant, "
            f"not {_shown(role)}.",
        )
    for name in ("tool_calls", "function_call"):
        if value.get(name):
            raise _unsupported(
                f"{where}.{name}",
                f"'{where}.{name}' is not supported by rocmpanel's server: {NO_TOOLS}.",
            )
    return {"role": ROLES[role], "content": _content(value.get("content"), f"{where}.content")}


def parse_chat(body: Any) -> ApiRequest:
    """A ``/v1/chat/completions`` body (already JSON-decoded); ApiError 400 naming the field."""
    fields = _common(body, "chat", ("max_tokens", "max_completion_tokens"))
    for name in ("tools", "functions"):
        _only(body, name, ([],), f"{NO_TOOLS}; leave it out")
    for name in ("tool_choice", "function_call"):
        _only(body, name, ("none",), f"{NO_TOOLS}; leave it out")
    _only(body, "logprobs", (False,), "leave it out or set it to false")
    _only(body, "top_logprobs", (), "leave it out")
    fmt = body.get("response_format")
    if fmt is not None:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind is None:
            raise _bad(
                "response_format",
                '\'response_format\' must be an object like {"type": "text"}, '
                f"not {_shown(fmt)}.",
            )
        if kind != "text":
            raise _unsupported(
                "response_format",
                f"'response_format' of type {_shown(kind)} is not supported by rocmpanel's "
                'server: only {"type": "text"} is; ask for JSON in the prompt instead.',
            )
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad(
            "messages",
            '\'messages\' must be a non-empty list of {"role", "content"} objects, '
            f"not {_shown(messages)}.",
        )
    return ApiRequest(
        messages=tuple(_message(m, i) for i, m in enumerate(messages)),
        **fields,
    )


def parse_completion(body: Any) -> ApiRequest:
    """A ``/v1/completions`` body (already JSON-decoded); ApiError 400 naming the field."""
    fields = _common(body, "completion", ("max_tokens",))
    _only(body, "best_of", (1,), "it returns one choice per request; leave it out")
    _only(body, "logprobs", (False,), "leave it out")
    _only(body, "echo", (False,), "the reply never repeats the prompt; leave it out")
    _only(body, "suffix", ("",), "it only continues the prompt; leave it out")
    prompt = body.get("prompt")
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        if len(prompt) > 1:
            raise _unsupported(
                "prompt",
                f"'prompt' holds {len(prompt)} prompts; rocmpanel's server takes one per "
                "request: send one request per prompt.",
            )
        prompt = prompt[0]
    elif isinstance(prompt, list) and prompt:
        raise _unsupported(
            "prompt",
            "'prompt' as token ids is not supported by rocmpanel's server: send the text.",
        )
    if prompt is None:
        raise _bad("prompt", "'prompt' is required: the text to continue.")
    if not isinstance(prompt, str):
        raise _bad("prompt", f"'prompt' must be a string, not {_shown(prompt)}.")
    return ApiRequest(prompt=prompt, **fields)


def check_context(
    prompt_tokens: int, max_tokens: int | None, context_length: int, *, param: str = "messages"
) -> int:
    """The number of new tokens to generate; ApiError 400 ``context_length_exceeded`` (with
    the numbers) when the prompt and ``max_tokens`` do not fit ``context_length``."""
    if max_tokens is None:
        left = context_length - prompt_tokens
        if left >= 1:
            return left
        message = (
            f"This model's context is {context_length} tokens and the prompt has "
            f"{prompt_tokens} tokens, which leaves no room for a reply. Shorten the prompt."
        )
    else:
        total = prompt_tokens + max_tokens
        if total <= context_length:
            return max_tokens
        message = (
            f"This model's context is {context_length} tokens; the prompt has "
            f"{prompt_tokens} tokens and max_tokens asks for {max_tokens} more ({total} in "
            "all). Shorten the prompt or lower max_tokens."
        )
    raise ApiError(400, message, param=param, code="context_length_exceeded")


def check_length(
    req: ApiRequest, context_length: int, longest_token: int, *, param: str = "messages"
) -> None:
    """ApiError 400 ``context_length_exceeded`` for a prompt with more characters than
    ``context_length`` tokens of at most ``longest_token`` characters can hold: refused
    before the tokenizer spends seconds on it (0: the longest token is unknown, no check)."""
    if longest_token <= 0:
        return
    texts = [m["content"] for m in req.messages] if req.kind == "chat" else [req.prompt]
    chars = sum(len(text) for text in texts)
    if chars > context_length * longest_token:
        raise ApiError(
            400,
            f"This model's context is {context_length} tokens and the prompt has {chars} "
            f"characters, more than {context_length} tokens can hold (this tokenizer's "
            f"longest token is {longest_token} characters). Shorten the prompt.",
            param=param,
            code="context_length_exceeded",
        )
