"""A worker child process and the threads that read it; no Qt here.

:class:`JobProcess` starts a prepared job, reads stdout (protocol events) and stderr (log
lines) on two threads, and reports one :class:`JobOutcome` when the process has exited and
both pipes are drained. Cancel ends the worker's whole process tree, so a worker's own
children (pip, a compiler) go too:

- POSIX: terminate, then kill after a grace period, sent to the worker's process group. A
  one-shot worker's stdin is a pipe the panel holds open (its end of file tells the worker
  the panel is gone, even after kill -9).
- Windows: the worker runs in a Job object (:mod:`rocmpanel.jobs.winjob`), and cancel ends
  the job at once; no signal is sent. When the job cannot be made, ``taskkill /T /F``.

Every running job is known to :mod:`rocmpanel.jobs.lifetime`, which ends it at exit (and,
on POSIX, when the panel gets SIGTERM or SIGHUP).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import IO, Any

from rocmpanel.base import subproc
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.jobs import lifetime, winjob
from rocmpanel.jobs.protocol import (
    Event,
    LogLine,
    RawLine,
    Result,
    WorkerError,
    encode_command,
    parse_line,
)
from rocmpanel.jobs.spec import PreparedJob

log = logging.getLogger(__name__)

STDERR_TAIL_LINES = 20
READ_LIMIT = 1_000_000


class JobState(Enum):
    """Where a job is in its life."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # the worker reported an error and exited
    CANCELLED = "cancelled"
    CRASHED = "crashed"  # non-zero exit, signal, or no result


@dataclass(frozen=True)
class JobOutcome:
    """How a job ended: state, exit code or signal, its result or error, the stderr tail."""

    state: JobState
    exit_code: int | None
    message: str
    result: Mapping[str, Any] | None = None
    error: WorkerError | None = None
    stderr_tail: tuple[str, ...] = ()
    duration_s: float = 0.0
    signal_name: str | None = field(default=None)

    def was_successful(self) -> bool:
        return self.state is JobState.SUCCEEDED

    def __str__(self) -> str:
        text = self.message
        if self.stderr_tail and self.state is JobState.CRASHED:
            text += (
                "\n"
                + translate("JobOutcome", "Last lines of its error output:")
                + "\n"
                + "\n".join(self.stderr_tail)
            )
        return text


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


# The NTSTATUS codes a crashed Windows program most often exits with, in plain words. Values
# from Microsoft's NTSTATUS list (MS-ERREF 2.3.1,
# https://learn.microsoft.com/openspecs/windows_protocols/ms-erref/596a1078-e883-4972-9bbc-49e60bebca55)
# and its note on common exit codes
# (https://learn.microsoft.com/archive/blogs/joshpoley/common-process-termination-values).
NTSTATUS_NAMES = {
    0xC0000005: "access violation",
    0xC000001D: "illegal instruction",
    0xC00000FD: "stack overflow",
    0xC0000135: "a DLL it needs was not found",
    0xC0000142: "a DLL failed to initialize",
    0xC0000374: "heap corruption",
    0xC0000409: "stack buffer overrun",
}
# From here on an exit code reads as a 32-bit status (negative as a signed DWORD), in hex:
# 3221225477 means nothing to anyone, 0xC0000005 is searchable.
HEX_EXIT_CODES_FROM = 0x80000000


def describe_exit_code(code: int) -> str:
    """``code`` as a user should read it: small codes in decimal, 32-bit status codes (at or
    above 0x80000000, or the same value reported as a negative 32-bit number) in hex, with
    the name of a common NTSTATUS (``0xC0000005: access violation``)."""
    status = code & 0xFFFFFFFF if -0x80000000 <= code < 0 else code
    if not HEX_EXIT_CODES_FROM <= status <= 0xFFFFFFFF:
        return str(code)
    name = NTSTATUS_NAMES.get(status)
    return f"0x{status:08X}: {name}" if name else f"0x{status:08X}"


def decide_outcome(
    *,
    exit_code: int,
    cancelled: bool,
    interactive: bool,
    result: Mapping[str, Any] | None,
    error: WorkerError | None,
    stderr_tail: tuple[str, ...],
    duration_s: float,
    platform: str = sys.platform,
) -> JobOutcome:
    """The pure rule that turns what was seen into an outcome. A negative exit code is a
    signal on POSIX; on Windows there are no signals, and it is a status code."""
    common: dict[str, Any] = {
        "exit_code": exit_code,
        "result": result,
        "error": error,
        "stderr_tail": stderr_tail,
        "duration_s": duration_s,
    }
    if cancelled:
        return JobOutcome(
            JobState.CANCELLED, message=translate("JobOutcome", "Cancelled."), **common
        )
    if exit_code < 0 and platform != "win32":  # a signal says more than any error before it
        name = _signal_name(exit_code)
        return JobOutcome(
            JobState.CRASHED,
            message=translate("JobOutcome", "The worker was killed by {signal}.").format(
                signal=name
            ),
            signal_name=name,
            **common,
        )
    # An interactive worker reports errors per request (a refused folder, an OOM) and goes
    # on serving: only one that ends its process is the job's outcome.
    if error is not None and (not interactive or exit_code != 0):
        return JobOutcome(JobState.FAILED, message=error.message, **common)
    if exit_code != 0:
        return JobOutcome(
            JobState.CRASHED,
            message=translate("JobOutcome", "The worker crashed (exit code {code}).").format(
                code=describe_exit_code(exit_code)
            ),
            **common,
        )
    if result is None and not interactive:
        return JobOutcome(
            JobState.CRASHED,
            message=translate("JobOutcome", "The worker exited without reporting a result."),
            **common,
        )
    return JobOutcome(JobState.SUCCEEDED, message=translate("JobOutcome", "Done."), **common)


def _process_handle(proc: subprocess.Popen[bytes]) -> int:
    """The Windows process handle Popen holds (``Popen._handle``, as asyncio's Windows
    event loop reads it); the pid cannot be reused while it is open."""
    return int(getattr(proc, "_handle"))  # noqa: B009 (private; absent from the stubs)


class JobProcess:
    """One running worker. Callbacks run on the reader threads: keep them cheap.

    ``platform`` and ``job_api`` are seams: on ``"win32"`` the worker is put in a Job
    object through ``job_api`` (default: kernel32's), so tests run the Windows branch with a
    fake.
    """

    def __init__(
        self,
        prepared: PreparedJob,
        on_event: Callable[[Event], None],
        on_exit: Callable[[JobOutcome], None],
        grace_s: float = 3.0,
        *,
        platform: str = sys.platform,
        job_api: winjob.JobApi | None = None,
    ) -> None:
        self.prepared = prepared
        self._on_event = on_event
        self._on_exit = on_exit
        self.grace_s = grace_s
        self._platform = platform
        self._job_api = job_api
        self._tree: winjob.ProcessTree | None = None
        self._ending: threading.Thread | None = None  # Windows: a taskkill running
        self._proc: subprocess.Popen[bytes] | None = None
        self._stdin_lock = threading.Lock()
        self._cancelled = threading.Event()
        self._done = threading.Event()
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._result: Mapping[str, Any] | None = None
        self._error: WorkerError | None = None
        self._started_at = 0.0
        self.outcome: JobOutcome | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def interactive(self) -> bool:
        return self.prepared.spec.interactive

    def start(self) -> None:
        kwargs: dict[str, Any] = {}
        env = dict(self.prepared.env)
        stdin: int = subprocess.PIPE if self.interactive else subprocess.DEVNULL
        tree: winjob.ProcessTree | None = None
        if self._platform == "win32":
            # Suspended until it is in its job (no console window: base.subproc adds that).
            tree = winjob.ProcessTree(
                self._job_api or winjob.real_job_api(self._platform), self._platform
            )
            kwargs["creationflags"] = tree.creation_flags()
        else:
            kwargs["start_new_session"] = True
            if not self.interactive:
                # The lifeline: a pipe this process holds open and never writes. Its end
                # of file tells the worker the panel is gone, even after a kill -9.
                stdin = subprocess.PIPE
                env[lifetime.LIFELINE_ENV] = lifetime.LIFELINE_STDIN
        try:
            self._proc = subproc.popen(
                list(self.prepared.argv),
                platform=self._platform,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self.prepared.spec.cwd,
                **kwargs,
            )
        except OSError as exc:
            if tree is not None:
                tree.close()
            raise PanelError(
                translate("JobProcess", "Could not start {program}: {reason}.").format(
                    program=self.prepared.argv[0], reason=exc.strerror or exc
                ),
                str(exc),
            ) from exc
        if tree is not None:
            self._adopt(tree, self._proc)
        lifetime.register(self)
        self._started_at = time.monotonic()
        assert self._proc.stdout is not None and self._proc.stderr is not None
        name = self.prepared.spec.name
        out = threading.Thread(
            target=self._read_stdout, args=(self._proc.stdout,), name=f"job-out-{name}"
        )
        err = threading.Thread(
            target=self._read_stderr, args=(self._proc.stderr,), name=f"job-err-{name}"
        )
        for thread in (out, err):
            thread.daemon = True
            thread.start()
        threading.Thread(
            target=self._wait, args=(out, err), name=f"job-wait-{name}", daemon=True
        ).start()

    def _adopt(self, tree: winjob.ProcessTree, proc: subprocess.Popen[bytes]) -> None:
        """Windows: the suspended worker joins its job and runs. A worker that cannot be
        resumed is ended (it would wait forever) and the start fails."""
        try:
            tree.adopt(_process_handle(proc), proc.pid)
        except Exception as exc:
            tree.end()
            with contextlib.suppress(Exception):
                proc.kill()
            tree.close()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            self._proc = None
            raise PanelError(
                translate(
                    "JobProcess", "Could not start {program}: Windows did not let it run."
                ).format(program=self.prepared.argv[0]),
                str(exc),
            ) from exc
        self._tree = tree

    # -- reading -----------------------------------------------------------------------
    def _lines(self, stream: IO[bytes]) -> Any:
        while True:
            try:
                chunk = stream.readline(READ_LIMIT)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            yield chunk.decode("utf-8", errors="replace")

    def _read_stdout(self, stream: IO[bytes]) -> None:
        for line in self._lines(stream):
            event = parse_line(line)
            if isinstance(event, Result):
                self._result = event.data
            elif isinstance(event, WorkerError):
                self._error = event
            elif isinstance(event, RawLine):
                event = LogLine(event.text, "info", "stdout")
            self._emit(event)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for line in self._lines(stream):
            text = line.rstrip("\r\n")
            self._stderr_tail.append(text)
            self._emit(LogLine(text, "info", "stderr"))

    def _emit(self, event: Event) -> None:
        try:
            self._on_event(event)
        except Exception:  # a broken consumer must not kill the reader
            log.exception("job event handler failed")

    def _wait(self, *readers: threading.Thread) -> None:
        assert self._proc is not None
        try:
            code = self._proc.wait()
            if self._tree is not None:
                # Ends whatever the worker left in its job, whose pipes the readers wait on.
                self._tree.close()
            for reader in readers:
                reader.join()
            for pipe in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            self.outcome = decide_outcome(
                platform=self._platform,
                exit_code=code,
                cancelled=self._cancelled.is_set(),
                interactive=self.interactive,
                result=self._result,
                error=self._error,
                stderr_tail=tuple(self._stderr_tail),
                duration_s=time.monotonic() - self._started_at,
            )
            self._on_exit(self.outcome)
        except BaseException:  # a failing callback must not make wait() hang
            log.exception("job exit handling failed")
        finally:
            if self._tree is not None:
                self._tree.close()
            lifetime.unregister(self)
            # Set last: once wait() returns, this job's threads call back no more.
            self._done.set()

    # -- control -----------------------------------------------------------------------
    def send(self, op: str, **fields: Any) -> None:
        """Send a command to an interactive worker."""
        if not self.interactive:
            raise PanelError(
                translate("JobProcess", "The {job} job takes no commands.").format(
                    job=self.prepared.spec.name
                )
            )
        proc = self._proc
        if proc is None or proc.stdin is None or self._done.is_set():
            raise PanelError(translate("JobProcess", "The worker is not running."))
        try:
            with self._stdin_lock:
                proc.stdin.write(encode_command(op, **fields))
                proc.stdin.flush()
        except (OSError, ValueError) as exc:
            raise PanelError("The worker is no longer running.", str(exc)) from exc

    def cancel(self) -> None:
        """Terminate now, kill after the grace period (Windows: end the whole tree now).
        Returns at once; never raises."""
        if self._proc is None or self._done.is_set():
            return
        self._cancelled.set()
        tree = self._tree
        if self._platform == "win32" and not (tree is not None and tree.in_job):
            # The fallback, taskkill, may take seconds: never on the caller's (GUI) thread.
            self._ending = threading.Thread(
                target=self._signal_group, kwargs={"kill": False}, name="job-end", daemon=True
            )
            self._ending.start()
        else:
            self._signal_group(kill=False)
        threading.Thread(target=self._kill_later, name="job-kill", daemon=True).start()

    def _kill_later(self) -> None:
        if not self._done.wait(self.grace_s):
            self._signal_group(kill=True)

    def kill_group(self) -> None:
        """Kill the worker's whole process group (Windows: tree) now (the panel is going
        away). Never raises."""
        if self._proc is None or self._done.is_set():
            return
        self._cancelled.set()
        self._signal_group(kill=True)

    def _signal_group(self, *, kill: bool) -> None:
        proc = self._proc
        if proc is None:
            return
        if self._platform == "win32":
            self._end_tree(proc)
            return
        # On POSIX the group outlives the worker while any child of it lives (a pip build
        # that ignores SIGTERM), and its id cannot be reused meanwhile, so it is signalled
        # even after the worker itself has exited.
        try:
            os.killpg(proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
        except OSError:
            with contextlib.suppress(OSError):
                proc.kill() if kill else proc.terminate()

    def _end_tree(self, proc: subprocess.Popen[bytes]) -> None:
        """Windows: end the worker and everything it started, now. No signal is sent (a
        console control event cannot reach the worker; os.kill may raise SystemError). The
        job is ended even after the worker has exited (what it left is still in it); a dead
        worker's pid names no tree for taskkill. Never raises."""
        try:
            tree = self._tree
            ended = False
            if tree is not None and (tree.in_job or proc.poll() is None):
                ended = tree.end()
            if not ended and proc.poll() is None:
                proc.kill()  # the worker alone: better than nothing
        except Exception:
            log.exception("ending the job's process tree failed")

    def wait(self, timeout: float | None = None) -> JobOutcome | None:
        """Block until the outcome is known (tests and the CLI use this)."""
        self._done.wait(timeout)
        return self.outcome

    @property
    def running(self) -> bool:
        return self._proc is not None and not self._done.is_set()
