"""Between the HTTP thread and the main thread: one request's job, its record, the queue.

A private sibling of ``chat.py`` (stdlib only). The HTTP server (``_serve_http``, on the
uvicorn thread) turns a request into an :class:`HttpJob` that waits in the worker's one
command queue; the main thread takes it, generates, and posts the text back to the
request's event loop (``call_soon_threadsafe``). A :class:`ServedRecord` collects what the
``served`` event says and sends it once both sides are done (the HTTP answer, and the
generation, which may outlive a client that went away). :class:`Backlog` counts the HTTP
requests waiting and running, refuses one over the limit (429) and tells the panel about
changes (``serve_queue``, at most ten a second).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import _wire
from _serve_api import ApiError, ApiRequest

QUEUE_EVENT_INTERVAL_S = 0.1  # serve_queue events: at most ten a second
RECENT_DURATIONS = 8  # how many finished generations the Retry-After estimate averages
# Streamed text: at most one batch per this time after the first piece (20 a second reads
# as smooth). Each batch wakes the HTTP thread, which then competes with generation for the
# GIL: benchmarks/serve.py measured HTTP/raw tokens/s 0.88 with 15 ms, 1.0 with 50 ms.
TEXT_INTERVAL_S = 0.05
CLIENT_GONE = 499  # nginx's status for a client that closed the connection first


class ServedRecord:
    """What one ``/v1/*`` request's ``served`` event says, sent once every side is done."""

    def __init__(
        self, method: str, path: str, client: str, on_sent: Callable[[], None] | None = None
    ) -> None:
        self.at = time.time()
        self.arrived = time.perf_counter()
        self.method, self.path, self.client = method, path, client
        self.stream = False
        self.status: int | None = None  # set by the handler; else the response's status
        self.response_status: int | None = None
        self.prompt_tokens = self.completion_tokens = 0
        self.ttft_s: float | None = None
        self.tokens_per_s: float | None = None
        self.finish_reason: str | None = None
        self.error: str | None = None
        self.disconnected = False
        self.latency_s: float | None = None
        self._on_sent = on_sent
        self._lock = threading.Lock()
        self._waiting = {"http"}

    def expect_job(self) -> None:
        """A generation joins: the event waits for it too."""
        with self._lock:
            self._waiting.add("job")

    def done(self, part: str) -> None:
        """``part`` ("http" or "job") is finished; the last one sends the event."""
        with self._lock:
            if part == "http" and self.latency_s is None:
                self.latency_s = time.perf_counter() - self.arrived
            self._waiting.discard(part)
            if self._waiting:
                return
            self._waiting.add("sent")  # never twice
        _wire.result(self.event())
        if self._on_sent is not None:
            self._on_sent()

    def event(self) -> dict[str, Any]:
        status = self.status or self.response_status or 500
        if self.disconnected:
            status = CLIENT_GONE
        return {
            "kind": "served",
            "at": round(self.at, 3),
            "method": self.method,
            "path": self.path,
            "status": status,
            "stream": self.stream,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": None if self.latency_s is None else round(self.latency_s, 4),
            "ttft_s": None if self.ttft_s is None else round(self.ttft_s, 4),
            "tokens_per_s": None if self.tokens_per_s is None else round(self.tokens_per_s, 2),
            "finish_reason": self.finish_reason,
            "client": self.client,
            "error": self.error,
            "disconnected": self.disconnected,
        }


@dataclass(frozen=True)
class Finished:
    """The end of a generation, as the HTTP side reads it (after every text piece)."""

    finish_reason: str | None  # "stop" / "length"; None when it was stopped early
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Failed:
    """A generation that could not run or finish: the client gets ``error``."""

    error: ApiError


class HttpJob:
    """One HTTP request's generation: made on the HTTP thread, run on the main thread.

    ``state`` goes queued → running → done, or queued → dropped (cancelled before the main
    thread took it: the main thread then skips it). ``stop`` ends a running generation
    within a token; it is the request's own event, never one the chat tab's ``stop`` sets.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        request: ApiRequest,
        input_ids: Sequence[int],
        max_new: int,
        record: ServedRecord,
        deadline: float,
        backlog: Backlog,
    ) -> None:
        self.loop = loop
        self.backlog = backlog  # its server's queue (a job may outlive its server)
        self.request = request
        self.input_ids = list(input_ids)
        self.max_new = max_new
        self.record = record
        self.deadline = deadline  # the perf_counter() time by which it must be answered
        self.stop = threading.Event()
        self.items: asyncio.Queue[str | Finished | Failed] = asyncio.Queue()
        self.state = "queued"
        self.on_end: Callable[[HttpJob], None] = lambda job: None  # after the main thread
        self._lock = threading.Lock()
        self._text: list[str] = []  # text posted but not yet on the loop
        self._scheduled = False  # a delivery of _text is on its way to the loop
        self._posted_at = -TEXT_INTERVAL_S

    def take(self) -> bool:
        """The main thread starts it; False when it was dropped while it waited."""
        with self._lock:
            if self.state != "queued":
                return False
            self.state = "running"
            return True

    def end(self) -> None:
        with self._lock:
            self.state = "done"

    def cancel(self, error: ApiError | None = None) -> str:
        """Stop it (the client went away, its time ran out, the server stops); the state
        it had. A queued job is dropped; ``error`` goes to a client still reading."""
        with self._lock:
            before = self.state
            if before == "queued":
                self.state = "dropped"
        self.stop.set()
        if error is not None and before in ("queued", "running"):
            self.post(Failed(error))
        return before

    def post_text(self, text: str) -> None:
        """Hand a piece of the reply to the request's event loop (from the main thread).

        The first piece goes at once; later ones at most every ``TEXT_INTERVAL_S`` (what
        comes in between joins them), like the chat tab's token events: a fast model then
        wakes the HTTP thread, whose work competes with generation for the GIL, twenty
        times a second instead of once per token. A held piece goes with the next.
        """
        now = time.perf_counter()
        with self._lock:
            self._text.append(text)
            if self._scheduled or now - self._posted_at < TEXT_INTERVAL_S:
                return
            self._scheduled, self._posted_at = True, now
        self.post(None)

    def _deliver(self, item: Finished | Failed | None) -> None:
        """On the loop: what was posted, text first (``call_soon`` runs in order)."""
        with self._lock:
            text, self._text = "".join(self._text), []
            self._scheduled = False
        if text:
            self.items.put_nowait(text)
        if item is not None:
            self.items.put_nowait(item)

    def post(self, item: Finished | Failed | None) -> None:
        """Hand ``item`` (and any text waiting) to the request's event loop, from any
        thread; a closed loop (the server stopped) means nobody reads any more: the
        generation stops."""
        try:
            self.loop.call_soon_threadsafe(self._deliver, item)
        except RuntimeError:
            self.stop.set()


class Backlog:
    """HTTP requests waiting for the model and running on it; refuses one over the limit."""

    def __init__(self, max_queue: int) -> None:
        self.max_queue = max_queue
        self.waiting = 0
        self.running = False
        self._durations: deque[float] = deque(maxlen=RECENT_DURATIONS)
        self._lock = threading.Lock()
        self._sent: tuple[int, bool] = (0, False)
        self._sent_at = 0.0
        self._timer: threading.Timer | None = None
        self.closed = False

    def enter(self) -> None:
        """One more waits; ApiError 429 (with Retry-After) when the queue is full."""
        with self._lock:
            if self.waiting >= self.max_queue:
                retry = self._retry_after_locked()
                raise ApiError(
                    429,
                    f"The server's queue is full ({self.max_queue} requests wait for the "
                    f"model); retry in {retry} s or raise the queue limit.",
                    type="requests",
                    code="queue_full",
                    headers={"Retry-After": str(retry)},
                )
            self.waiting += 1
        self._changed()

    def leave(self) -> None:
        """One that waited was dropped (timeout, disconnect, stop)."""
        with self._lock:
            self.waiting = max(0, self.waiting - 1)
        self._changed()

    def start(self) -> None:
        with self._lock:
            self.waiting = max(0, self.waiting - 1)
            self.running = True
        self._changed()

    def finish(self, duration_s: float) -> None:
        with self._lock:
            self.running = False
            self._durations.append(duration_s)
        self._changed()

    def retry_after(self) -> int:
        with self._lock:
            return self._retry_after_locked()

    def _retry_after_locked(self) -> int:
        """Seconds until a place is likely free (the running request ends and the first
        waiting one starts): the recent mean generation time, never under 1."""
        mean = sum(self._durations) / len(self._durations) if self._durations else 1.0
        return max(1, math.ceil(mean))

    def close(self) -> None:
        with self._lock:
            self.closed = True
            if self._timer is not None:
                self._timer.cancel()

    def _changed(self) -> None:
        """Send the state now, or once the interval since the last event has passed."""
        with self._lock:
            if self.closed or self._timer is not None:
                return
            wait = self._sent_at + QUEUE_EVENT_INTERVAL_S - time.monotonic()
            if wait > 0:
                self._timer = threading.Timer(wait, self._send_later)
                self._timer.daemon = True
                self._timer.start()
                return
        self._send()

    def _send_later(self) -> None:
        with self._lock:
            self._timer = None
        self._send()

    def _send(self) -> None:
        with self._lock:
            if self.closed:
                return
            state = (self.waiting, self.running)
            if state == self._sent:
                return
            self._sent, self._sent_at = state, time.monotonic()
        _wire.result({"kind": "serve_queue", "waiting": state[0], "running": state[1]})


class Jobs:
    """The jobs of one server that are not done yet, so stopping it can stop them all."""

    def __init__(self) -> None:
        self._jobs: set[HttpJob] = set()
        self._lock = threading.Lock()
        self._closed = False

    def add(self, job: HttpJob) -> bool:
        """Track ``job``; False once :meth:`cancel_all` has run (the server is stopping)."""
        with self._lock:
            if self._closed:
                return False
            self._jobs.add(job)
            return True

    def discard(self, job: HttpJob) -> None:
        with self._lock:
            self._jobs.discard(job)

    def cancel_all(self, error: ApiError) -> list[HttpJob]:
        """Stop every job, and refuse new ones; the ones that were still queued (dropped)."""
        with self._lock:
            self._closed = True
            jobs = list(self._jobs)
        dropped = []
        for job in jobs:
            with contextlib.suppress(Exception):
                if job.cancel(error) == "queued":
                    dropped.append(job)
        return dropped
