"""No job outlives the panel: the live jobs, ended on SIGTERM, SIGHUP and at exit.

Every worker runs in a session (process group) of its own, so the signals that end the
panel (a ``kill``, the terminal closing, the desktop logging out) do not reach it. This
module keeps the jobs that are running and ends their process groups when the panel goes:

- :func:`ending_jobs_on_signals` (the CLI, around a command) and :func:`install_handlers`
  (the GUI) catch SIGTERM and SIGHUP: the jobs are cancelled (terminate now, kill after
  their grace period), then the command is interrupted as Ctrl+C interrupts it, so its own
  clean-up runs (a half-made environment is removed), and the process exits with
  128 + the signal's number. A second signal kills the jobs' groups and exits at once.
- At exit (``atexit``) every job still running gets terminate, a short grace, then kill.
- For ``kill -9`` of the panel nothing in it can run: the worker notices instead. A
  one-shot worker's stdin is a pipe the panel holds open and never writes (``LIFELINE_ENV``
  tells the worker so); its end of file means the panel is gone, and the worker then kills
  its own process group (the pip_install worker does; see ``workers/pip_install.py``).

Windows has no SIGTERM or SIGHUP, so no handler is installed there, but the live jobs and
the exit hook work the same: at exit each job's whole tree is ended through its Job object
(``JobProcess.cancel`` calls ``TerminateJobObject``; see :mod:`rocmpanel.jobs.winjob`). When
nothing in the panel can run (killed from Task Manager, ``taskkill /F``, a crash) the kernel
closes the panel's handles, and each job object was made with
``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` and a handle no child inherits, so closing the last
one ends every process in that job: no worker, pip or compiler outlives the panel. Only a
worker that could not be put in a job (the panel itself runs in a job that forbids nesting)
is left to ``taskkill /T /F``, which needs the panel alive.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, Protocol

# Set in a one-shot worker's environment when its stdin is the panel's lifeline pipe.
LIFELINE_ENV = "ROCMPANEL_LIFELINE"
LIFELINE_STDIN = "stdin"
# At exit, how long the jobs still running get to end on terminate before they are killed.
EXIT_GRACE_S = 0.5

# Signal handling (SIGTERM, SIGHUP): POSIX only. The live jobs and the exit hook work on
# every platform.
ENABLED = sys.platform != "win32"


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM or SIGHUP arrives: code that already cleans
    up after Ctrl+C (``except KeyboardInterrupt``) cleans up after these too."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {_name(signum)}")
        self.signum = signum


class Ending(Protocol):
    """What this module needs of a job (a ``JobProcess``)."""

    @property
    def running(self) -> bool: ...

    def cancel(self) -> None: ...

    def kill_group(self) -> None: ...

    def wait(self, timeout: float | None = None) -> object: ...


_lock = threading.Lock()
_live: list[Ending] = []
_atexit_registered = False
_received: int | None = None  # the signal that is ending this process, once one came
_ended = 0  # how many running jobs that signal cancelled


def _name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_signals() -> tuple[signal.Signals, ...]:
    """The signals that end the panel and its jobs (none on Windows)."""
    if not ENABLED:
        return ()
    return tuple(
        s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s
    )


# -- the live jobs ---------------------------------------------------------------------
def register(job: Ending) -> None:
    """Track ``job`` until :func:`unregister`; the first one arms the exit hook."""
    global _atexit_registered
    with _lock:
        _live.append(job)
        if not _atexit_registered:
            atexit.register(end_all_at_exit)
            _atexit_registered = True


def unregister(job: Ending) -> None:
    with _lock, contextlib.suppress(ValueError):
        _live.remove(job)


def live_jobs() -> list[Ending]:
    with _lock:
        return [job for job in _live if job.running]


def cancel_all() -> int:
    """Cancel every running job (terminate now, kill after its grace); how many."""
    jobs = live_jobs()
    for job in jobs:
        with contextlib.suppress(Exception):
            job.cancel()
    return len(jobs)


def kill_all() -> None:
    """Kill every running job's whole process group now."""
    for job in live_jobs():
        with contextlib.suppress(Exception):
            job.kill_group()


def end_all(grace_s: float = EXIT_GRACE_S) -> None:
    """Terminate every running job, wait up to ``grace_s`` for them, kill what is left."""
    jobs = live_jobs()
    if not jobs:
        return
    for job in jobs:
        with contextlib.suppress(Exception):
            job.cancel()
    deadline = time.monotonic() + grace_s
    for job in jobs:
        with contextlib.suppress(Exception):
            job.wait(max(0.0, deadline - time.monotonic()))
    kill_all()


def end_all_at_exit() -> None:
    """The ``atexit`` hook: no job's process group outlives the interpreter."""
    end_all(EXIT_GRACE_S)


# -- signals ---------------------------------------------------------------------------
def received_signal() -> int | None:
    """The SIGTERM or SIGHUP that is ending this process, or None."""
    return _received


def jobs_ended() -> int:
    """How many running jobs the signal in :func:`received_signal` cancelled."""
    return _ended


def exit_code(code: int) -> int:
    """``code``, or 128 + the signal's number when a signal ended the command."""
    return 128 + _received if _received is not None else code


def _handler(on_signal: Callable[[int], None] | None) -> Callable[[int, FrameType | None], Any]:
    def handle(signum: int, _frame: FrameType | None) -> None:
        global _received, _ended
        if _received is not None:  # a second signal: no more waiting for anything
            kill_all()
            os._exit(128 + signum)
        _received = signum
        _ended = cancel_all()
        if on_signal is not None:
            on_signal(signum)
        else:
            raise Interrupted(signum)

    return handle


def install_handlers(
    on_signal: Callable[[int], None] | None = None, *, also_sigint: bool = False
) -> dict[int, Any]:
    """Catch SIGTERM and SIGHUP, and SIGINT if asked (main thread only; nothing on Windows).

    The handler cancels every job, then calls ``on_signal(signum)`` (the GUI: close the
    window and quit) or, without one, raises :class:`Interrupted` (the CLI). Returns the
    handlers it replaced, for :func:`restore_handlers`.
    """
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, Any] = {}
    handle = _handler(on_signal)
    wanted = exit_signals() + ((signal.SIGINT,) if also_sigint and ENABLED else ())
    for signum in wanted:
        try:
            previous[signum] = signal.signal(signum, handle)
        except (OSError, ValueError):
            continue
    return previous


def restore_handlers(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        with contextlib.suppress(OSError, ValueError, TypeError):
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


@contextlib.contextmanager
def ending_jobs_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP cancel the jobs and raise :class:`Interrupted`
    (the CLI's commands). The previous handlers come back afterwards unless a signal came
    (the process is ending then); that signal stays readable through
    :func:`received_signal` and :func:`exit_code`."""
    global _received, _ended
    _received, _ended = None, 0
    previous = install_handlers()
    try:
        yield
    finally:
        if _received is None:  # else the process is ending: a second signal still kills
            restore_handlers(previous)
