"""The Qt side of jobs: a :class:`Job` per child process and the :class:`JobManager`.

Reader threads never touch widgets. They append events to a queue (runs of log lines and
of tokens gathered there, on the reader thread, so the GUI thread does no work per line)
and, only when it was empty, emit one queued ``_wake`` signal; the GUI thread then drains
what has piled up, at most once per ``DRAIN_INTERVAL_S`` (the first event after a quiet
spell is delivered at once) and at most ``DRAIN_LIMIT`` events per turn of the event loop
(a backlog is taken in several turns, in order, none dropped). A worker flooding its
output therefore costs the GUI about 60 slot calls a second, not one per line, and no
single call grows with the flood. Only QtCore is used here; the child-process, protocol
and spec modules are imported when the first job is made, not when the panel starts.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QTimer, Signal, Slot

from rocmpanel.base.errors import PanelError

if TYPE_CHECKING:
    from rocmpanel.jobs.process import JobOutcome
    from rocmpanel.jobs.protocol import Event, LogLine, Progress, Token
    from rocmpanel.jobs.spec import JobSpec

log = logging.getLogger(__name__)

LOG_LINES_KEPT = 5000
DRAIN_INTERVAL_S = 0.016
# Events (a log line or token each) one drain delivers; a longer backlog waits for the
# next turn of the event loop, so timers and painting run in between.
DRAIN_LIMIT = 2000
# At close a job that ignores terminate is killed after CLOSE_GRACE_S (a worker that exits
# on terminate, as they all do unless wedged, is gone in milliseconds). The kill is sent
# by a daemon thread that dies with the panel, so closing waits until it has surely been
# sent: KILL_MARGIN_S after the grace.
CLOSE_GRACE_S = 0.5
KILL_MARGIN_S = 0.5
_ids = itertools.count(1)


@dataclasses.dataclass(slots=True)
class _Run:
    """Consecutive log lines, or consecutive tokens, queued as one entry."""

    kind: type
    items: list[Any]


class Job(QObject):
    """One background job as the GUI sees it. Signals arrive on the GUI thread."""

    progress_changed = Signal(object)  # Progress
    # Batches travel as one Python object (a Signal(list) would convert every element):
    # receivers share the list and must not change it.
    log_added = Signal(object)  # list[LogLine], a batch
    tokens_received = Signal(object)  # list[Token], a batch
    result_received = Signal(object)  # Result
    check_done = Signal(object)  # CheckDone, one finished check of a suite
    reply_received = Signal(object)  # ReplyDone (the end of a chat reply)
    error_reported = Signal(object)  # WorkerError
    finished = Signal(object)  # JobOutcome
    cancel_label_changed = Signal(str)  # what the job's cancel action is called now
    _wake = Signal()

    def __init__(self, spec: JobSpec, grace_s: float = 3.0, parent: QObject | None = None):
        from rocmpanel.jobs.process import JobProcess, JobState
        from rocmpanel.jobs.protocol import LogLine, Progress, Token
        from rocmpanel.jobs.spec import prepare

        super().__init__(parent)
        self.id = next(_ids)
        self.spec = spec
        self.state = JobState.RUNNING
        self.progress = Progress(None, "Starting…")
        self.log: collections.deque[LogLine] = collections.deque(maxlen=LOG_LINES_KEPT)
        self.outcome: JobOutcome | None = None
        self.started_at = time.time()
        self.cancel_label = "Cancel"
        self._run_kinds = (LogLine, Token)
        self._pending: collections.deque[Any] = collections.deque()  # events and _Runs
        self._detached = False
        self._lock = threading.Lock()
        self._last_drain = 0.0
        self._drain_timer = QTimer(self)
        self._drain_timer.setSingleShot(True)
        self._drain_timer.timeout.connect(self._drain)
        self._wake.connect(self._on_wake, Qt.ConnectionType.QueuedConnection)
        self._process = JobProcess(prepare(spec), self._enqueue, self._enqueue, grace_s)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @property
    def argv(self) -> tuple[str, ...]:
        return self._process.prepared.argv

    @property
    def running(self) -> bool:
        return self.outcome is None

    def set_cancel_label(self, label: str) -> None:
        """Name the cancel action as the user sees it now (a loaded chat model: "Unload")."""
        if label != self.cancel_label:
            self.cancel_label = label
            self.cancel_label_changed.emit(label)

    def start(self) -> None:
        self._process.start()
        log.info("job %s started: %s (pid %s)", self.name, self._process.prepared.argv, self.pid)

    def send(self, op: str, **fields: Any) -> None:
        """Send a command to an interactive job (e.g. chat's generate/stop/unload)."""
        self._process.send(op, **fields)

    def cancel(self, grace_s: float | None = None) -> None:
        """Interactive jobs get ``stop`` first; every job is then terminated, and killed
        with its process group after ``grace_s`` (default: the job's own grace) unless it
        has exited by then."""
        if not self.running:
            return
        if self.spec.interactive:
            with contextlib.suppress(PanelError):
                self._process.send("stop")
        if grace_s is not None:
            self._process.grace_s = min(self._process.grace_s, max(0.0, grace_s))
        self._process.cancel()

    def wait(self, timeout: float | None = None) -> JobOutcome | None:
        return self._process.wait(timeout)

    def waiter(self) -> Callable[[float | None], JobOutcome | None]:
        """:meth:`wait` without this Qt object, for a pool thread to call (its outcome,
        or None when ``timeout`` passed first)."""
        return self._process.wait

    # -- reader threads → GUI thread ----------------------------------------------------
    def _enqueue(self, item: Event | JobOutcome) -> None:
        kind = type(item)
        with self._lock:
            if self._detached:
                return
            pending = self._pending
            was_empty = not pending
            if kind in self._run_kinds:
                last = pending[-1] if pending else None
                if isinstance(last, _Run) and last.kind is kind:
                    last.items.append(item)
                else:
                    pending.append(_Run(kind, [item]))
            else:
                pending.append(item)
            if was_empty:
                self._wake.emit()

    def detach(self) -> None:
        """Stop delivering events (the window is going away; the Qt object may be deleted)."""
        with self._lock:
            self._detached = True

    @Slot()
    def _on_wake(self) -> None:
        wait = self._last_drain + DRAIN_INTERVAL_S - time.monotonic()
        if wait <= 0:
            self._drain()
        elif not self._drain_timer.isActive():
            self._drain_timer.start(max(1, round(wait * 1000)))

    def _take(self, limit: int) -> tuple[list[Any], bool]:
        """Up to ``limit`` queued events, oldest first (a run split if need be), and
        whether more are left."""
        taken: list[Any] = []
        with self._lock:
            pending = self._pending
            while pending and limit > 0:
                entry = pending[0]
                if isinstance(entry, _Run):
                    if len(entry.items) > limit:
                        taken.append(_Run(entry.kind, entry.items[:limit]))
                        del entry.items[:limit]
                        break
                    limit -= len(entry.items)
                else:
                    limit -= 1
                taken.append(pending.popleft())
            return taken, bool(pending)

    @Slot()
    def _drain(self) -> None:
        from rocmpanel.jobs.process import JobOutcome
        from rocmpanel.jobs.protocol import (
            CheckDone,
            LogLine,
            Progress,
            ReplyDone,
            Result,
            WorkerError,
        )

        self._last_drain = time.monotonic()
        entries, more = self._take(DRAIN_LIMIT)
        if more:  # the rest after whatever else is waiting on the GUI thread
            self._drain_timer.start(0)
        logs: list[LogLine] = []
        tokens: list[Token] = []
        progress: Progress | None = None

        def flush() -> None:
            nonlocal logs, tokens, progress
            if logs:
                self.log.extend(logs)
                self.log_added.emit(logs)
                logs = []
            if tokens:
                self.tokens_received.emit(tokens)
                tokens = []
            if progress is not None:
                self.progress = progress
                self.progress_changed.emit(progress)
                progress = None

        for item in entries:
            if isinstance(item, _Run):
                if item.kind is LogLine:
                    logs.extend(item.items)
                else:
                    tokens.extend(item.items)
            elif isinstance(item, Progress):
                progress = item
            else:
                flush()
                if isinstance(item, Result):
                    self.result_received.emit(item)
                elif isinstance(item, ReplyDone):
                    self.reply_received.emit(item)
                elif isinstance(item, WorkerError):
                    self.log.append(LogLine(f"error: {item.message}", "error"))
                    self.error_reported.emit(item)
                elif isinstance(item, CheckDone):
                    self.check_done.emit(item)
                elif isinstance(item, JobOutcome):
                    self._finish(item)
                else:  # a newer event this panel does not know: logged, never fatal
                    log.debug("job %s: ignored event %r", self.name, item)
        flush()

    def _finish(self, outcome: JobOutcome) -> None:
        self.outcome = outcome
        self.state = outcome.state
        level = logging.INFO if outcome.was_successful() else logging.WARNING
        log.log(level, "job %s %s: %s", self.name, outcome.state.value, outcome)
        self.finished.emit(outcome)


class JobManager(QObject):
    """Starts jobs and keeps the list the jobs strip shows."""

    job_added = Signal(object)  # Job
    job_finished = Signal(object)  # Job

    KEEP_FINISHED = 30

    def __init__(self, grace_s: float = 3.0, parent: QObject | None = None):
        super().__init__(parent)
        self.grace_s = grace_s
        self.jobs: list[Job] = []
        # The env overrides a job gets (session store, managed env); the spec's own win.
        self.env_provider: Callable[[JobSpec], Mapping[str, str | None]] | None = None

    def start(self, spec: JobSpec) -> Job:
        """Prepare and start ``spec``; raises PanelError when it cannot start."""
        if self.env_provider is not None:
            spec = dataclasses.replace(spec, env={**self.env_provider(spec), **spec.env})
        job = Job(spec, self.grace_s, self)
        job.finished.connect(lambda _outcome, j=job: self._on_job_finished(j))
        job.start()
        self.jobs.append(job)
        self._trim()
        self.job_added.emit(job)
        return job

    def running(self) -> list[Job]:
        return [job for job in self.jobs if job.running]

    def _on_job_finished(self, job: Job) -> None:
        self.job_finished.emit(job)
        self._trim()

    def _trim(self) -> None:
        finished = [job for job in self.jobs if not job.running]
        for stale in finished[: max(0, len(finished) - self.KEEP_FINISHED)]:
            self.jobs.remove(stale)
            stale.deleteLater()

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop every running job before the panel goes: no child process outlives it.

        Each job is terminated now and killed, with its process group, after
        ``CLOSE_GRACE_S`` (or its own shorter grace) if it is still there. That kill comes
        from a daemon thread, which dies with the panel, so this returns once every job has
        ended or its kill has been sent: after a few milliseconds when the workers exit on
        terminate, after about the grace when one is wedged, and never later than the grace
        plus ``KILL_MARGIN_S`` (or ``timeout``, when that is longer). From then on no job
        delivers events (the window may delete them).
        """
        running = self.running()
        grace = min(self.grace_s, CLOSE_GRACE_S)
        for job in running:
            job.cancel(grace)
        limit = grace + KILL_MARGIN_S
        deadline = time.monotonic() + (limit if timeout is None else max(limit, timeout))
        for job in running:
            job.wait(max(0.0, deadline - time.monotonic()))
        for job in self.jobs:
            job.detach()


class ExitSignalWatch(QObject):
    """SIGTERM, SIGHUP and SIGINT end the GUI as closing its window does, with every job's process
    group: the handler cancels the jobs at once, then ``close`` runs (the main window's
    close stops the tabs and what is left of the jobs) and the event loop ends with 128 +
    the signal's number. Python runs a signal handler only when the interpreter gets
    control, which the Qt event loop may not give it for a long time: the signal module
    writes a byte to a socket that a ``QSocketNotifier`` watches, so the handler runs at
    once. POSIX only."""

    def __init__(self, app: QCoreApplication, close: Callable[[], object]) -> None:
        import signal
        import socket

        from PySide6.QtCore import QSocketNotifier

        from rocmpanel.jobs import lifetime

        super().__init__(app)
        self._app = app
        self._close = close
        self.signum: int | None = None
        self._reader, self._writer = socket.socketpair()
        for sock in (self._reader, self._writer):
            sock.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain)
        # Ctrl+C in the terminal that started the window closes it too (rather than a
        # KeyboardInterrupt traceback from whatever slot ran next).
        self._previous = lifetime.install_handlers(self._on_signal, also_sigint=True)

    @Slot()
    def _drain(self) -> None:
        # Running this slot is what lets Python run the handler; the bytes are not needed.
        with contextlib.suppress(OSError):
            while self._reader.recv(512):
                pass

    def _on_signal(self, signum: int) -> None:
        self.signum = signum
        QTimer.singleShot(0, self._quit)  # not inside whatever code the signal interrupted

    @Slot()
    def _quit(self) -> None:
        try:
            self._close()
        except Exception:  # the jobs were cancelled already; the panel still exits
            log.exception("closing on a signal failed")
        if self.signum is not None:
            self._app.exit(128 + self.signum)

    def close(self) -> None:
        """Give the signals back to their previous handlers (tests)."""
        import signal

        from rocmpanel.jobs import lifetime

        lifetime.restore_handlers(self._previous)
        with contextlib.suppress(ValueError):
            signal.set_wakeup_fd(self._previous_fd)
        self._notifier.setEnabled(False)
        self._reader.close()
        self._writer.close()


def watch_exit_signals(
    app: QCoreApplication, close: Callable[[], object]
) -> ExitSignalWatch | None:
    """Make SIGTERM, SIGHUP and SIGINT end the GUI: the jobs are cancelled, ``close`` runs (the
    main window's ``close``), the event loop ends with 128 + the signal's number. Call once,
    on the main thread, after the application exists. None on Windows or off the main
    thread."""
    from rocmpanel.jobs import lifetime

    if not lifetime.ENABLED or threading.current_thread() is not threading.main_thread():
        return None
    return ExitSignalWatch(app, close)
