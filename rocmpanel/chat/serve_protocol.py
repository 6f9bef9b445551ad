"""Serving the loaded model over HTTP: the chat worker's serve commands and answers, typed.

The HTTP server runs inside the chat worker, next to the model the Chat tab (or
``rocmpanel serve``) loaded, so the model is never in memory twice. The panel sends
:class:`ServeRequest` (op ``serve``, queued after a load) or ``serve_stop`` (acted on at
once); the worker answers with result events of the kinds read here:

- ``serving``: the server listens (:class:`Serving`);
- ``served``: one finished HTTP request to ``/v1/*``, rejected ones included (:class:`Served`);
- ``serve_queue``: how many HTTP requests wait or run (:class:`ServeQueue`);
- ``serve_stopped``: the server stopped, and why (:class:`ServeStopped`).

A failed serve is an ``error`` event with ``op`` ``serve`` (kinds ``port_in_use``,
``serve_failed``, ``missing_package``, ``no_model``, ``bad_command``); the worker and its
model stay. The API key travels on stdin only, never on a command line (which every user
of the machine can read in ``ps``). :class:`ServeStats` turns the events into what the
status shows: requests per minute, tokens per second, the queue and the last requests.
"""

from __future__ import annotations

import ipaddress
import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rocmpanel.jobs.protocol import Result, WorkerError

SERVE_OP = "serve"
SERVE_STOP_OP = "serve_stop"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_QUEUE = 16
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
CLIENT_GONE = 499  # the status a request gets when its client went away (nginx's count)
RECENT_REQUESTS = 20  # how many finished requests the status lists
RATE_WINDOW_S = 60.0  # requests per minute are counted over this window
SERVE_RESULT_KINDS = ("serving", "served", "serve_queue", "serve_stopped")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def url_for(host: str, port: int) -> str:
    """The base URL clients use (``http://127.0.0.1:8000``; IPv6 hosts in brackets)."""
    shown = host.strip()
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


@dataclass(frozen=True)
class ServeRequest:
    """Start serving the loaded model on ``host``:``port`` with ``api_key``."""

    api_key: str
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    cors_origins: tuple[str, ...] = ()
    max_queue: int = DEFAULT_MAX_QUEUE
    request_timeout_s: float = DEFAULT_TIMEOUT_S
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    model_id: str = ""  # "" = the model folder's name

    op: ClassVar[str] = SERVE_OP

    def fields(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "port": self.port,
            "api_key": self.api_key,
            "cors_origins": list(self.cors_origins),
            "max_queue": self.max_queue,
            "request_timeout_s": self.request_timeout_s,
            "max_body_bytes": self.max_body_bytes,
            "model_id": self.model_id,
        }


def _int(data: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return default
    return int(value)


def _float(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Serving:
    """The server listens: where, for which model, with which limits."""

    url: str
    host: str
    port: int
    model_id: str
    context_length: int
    max_queue: int
    request_timeout_s: float
    cors_origins: tuple[str, ...]

    @classmethod
    def from_result(cls, data: Mapping[str, Any]) -> Serving:
        host = _text(data, "host") or DEFAULT_HOST
        port = _int(data, "port")
        origins = data.get("cors_origins")
        return cls(
            url=_text(data, "url") or url_for(host, port),
            host=host,
            port=port,
            model_id=_text(data, "model_id"),
            context_length=_int(data, "context_length"),
            max_queue=_int(data, "max_queue", DEFAULT_MAX_QUEUE),
            request_timeout_s=_float(data, "request_timeout_s") or DEFAULT_TIMEOUT_S,
            cors_origins=tuple(str(o) for o in origins) if isinstance(origins, list) else (),
        )


@dataclass(frozen=True)
class Served:
    """One finished HTTP request (``status`` 499: the client went away first)."""

    at: float
    method: str
    path: str
    status: int
    stream: bool
    prompt_tokens: int
    completion_tokens: int
    latency_s: float | None
    ttft_s: float | None
    tokens_per_s: float | None
    finish_reason: str | None
    client: str
    error: str | None
    disconnected: bool

    @classmethod
    def from_result(cls, data: Mapping[str, Any]) -> Served:
        finish = data.get("finish_reason")
        error = data.get("error")
        return cls(
            at=_float(data, "at") or 0.0,
            method=_text(data, "method"),
            path=_text(data, "path"),
            status=_int(data, "status"),
            stream=data.get("stream") is True,
            prompt_tokens=_int(data, "prompt_tokens"),
            completion_tokens=_int(data, "completion_tokens"),
            latency_s=_float(data, "latency_s"),
            ttft_s=_float(data, "ttft_s"),
            tokens_per_s=_float(data, "tokens_per_s"),
            finish_reason=finish if isinstance(finish, str) else None,
            client=_text(data, "client"),
            error=error if isinstance(error, str) and error else None,
            disconnected=data.get("disconnected") is True,
        )

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True)
class ServeQueue:
    """HTTP requests waiting for the model, and whether one is being answered."""

    waiting: int
    running: bool

    @classmethod
    def from_result(cls, data: Mapping[str, Any]) -> ServeQueue:
        return cls(waiting=max(0, _int(data, "waiting")), running=data.get("running") is True)


@dataclass(frozen=True)
class ServeStopped:
    """The server stopped: ``reason`` is asked, not_serving, unload, load, exit or restart
    (a new ``serve`` replaced it: its ``serving`` or error follows)."""

    reason: str
    served_requests: int

    @classmethod
    def from_result(cls, data: Mapping[str, Any]) -> ServeStopped:
        return cls(reason=_text(data, "reason"), served_requests=_int(data, "served_requests"))


ServeEvent = Serving | Served | ServeQueue | ServeStopped


def read_serve_result(result: Result) -> ServeEvent | None:
    """The serve event a result carries; None for any other result (a load's, say)."""
    kind = str(result.data.get("kind", ""))
    if kind == "serving":
        return Serving.from_result(result.data)
    if kind == "served":
        return Served.from_result(result.data)
    if kind == "serve_queue":
        return ServeQueue.from_result(result.data)
    if kind == "serve_stopped":
        return ServeStopped.from_result(result.data)
    return None


def is_serve_error(error: WorkerError) -> bool:
    """Whether a worker error answers a serve command (the model is still loaded then)."""
    return str(error.data.get("op") or "") in (SERVE_OP, SERVE_STOP_OP)


@dataclass
class ServeStats:
    """What the status shows, kept up to date from the serve events (Qt-free).

    ``update`` takes every serve event in order; the properties read the state at ``now``
    (a monotonic-free wall time: ``Served.at`` is the worker's ``time.time()``).
    """

    serving: Serving | None = None
    queue: ServeQueue = field(default_factory=lambda: ServeQueue(0, False))
    recent: deque[Served] = field(default_factory=lambda: deque(maxlen=RECENT_REQUESTS))
    total: int = 0
    stopped: ServeStopped | None = None
    _times: deque[float] = field(default_factory=deque)

    def update(self, event: ServeEvent) -> None:
        if isinstance(event, Serving):
            self.serving, self.stopped = event, None
            self.queue = ServeQueue(0, False)
            self.recent.clear()
            self._times.clear()
            self.total = 0
        elif isinstance(event, Served):
            self.recent.appendleft(event)
            self._times.append(event.at + (event.latency_s or 0.0))  # when it finished
            self.total += 1
        elif isinstance(event, ServeQueue):
            self.queue = event
        elif isinstance(event, ServeStopped):
            self.serving, self.stopped = None, event
            self.queue = ServeQueue(0, False)

    def requests_per_minute(self, now: float) -> int:
        """Requests finished in the last :data:`RATE_WINDOW_S` seconds before ``now``
        (a long request finishes after shorter later ones: the count does not rely on
        order; dropping the oldest only keeps the list short)."""
        start = now - RATE_WINDOW_S
        while self._times and self._times[0] < start:
            self._times.popleft()
        return sum(1 for t in self._times if start <= t <= now)

    def tokens_per_s(self) -> float | None:
        """Generation speed over the recent successful requests (tokens after the first,
        weighted by their decode time); None before any."""
        tokens = seconds = 0.0
        for served in self.recent:
            if not served.ok or served.tokens_per_s is None or served.completion_tokens < 2:
                continue
            tokens += served.completion_tokens - 1
            seconds += (served.completion_tokens - 1) / served.tokens_per_s
        return tokens / seconds if seconds > 0 else None
