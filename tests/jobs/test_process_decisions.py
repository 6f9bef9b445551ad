"""Exact outcomes of jobs/process.py (issue 19): every rule of decide_outcome, the text a
user reads for each way a job ends, and the reader/cancel/exit paths against small real
child processes (one-line scripts; none sleeps for a race: each waits on a pipe or an
event); the Windows branch, with a fake Popen and JobApi, is in test_windows_jobs.py."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs import lifetime
from rocmpanel.jobs.process import (
    JobOutcome,
    JobProcess,
    JobState,
    decide_outcome,
    describe_exit_code,
)
from rocmpanel.jobs.protocol import Event, LogLine, Progress, Result, WorkerError
from rocmpanel.jobs.spec import JobSpec, PreparedJob, prepare

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and groups")

OOM = WorkerError("Out of GPU memory.", "oom", "HIP out of memory")


# -- decide_outcome: the whole outcome, every field ------------------------------------------
@pytest.mark.parametrize(
    ("seen", "state", "message", "signal_name"),
    [
        # A cancel wins over a clean exit with a result, and over the signal it sent.
        ({"cancelled": True}, JobState.CANCELLED, "Cancelled.", None),
        ({"cancelled": True, "exit_code": -9}, JobState.CANCELLED, "Cancelled.", None),
        # A signal wins over an error the worker reported before it died.
        (
            {"exit_code": -15, "error": OOM},
            JobState.CRASHED,
            "The worker was killed by SIGTERM.",
            "SIGTERM",
        ),
        ({"exit_code": -1}, JobState.CRASHED, "The worker was killed by SIGHUP.", "SIGHUP"),
        ({"exit_code": 1}, JobState.CRASHED, "The worker crashed (exit code 1).", None),
        # A one-shot worker's reported error is the outcome even when it exits 0.
        ({"error": OOM}, JobState.FAILED, "Out of GPU memory.", None),
        ({"exit_code": 2, "error": OOM}, JobState.FAILED, "Out of GPU memory.", None),
        # An interactive worker's error ends the job only when the process fails too.
        ({"interactive": True, "error": OOM}, JobState.SUCCEEDED, "Done.", None),
        (
            {"interactive": True, "error": OOM, "exit_code": 1},
            JobState.FAILED,
            "Out of GPU memory.",
            None,
        ),
        (
            {"interactive": True, "exit_code": 2},
            JobState.CRASHED,
            "The worker crashed (exit code 2).",
            None,
        ),
        # An interactive worker needs no result; a one-shot one does.
        ({"interactive": True, "result": None}, JobState.SUCCEEDED, "Done.", None),
        (
            {"result": None},
            JobState.CRASHED,
            "The worker exited without reporting a result.",
            None,
        ),
        ({}, JobState.SUCCEEDED, "Done.", None),
    ],
)
def test_decide_outcome_exactly(
    seen: dict[str, Any], state: JobState, message: str, signal_name: str | None
) -> None:
    facts: dict[str, Any] = {
        "exit_code": 0,
        "cancelled": False,
        "interactive": False,
        "result": {"answer": 42},
        "error": None,
        "stderr_tail": ("one", "two"),
        "duration_s": 1.25,
    }
    facts.update(seen)
    assert decide_outcome(**facts) == JobOutcome(
        state,
        exit_code=facts["exit_code"],
        message=message,
        result=facts["result"],
        error=facts["error"],
        stderr_tail=("one", "two"),
        duration_s=1.25,
        signal_name=signal_name,
    )


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (1, "1"),
        (255, "255"),
        (0x7FFFFFFF, "2147483647"),  # the last code read in decimal
        (0x80000000, "0x80000000"),  # the first read as a 32-bit status
        (0x80000003, "0x80000003"),
        (0xC0000001, "0xC0000001"),  # an NTSTATUS without a common name
        (3221225477, "0xC0000005: access violation"),
        (0xC000001D, "0xC000001D: illegal instruction"),
        (0xC00000FD, "0xC00000FD: stack overflow"),
        (0xC0000135, "0xC0000135: a DLL it needs was not found"),
        (0xC0000142, "0xC0000142: a DLL failed to initialize"),
        (0xC0000374, "0xC0000374: heap corruption"),
        (0xC0000409, "0xC0000409: stack buffer overrun"),
        (0xFFFFFFFF, "0xFFFFFFFF"),
        (0x100000000, "4294967296"),  # not a 32-bit value: as it came
        # The same statuses reported as negative 32-bit numbers.
        (-1073741819, "0xC0000005: access violation"),
        (-1, "0xFFFFFFFF"),
        (-0x80000000, "0x80000000"),
        (-0x80000001, "-2147483649"),
    ],
)
def test_exit_codes_read_in_decimal_or_as_a_32_bit_status(code: int, text: str) -> None:
    assert describe_exit_code(code) == text


@pytest.mark.parametrize(
    ("code", "platform", "message", "signal_name"),
    [
        (3221225477, "win32", "The worker crashed (exit code 0xC0000005: access violation).", None),
        (
            -1073741819,
            "win32",
            "The worker crashed (exit code 0xC0000005: access violation).",
            None,
        ),
        (-1073741571, "win32", "The worker crashed (exit code 0xC00000FD: stack overflow).", None),
        (2, "win32", "The worker crashed (exit code 2).", None),
        # On POSIX a negative code is a signal, whatever the platform of the numbers.
        (-11, "linux", "The worker was killed by SIGSEGV.", "SIGSEGV"),
        (-11, "win32", "The worker crashed (exit code 0xFFFFFFF5).", None),
    ],
)
def test_a_windows_crash_reads_its_status_in_hex(
    code: int, platform: str, message: str, signal_name: str | None
) -> None:
    def outcome_of(cancelled: bool) -> JobOutcome:
        return decide_outcome(
            exit_code=code,
            cancelled=cancelled,
            interactive=False,
            result=None,
            error=None,
            stderr_tail=(),
            duration_s=0.0,
            platform=platform,
        )

    outcome = outcome_of(False)
    assert (outcome.state, outcome.exit_code, outcome.message, outcome.signal_name) == (
        JobState.CRASHED,
        code,
        message,
        signal_name,
    )
    cancelled = outcome_of(True)
    assert (cancelled.state, cancelled.message) == (JobState.CANCELLED, "Cancelled.")


@pytest.mark.parametrize(
    ("state", "tail", "text"),
    [
        (JobState.CRASHED, (), "Boom."),
        (JobState.CRASHED, ("a", "b"), "Boom.\nLast lines of its error output:\na\nb"),
        (JobState.FAILED, ("a",), "Boom."),
        (JobState.CANCELLED, ("a",), "Boom."),
        (JobState.SUCCEEDED, ("a",), "Boom."),
    ],
)
def test_only_a_crash_shows_the_stderr_tail(
    state: JobState, tail: tuple[str, ...], text: str
) -> None:
    outcome = JobOutcome(state, 1, "Boom.", stderr_tail=tail)
    assert str(outcome) == text
    assert outcome.was_successful() is (state is JobState.SUCCEEDED)


# -- real child processes ---------------------------------------------------------------------
_STARTED: list[JobProcess] = []


@pytest.fixture(autouse=True)
def _no_worker_outlives_its_test() -> Iterator[None]:
    """Under a mutant that breaks cancel, a worker would outlive the run: end its group."""
    yield
    while _STARTED:
        proc = _STARTED.pop()._proc
        # poll() None: not reaped yet, so the pid (and its group id) is still this worker's
        if proc is not None and proc.poll() is None and sys.platform != "win32":
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)


class Run:
    """One JobProcess on a script written into tmp_path, with what its callbacks saw.

    ``said`` is set once the worker logs the line ``ready`` (it is then past its set-up).
    """

    def __init__(
        self,
        tmp_path: Path,
        body: str,
        *,
        interactive: bool = False,
        grace_s: float = 3.0,
        ready: str = "ready",
        on_event: Callable[[Event], None] | None = None,
        on_exit: Callable[[JobOutcome], None] | None = None,
        **spec: Any,
    ) -> None:
        script = tmp_path / "worker.py"
        script.write_text(textwrap.dedent(body), encoding="utf-8")
        self.events: list[Event] = []
        self.exits: list[JobOutcome] = []
        self.said = threading.Event()
        self._ready = ready
        self.job = JobProcess(
            prepare(JobSpec("probe", script, interactive=interactive, **spec)),
            on_event or self._record,
            on_exit or self.exits.append,
            grace_s=grace_s,
        )

    def _record(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, LogLine) and event.message == self._ready:
            self.said.set()

    def start(self) -> Run:
        self.job.start()
        _STARTED.append(self.job)
        return self

    def started_and_ready(self) -> Run:
        self.job.start()
        assert self.said.wait(30), "the worker did not get ready within 30 s"
        return self

    def outcome(self) -> JobOutcome:
        outcome = self.job.wait(30)
        assert outcome is not None, "the job did not end within 30 s"
        return outcome


BLOCKED = "import sys\nprint('ready', flush=True)\nsys.stdin.read()\n"  # until SIGTERM


def test_a_failed_job_reports_the_workers_error_exactly(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        """
        import sys
        print("pip: cannot reach the index", file=sys.stderr)
        print('{"event": "error", "message": "No index.", "kind": "network", "detail": "dns"}')
        sys.exit(1)
        """,
    ).start()
    outcome = run.outcome()
    error = WorkerError("No index.", "network", "dns")
    assert (outcome.state, outcome.exit_code, outcome.message) == (JobState.FAILED, 1, "No index.")
    assert (outcome.error, outcome.result, outcome.signal_name) == (error, None, None)
    assert outcome.stderr_tail == ("pip: cannot reach the index",)
    assert str(outcome) == "No index."
    # stdout and stderr are read on two threads: their relative order is not kept.
    assert len(run.events) == 2
    assert error in run.events and LogLine("pip: cannot reach the index", "info", "stderr") in (
        run.events
    )
    assert run.exits == [outcome] and run.exits[0] is run.job.outcome
    assert 0.0 < outcome.duration_s < 60.0


def test_a_crash_keeps_the_last_20_stderr_lines_without_line_ends(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        """
        import sys
        for i in range(25):
            sys.stderr.write(f"line {i}\\r\\n")
        sys.exit(3)
        """,
    ).start()
    outcome = run.outcome()
    tail = tuple(f"line {i}" for i in range(5, 25))
    assert (outcome.state, outcome.exit_code, outcome.stderr_tail) == (JobState.CRASHED, 3, tail)
    assert str(
        outcome
    ) == "The worker crashed (exit code 3).\nLast lines of its error output:\n" + ("\n".join(tail))
    assert run.events == [LogLine(f"line {i}", "info", "stderr") for i in range(25)]


@posix
def test_a_worker_killed_by_a_signal_is_named(tmp_path: Path) -> None:
    run = Run(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n").start()
    outcome = run.outcome()
    assert (outcome.state, outcome.exit_code, outcome.signal_name) == (
        JobState.CRASHED,
        -9,
        "SIGKILL",
    )
    assert outcome.message == "The worker was killed by SIGKILL."


def test_stdout_events_in_order_and_raw_lines_become_stdout_log_lines(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        """
        print("plain text")
        print('{"event": "progress", "fraction": 0.5, "step": "half"}')
        print('{"event": "result", "data": {"answer": 42}}')
        """,
    ).start()
    outcome = run.outcome()
    assert run.events == [
        LogLine("plain text", "info", "stdout"),
        Progress(0.5, "half"),
        Result({"answer": 42}),
    ]
    assert (outcome.state, outcome.result, outcome.message) == (
        JobState.SUCCEEDED,
        {"answer": 42},
        "Done.",
    )


def test_an_overlong_stderr_line_is_read_in_bounded_pieces(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        """
        import sys
        sys.stderr.write("x" * 1_000_003 + "\\n")
        print('{"event": "result", "data": {}}')
        """,
    ).start()
    outcome = run.outcome()
    assert outcome.stderr_tail == ("x" * 1_000_000, "xxx")


def test_the_spec_cwd_and_env_reach_the_worker(tmp_path: Path) -> None:
    place = tmp_path / "place"
    place.mkdir()
    run = Run(
        tmp_path,
        """
        import json, os
        data = {"cwd": os.getcwd(), "probe": os.environ.get("PROBE")}
        print(json.dumps({"event": "result", "data": data}))
        """,
        cwd=str(place),
        env={"PROBE": "yes"},
    ).start()
    assert run.outcome().result == {"cwd": str(place), "probe": "yes"}


def test_an_event_handler_that_raises_does_not_stop_the_readers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[Event] = []

    def broken(event: Event) -> None:
        seen.append(event)
        raise RuntimeError("handler bug")

    run = Run(
        tmp_path,
        """
        import sys
        print("err", file=sys.stderr)
        print("out")
        print('{"event": "result", "data": {"ok": true}}')
        """,
        on_event=broken,
    ).start()
    outcome = run.outcome()
    assert (outcome.state, outcome.result, outcome.stderr_tail) == (
        JobState.SUCCEEDED,
        {"ok": True},
        ("err",),
    )
    assert [e for e in seen if not isinstance(e, LogLine) or e.stream == "stdout"] == [
        LogLine("out", "info", "stdout"),
        Result({"ok": True}),
    ]
    assert LogLine("err", "info", "stderr") in seen and len(seen) == 3
    assert _logged(caplog) == [("job event handler failed", "handler bug")] * 3


def _logged(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    """(message, exception text) of each error jobs/process.py logged."""
    return [
        (r.getMessage(), str(r.exc_info[1]) if r.exc_info else "")
        for r in caplog.records
        if r.name == "rocmpanel.jobs.process" and r.levelname == "ERROR"
    ]


@pytest.mark.parametrize("error", [RuntimeError("callback bug"), SystemExit(3)])
def test_an_exit_callback_that_raises_does_not_make_wait_hang(
    tmp_path: Path, error: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    called: list[JobOutcome] = []

    def broken(outcome: JobOutcome) -> None:
        called.append(outcome)
        raise error

    run = Run(
        tmp_path, 'print(\'{"event": "result", "data": {"n": 1}}\')\n', on_exit=broken
    ).start()
    outcome = run.outcome()
    assert (outcome.state, outcome.result, outcome.message) == (
        JobState.SUCCEEDED,
        {"n": 1},
        "Done.",
    )
    assert called == [outcome]
    assert run.job.running is False
    assert run.job not in lifetime._live
    assert _logged(caplog) == [("job exit handling failed", str(error))]


def test_the_outcome_waits_until_both_pipes_are_drained(tmp_path: Path) -> None:
    # The handler of the first line holds its reader until the worker has exited (and is
    # reaped or a zombie): the result line after it must still make the outcome.
    run = Run(tmp_path, 'print("first")\nprint(\'{"event": "result", "data": {"n": 2}}\')\n')

    def slow(event: Event) -> None:
        run.events.append(event)
        if event == LogLine("first", "info", "stdout"):
            assert run.job.pid is not None
            _wait_exited(run.job.pid)

    run.job = JobProcess(run.job.prepared, slow, run.exits.append)
    run.start()
    outcome = run.outcome()
    assert (outcome.state, outcome.result) == (JobState.SUCCEEDED, {"n": 2})


def _wait_exited(pid: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.005)
    raise AssertionError(f"process {pid} did not exit within 30 s")


def test_stderr_keeps_trailing_blanks_and_replaces_bad_utf8(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        """
        import sys
        sys.stderr.buffer.write(b"bad byte \\xff here\\n")
        sys.stderr.buffer.write(b"two blanks and a tab  \\t\\r\\n")
        sys.stderr.buffer.write(b"failed in part IX\\n")
        sys.exit(4)
        """,
    ).start()
    assert run.outcome().stderr_tail == (
        "bad byte \ufffd here",
        "two blanks and a tab  \t",
        "failed in part IX",
    )


def test_the_default_grace_is_three_seconds(tmp_path: Path) -> None:
    prepared = Run(tmp_path, "pass\n").job.prepared
    assert JobProcess(prepared, print, print).grace_s == 3.0


@posix
def test_wait_times_out_on_a_running_job_then_cancel_ends_it(tmp_path: Path) -> None:
    # The worker blocks on its lifeline (stdin) until it gets SIGTERM.
    run = Run(tmp_path, BLOCKED).started_and_ready()
    assert run.job.wait(0.01) is None and run.job.outcome is None
    assert run.job.running is True and run.job.pid is not None
    assert run.job in lifetime._live
    threads = {t.name: t.daemon for t in threading.enumerate() if t.name.endswith("-probe")}
    assert threads == {"job-out-probe": True, "job-err-probe": True, "job-wait-probe": True}
    run.job.cancel()
    outcome = run.outcome()
    assert (outcome.state, outcome.exit_code, outcome.message, outcome.signal_name) == (
        JobState.CANCELLED,
        -signal.SIGTERM,
        "Cancelled.",
        None,
    )
    assert run.job.running is False and run.job not in lifetime._live
    # Once it has ended, cancel and kill are no-ops: the outcome stays.
    run.job.cancel()
    run.job.kill_group()
    assert run.job.wait(0) is outcome and run.exits == [outcome]


@posix
def test_cancel_kills_a_worker_that_ignores_sigterm_after_the_grace(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        """
        import signal, sys
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", flush=True)
        sys.stdin.read()
        """,
        grace_s=0.2,
    ).started_and_ready()
    run.job.cancel()
    outcome = run.outcome()
    assert (outcome.state, outcome.exit_code, outcome.message) == (
        JobState.CANCELLED,
        -signal.SIGKILL,
        "Cancelled.",
    )


@posix
def test_cancel_arms_a_daemon_kill_thread_that_kill_group_can_overtake(tmp_path: Path) -> None:
    body = BLOCKED.replace(
        "import sys\n", "import signal, sys\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    )
    run = Run(tmp_path, body, grace_s=30.0).started_and_ready()
    run.job.cancel()
    assert [t.daemon for t in threading.enumerate() if t.name == "job-kill"] == [True]
    assert run.job.wait(0.01) is None  # SIGTERM is ignored; the kill is 30 s away
    run.job.kill_group()
    outcome = run.outcome()
    assert (outcome.state, outcome.exit_code) == (JobState.CANCELLED, -signal.SIGKILL)


@posix
def test_kill_group_ends_a_running_job_as_cancelled(tmp_path: Path) -> None:
    run = Run(tmp_path, BLOCKED).started_and_ready()
    run.job.kill_group()
    outcome = run.outcome()
    assert (outcome.state, outcome.exit_code) == (JobState.CANCELLED, -signal.SIGKILL)


def test_a_job_that_was_never_started(tmp_path: Path) -> None:
    run = Run(tmp_path, "pass\n")
    assert (run.job.pid, run.job.running, run.job.interactive) == (None, False, False)
    run.job.cancel()
    run.job.kill_group()
    run.job._signal_group(kill=True)
    assert run.job.wait(0) is None and not run.job._cancelled.is_set()
    with pytest.raises(PanelError) as raised:
        run.job.send("stop")
    assert raised.value.message == "The probe job takes no commands."
    interactive = Run(tmp_path, "pass\n", interactive=True)
    assert interactive.job.interactive is True
    with pytest.raises(PanelError) as raised:
        interactive.job.send("stop")
    assert raised.value.message == "The worker is not running."


def test_a_worker_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    run = Run(tmp_path, "pass\n")
    missing = str(tmp_path / "no-python")
    job = JobProcess(
        PreparedJob(run.job.prepared.spec, (missing, "-u", "worker.py"), {}),
        run.events.append,
        run.exits.append,
    )
    with pytest.raises(PanelError) as raised:
        job.start()
    assert raised.value.message == f"Could not start {missing}: No such file or directory."
    assert raised.value.detail == f"[Errno 2] No such file or directory: '{missing}'"
    assert job not in lifetime._live and job.running is False


INTERACTIVE = f"""
import json, os, sys, time
def log(text):
    print(json.dumps({{"event": "log", "message": text}}), flush=True)
log("lifeline " + str(os.environ.get("{lifetime.LIFELINE_ENV}")))
for line in sys.stdin:
    command = json.loads(line)
    if command["op"] == "exit":
        break
    if command["op"] == "close":  # stops reading its commands, lives on until SIGTERM
        os.close(0)
        log("closed")
        time.sleep(3600)
    log("got " + command["text"])
"""


def test_an_interactive_worker_takes_commands_until_it_exits(tmp_path: Path) -> None:
    run = Run(tmp_path, INTERACTIVE, interactive=True, ready="got héllo").start()
    run.job.send("say", text="héllo")
    assert run.said.wait(30)
    run.job.send("exit")
    outcome = run.outcome()
    assert (outcome.state, outcome.message, outcome.result) == (JobState.SUCCEEDED, "Done.", None)
    assert [e.message for e in run.events if isinstance(e, LogLine)] == [
        "lifeline None",
        "got héllo",
    ]
    with pytest.raises(PanelError) as raised:
        run.job.send("say", text="late")
    assert raised.value.message == "The worker is not running."


@posix
def test_sending_to_a_worker_that_closed_its_stdin_is_a_clear_error(tmp_path: Path) -> None:
    run = Run(tmp_path, INTERACTIVE, interactive=True, grace_s=0.2, ready="closed").start()
    run.job.send("close")
    assert run.said.wait(30)
    with pytest.raises(PanelError) as raised:
        run.job.send("say", text="x")
    assert raised.value.message == "The worker is no longer running."
    assert raised.value.detail == "[Errno 32] Broken pipe"
    run.job.cancel()
    assert run.outcome().state is JobState.CANCELLED


# -- the Windows branch: tests/jobs/test_windows_jobs.py (a fake JobApi and Popen) -----------


@posix
@pytest.mark.parametrize(("kill", "code"), [(False, -signal.SIGTERM), (True, -signal.SIGKILL)])
def test_a_group_that_cannot_be_signalled_falls_back_to_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kill: bool, code: int
) -> None:
    def refuse(pid: int, sig: int) -> None:
        raise ProcessLookupError(pid)

    run = Run(tmp_path, BLOCKED).started_and_ready()
    monkeypatch.setattr(os, "killpg", refuse)
    run.job._signal_group(kill=kill)  # terminate() or kill() of the worker alone
    outcome = run.outcome()
    assert (outcome.exit_code, outcome.state) == (code, JobState.CRASHED)  # nobody cancelled
