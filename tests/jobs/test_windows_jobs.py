"""Jobs on Windows, run here through the seams (issue 18, item 1): each worker in a Job
object (a fake JobApi records the calls), cancel that ends the whole tree, taskkill at once
when there is no job, and no signal at all; plus the layout of the ctypes structures the
real kernel32 calls use."""

from __future__ import annotations

import ctypes
import io
import logging
import os
import subprocess
import threading
from pathlib import Path
from typing import IO, Any, ClassVar

import pytest

from rocmpanel.base import subproc
from rocmpanel.base.errors import PanelError
from rocmpanel.jobs import lifetime, winjob
from rocmpanel.jobs.process import JobOutcome, JobProcess, JobState
from rocmpanel.jobs.protocol import Event
from rocmpanel.jobs.spec import JobSpec, prepare

JOB = 0x70B  # the fake job handle
HANDLE = 0x4A4D  # the fake process handle (Popen._handle)
PID = 4242
NO_WINDOW = 0x08000000
SUSPENDED = 0x00000004
TASKKILL = ["taskkill", "/T", "/F", "/PID", "4242"]
TASKKILL_KWARGS = {"capture_output": True, "check": False, "timeout": 10.0}


class FakeJobApi:
    """A JobApi that records each call; ``fail`` maps a call's name to what it raises.
    Terminating the job ends the fake worker, as the kernel would."""

    def __init__(self, **fail: BaseException) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail
        self.on_terminate: list[FakePopen] = []

    def _call(self, *call: Any) -> None:
        self.calls.append(call)
        if call[0] in self.fail:
            raise self.fail[call[0]]

    def create_job(self) -> int:
        self._call("create")
        return JOB

    def assign(self, job: int, process: int) -> None:
        self._call("assign", job, process)

    def resume(self, pid: int) -> int:
        self._call("resume", pid)
        return 1

    def terminate(self, job: int, exit_code: int) -> None:
        self._call("terminate", job, exit_code)
        for proc in self.on_terminate:
            proc.exit(exit_code)

    def close(self, handle: int) -> None:
        self._call("close", handle)


class FakePopen:
    """The worker as Popen shows it on Windows: a pid, a process handle, three pipes. It
    runs until told to exit; a signal to it is a bug (recorded, and fails the test)."""

    started: ClassVar[list[FakePopen]] = []
    next_stdout: ClassVar[IO[bytes] | None] = None  # the next worker's stdout, if not the usual

    def __init__(self, argv: list[str], **kwargs: Any) -> None:
        self.argv, self.kwargs = argv, kwargs
        self.pid, self._handle = PID, HANDLE
        self.stdin = io.BytesIO() if kwargs["stdin"] == subprocess.PIPE else None
        self.stdout = FakePopen.next_stdout or io.BytesIO(
            b'{"event": "result", "data": {"win": 1}}\n'
        )
        FakePopen.next_stdout = None
        self.stderr = io.BytesIO(b"")
        self.calls: list[str] = []
        self.kill_error: BaseException | None = None
        self.returncode: int | None = None
        self._exited = threading.Event()
        FakePopen.started.append(self)

    def exit(self, code: int) -> None:
        self.returncode = code
        self._exited.set()

    def wait(self) -> int:
        assert self._exited.wait(30), "the fake worker was never ended"
        assert self.returncode is not None
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode

    def kill(self) -> None:
        self.calls.append("kill")
        if self.kill_error is not None:
            raise self.kill_error
        self.exit(1)

    def send_signal(self, sig: int) -> None:
        self.calls.append(f"signal {sig}")

    def terminate(self) -> None:
        self.calls.append("terminate")


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], dict[str, Any]]]:
    """Popen is the fake; taskkill runs are recorded (argv, kwargs); os.kill and os.killpg
    fail the test if anything calls them."""
    FakePopen.started, FakePopen.next_stdout = [], None
    runs: list[tuple[list[str], dict[str, Any]]] = []

    def record(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        runs.append((argv, kwargs))
        return subprocess.CompletedProcess(argv, 0, b"", b"")

    def no_signals(*args: object) -> None:
        raise AssertionError(f"a signal was sent on Windows: {args}")

    monkeypatch.setattr(subprocess, "Popen", FakePopen)
    monkeypatch.setattr(subprocess, "run", record)
    monkeypatch.setattr(os, "kill", no_signals)
    monkeypatch.setattr(os, "killpg", no_signals, raising=False)
    return runs


class Worker:
    """A JobProcess on the Windows branch with a fake JobApi, and what it reported."""

    def __init__(self, tmp_path: Path, api: FakeJobApi, *, interactive: bool = False) -> None:
        script = tmp_path / "worker.py"
        script.write_text("pass\n", encoding="utf-8")
        self.events: list[Event] = []
        self.exits: list[JobOutcome] = []
        self.api = api
        self.job = JobProcess(
            prepare(JobSpec("probe", script, interactive=interactive), platform="win32"),
            self.events.append,
            self.exits.append,
            grace_s=30.0,
            platform="win32",
            job_api=api,
        )

    def start(self) -> FakePopen:
        self.job.start()
        proc = FakePopen.started[-1]
        self.api.on_terminate.append(proc)
        return proc

    def outcome(self) -> JobOutcome:
        outcome = self.job.wait(30)
        assert outcome is not None, "the job did not end within 30 s"
        return outcome


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# -- start, cancel, exit: the calls and their order --------------------------------------------
def test_a_worker_starts_suspended_joins_its_job_then_runs(
    tmp_path: Path, windows: list[Any]
) -> None:
    worker = Worker(tmp_path, FakeJobApi())
    proc = worker.start()
    assert worker.api.calls == [("create",), ("assign", JOB, HANDLE), ("resume", PID)]
    assert proc.kwargs["creationflags"] == SUSPENDED | NO_WINDOW
    assert "start_new_session" not in proc.kwargs
    assert proc.kwargs["stdin"] == subprocess.DEVNULL  # no lifeline: the job is the lifeline
    assert lifetime.LIFELINE_ENV not in proc.kwargs["env"]
    assert proc.argv == list(worker.job.prepared.argv)
    assert worker.job in lifetime.live_jobs()
    proc.exit(0)
    outcome = worker.outcome()
    assert (outcome.state, outcome.result) == (JobState.SUCCEEDED, {"win": 1})
    # Closed once the worker has exited (KILL_ON_JOB_CLOSE ends what it left behind).
    assert worker.api.calls[3:] == [("close", JOB)]
    assert worker.job not in lifetime.live_jobs()
    assert windows == [] and proc.calls == []


def test_closing_the_job_at_exit_frees_pipes_a_leftover_child_holds(
    tmp_path: Path, windows: list[Any]
) -> None:
    # pip left a child behind that still holds the worker's stdout: only closing the job
    # (KILL_ON_JOB_CLOSE ends that child) lets the reader see the end of the pipe.
    read_end, write_end = os.pipe()

    class EndsTheLeftoverChild(FakeJobApi):
        def close(self, handle: int) -> None:
            super().close(handle)
            os.close(write_end)

    api = EndsTheLeftoverChild()
    worker = Worker(tmp_path, api)
    FakePopen.next_stdout = os.fdopen(read_end, "rb")
    proc = worker.start()
    os.write(write_end, b'{"event": "result", "data": {"left": 1}}\n')
    proc.exit(0)
    outcome = worker.job.wait(10)
    assert outcome is not None, "the reader still waits on the leftover child's pipe"
    assert (outcome.state, outcome.result) == (JobState.SUCCEEDED, {"left": 1})
    assert api.calls[-1] == ("close", JOB)


def test_cancel_ends_the_whole_job_at_once_without_a_signal(
    tmp_path: Path, windows: list[Any]
) -> None:
    worker = Worker(tmp_path, FakeJobApi())
    proc = worker.start()
    worker.job.cancel()
    outcome = worker.outcome()
    assert worker.api.calls == [
        ("create",),
        ("assign", JOB, HANDLE),
        ("resume", PID),
        ("terminate", JOB, 1),
        ("close", JOB),
    ]
    assert (outcome.state, outcome.exit_code, outcome.message) == (
        JobState.CANCELLED,
        1,
        "Cancelled.",
    )
    assert proc.calls == [] and windows == []  # no signal, no kill, no taskkill
    # Once it has ended, cancel and kill are no-ops.
    worker.job.cancel()
    worker.job.kill_group()
    assert len(worker.api.calls) == 5 and worker.job.wait(0) is outcome


def test_kill_group_ends_the_job_too(tmp_path: Path, windows: list[Any]) -> None:
    worker = Worker(tmp_path, FakeJobApi(), interactive=True)
    proc = worker.start()
    assert proc.kwargs["stdin"] == subprocess.PIPE
    worker.job.kill_group()
    assert worker.outcome().state is JobState.CANCELLED
    assert [c[0] for c in worker.api.calls] == ["create", "assign", "resume", "terminate", "close"]
    assert proc.calls == [] and windows == []


def test_the_exit_hook_ends_windows_jobs(tmp_path: Path, windows: list[Any]) -> None:
    worker = Worker(tmp_path, FakeJobApi())
    worker.start()
    assert worker.job in lifetime.live_jobs()
    lifetime.end_all(grace_s=5.0)
    assert worker.outcome().state is JobState.CANCELLED
    assert ("terminate", JOB, 1) in worker.api.calls


# -- the fallback: taskkill of the tree, at once ------------------------------------------------
def test_a_worker_that_cannot_join_a_job_runs_and_is_taskkilled_at_cancel(
    tmp_path: Path, windows: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    denied = PermissionError(13, "Access is denied")
    worker = Worker(tmp_path, FakeJobApi(assign=denied))
    proc = worker.start()
    # The job is useless now: closed at once; the worker is resumed all the same.
    assert worker.api.calls == [
        ("create",),
        ("assign", JOB, HANDLE),
        ("close", JOB),
        ("resume", PID),
    ]
    assert _warnings(caplog) == [
        "putting the worker into a job object failed: [Errno 13] Access is denied; "
        "cancel will use taskkill /T /F"
    ]
    worker.job.cancel()  # the worker is alive: taskkill takes its tree now, off this thread
    ending = worker.job._ending
    assert ending is not None and ending.name == "job-end"
    ending.join(5)
    assert windows == [(TASKKILL, {**TASKKILL_KWARGS, "creationflags": NO_WINDOW})]
    proc.exit(1)  # what taskkill does to it
    assert worker.outcome().state is JobState.CANCELLED
    assert len(worker.api.calls) == 4  # no terminate, no second close
    assert proc.calls == []


def test_without_a_job_object_the_worker_starts_running(
    tmp_path: Path, windows: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    worker = Worker(tmp_path, FakeJobApi(create=OSError(1450, "Insufficient resources")))
    proc = worker.start()
    assert proc.kwargs["creationflags"] == NO_WINDOW  # not suspended: nothing would resume it
    assert worker.api.calls == [("create",)]
    assert _warnings(caplog) == [
        "creating a job object failed: [Errno 1450] Insufficient resources; "
        "cancel will use taskkill /T /F"
    ]
    worker.job.kill_group()
    assert windows == [(TASKKILL, {**TASKKILL_KWARGS, "creationflags": NO_WINDOW})]
    proc.exit(1)
    assert worker.outcome().state is JobState.CANCELLED


@pytest.mark.parametrize("error", [SystemError("kill returned NULL"), OSError(6, "bad handle")])
def test_cancel_never_raises_whatever_the_api_raises(
    tmp_path: Path,
    windows: list[Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error: BaseException,
) -> None:
    def no_taskkill(argv: list[str], **kwargs: Any) -> None:
        raise FileNotFoundError(2, "No such file or directory", argv[0])

    monkeypatch.setattr(subprocess, "run", no_taskkill)
    worker = Worker(tmp_path, FakeJobApi(terminate=error, close=error))
    proc = worker.start()
    proc.kill_error = error
    worker.job.cancel()  # terminate, taskkill and kill all fail: nothing escapes
    worker.job.kill_group()
    assert worker.job.running is True
    assert proc.calls == ["kill", "kill"]
    assert (
        _warnings(caplog)
        == [
            f"ending the job object failed ({error}); trying taskkill /T /F",
            "taskkill of process tree 4242 failed: [Errno 2] No such file or directory: 'taskkill'",
            "ending the job's process tree failed",
        ]
        * 2
    )
    proc.kill_error = None
    proc.exit(1)
    assert worker.outcome().state is JobState.CANCELLED
    assert worker.api.calls[-1] == ("close", JOB)  # tried once; its error only logged
    assert _warnings(caplog)[-1] == f"closing a job object failed: {error}"


def test_a_worker_that_cannot_be_resumed_is_ended_and_the_start_fails(
    tmp_path: Path, windows: list[Any]
) -> None:
    worker = Worker(tmp_path, FakeJobApi(resume=OSError(5, "Access is denied")))
    with pytest.raises(PanelError) as raised:
        worker.start()
    proc = FakePopen.started[-1]
    assert raised.value.message == (
        f"Could not start {worker.job.prepared.argv[0]}: Windows did not let it run."
    )
    assert raised.value.detail == "[Errno 5] Access is denied"
    assert worker.api.calls == [
        ("create",),
        ("assign", JOB, HANDLE),
        ("resume", PID),
        ("terminate", JOB, 1),
        ("close", JOB),
    ]
    assert proc.calls == ["kill"] and proc.stdout.closed and proc.stderr.closed
    assert worker.job.running is False and worker.job not in lifetime.live_jobs()


def test_a_worker_that_cannot_be_started_closes_its_job(
    tmp_path: Path, windows: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(argv: list[str], **kwargs: Any) -> None:
        raise FileNotFoundError(2, "No such file or directory", argv[0])

    monkeypatch.setattr(subprocess, "Popen", missing)
    worker = Worker(tmp_path, FakeJobApi())
    with pytest.raises(PanelError) as raised:
        worker.job.start()
    assert raised.value.message == (
        f"Could not start {worker.job.prepared.argv[0]}: No such file or directory."
    )
    assert worker.api.calls == [("create",), ("close", JOB)]


# -- ProcessTree on its own ----------------------------------------------------------------------
def test_a_tree_without_an_api_uses_taskkill_and_says_why(windows: list[Any]) -> None:
    tree = winjob.ProcessTree(None)
    assert (tree.creation_flags(), tree.fallback_reason, tree.in_job) == (
        0,
        "no Job-object API",
        False,
    )
    assert tree.end() is False  # no pid yet: nothing to end
    tree.adopt(HANDLE, PID)
    assert tree.end() is True
    tree.close()
    assert windows == [(TASKKILL, {**TASKKILL_KWARGS, "creationflags": NO_WINDOW})]


def test_a_failed_taskkill_is_reported_false_and_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refused(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.CompletedProcess(argv, 128, b"", b'ERROR: The process "4242" not found.')

    monkeypatch.setattr(subprocess, "run", refused)
    tree = winjob.ProcessTree(None)
    tree.adopt(HANDLE, PID)
    assert tree.end() is False
    assert _warnings(caplog) == [
        'taskkill of process tree 4242 exited 128: ERROR: The process "4242" not found.'
    ]


def test_a_tree_closes_its_job_once() -> None:
    api = FakeJobApi()
    tree = winjob.ProcessTree(api)
    assert tree.creation_flags() == winjob.CREATE_SUSPENDED
    tree.adopt(HANDLE, PID)
    assert tree.in_job is True
    tree.close()
    tree.close()
    assert tree.in_job is False
    assert api.calls == [("create",), ("assign", JOB, HANDLE), ("resume", PID), ("close", JOB)]


def test_no_real_job_api_off_windows() -> None:
    assert winjob.real_job_api("linux") is None


# -- the ctypes layer: the documented layouts, at 64-bit sizes ----------------------------------
needs_64_bit = pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="64-bit layout")


@needs_64_bit
def test_the_job_structures_have_the_documented_64_bit_layout() -> None:
    basic = winjob.JOBOBJECT_BASIC_LIMIT_INFORMATION
    extended = winjob.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
    assert ctypes.sizeof(winjob.IO_COUNTERS) == 48
    assert ctypes.sizeof(basic) == 64
    assert ctypes.sizeof(extended) == 144
    offsets = {name: getattr(basic, name).offset for name, _type in basic._fields_}
    assert offsets == {
        "PerProcessUserTimeLimit": 0,
        "PerJobUserTimeLimit": 8,
        "LimitFlags": 16,
        "MinimumWorkingSetSize": 24,
        "MaximumWorkingSetSize": 32,
        "ActiveProcessLimit": 40,
        "Affinity": 48,
        "PriorityClass": 56,
        "SchedulingClass": 60,
    }
    assert (extended.IoInfo.offset, extended.ProcessMemoryLimit.offset) == (64, 112)
    assert extended.PeakJobMemoryUsed.offset == 136


def test_threadentry32_is_28_bytes_and_the_limits_ask_only_for_kill_on_close() -> None:
    assert ctypes.sizeof(winjob.THREADENTRY32) == 28
    assert winjob.THREADENTRY32.th32OwnerProcessID.offset == 12
    info = winjob.kill_on_close_limits()
    raw = bytes(info)
    assert info.BasicLimitInformation.LimitFlags == 0x2000
    assert raw.count(0) == len(raw) - 1 and raw[16:20] == b"\x00\x20\x00\x00"


def test_windows_constants() -> None:
    assert (winjob.CREATE_SUSPENDED, winjob.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE) == (0x4, 0x2000)
    assert winjob.JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS == 9
    assert (winjob.TH32CS_SNAPTHREAD, winjob.THREAD_SUSPEND_RESUME) == (0x4, 0x2)
    assert subproc.creation_flags(winjob.CREATE_SUSPENDED, "win32") == SUSPENDED | NO_WINDOW
