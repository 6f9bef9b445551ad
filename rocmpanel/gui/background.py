"""One-shot slow calls off the GUI thread: ``run_in_background(fn, on_done)``.

``fn`` runs on a QThreadPool thread; ``on_done(result, error)`` runs later on the GUI
thread, with exactly one of the two set. When ``owner`` (a widget) is deleted before the
call ends, ``on_done`` is dropped instead of touching a dead widget. Every failure is
logged here at debug level with its traceback; the view decides what to show (usually
through :func:`rocmpanel.gui.report.report`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

log = logging.getLogger(__name__)

T = TypeVar("T")

_RUNNING: set[BackgroundCall[Any]] = set()  # the pool holds no Python reference
_RELAYS: dict[int, _Relay] = {}  # relays without an owner, until they have delivered


class _Emitter(QObject):
    """Made and connected on the GUI thread, emitted from the pool thread: the delivery
    is queued, and Qt drops it when the relay (the owner's child) is already deleted.
    It only sends, so being released on the pool thread afterwards is safe."""

    finished = Signal(object, object)


class _Relay(QObject):
    """On the GUI thread, a child of the owner; calls ``on_done`` with the result."""

    def __init__(
        self, on_done: Callable[[Any, BaseException | None], None], owner: QObject | None
    ) -> None:
        super().__init__(owner)
        self._on_done = on_done

    @Slot(object, object)
    def deliver(self, result: object, error: object) -> None:
        _RELAYS.pop(id(self), None)
        try:
            self._on_done(result, error if isinstance(error, BaseException) else None)
        finally:
            self.deleteLater()


class BackgroundCall(QRunnable, Generic[T]):
    """A call on the pool; ``done`` is set once ``fn`` has returned or raised."""

    def __init__(self, fn: Callable[[], T], relay: _Relay, what: str) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self._fn = fn
        self.what = what
        self._emitter = _Emitter()
        self._emitter.finished.connect(relay.deliver)
        self.done = threading.Event()

    def run(self) -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = self._fn()
        except BaseException as exc:  # every failure reaches on_done as an error
            error = exc
            log.debug("%s failed", self.what, exc_info=exc)
        try:
            self._emitter.finished.emit(result, error)
        finally:
            self.done.set()
            _RUNNING.discard(self)


def pool() -> QThreadPool:
    """The pool background calls run on (Qt's global pool)."""
    return QThreadPool.globalInstance()


def run_in_background(
    fn: Callable[[], T],
    on_done: Callable[[T | None, BaseException | None], None],
    *,
    owner: QObject | None = None,
    what: str = "",
) -> BackgroundCall[T]:
    """Run ``fn()`` on the pool; call ``on_done(result, error)`` later on the GUI thread.

    Call it from the GUI thread. ``owner``: a QObject whose deletion drops the delivery
    (usually the view). ``what``: a few words for the log ("deleting environment rocm7").
    """
    relay = _Relay(on_done, owner)
    if owner is None:
        _RELAYS[id(relay)] = relay
    call: BackgroundCall[T] = BackgroundCall(fn, relay, what or getattr(fn, "__name__", "call"))
    _RUNNING.add(call)
    pool().start(call)
    return call


def wait_for_background(timeout_ms: int = 5000) -> bool:
    """Wait for running calls (window close, tests); False when some did not finish."""
    return pool().waitForDone(timeout_ms)
