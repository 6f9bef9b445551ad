"""The chat worker's command loop: stdin → a queue → the engine on the main thread → events.

A private sibling of ``chat.py``. :func:`read_commands` runs on its own thread, so a
``stop`` is seen while a reply is being generated; it queues every other command with a
stop event made the moment it arrived (a stop sent right after ``generate`` is not lost
while the command waits). :func:`serve` runs the queue on the main thread and turns each
outcome into events: a ``result`` for load and unload, a ``reply`` for generate, an
``error`` of its kind for a failure (``oom`` for out of memory, ``missing_package`` for an
import of the chat's packages that failed). After a failed generate or unload the worker
keeps running; after a failed load it exits with :data:`LOAD_FAILED_EXIT` (its one error
event says why), so the panel's job ends as failed and nothing half-imported lingers.
With a :class:`~_serve_front.ServeControl`, ``serve`` is queued like a load, ``serve_stop``
acts at once, HTTP requests arrive as ``http`` items of the same queue, and ``load``,
``unload``, ``exit`` and the end of stdin stop the server first.
"""

from __future__ import annotations

import json
import queue
import threading
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import _wire
from _chat_engine import ChatEngine
from _chat_errors import OOM_SUGGESTION, WorkerFailure, is_oom, missing_package
from _chat_requests import GenerateCommand, LoadCommand
from _serve_front import ServeControl

QUEUED_OPS = ("load", "generate", "unload", "serve")
LOAD_FAILED_EXIT = 3  # the exit code of a worker whose load failed


@dataclass(frozen=True)
class Queued:
    """A command waiting for the main thread, with the stop event that ends it."""

    op: str
    command: Mapping[str, Any]
    stop: threading.Event = field(default_factory=threading.Event)
    job: Any = None  # op "http": the HTTP request's HttpJob (_serve_bridge)
    asked_at: int | None = None  # op "serve": the server's asked stops when it was read


class StopEvents:
    """The stop events of queued and running commands; ``stop`` sets them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: set[threading.Event] = set()

    def new(self) -> threading.Event:
        event = threading.Event()
        with self._lock:
            self._events.add(event)
        return event

    def done(self, event: threading.Event) -> None:
        with self._lock:
            self._events.discard(event)

    def stop_all(self) -> None:
        with self._lock:
            for event in self._events:
                event.set()


def read_commands(
    lines: Iterable[str],
    commands: queue.Queue[Queued | None],
    stops: StopEvents,
    control: ServeControl | None = None,
) -> None:
    """The stdin reader (its own thread): queue work, act on ``stop`` and ``serve_stop`` at
    once. ``stop`` reaches the chat's replies only: HTTP requests have events of their own."""
    try:
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                cmd = json.loads(line)
                op = cmd["op"]
            except (ValueError, KeyError, TypeError):
                _wire.error(f"Not a command: {line[:200]}", kind="bad_command")
                continue
            if op == "stop":
                stops.stop_all()
            elif op == "serve_stop":
                if control is None:
                    stopped = {"kind": "serve_stopped", "reason": "not_serving"}
                    _wire.result({**stopped, "served_requests": 0})
                else:
                    control.ask_stop("asked")
            elif op == "exit":
                break
            elif op == "serve" and control is not None:
                commands.put(Queued(op, cmd, stops.new(), asked_at=control.asked_stops))
            elif op in QUEUED_OPS:
                commands.put(Queued(op, cmd, stops.new()))
            else:
                _wire.error(f"Unknown command {op!r}.", kind="bad_command")
    finally:
        # exit, or the panel went away (end of stdin): finish what runs, then leave.
        # The panel may be gone (kill -9): then saying so fails on the dead pipe, and the
        # main thread must still be told to end, or the worker would wait forever.
        try:
            if control is not None:
                control.ask_stop("exit", quiet=True)
        except Exception:  # the panel went away; nobody is left to tell
            pass
        finally:
            stops.stop_all()
            commands.put(None)


def run_command(engine: ChatEngine, item: Queued, control: ServeControl | None = None) -> None:
    """Run one queued command and send its outcome."""
    if control is not None and item.op in ("load", "unload") and control.serving:
        control.stop(item.op)  # the served model goes: its server first
    if item.op == "http" and control is not None:
        control.run_job(engine, item.job)
    elif item.op == "serve":
        if control is None:
            raise WorkerFailure("This worker cannot serve.", "serve_failed")
        control.start(engine, item.command, item.asked_at)
    elif item.op == "load":
        _wire.result(engine.load(LoadCommand.parse(item.command)).as_result())
    elif item.op == "generate":
        reply = engine.generate(GenerateCommand.parse(item.command), item.stop)
        _wire.reply(reply.request_id, reply.text, **reply.figures())
    elif item.op == "unload":
        _wire.result({"kind": "unloaded", "had_model": engine.unload()})


def serve(
    engine: ChatEngine,
    commands: queue.Queue[Queued | None],
    stops: StopEvents,
    control: ServeControl | None = None,
) -> int:
    """Run queued commands one at a time until the reader says there are no more (0) or a
    load fails (:data:`LOAD_FAILED_EXIT`, after its error event); the exit code. HTTP
    requests of ``control``'s server join the same queue (op ``http``)."""
    if control is not None:
        control.commands = commands
        control.make_item = lambda job: Queued("http", {}, job.stop, job)
    while True:
        item = commands.get()
        if item is None:
            if control is not None:
                control.stop("exit", quiet=True)
            return 0
        try:
            run_command(engine, item, control)
        except WorkerFailure as exc:
            _report(item, exc.message, exc.kind, exc.detail, **exc.fields)
            if item.op == "load":
                _stop_serving(control)
                return LOAD_FAILED_EXIT
        except Exception as exc:
            detail = traceback.format_exc()
            oom = is_oom(exc)
            missing = missing_package(exc, detail) if isinstance(exc, ImportError) else None
            if missing is not None:
                _report(item, missing.message, missing.kind, detail, **missing.fields)
            elif oom:
                engine.unload()
                _report(item, f"Out of memory during {item.op}: {exc}", "oom", detail)
            else:
                _report(item, f"{type(exc).__name__}: {exc}", item.op, detail)
            if item.op == "load":
                _stop_serving(control)
                return LOAD_FAILED_EXIT
        finally:
            stops.done(item.stop)


def _stop_serving(control: ServeControl | None) -> None:
    if control is not None:
        control.stop("exit", quiet=True)


def _report(item: Queued, message: str, kind: str, detail: str, **fields: object) -> None:
    _wire.error(
        message,
        kind=kind,
        detail=detail,
        op=item.op,
        id=item.command.get("id"),
        suggestion=OOM_SUGGESTION if kind == "oom" else "",
        **fields,
    )
