"""One chat with the worker, as a state machine shared by the Chat tab and ``rocmpanel chat``.

A :class:`ChatSession` holds what a chat is at any moment: the worker it talks to, whether a
model is loaded, loading, answering or being stopped, the conversation so far and the
request being answered. The user's commands (load, send, stop, regenerate, edit) and the
worker's typed events (:class:`~rocmpanel.jobs.protocol.Token`,
:class:`~rocmpanel.jobs.protocol.ReplyDone`, results, errors, the worker's exit) go through
it; it decides what they mean and returns what changed, and the tab and the CLI only show
that. It is Qt-free and does no I/O beyond sending commands: saving the conversation and
drawing it are the callers' business.

Replies are matched to requests by id: tokens or a reply of an older request (one the user
stopped, or left by starting a new chat) are ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.chat.protocol import (
    GenerateRequest,
    LoadedModel,
    LoadRequest,
    Reply,
    Sampling,
    result_kind,
)
from rocmpanel.chat.requirements import Missing, describe_missing
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.protocol import ReplyDone, Result, Token, WorkerError

log = logging.getLogger(__name__)

Turn = tuple[str, str]  # (role, content)


class SessionState(Enum):
    """Where a chat is."""

    NO_MODEL = "no model"
    LOADING = "loading"
    READY = "ready"
    GENERATING = "generating"
    STOPPING = "stopping"  # stop was sent; the (shortened) reply is still to come
    FAILED = "failed"  # a load failed or the worker went away; the last load can be retried


class WorkerChannel(Protocol):
    """What the session needs of the worker process (a GUI ``Job`` or a ``JobProcess``)."""

    @property
    def running(self) -> bool: ...

    def send(self, op: str, **fields: Any) -> None: ...


@dataclass(frozen=True)
class Streamed:
    """Text of the reply being answered, from a batch of token events."""

    text: str
    tokens: int


@dataclass(frozen=True)
class Failure:
    """What to tell the user about a worker error or the worker's exit."""

    message: str
    offer_reload: bool  # reload the last model, as it was or smaller
    abandoned_reply: bool  # the reply in progress was dropped unfinished
    model_lost: bool  # no model is loaded any more
    missing: tuple[str, ...] = ()  # packages a load lacked (the fix: install them)


def describe_exit(outcome: JobOutcome) -> str:
    """Why the worker went, in a sentence (its last error line when it crashed)."""
    if outcome.state is JobState.CANCELLED:
        return translate("ChatSession", "it was cancelled.")
    if outcome.signal_name == "SIGKILL":
        return translate(
            "ChatSession",
            "it was killed (SIGKILL; when nobody ended it on purpose, the system usually "
            "ran out of memory).",
        )
    if outcome.signal_name:
        return translate("ChatSession", "it was killed by {signal}.").format(
            signal=outcome.signal_name
        )
    if outcome.exit_code not in (None, 0):
        last = ""
        for line in reversed(outcome.stderr_tail):
            # Progress bars redraw with carriage returns; keep only their final state.
            text = line.rsplit("\r", 1)[-1].strip()
            if text:
                last = text if len(text) <= 200 else text[:199] + "…"
                break
        if last:
            return translate(
                "ChatSession", "it exited with code {code}. Last error: {line}"
            ).format(code=outcome.exit_code, line=last)
        return translate("ChatSession", "it exited with code {code}.").format(
            code=outcome.exit_code
        )
    return outcome.message


def _missing(error: WorkerError) -> tuple[str, ...]:
    """The packages a ``missing_package`` error names (none for any other error)."""
    names = error.data.get("missing")
    if error.kind != "missing_package" or not isinstance(names, list):
        return ()
    return tuple(str(name) for name in names)


def _request_id(error: WorkerError) -> int | None:
    value = error.data.get("id")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class ChatSession:
    """The state of one chat and the transitions between its states (see the module)."""

    def __init__(self, *, gui: bool = True) -> None:
        self.gui = gui  # the words of a fix: the panel's, or the CLI's
        self.can_install = gui  # the panel offers to install missing packages
        self.state = SessionState.NO_MODEL
        self.worker: WorkerChannel | None = None
        self.worker_allows_hub = False
        self.loaded: LoadedModel | None = None
        self.last_load: LoadRequest | None = None
        self.conversation_id: int | None = None
        self.history: list[Turn] = []
        self.request_id = 0  # the newest generate request sent
        self._exit_expected = False  # a load failed: the worker exits, having said why

    # -- what the views ask ------------------------------------------------------------
    @property
    def generating(self) -> bool:
        return self.state in (SessionState.GENERATING, SessionState.STOPPING)

    @property
    def loading(self) -> bool:
        return self.state is SessionState.LOADING

    @property
    def can_send(self) -> bool:
        return self.state is SessionState.READY and self._worker_running()

    @property
    def can_stop(self) -> bool:
        return self.state is SessionState.GENERATING

    @property
    def can_regenerate(self) -> bool:
        """A reply can be asked again (also one that never finished: error, crash)."""
        return self.can_send and bool(self.history)

    @property
    def can_edit(self) -> bool:
        return not self.generating and any(role == "user" for role, _ in self.history)

    def _worker_running(self) -> bool:
        return self.worker is not None and self.worker.running

    # -- the worker --------------------------------------------------------------------
    def needs_worker(self, allow_hub: bool) -> bool:
        """Whether a (new) worker must be started: none runs, or hub access differs."""
        return not self._worker_running() or self.worker_allows_hub != allow_hub

    def use_worker(self, worker: WorkerChannel, allow_hub: bool) -> WorkerChannel | None:
        """Talk to ``worker`` from now on; returns the previous one, for the caller to end.

        A model in the previous worker is gone with it (and a reply in progress)."""
        previous = self.drop_worker()
        self.worker, self.worker_allows_hub = worker, allow_hub
        self._exit_expected = False
        return previous

    def drop_worker(self) -> WorkerChannel | None:
        """Forget the worker (it is being ended on purpose); returns it."""
        previous, self.worker = self.worker, None
        self.loaded = None
        if self.state is not SessionState.FAILED:
            self.state = SessionState.NO_MODEL
        return previous

    def _send(self, op: str, **fields: Any) -> None:
        """Send a command the worker must get (PanelError when it cannot)."""
        if self.worker is None:
            raise PanelError(translate("ChatSession", "The chat worker is not running."))
        self.worker.send(op, **fields)

    def _tell(self, op: str) -> None:
        """Send a command that may be lost: a worker that is gone has nothing to stop or
        unload, and its exit is reported on its own."""
        if not self._worker_running():
            return
        try:
            self._send(op)
        except PanelError as exc:
            log.debug("chat worker did not take %s: %s", op, exc)

    # -- the model ---------------------------------------------------------------------
    def load(self, request: LoadRequest) -> None:
        """Ask the worker for ``request`` (PanelError when it cannot take it; then nothing
        changed but a reply in progress being stopped)."""
        if self.generating:
            self.stop()
        self._send(request.op, **request.fields())
        self.last_load = request
        self.loaded = None
        self.state = SessionState.LOADING

    def unload(self) -> None:
        """Drop the model (a reply in progress is stopped and left unfinished)."""
        if self.generating:
            self.stop()
        self._tell("unload")
        self.loaded = None
        self.state = SessionState.NO_MODEL

    def reload_request(self, smaller: bool) -> LoadRequest | None:
        """The last load again, as it was or with a smaller setting; None if there was none."""
        if self.last_load is None:
            return None
        return self.last_load.smaller() if smaller else self.last_load

    # -- the conversation --------------------------------------------------------------
    def add_user_message(self, text: str) -> bool:
        """Add what the user typed; False (nothing added) when no reply can start now."""
        text = text.strip()
        if not text or not self.can_send:
            return False
        self.history.append(("user", text))
        return True

    def start_reply(self, system: str, sampling: Sampling) -> GenerateRequest:
        """Ask for a reply to the conversation (PanelError when the worker cannot take it)."""
        if self.state is not SessionState.READY:
            raise PanelError(translate("ChatSession", "Load a model first."))
        request = GenerateRequest(self.request_id + 1, tuple(self.history), system, sampling)
        self._send(request.op, **request.fields())
        self.request_id = request.id
        self.state = SessionState.GENERATING
        return request

    def stop(self) -> bool:
        """Ask the worker to end the reply within a token; False when none is running."""
        if self.state is not SessionState.GENERATING:
            return False
        self._tell("stop")
        self.state = SessionState.STOPPING
        return True

    def regenerate(self) -> int | None:
        """Drop the last reply (or nothing, after one that never finished) to ask again;
        the number of messages kept, or None when no reply can be asked now."""
        if not self.can_regenerate:
            return None
        if self.history[-1][0] == "assistant":
            self.history.pop()
        return len(self.history)

    def edit_last(self) -> tuple[str, int] | None:
        """Take the last user message back out (with what followed it): its text and the
        number of messages kept; None when there is none or a reply runs."""
        if not self.can_edit:
            return None
        index = max(i for i, (role, _) in enumerate(self.history) if role == "user")
        text = self.history[index][1]
        del self.history[index:]
        return text, index

    def new_conversation(self) -> None:
        """Start over; a reply in progress is stopped and its end ignored."""
        self._leave_reply()
        self.conversation_id = None
        self.history.clear()

    def open_conversation(self, conversation_id: int, turns: Iterable[Turn]) -> bool:
        """Continue a saved conversation; False (nothing changed) while a reply runs."""
        if self.generating:
            return False
        self.conversation_id = conversation_id
        self.history = [(r, c) for r, c in turns if r in ("user", "assistant")]
        return True

    def _leave_reply(self) -> None:
        if self.generating:
            self.stop()
            self.state = SessionState.READY

    # -- the worker's events -----------------------------------------------------------
    def on_tokens(self, tokens: Sequence[Token]) -> Streamed | None:
        """The text these tokens add to the reply being answered (None: none of it)."""
        if not self.generating:
            return None
        mine = [t for t in tokens if t.request_id == self.request_id]
        if not mine:
            return None
        return Streamed("".join(t.text for t in mine), sum(t.count or 1 for t in mine))

    def on_reply(self, done: ReplyDone) -> Reply | None:
        """The finished reply, added to the conversation; None for an older request's."""
        if not self.generating or done.request_id != self.request_id:
            return None
        reply = Reply.from_done(done)
        self.history.append(("assistant", reply.text))
        self.state = SessionState.READY
        return reply

    def on_result(self, result: Result) -> LoadedModel | None:
        """The model the worker loaded; None for other results or a load given up on."""
        if result_kind(result.data) != "loaded" or self.state is not SessionState.LOADING:
            return None
        if self.last_load is None:  # never: LOADING is only entered by load()
            return None
        self.loaded = LoadedModel.from_result(result.data, self.last_load)
        self.state = SessionState.READY
        return self.loaded

    def on_error(self, error: WorkerError) -> Failure:
        """What a worker error means here. After a failed load the worker exits (its exit is
        then not reported again); after any other error it keeps running."""
        op = str(error.data.get("op") or "")
        suggestion = str(error.data.get("suggestion") or "")
        abandoned = lost = False
        if op == "generate" and self.generating:
            failed = _request_id(error)
            if failed is None or failed == self.request_id:
                self.state = SessionState.READY
                abandoned = True
        if op == "load" or (not op and self.loaded is None):
            lost = True
            self.loaded = None
            if self.state is SessionState.LOADING:
                self.state = SessionState.FAILED
        if op == "load":
            self._exit_expected = True
        missing = _missing(error)
        if missing:
            fix = describe_missing(
                tuple(Missing(name, None, None) for name in missing),
                gui=self.gui,
                can_install=self.can_install,
            )
            message = translate("ChatSession", "The model was not loaded. {fix}").format(fix=fix)
        else:
            message = error.message + (f" {suggestion}" if suggestion else "")
        return Failure(
            message,
            offer_reload=error.kind == "oom",
            abandoned_reply=abandoned,
            model_lost=lost,
            missing=missing,
        )

    def on_worker_exit(self, worker: WorkerChannel, outcome: JobOutcome) -> Failure | None:
        """The worker ended; None when it is not this session's (one ended on purpose) or
        when it ended after a failed load (that error said why)."""
        if worker is not self.worker:
            return None
        self.worker = None
        if self._exit_expected and outcome.state is JobState.FAILED:
            self._exit_expected = False
            return None  # a failed load, already explained by its error
        had_model = self.loaded is not None or self.loading
        abandoned = self.generating
        self.loaded = None
        self.state = SessionState.FAILED
        message = translate(
            "ChatSession", "The chat worker stopped: {why} The model is no longer loaded."
        ).format(why=describe_exit(outcome))
        return Failure(
            message,
            offer_reload=had_model,
            abandoned_reply=abandoned,
            model_lost=True,
        )
