"""One-shot slow calls off the GUI thread: ``run_in_background(fn, on_done)``.

``fn`` runs on a QThreadPool thread; ``on_done(result, error)`` runs later on the GUI
thread, with exactly one of the two set. When ``owner`` (a QObject, usually the view) is
deleted before the call ends, ``on_done`` is dropped instead of touching a dead widget.
Every failure is logged here at debug level with its traceback; the view decides what to
show (usually through :func:`rocmpanel.gui.report.report`).

Object lifetimes are the point of this module. Python may free an object on whichever
thread drops its last reference, and freeing a Qt object (or a closure holding one) on
a pool thread crashes Qt. So the pool thread holds nothing but the call's key: the
function, its result and its error travel back inside the queued signal, and the
callback, the owner and the function are all released on the GUI thread. Nothing here
forms a reference cycle with the owner, which the cycle collector could otherwise free
on any thread.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QRunnable, QThread, QThreadPool, Signal

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class _Pending:
    """What the GUI thread keeps of a running call until its result arrives."""

    on_done: Callable[[Any, BaseException | None], None]
    owner: QObject | None
    what: str


class _Dispatcher(QObject):
    """Lives on the GUI thread; pool threads emit ``finished`` and Qt queues it here."""

    finished = Signal(int, object, object, object)

    def __init__(self) -> None:
        super().__init__()
        self.pending: dict[int, _Pending] = {}
        self.finished.connect(self._on_finished)

    def _on_finished(self, key: int, result: object, error: object, fn: object) -> None:
        pending = self.pending.pop(key, None)
        del fn  # released here, on the GUI thread
        if pending is None:
            return
        if pending.owner is not None and not shiboken6.isValid(pending.owner):
            log.debug("%s finished after its owner was deleted", pending.what)
            return
        pending.on_done(result, error if isinstance(error, BaseException) else None)


_dispatcher: _Dispatcher | None = None
_keys = itertools.count(1)


def _get_dispatcher() -> _Dispatcher:
    global _dispatcher
    app = QCoreApplication.instance()
    if app is None or QThread.currentThread() is not app.thread():
        raise RuntimeError("run_in_background must be called on the GUI thread")
    if _dispatcher is None or not shiboken6.isValid(_dispatcher):
        _dispatcher = _Dispatcher()
    return _dispatcher


class BackgroundCall(QRunnable, Generic[T]):
    """A call on the pool; ``done`` is set once ``fn`` has returned or raised."""

    def __init__(self, key: int, fn: Callable[[], T], dispatcher: _Dispatcher, what: str):
        super().__init__()
        self.setAutoDelete(False)
        self.key = key
        self.what = what
        self.done = threading.Event()
        self._fn: Callable[[], T] | None = fn
        self._signal = dispatcher.finished

    def run(self) -> None:
        fn, self._fn = self._fn, None
        result: Any = None
        error: BaseException | None = None
        try:
            if fn is not None:
                result = fn()
        except BaseException as exc:  # every failure reaches on_done as an error
            error = exc
            log.debug("%s failed", self.what, exc_info=exc)
        try:
            # The queued event now holds fn, result and error: their last references
            # are dropped on the GUI thread after delivery.
            self._signal.emit(self.key, result, error, fn)
        except RuntimeError:  # the dispatcher is gone: the application is shutting down
            log.debug("%s ended after shutdown; its result is dropped", self.what)
        finally:
            del fn, result, error
            self.done.set()
            with _running_lock:
                _running.discard(self)


# The pool keeps no Python reference to a runnable; this set does, until it has run.
_running: set[BackgroundCall[Any]] = set()
_running_lock = threading.Lock()


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
    dispatcher = _get_dispatcher()
    key = next(_keys)
    label = what or getattr(fn, "__name__", "call")
    dispatcher.pending[key] = _Pending(on_done, owner, label)
    call: BackgroundCall[T] = BackgroundCall(key, fn, dispatcher, label)
    with _running_lock:
        _running.add(call)
    pool().start(call)
    return call


def pending_count() -> int:
    """Calls whose result has not been delivered yet (tests, closing)."""
    return len(_dispatcher.pending) if _dispatcher is not None else 0


def wait_for_background(timeout_ms: int = 5000) -> bool:
    """Wait for running calls (window close, tests); False when some did not finish."""
    return pool().waitForDone(timeout_ms)
