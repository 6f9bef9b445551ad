"""The panel's typed serve protocol: the serve command's fields, the result kinds read
strictly (wrong types fall back, never raise), and the status figures of ServeStats."""

from __future__ import annotations

import math

import pytest

from rocmpanel.chat.serve_protocol import (
    CLIENT_GONE,
    DEFAULT_MAX_QUEUE,
    DEFAULT_TIMEOUT_S,
    RECENT_REQUESTS,
    Served,
    ServeQueue,
    ServeRequest,
    ServeStats,
    ServeStopped,
    Serving,
    is_loopback,
    is_serve_error,
    read_serve_result,
    url_for,
)
from rocmpanel.jobs.protocol import Result, WorkerError

SERVING = {
    "kind": "serving",
    "url": "http://127.0.0.1:8000",
    "host": "127.0.0.1",
    "port": 8000,
    "model_id": "tiny",
    "context_length": 4096,
    "max_queue": 16,
    "request_timeout_s": 300,
    "cors_origins": ["http://localhost:3000"],
}


def served(at: float = 100.0, **changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "kind": "served",
        "at": at,
        "method": "POST",
        "path": "/v1/chat/completions",
        "status": 200,
        "stream": True,
        "prompt_tokens": 12,
        "completion_tokens": 40,
        "latency_s": 0.85,
        "ttft_s": 0.031,
        "tokens_per_s": 50.0,
        "finish_reason": "stop",
        "client": "127.0.0.1",
        "error": None,
        "disconnected": False,
    }
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        (" LocalHost ", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8000"),
        ("::1", "http://[::1]:8000"),
        ("[::1]", "http://[::1]:8000"),
        (" localhost ", "http://localhost:8000"),
    ],
)
def test_urls(host: str, url: str) -> None:
    assert url_for(host, 8000) == url


def test_the_serve_command_carries_every_field() -> None:
    request = ServeRequest(api_key="rp-0123456789abcdef", cors_origins=("http://a",))
    assert request.op == "serve"
    assert request.fields() == {
        "host": "127.0.0.1",
        "port": 8000,
        "api_key": "rp-0123456789abcdef",
        "cors_origins": ["http://a"],
        "max_queue": 16,
        "request_timeout_s": 300.0,
        "max_body_bytes": 4 * 1024 * 1024,
        "model_id": "",
    }


def test_serving_is_read_in_full() -> None:
    event = read_serve_result(Result(SERVING))
    assert event == Serving(
        url="http://127.0.0.1:8000",
        host="127.0.0.1",
        port=8000,
        model_id="tiny",
        context_length=4096,
        max_queue=16,
        request_timeout_s=300.0,
        cors_origins=("http://localhost:3000",),
    )


def test_serving_with_wrong_types_falls_back() -> None:
    event = Serving.from_result(
        {
            "kind": "serving",
            "host": "::1",
            "port": "8000",
            "context_length": True,
            "max_queue": math.inf,
            "request_timeout_s": "soon",
            "cors_origins": "http://a",
        }
    )
    assert event == Serving(
        url="http://[::1]:0",
        host="::1",
        port=0,
        model_id="",
        context_length=0,
        max_queue=DEFAULT_MAX_QUEUE,
        request_timeout_s=DEFAULT_TIMEOUT_S,
        cors_origins=(),
    )


def test_served_is_read_in_full() -> None:
    event = read_serve_result(Result(served()))
    assert event == Served(
        at=100.0,
        method="POST",
        path="/v1/chat/completions",
        status=200,
        stream=True,
        prompt_tokens=12,
        completion_tokens=40,
        latency_s=0.85,
        ttft_s=0.031,
        tokens_per_s=50.0,
        finish_reason="stop",
        client="127.0.0.1",
        error=None,
        disconnected=False,
    )
    assert isinstance(event, Served) and event.ok


def test_a_rejected_or_abandoned_request() -> None:
    rejected = Served.from_result(
        served(status=401, error="Incorrect API key.", ttft_s=None, tokens_per_s=None)
    )
    assert (rejected.ok, rejected.error, rejected.ttft_s, rejected.tokens_per_s) == (
        False,
        "Incorrect API key.",
        None,
        None,
    )
    gone = Served.from_result(served(status=CLIENT_GONE, disconnected=True, finish_reason=None))
    assert (gone.ok, gone.disconnected, gone.finish_reason) == (False, True, None)
    odd = Served.from_result(
        served(stream="yes", error="", finish_reason=3, latency_s=math.nan, disconnected=1)
    )
    assert (odd.stream, odd.error, odd.finish_reason, odd.latency_s, odd.disconnected) == (
        False,
        None,
        None,
        None,
        False,
    )


@pytest.mark.parametrize(("status", "ok"), [(199, False), (200, True), (299, True), (300, False)])
def test_ok_means_2xx(status: int, ok: bool) -> None:
    assert Served.from_result(served(status=status)).ok is ok


def test_queue_and_stopped() -> None:
    assert read_serve_result(Result({"kind": "serve_queue", "waiting": 3, "running": True})) == (
        ServeQueue(3, True)
    )
    assert ServeQueue.from_result({"waiting": -2, "running": "yes"}) == ServeQueue(0, False)
    stopped = read_serve_result(
        Result({"kind": "serve_stopped", "reason": "asked", "served_requests": 7})
    )
    assert stopped == ServeStopped("asked", 7)
    assert ServeStopped.from_result({"kind": "serve_stopped"}) == ServeStopped("", 0)


def test_other_results_are_not_serve_events() -> None:
    assert read_serve_result(Result({"kind": "loaded", "path": "/m"})) is None
    assert read_serve_result(Result({})) is None


def test_serve_errors_are_told_apart_from_load_errors() -> None:
    assert is_serve_error(WorkerError("Port 8000 is in use.", "port_in_use", data={"op": "serve"}))
    assert is_serve_error(WorkerError("x", "error", data={"op": "serve_stop"}))
    assert not is_serve_error(WorkerError("Out of memory.", "oom", data={"op": "load"}))
    assert not is_serve_error(WorkerError("x"))


def test_requests_per_minute_count_the_last_sixty_seconds() -> None:
    stats = ServeStats()
    stats.update(Serving.from_result(SERVING))
    for at in (10.0, 50.0, 69.0, 70.0, 100.0):  # finished at arrival (``at``) + 0.5 s
        stats.update(Served.from_result(served(at, latency_s=0.5)))
    assert stats.total == 5
    assert stats.requests_per_minute(100.5) == 4  # 10.5 is 90 s old
    assert stats.requests_per_minute(110.5) == 4  # 50.5 is exactly 60 s old: still counted
    assert stats.requests_per_minute(111.0) == 3
    assert stats.requests_per_minute(130.0) == 2
    assert stats.requests_per_minute(161.0) == 0
    assert stats.total == 5  # the total never shrinks
    # A long request that arrived early and finished last counts from when it finished,
    # and it does not keep a later short one from counting or from going.
    long = ServeStats()
    long.update(Served.from_result(served(200.0, latency_s=50.0)))  # finished at 250
    long.update(Served.from_result(served(210.0, latency_s=1.0)))  # finished at 211
    assert long.requests_per_minute(212.0) == 1
    assert long.requests_per_minute(265.0) == 2
    assert long.requests_per_minute(300.0) == 1  # 211 is 89 s old


def test_tokens_per_second_weights_recent_successful_requests() -> None:
    stats = ServeStats()
    assert stats.tokens_per_s() is None
    stats.update(Served.from_result(served(completion_tokens=11, tokens_per_s=10.0)))  # 1 s
    stats.update(Served.from_result(served(completion_tokens=31, tokens_per_s=30.0)))  # 1 s
    stats.update(Served.from_result(served(status=500, completion_tokens=99, tokens_per_s=1.0)))
    stats.update(Served.from_result(served(completion_tokens=1, tokens_per_s=5.0)))  # no decode
    stats.update(Served.from_result(served(completion_tokens=50, tokens_per_s=None)))
    assert stats.tokens_per_s() == pytest.approx(20.0)  # 40 tokens in 2 s


def test_the_list_keeps_the_last_twenty_newest_first_and_a_new_server_starts_over() -> None:
    stats = ServeStats()
    for n in range(RECENT_REQUESTS + 5):
        stats.update(Served.from_result(served(at=float(n))))
    assert [s.at for s in stats.recent][:3] == [24.0, 23.0, 22.0]
    assert len(stats.recent) == RECENT_REQUESTS
    stats.update(ServeQueue(4, True))
    assert stats.queue == ServeQueue(4, True)
    stats.update(ServeStopped("asked", 25))
    assert (stats.serving, stats.stopped, stats.queue) == (
        None,
        ServeStopped("asked", 25),
        ServeQueue(0, False),
    )
    assert len(stats.recent) == RECENT_REQUESTS  # the last requests stay readable
    stats.update(Serving.from_result(SERVING))
    assert (stats.stopped, stats.total, len(stats.recent)) == (None, 0, 0)
    assert stats.requests_per_minute(30.0) == 0
