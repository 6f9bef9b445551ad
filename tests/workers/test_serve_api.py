"""The worker's OpenAI request checks and response shapes (``workers/_serve_api.py``).

Pure: the module is imported by path, as the worker runs it; shapes are checked by building
the ``openai`` package's own pydantic models from them, so a wrong shape fails here.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types import Completion, CompletionUsage, Model
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.shared import ErrorObject

WORKERS = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers"


def _load(name: str) -> ModuleType:
    """A worker sibling by path, under its own name (as the worker imports its siblings)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, WORKERS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


api = _load("_serve_api")
shapes = _load("_serve_shapes")  # imports _serve_api by name: loaded just above

USER = [{"role": "user", "content": "Hi"}]


def chat(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "messages": USER, **fields}


def completion(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "prompt": "Once", **fields}


def refusal(parse: Any, body: Any) -> dict[str, Any]:
    """The error body of a refused request (always a 400 with no extra headers)."""
    with pytest.raises(api.ApiError) as caught:
        parse(body)
    assert caught.value.status == 400
    assert caught.value.headers == {}
    body_out = caught.value.body()
    ErrorObject.model_validate(body_out["error"])
    return dict(body_out["error"])


def bad(message: str, param: str | None) -> dict[str, Any]:
    return {"message": message, "type": "invalid_request_error", "param": param, "code": None}


def unsupported(message: str, param: str) -> dict[str, Any]:
    return {
        "message": message,
        "type": "invalid_request_error",
        "param": param,
        "code": "unsupported_parameter",
    }


# --- ApiError ----------------------------------------------------------------------------


def test_api_error_body_is_openai_error_shape() -> None:
    err = api.ApiError(
        429, "Busy.", code="queue_full", type="rate_limit_error", headers={"Retry-After": "3"}
    )
    assert err.body() == {
        "error": {
            "message": "Busy.",
            "type": "rate_limit_error",
            "param": None,
            "code": "queue_full",
        }
    }
    assert (err.status, err.headers, str(err)) == (429, {"Retry-After": "3"}, "Busy.")
    ErrorObject.model_validate(err.body()["error"])


# --- parse_chat: what is accepted ---------------------------------------------------------


def test_chat_minimal_defaults() -> None:
    req = api.parse_chat(chat())
    assert req == api.ApiRequest(
        kind="chat",
        model="m",
        messages=({"role": "user", "content": "Hi"},),
        max_tokens=None,
        sampling=api.SamplingParams(1.0, 1.0, None),
        stop=(),
        stream=False,
        include_usage=False,
    )


def test_chat_roles_parts_and_ignored_fields() -> None:
    body = chat(
        messages=[
            {"role": "developer", "content": "Be brief."},
            {
                "role": "system",
                "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}],
            },
            {"role": "user", "content": "Q", "name": "ann"},
            {"role": "assistant", "content": "", "tool_calls": []},
            {"role": "user", "content": []},
        ],
        presence_penalty=0.5,
        frequency_penalty=1,
        user="u1",
        logit_bias={"1": 2},
        metadata={"k": "v"},
        store=False,
        tools=[],
        tool_choice="none",
        logprobs=False,
        response_format={"type": "text"},
        n=1,
        some_future_field={"x": 1},
    )
    assert api.parse_chat(body).messages == (
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "AB"},
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": ""},
    )


def test_chat_nulls_mean_defaults() -> None:
    req = api.parse_chat(
        chat(
            temperature=None,
            top_p=None,
            seed=None,
            stop=None,
            stream=None,
            stream_options=None,
            max_tokens=None,
            max_completion_tokens=None,
            n=None,
            tools=None,
            functions=None,
            tool_choice=None,
            function_call=None,
            logprobs=None,
            top_logprobs=None,
            response_format=None,
        )
    )
    assert (req.sampling, req.max_tokens, req.stop, req.stream) == (
        api.SamplingParams(1.0, 1.0, None),
        None,
        (),
        False,
    )


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"max_tokens": 1}, 1),
        ({"max_completion_tokens": 7}, 7),
        ({"max_tokens": 7, "max_completion_tokens": 7}, 7),
        ({"max_tokens": None, "max_completion_tokens": 9}, 9),
    ],
)
def test_chat_max_tokens_accepted(fields: dict[str, Any], expected: int) -> None:
    assert api.parse_chat(chat(**fields)).max_tokens == expected


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"temperature": 0}, api.SamplingParams(0.0, 1.0, None)),
        ({"temperature": 2}, api.SamplingParams(2.0, 1.0, None)),
        ({"temperature": 0.7, "top_p": 1}, api.SamplingParams(0.7, 1.0, None)),
        ({"top_p": 0.001}, api.SamplingParams(1.0, 0.001, None)),
        ({"seed": 0}, api.SamplingParams(1.0, 1.0, 0)),
        ({"seed": 4294967295}, api.SamplingParams(1.0, 1.0, 4294967295)),
    ],
)
def test_sampling_boundaries_accepted(fields: dict[str, Any], expected: Any) -> None:
    assert api.parse_chat(chat(**fields)).sampling == expected
    assert api.parse_completion(completion(**fields)).sampling == expected


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("END", ("END",)),
        ("", ()),
        ([], ()),
        (["a", "", "b"], ("a", "b")),
        (["1", "2", "3", "4"], ("1", "2", "3", "4")),
    ],
)
def test_stop_accepted(stop: Any, expected: tuple[str, ...]) -> None:
    assert api.parse_chat(chat(stop=stop)).stop == expected
    assert api.parse_completion(completion(stop=stop)).stop == expected


@pytest.mark.parametrize(
    ("fields", "stream", "include_usage"),
    [
        ({"stream": True}, True, False),
        ({"stream": False}, False, False),
        ({"stream": True, "stream_options": {"include_usage": True}}, True, True),
        ({"stream": True, "stream_options": {"include_usage": False}}, True, False),
        ({"stream": True, "stream_options": {}}, True, False),
        ({"stream": False, "stream_options": None}, False, False),
    ],
)
def test_stream_accepted(fields: dict[str, Any], stream: bool, include_usage: bool) -> None:
    req = api.parse_chat(chat(**fields))
    assert (req.stream, req.include_usage) == (stream, include_usage)


# --- parse_chat / parse_completion: what is refused ----------------------------------------

COMMON_REFUSALS = [
    ([], bad("The request body must be a JSON object, not an empty list.", None)),
    (3, bad("The request body must be a JSON object, not 3.", None)),
    ("hi", bad("The request body must be a JSON object, not 'hi'.", None)),
    (None, bad("The request body must be a JSON object, not null.", None)),
    (
        {"model": None},
        bad("'model' is required: name any model; the loaded model answers.", "model"),
    ),
    ({"model": 5}, bad("'model' must be a string, not 5.", "model")),
    (
        {"model": "m", "max_tokens": 0},
        bad("'max_tokens' must be an integer of at least 1, not 0.", "max_tokens"),
    ),
    (
        {"model": "m", "max_tokens": True},
        bad("'max_tokens' must be an integer of at least 1, not true.", "max_tokens"),
    ),
    (
        {"model": "m", "max_tokens": 5.0},
        bad("'max_tokens' must be an integer of at least 1, not 5.0.", "max_tokens"),
    ),
    (
        {"model": "m", "max_tokens": "10"},
        bad("'max_tokens' must be an integer of at least 1, not '10'.", "max_tokens"),
    ),
    (
        {"model": "m", "temperature": 2.01},
        bad("'temperature' must be a number from 0 to 2, not 2.01.", "temperature"),
    ),
    (
        {"model": "m", "temperature": 3.5},
        bad("'temperature' must be a number from 0 to 2, not 3.5.", "temperature"),
    ),
    (
        {"model": "m", "temperature": -0.1},
        bad("'temperature' must be a number from 0 to 2, not -0.1.", "temperature"),
    ),
    (
        {"model": "m", "temperature": float("nan")},
        bad("'temperature' must be a number from 0 to 2, not nan.", "temperature"),
    ),
    (
        {"model": "m", "temperature": False},
        bad("'temperature' must be a number from 0 to 2, not false.", "temperature"),
    ),
    (
        {"model": "m", "top_p": 0},
        bad("'top_p' must be a number greater than 0 and at most 1, not 0.", "top_p"),
    ),
    (
        {"model": "m", "top_p": 1.5},
        bad("'top_p' must be a number greater than 0 and at most 1, not 1.5.", "top_p"),
    ),
    (
        {"model": "m", "seed": "1"},
        bad("'seed' must be an integer from 0 to 4294967295 or null, not '1'.", "seed"),
    ),
    (
        {"model": "m", "seed": -1},
        bad("'seed' must be an integer from 0 to 4294967295 or null, not -1.", "seed"),
    ),
    (
        {"model": "m", "seed": 4294967296},
        bad("'seed' must be an integer from 0 to 4294967295 or null, not 4294967296.", "seed"),
    ),
    (
        {"model": "m", "stop": ["1", "2", "3", "4", "5"]},
        bad("'stop' may hold at most 4 sequences, not 5.", "stop"),
    ),
    (
        {"model": "m", "stop": 5},
        bad("'stop' must be a string or a list of up to 4 strings, not 5.", "stop"),
    ),
    (
        {"model": "m", "stop": ["a", None]},
        bad("'stop[1]' must be a string, not null.", "stop"),
    ),
    ({"model": "m", "stream": "yes"}, bad("'stream' must be true or false, not 'yes'.", "stream")),
    (
        {"model": "m", "stream_options": {"include_usage": True}},
        bad("'stream_options' is only allowed when 'stream' is true.", "stream_options"),
    ),
    (
        {"model": "m", "stream": True, "stream_options": True},
        bad(
            "'stream_options' must be an object like {\"include_usage\": true}, not true.",
            "stream_options",
        ),
    ),
    (
        {"model": "m", "stream": True, "stream_options": {"include_usage": 1}},
        bad(
            "'stream_options.include_usage' must be true or false, not 1.",
            "stream_options.include_usage",
        ),
    ),
    (
        {"model": "m", "n": 2},
        unsupported(
            "'n' is not supported by rocmpanel's server: it returns one choice per request; "
            "send one request per choice.",
            "n",
        ),
    ),
    (
        {"model": "m", "n": True},
        unsupported(
            "'n' is not supported by rocmpanel's server: it returns one choice per request; "
            "send one request per choice.",
            "n",
        ),
    ),
]


@pytest.mark.parametrize(("fields", "error"), COMMON_REFUSALS)
def test_chat_refusals_shared_with_completions(fields: Any, error: dict[str, Any]) -> None:
    body = {"messages": USER, **fields} if isinstance(fields, dict) else fields
    assert refusal(api.parse_chat, body) == error
    body = {"prompt": "Once", **fields} if isinstance(fields, dict) else fields
    assert refusal(api.parse_completion, body) == error


def test_chat_model_missing() -> None:
    assert refusal(api.parse_chat, {"messages": USER}) == bad(
        "'model' is required: name any model; the loaded model answers.", "model"
    )


def test_chat_max_tokens_disagree() -> None:
    assert refusal(api.parse_chat, chat(max_tokens=10, max_completion_tokens=20)) == bad(
        "'max_tokens' (10) and 'max_completion_tokens' (20) disagree: send only one of them.",
        "max_completion_tokens",
    )


def test_chat_max_completion_tokens_checked() -> None:
    assert refusal(api.parse_chat, chat(max_completion_tokens=-3)) == bad(
        "'max_completion_tokens' must be an integer of at least 1, not -3.",
        "max_completion_tokens",
    )


MESSAGES_ERROR = '\'messages\' must be a non-empty list of {"role", "content"} objects, not '
NO_TOOLS = "is not supported by rocmpanel's server: it serves no tools or functions"


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"messages": None}, bad(MESSAGES_ERROR + "null.", "messages")),
        ({"messages": []}, bad(MESSAGES_ERROR + "an empty list.", "messages")),
        ({"messages": "Hi"}, bad(MESSAGES_ERROR + "'Hi'.", "messages")),
        (
            {"messages": ["Hi"]},
            bad(
                "'messages[0]' must be an object with 'role' and 'content', not 'Hi'.",
                "messages[0]",
            ),
        ),
        (
            {"messages": [*USER, {"role": "bot", "content": "x"}]},
            bad(
                "'messages[1].role' must be one of system, developer, user, assistant, not 'bot'.",
                "messages[1].role",
            ),
        ),
        (
            {"messages": [{"role": ["user"], "content": "x"}]},
            bad(
                "'messages[0].role' must be one of system, developer, user, assistant, not a list.",
                "messages[0].role",
            ),
        ),
        (
            {"messages": [{"role": {"user": 1}, "content": "x"}]},
            bad(
                "'messages[0].role' must be one of system, developer, user, assistant, "
                "not an object.",
                "messages[0].role",
            ),
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": ["text"], "text": "x"}]}]},
            bad(
                '\'messages[0].content[0]\' must be a text part {"type": "text", "text": ...}, '
                "not of type a list.",
                "messages[0].content[0]",
            ),
        ),
        (
            {"messages": [{"content": "x"}]},
            bad(
                "'messages[0].role' must be one of system, developer, user, assistant, not null.",
                "messages[0].role",
            ),
        ),
        (
            {"messages": [*USER, {"role": "tool", "content": "42", "tool_call_id": "c1"}]},
            unsupported(
                "The 'tool' role is not supported by rocmpanel's server: it serves no tools "
                "or functions.",
                "messages[1].role",
            ),
        ),
        (
            {"messages": [{"role": "function", "content": "42", "name": "f"}]},
            unsupported(
                "The 'function' role is not supported by rocmpanel's server: it serves no "
                "tools or functions.",
                "messages[0].role",
            ),
        ),
        (
            {
                "messages": [
                    *USER,
                    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
                ]
            },
            unsupported(f"'messages[1].tool_calls' {NO_TOOLS}.", "messages[1].tool_calls"),
        ),
        (
            {"messages": [{"role": "user"}]},
            bad(
                "'messages[0].content' is required: a string or a list of text parts.",
                "messages[0].content",
            ),
        ),
        (
            {"messages": [{"role": "assistant", "content": None}]},
            bad(
                "'messages[0].content' is required: a string or a list of text parts.",
                "messages[0].content",
            ),
        ),
        (
            {"messages": [{"role": "user", "content": 7}]},
            bad(
                "'messages[0].content' must be a string or a list of text parts, not 7.",
                "messages[0].content",
            ),
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "What is this?"},
                            {"type": "image_url", "image_url": {"url": "data:image/png;base64,"}},
                        ],
                    }
                ]
            },
            unsupported(
                "rocmpanel serves text-only models: image_url parts are not supported.",
                "messages[0].content[1]",
            ),
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "input_audio"}]}]},
            unsupported(
                "rocmpanel serves text-only models: input_audio parts are not supported.",
                "messages[0].content[0]",
            ),
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "file", "file": {}}]}]},
            unsupported(
                "rocmpanel serves text-only models: file parts are not supported.",
                "messages[0].content[0]",
            ),
        ),
        (
            {"messages": [{"role": "user", "content": ["Hi"]}]},
            bad(
                '\'messages[0].content[0]\' must be a text part {"type": "text", "text": '
                "...}, not 'Hi'.",
                "messages[0].content[0]",
            ),
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "video"}]}]},
            bad(
                '\'messages[0].content[0]\' must be a text part {"type": "text", "text": '
                "...}, not of type 'video'.",
                "messages[0].content[0]",
            ),
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]},
            bad(
                "'messages[0].content[0].text' must be a string, not 3.",
                "messages[0].content[0].text",
            ),
        ),
        (
            {"tools": [{"type": "function", "function": {"name": "f"}}]},
            unsupported(f"'tools' {NO_TOOLS}; leave it out.", "tools"),
        ),
        (
            {"functions": [{"name": "f"}]},
            unsupported(f"'functions' {NO_TOOLS}; leave it out.", "functions"),
        ),
        (
            {"tool_choice": "auto"},
            unsupported(f"'tool_choice' {NO_TOOLS}; leave it out.", "tool_choice"),
        ),
        (
            {"function_call": {"name": "f"}},
            unsupported(f"'function_call' {NO_TOOLS}; leave it out.", "function_call"),
        ),
        (
            {"logprobs": True},
            unsupported(
                "'logprobs' is not supported by rocmpanel's server: leave it out or set it to "
                "false.",
                "logprobs",
            ),
        ),
        (
            {"top_logprobs": 2},
            unsupported(
                "'top_logprobs' is not supported by rocmpanel's server: leave it out.",
                "top_logprobs",
            ),
        ),
        (
            {"response_format": {"type": "json_object"}},
            unsupported(
                "'response_format' of type 'json_object' is not supported by rocmpanel's "
                'server: only {"type": "text"} is; ask for JSON in the prompt instead.',
                "response_format",
            ),
        ),
        (
            {"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
            unsupported(
                "'response_format' of type 'json_schema' is not supported by rocmpanel's "
                'server: only {"type": "text"} is; ask for JSON in the prompt instead.',
                "response_format",
            ),
        ),
        (
            {"response_format": "text"},
            bad(
                "'response_format' must be an object like {\"type\": \"text\"}, not 'text'.",
                "response_format",
            ),
        ),
    ],
)
def test_chat_refusals(fields: dict[str, Any], error: dict[str, Any]) -> None:
    assert refusal(api.parse_chat, chat(**fields)) == error


# --- parse_completion ----------------------------------------------------------------------


@pytest.mark.parametrize("prompt", ["Once upon", ["Once upon"], ""])
def test_completion_prompt_accepted(prompt: Any) -> None:
    req = api.parse_completion(
        completion(prompt=prompt, max_tokens=3, echo=False, suffix="", best_of=1, logprobs=None)
    )
    assert req == api.ApiRequest(
        kind="completion",
        model="m",
        prompt=prompt if isinstance(prompt, str) else prompt[0],
        max_tokens=3,
    )
    assert req.messages == ()


def test_completion_ignores_chat_only_fields() -> None:
    req = api.parse_completion(completion(max_completion_tokens=0, tools=[{"x": 1}]))
    assert req.max_tokens is None


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"prompt": None}, bad("'prompt' is required: the text to continue.", "prompt")),
        ({"prompt": 5}, bad("'prompt' must be a string, not 5.", "prompt")),
        ({"prompt": []}, bad("'prompt' must be a string, not an empty list.", "prompt")),
        ({"prompt": {"text": "x"}}, bad("'prompt' must be a string, not an object.", "prompt")),
        (
            {"prompt": ["a", "b"]},
            unsupported(
                "'prompt' holds 2 prompts; rocmpanel's server takes one per request: send one "
                "request per prompt.",
                "prompt",
            ),
        ),
        (
            {"prompt": [1, 2, 3]},
            unsupported(
                "'prompt' as token ids is not supported by rocmpanel's server: send the text.",
                "prompt",
            ),
        ),
        (
            {"prompt": [[1, 2], [3]]},
            unsupported(
                "'prompt' as token ids is not supported by rocmpanel's server: send the text.",
                "prompt",
            ),
        ),
        (
            {"best_of": 3},
            unsupported(
                "'best_of' is not supported by rocmpanel's server: it returns one choice per "
                "request; leave it out.",
                "best_of",
            ),
        ),
        (
            {"logprobs": 1},
            unsupported(
                "'logprobs' is not supported by rocmpanel's server: leave it out.", "logprobs"
            ),
        ),
        (
            {"echo": True},
            unsupported(
                "'echo' is not supported by rocmpanel's server: the reply never repeats the "
                "prompt; leave it out.",
                "echo",
            ),
        ),
        (
            {"suffix": "}"},
            unsupported(
                "'suffix' is not supported by rocmpanel's server: it only continues the "
                "prompt; leave it out.",
                "suffix",
            ),
        ),
    ],
)
def test_completion_refusals(fields: dict[str, Any], error: dict[str, Any]) -> None:
    assert refusal(api.parse_completion, completion(**fields)) == error


def test_completion_prompt_missing() -> None:
    assert refusal(api.parse_completion, {"model": "m"}) == bad(
        "'prompt' is required: the text to continue.", "prompt"
    )


# --- check_context -------------------------------------------------------------------------


def context_error(prompt: int, max_tokens: int | None, context: int, **kw: Any) -> Any:
    """The ApiError check_context raises."""
    with pytest.raises(api.ApiError) as caught:
        api.check_context(prompt, max_tokens, context, **kw)
    return caught.value


def test_check_context_fits_exactly() -> None:
    assert api.check_context(4000, 96, 4096) == 96
    assert api.check_context(4095, None, 4096) == 1
    assert api.check_context(10, None, 4096) == 4086


def test_check_context_one_over() -> None:
    err = context_error(4000, 97, 4096)
    assert (err.status, err.body()) == (
        400,
        {
            "error": {
                "message": "This model's context is 4096 tokens; the prompt has 4000 tokens and "
                "max_tokens asks for 97 more (4097 in all). Shorten the prompt or lower "
                "max_tokens.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    )


def test_check_context_prompt_alone_fills_it() -> None:
    err = context_error(4096, None, 4096, param="prompt")
    assert err.body()["error"] == {
        "message": "This model's context is 4096 tokens and the prompt has 4096 tokens, which "
        "leaves no room for a reply. Shorten the prompt.",
        "type": "invalid_request_error",
        "param": "prompt",
        "code": "context_length_exceeded",
    }
    assert context_error(5000, None, 4096).message == (
        "This model's context is 4096 tokens and the prompt has 5000 tokens, which leaves no "
        "room for a reply. Shorten the prompt."
    )


def test_check_length_refuses_what_no_tokenization_can_fit() -> None:
    fits = api.parse_completion({"model": "m", "prompt": "x" * 400})
    api.check_length(fits, 100, 4, param="prompt")  # 400 characters can be 100 tokens
    api.check_length(api.parse_completion({"model": "m", "prompt": "x" * 401}), 100, 0)
    over = api.parse_completion({"model": "m", "prompt": "x" * 401})
    with pytest.raises(api.ApiError) as caught:
        api.check_length(over, 100, 4, param="prompt")
    assert caught.value.body()["error"] == {
        "message": "This model's context is 100 tokens and the prompt has 401 characters, "
        "more than 100 tokens can hold (this tokenizer's longest token is 4 characters). "
        "Shorten the prompt.",
        "type": "invalid_request_error",
        "param": "prompt",
        "code": "context_length_exceeded",
    }
    longer = {"role": "user", "content": "x" * 399}
    two = api.parse_chat({"model": "m", "messages": [*USER, longer]})
    with pytest.raises(api.ApiError) as chat_over:  # "Hi" and 399 more: 401 in all
        api.check_length(two, 100, 4)
    assert chat_over.value.param == "messages"


# --- StopMatcher ---------------------------------------------------------------------------


def run(stops: list[str], pieces: list[str]) -> list[tuple[str, bool]]:
    matcher = shapes.StopMatcher(stops)
    return [matcher.feed(p) for p in pieces] + [(matcher.flush(), matcher.hit)]


def test_stop_split_over_feeds() -> None:
    assert run(["</answer>"], ["The answer is 4", "</an", "swer>", " and more"]) == [
        ("The answer is 4", False),
        ("", False),
        ("", True),
        ("", True),
        ("", True),
    ]


def test_stop_partial_that_turns_out_not_to_be_one_is_released() -> None:
    assert run(["</answer>"], ["a </an", "t> b", "<"]) == [
        ("a ", False),
        ("</ant> b", False),
        ("", False),
        ("<", False),
    ]


def test_stop_overlapping_candidates() -> None:
    # "ab" completes first, so it wins over "abc" even though "abc" could follow.
    assert run(["abc", "ab"], ["x", "a", "b", "c"]) == [
        ("x", False),
        ("", False),
        ("", True),
        ("", True),
        ("", True),
    ]
    assert run(["abc", "bz"], ["xab", "c!"]) == [("x", False), ("", True), ("", True)]
    # In one piece, the stop completed first wins; at the same end, the longer one.
    assert run(["abcd", "bc"], ["abcd"]) == [("a", True), ("", True)]
    assert run(["abc", "bc"], ["xabc"]) == [("x", True), ("", True)]


def test_stop_at_the_very_start() -> None:
    assert run(["STOP"], ["STOP right here"]) == [("", True), ("", True)]
    assert run(["\n"], ["\n"]) == [("", True), ("", True)]


def test_stop_unicode() -> None:
    assert run(["。終"], ["日本語", "。", "終わり"]) == [
        ("日本語", False),
        ("", False),
        ("", True),
        ("", True),
    ]
    assert run(["🙂"], ["ok 🙃", "🙂 no"]) == [("ok 🙃", False), ("", True), ("", True)]


def test_flush_returns_held_text_without_a_hit() -> None:
    matcher = shapes.StopMatcher(["###"])
    assert matcher.feed("Done ##") == ("Done ", False)
    assert matcher.flush() == "##"
    assert matcher.flush() == ""
    assert matcher.hit is False


def test_no_stops_is_pass_through() -> None:
    assert run([], ["a", "", "</"]) == [("a", False), ("", False), ("</", False), ("", False)]
    assert run(["", ""], ["x"]) == [("x", False), ("", False)]


def first_cut(text: str, stops: list[str]) -> str:
    """The reply cut at the stop sequence completed first, found one character at a time."""
    for end in range(1, len(text) + 1):
        starts = [end - len(s) for s in stops if s and text[:end].endswith(s)]
        if starts:
            return text[: min(starts)]
    return text


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab<>é", max_size=30),
    stops=st.lists(st.text(alphabet="ab<>é", min_size=1, max_size=4), max_size=4),
    cuts=st.lists(st.integers(min_value=0, max_value=30), max_size=8),
)
def test_stop_matcher_does_not_depend_on_how_text_is_split(
    text: str, stops: list[str], cuts: list[int]
) -> None:
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    matcher = shapes.StopMatcher(stops)
    sent = ""
    for piece in pieces:
        out, _ = matcher.feed(piece)
        sent += out
        # What was sent never holds the start of a stop sequence that might still complete.
        assert first_cut(text, stops).startswith(sent)
    sent += matcher.flush()
    expected = first_cut(text, stops)
    assert sent == expected
    assert matcher.hit == any(s in text for s in stops)


# --- response shapes -----------------------------------------------------------------------

CHAT = api.ApiRequest(kind="chat", model="m", messages=({"role": "user", "content": "Hi"},))
CHAT_USAGE = api.ApiRequest(
    kind="chat", model="m", messages=CHAT.messages, stream=True, include_usage=True
)
TEXT = api.ApiRequest(kind="completion", model="m", prompt="Once")
TEXT_USAGE = api.ApiRequest(
    kind="completion", model="m", prompt="Once", stream=True, include_usage=True
)
IDS = {"id": "chatcmpl-1", "created": 1700000000, "model": "tiny"}


def test_usage() -> None:
    assert shapes.usage(12, 40) == {
        "prompt_tokens": 12,
        "completion_tokens": 40,
        "total_tokens": 52,
    }
    CompletionUsage.model_validate(shapes.usage(0, 0))


def test_completion_ids() -> None:
    chat_id, text_id = shapes.completion_id("chat"), shapes.completion_id("completion")
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{24}", chat_id)
    assert re.fullmatch(r"cmpl-[0-9a-f]{24}", text_id)
    assert shapes.completion_id("chat") != chat_id
    with pytest.raises(ValueError, match="kind must be 'chat' or 'completion', not 'x'"):
        shapes.completion_id("x")


def test_chat_response_shape() -> None:
    out = shapes.response(
        CHAT, **IDS, text="Hello!", finish_reason="stop", prompt_tokens=5, completion_tokens=3
    )
    assert out == {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "tiny",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello!"},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }
    parsed = ChatCompletion.model_validate(out)
    assert parsed.choices[0].message.content == "Hello!"
    assert parsed.usage is not None and parsed.usage.total_tokens == 8


def test_text_completion_response_shape() -> None:
    out = shapes.response(
        TEXT, **IDS, text=" a time", finish_reason="length", prompt_tokens=2, completion_tokens=2
    )
    assert out == {
        "id": "chatcmpl-1",
        "object": "text_completion",
        "created": 1700000000,
        "model": "tiny",
        "choices": [{"text": " a time", "index": 0, "logprobs": None, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4},
    }
    assert Completion.model_validate(out).choices[0].finish_reason == "length"


def test_chat_chunks() -> None:
    first = shapes.chunk(CHAT, **IDS, role=True, text="")
    middle = shapes.chunk(CHAT, **IDS, text="Hel")
    last = shapes.chunk(CHAT, **IDS, finish_reason="stop")
    assert first == {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "tiny",
        "choices": [
            {
                "index": 0,
                "delta": {"role": "assistant", "content": ""},
                "finish_reason": None,
                "logprobs": None,
            }
        ],
    }
    assert middle["choices"] == [
        {"index": 0, "delta": {"content": "Hel"}, "finish_reason": None, "logprobs": None}
    ]
    assert last["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop", "logprobs": None}]
    for piece in (first, middle, last):
        parsed = ChatCompletionChunk.model_validate(piece)
        assert parsed.usage is None


def test_chat_chunks_with_usage() -> None:
    piece = shapes.chunk(CHAT_USAGE, **IDS, text="x")
    assert piece["usage"] is None and "usage" in piece
    ChatCompletionChunk.model_validate(piece)
    tail = shapes.usage_chunk(CHAT_USAGE, **IDS, prompt_tokens=5, completion_tokens=2)
    assert tail == {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "tiny",
        "choices": [],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }
    parsed = ChatCompletionChunk.model_validate(tail)
    assert parsed.choices == [] and parsed.usage is not None


def test_text_completion_chunks() -> None:
    middle = shapes.chunk(TEXT, **IDS, text=" a")
    assert middle == {
        "id": "chatcmpl-1",
        "object": "text_completion",
        "created": 1700000000,
        "model": "tiny",
        "choices": [{"text": " a", "index": 0, "logprobs": None, "finish_reason": None}],
    }
    last = shapes.chunk(TEXT_USAGE, **IDS, finish_reason="stop")
    assert last["choices"] == [{"text": "", "index": 0, "logprobs": None, "finish_reason": "stop"}]
    assert last["usage"] is None
    # The openai types make a streamed choice's finish_reason required (not null); the
    # client builds chunks without validation, so only the final chunk is validated here.
    Completion.model_validate(last)
    tail = shapes.usage_chunk(TEXT_USAGE, **IDS, prompt_tokens=2, completion_tokens=1)
    assert tail["object"] == "text_completion" and tail["choices"] == []
    assert Completion.model_validate(tail).usage == CompletionUsage(
        prompt_tokens=2, completion_tokens=1, total_tokens=3
    )


def test_models_list() -> None:
    out = shapes.models_list("tiny-llama", 1700000000)
    assert out == {
        "object": "list",
        "data": [
            {"id": "tiny-llama", "object": "model", "created": 1700000000, "owned_by": "rocmpanel"}
        ],
    }
    assert Model.model_validate(out["data"][0]).owned_by == "rocmpanel"
