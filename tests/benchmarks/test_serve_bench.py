"""benchmarks/serve.py's own parts: arguments, statistics, and its HTTP client.

The client is run against a small stdlib HTTP server that answers with canned OpenAI
shapes, so the parsing of server-sent events, the token count from the usage chunk and
the checks of concurrent replies are tested without torch or a model. The benchmark
itself (raw generate against the real server) is run by hand: its figures go in the notes.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "serve.py"
KEY = "test-key"
REPLY = ("Hel", "lo ", "world!")
ERROR = {"message": "The request took too long.", "type": "timeout", "code": "timeout"}


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    # The benchmark (through benchmarks/chat.py) puts the repository and the workers'
    # folder on sys.path; the test process gets its own path back afterwards.
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = importlib.util.spec_from_file_location("rocmpanel_serve_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look it up
    spec.loader.exec_module(module)
    return module


class Stub(BaseHTTPRequestHandler):
    """Canned answers: 401 without the key, a stream (or an error event) or a reply."""

    bodies: list[dict[str, Any]]
    fail_stream = False

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean

    def _send(self, status: int, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.end_headers()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            self._send(401, "application/json")
            self.wfile.write(b'{"error":{"code":"invalid_api_key"}}')
            return
        self.bodies.append(body)
        if not body.get("stream"):
            self._send(200, "application/json")
            reply = {
                "choices": [
                    {
                        "message": {"role": "assistant", "content": "".join(REPLY)},
                        "finish_reason": "length",
                    }
                ],
                "usage": {"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11},
            }
            self.wfile.write(json.dumps(reply).encode())
            return
        self._send(200, "text/event-stream")
        events: list[dict[str, Any]] = [{"choices": [{"delta": {"role": "assistant"}}]}]
        events += [{"choices": [{"delta": {"content": t}, "finish_reason": None}]} for t in REPLY]
        if self.fail_stream:
            events.append({"error": ERROR})
        events.append({"choices": [{"delta": {}, "finish_reason": "length"}], "usage": None})
        events.append({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 4}})
        for event in events:
            time.sleep(0.01)  # every chunk (the first content one too) comes 10 ms later
            self.wfile.write(b": comment\n\ndata: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")


@pytest.fixture
def stub() -> Iterator[tuple[str, type[Stub]]]:
    handler = type("Handler", (Stub,), {"bodies": [], "fail_stream": False})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_arguments_default_to_the_issue_s_measurement(bench: ModuleType) -> None:
    args = bench.parse_args([])
    assert (args.runs, args.rounds, args.tokens) == (9, 3, 512)
    assert (args.precision, args.device, args.model) == ("fp32", "cpu", None)
    assert bench.parse_args(["--model", "m", "--runs", "1"]).model == Path("m")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--runs", "0"], "--runs must be at least 1"),
        (["--rounds", "-1"], "--rounds must be at least 1"),
        (["--tokens", "1"], "--tokens must be at least 2 (tokens/s needs a first and a last"),
    ],
)
def test_arguments_below_one_run_are_refused(
    bench: ModuleType, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        bench.parse_args(argv)
    assert exited.value.code == 2
    assert f"error: {message}" in capsys.readouterr().err


def test_percentile_interpolates_between_ranks(bench: ModuleType) -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert bench.percentile(values, 0) == 1.0
    assert bench.percentile(values, 50) == 2.5
    assert bench.percentile(values, 100) == 4.0
    assert bench.percentile(values, 99) == pytest.approx(3.97)
    assert bench.percentile([0.5], 99) == 0.5
    samples = [float(i) for i in range(1, 25)]  # 8 clients x 3 rounds
    assert bench.percentile(samples, 50) == 12.5
    assert bench.percentile(samples, 99) == pytest.approx(23.77)


def test_percentile_refuses_nothing_and_out_of_range(bench: ModuleType) -> None:
    with pytest.raises(ValueError, match=r"^no values$"):
        bench.percentile([], 50)
    with pytest.raises(ValueError, match=r"^percentile 101 is outside 0\.\.100$"):
        bench.percentile([1.0], 101)


def test_verdict_at_the_goal_boundaries(bench: ModuleType) -> None:
    assert bench.verdict(0.95, 0.95, at_least=True) == "ok"
    assert bench.verdict(0.949, 0.95, at_least=True) == "MISSED"
    assert bench.verdict(30.0, 30.0, at_least=False) == "ok"
    assert bench.verdict(30.1, 30.0, at_least=False) == "MISSED"
    assert bench.verdict(math.nan, 0.95, at_least=True) == "MISSED"
    assert bench.verdict(-math.inf, 30.0, at_least=False) == "MISSED"


def test_sse_payloads_stop_at_done_and_raise_on_an_error_event(bench: ModuleType) -> None:
    lines = [b": ping\n", b"\n", b'data: {"a": 1}\n', b"event: x\n", b"data:[DONE]\n", b"data: 2\n"]
    assert [p for _, p in bench.sse_payloads(lines)] == [{"a": 1}]
    failing = bench.sse_payloads([b'data: {"error": {"message": "gone"}}\n'])
    with pytest.raises(
        RuntimeError, match=r"^the stream ended with an error: \{'message': 'gone'\}$"
    ):
        next(failing)


def test_chat_body_is_the_raw_run_s_prompt_greedy(bench: ModuleType) -> None:
    assert bench.chat_body(5, stream=True) == {
        "model": "bench",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Tell me how tokens stream into the chat window."},
        ],
        "max_tokens": 5,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert "stream" not in bench.chat_body(5, stream=False)


def test_stream_counts_usage_tokens_and_times_content_chunks(
    bench: ModuleType, stub: tuple[str, type[Stub]]
) -> None:
    url, handler = stub
    run = bench.Client(url, KEY).stream(4)
    assert (run.text, run.completion_tokens, run.prompt_tokens) == ("Hello world!", 4, 7)
    assert run.finish_reason == "length"
    # Two chunks before the first content (10 ms each) and 20 ms between the first and
    # the last content chunk: (4 - 1) tokens over at least 20 ms.
    assert run.ttft_s >= 0.02
    assert 0 < run.tokens_per_s <= 3 / 0.02
    assert handler.bodies == [bench.chat_body(4, stream=True)]


def test_stream_errors_name_the_status_or_the_event(
    bench: ModuleType, stub: tuple[str, type[Stub]]
) -> None:
    url, handler = stub
    with pytest.raises(RuntimeError) as refused:
        bench.Client(url, "wrong").stream(4)
    assert str(refused.value) == (
        'HTTP 401 from /v1/chat/completions: {"error":{"code":"invalid_api_key"}}'
    )
    handler.fail_stream = True
    with pytest.raises(RuntimeError) as failed:
        bench.Client(url, KEY).stream(4)
    assert str(failed.value) == f"the stream ended with an error: {ERROR}"


def test_concurrent_round_answers_every_client(
    bench: ModuleType, stub: tuple[str, type[Stub]]
) -> None:
    url, handler = stub
    answers = bench.concurrent_round(bench.Client(url, KEY), 4, 8)
    assert len(answers) == 8 and len(handler.bodies) == 8
    assert all(bench.answered_in_full(body, "Hello world!", 4) for _, body in answers)
    assert all(0 < latency < 30 for latency, _ in answers)
    assert not any(bench.answered_in_full(body, "Hello", 4) for _, body in answers)
    assert not any(bench.answered_in_full(body, "Hello world!", 5) for _, body in answers)
    refused = bench.concurrent_round(bench.Client(url, "wrong"), 4, 3)
    assert [math.isnan(latency) for latency, _ in refused] == [True, True, True]
    assert all(isinstance(error, RuntimeError) for _, error in refused)
    assert not any(bench.answered_in_full(error, "Hello world!", 4) for _, error in refused)


def test_answered_in_full_needs_a_finish_reason_and_a_choice(bench: ModuleType) -> None:
    full = {
        "choices": [{"message": {"content": "x"}, "finish_reason": "stop"}],
        "usage": {"completion_tokens": 1},
    }
    assert bench.answered_in_full(full, "x", 1)
    cut = {**full, "choices": [{"message": {"content": "x"}, "finish_reason": None}]}
    assert not bench.answered_in_full(cut, "x", 1)
    assert not bench.answered_in_full({**full, "choices": []}, "x", 1)
    assert not bench.answered_in_full({**full, "usage": None}, "x", 1)
    assert not bench.answered_in_full(None, "x", 1)
