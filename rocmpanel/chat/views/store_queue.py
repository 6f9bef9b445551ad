"""The saved chats, reached off the GUI thread: one store call at a time, in the order asked.

The Chat tab and its conversation list never run sqlite on the GUI thread. They hand each
store call to a :class:`StoreQueue`, which runs the calls on the background pool one after
another, in the order they were asked (a reply is saved after the message it answers, a
list refresh sees the writes asked before it), and calls each one's ``on_done`` on the GUI
thread, in that order too. The store's file is checked (a damaged one moved aside),
migrated, or created by the first call that needs it, on the pool as well (a read of a
history that does not exist yet creates nothing); when that fails, the failure is reported
and the next call tries again.

No call waits on the GUI thread for another: a single background call at a time drains the
queue, taking the calls added while it runs. So the window's close, which waits for
background calls (up to 2 s), also waits for every write still queued: a reply that
arrives just before quitting is kept.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from PySide6.QtCore import QObject

from rocmpanel.base.enums import Precision
from rocmpanel.chat.store import ChatStore, ReplyFigures
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.report import report

log = logging.getLogger(__name__)

T = TypeVar("T")


class SavedChat:
    """The saved conversation the tab writes to. Its ``id`` is known once the store has
    created it, on the pool; the writes queued after the creation read it there, so the
    GUI thread never waits for it. ``id`` stays None when the creation failed (the chat
    then goes on unsaved, as the user was told)."""

    def __init__(self, conversation_id: int | None = None) -> None:
        self.id = conversation_id

    def create(self, store: ChatStore, title: str, model: str, system_prompt: str) -> int:
        self.id = store.create(title, model, system_prompt)
        return self.id

    def add(
        self, store: ChatStore, role: str, content: str, figures: ReplyFigures | None = None
    ) -> None:
        if self.id is not None:
            store.add_message(self.id, role, content, figures)

    def truncate(self, store: ChatStore, keep: int) -> None:
        if self.id is not None:
            store.truncate(self.id, keep)


def remember_model(
    store: ChatStore, path: str, precision: Precision
) -> list[tuple[str, Precision | None]]:
    """Put a loaded model first among the recent ones; the recent models then."""
    store.remember_model(path, precision)
    return store.recent_models()


@dataclass
class _Call:
    """A store call as the pool sees it: plain data and a function, no Qt object."""

    key: int
    call: Callable[[ChatStore], Any]


@dataclass
class _Delivery:
    """What the GUI thread keeps of a call until its result arrives."""

    doing: str
    on_done: Callable[[Any], object] | None
    on_error: Callable[[BaseException], object] | None


_Outcome = tuple[int, Any, BaseException | None, Callable[[ChatStore], Any]]


class _Drain:
    """The pool side: the queue of calls and the open store. Plain Python (no Qt object),
    shared by the GUI thread (which adds) and the one background call that drains."""

    def __init__(self, open_store: Callable[[], ChatStore]) -> None:
        self._open_store = open_store
        self._store: ChatStore | None = None
        self._lock = threading.Lock()
        self._calls: deque[_Call] = deque()
        self._draining = False

    def add(self, call: _Call) -> bool:
        """Queue ``call``; True when no drain runs and the caller must start one."""
        with self._lock:
            self._calls.append(call)
            start, self._draining = not self._draining, True
            return start

    def run(self) -> list[_Outcome]:
        """Run the queued calls in order until none is left (on a pool thread)."""
        outcomes: list[_Outcome] = []
        while True:
            with self._lock:
                if not self._calls:
                    self._draining = False
                    return outcomes
                item = self._calls.popleft()
            result: Any = None
            error: BaseException | None = None
            try:
                if self._store is None:
                    self._store = self._open_store()
                result = item.call(self._store)
            except BaseException as exc:  # every failure reaches the caller's on_error
                error = exc
            # The function goes back with its result, to be released on the GUI thread.
            outcomes.append((item.key, result, error, item.call))


class StoreQueue(QObject):
    """Store calls off the GUI thread, run one at a time and answered in order."""

    def __init__(
        self,
        open_store: Callable[[], ChatStore] = ChatStore,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._drain = _Drain(open_store)
        self._keys = itertools.count(1)
        self._next = 1  # the key of the next result to deliver
        self._deliveries: dict[int, _Delivery] = {}
        self._arrived: dict[int, tuple[Any, BaseException | None]] = {}

    @property
    def idle(self) -> bool:
        """No call is queued, running or waiting for its answer to be delivered."""
        return not self._deliveries

    def submit(
        self,
        doing: str,
        call: Callable[[ChatStore], T],
        on_done: Callable[[T], object] | None = None,
        on_error: Callable[[BaseException], object] | None = None,
    ) -> None:
        """Run ``call(store)`` after the calls asked before it; then ``on_done(result)`` on
        the GUI thread, or ``on_error(error)`` (default: :func:`report`, with ``doing``: a
        few words, "Saving the reply"). ``call`` must hold no Qt object: it is run and
        dropped off the GUI thread."""
        key = next(self._keys)
        self._deliveries[key] = _Delivery(doing, on_done, on_error)
        if self._drain.add(_Call(key, call)):
            run_in_background(
                self._drain.run, self._delivered, owner=self, what="saving the chat history"
            )

    def _delivered(self, outcomes: list[_Outcome] | None, error: BaseException | None) -> None:
        if error is not None:  # never: the drain catches what its calls raise
            log.error("the chat history queue failed", exc_info=error)
        for key, result, failure, _call in outcomes or []:
            self._arrived[key] = (result, failure)
        # Drains end and start one after another, but their answers are queued events:
        # deliver strictly in the order the calls were asked.
        while self._next in self._arrived:
            key = self._next
            self._next += 1
            result, failure = self._arrived.pop(key)
            delivery = self._deliveries.pop(key)
            try:
                if failure is None:
                    if delivery.on_done is not None:
                        delivery.on_done(result)
                elif delivery.on_error is not None:
                    delivery.on_error(failure)
                else:
                    report(failure, delivery.doing)
            except Exception as exc:  # a failing view must not hold up the answers after it
                report(exc, delivery.doing)
