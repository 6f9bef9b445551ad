"""The Qt-free job process against real child processes."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import psutil
import pytest

from rocmpanel.jobs.process import JobProcess, JobState
from rocmpanel.jobs.protocol import LogLine, Progress
from rocmpanel.jobs.spec import JobSpec, prepare

SCRIPTS = Path(__file__).parent / "scripts"


def run(script: str, *args: str, interactive: bool = False, grace: float = 3.0):
    events: list = []
    spec = JobSpec(script, SCRIPTS / f"{script}.py", args=args, interactive=interactive)
    job = JobProcess(prepare(spec), events.append, lambda _o: None, grace_s=grace)
    job.start()
    return job, events


def test_success_reports_result_progress_and_stderr() -> None:
    job, events = run("ok", "--flag")
    outcome = job.wait(30)
    assert outcome is not None and outcome.was_successful(), outcome
    assert outcome.result == {"answer": 42, "argv": ["--flag"]}
    assert [e.fraction for e in events if isinstance(e, Progress)] == pytest.approx(
        [1 / 3, 2 / 3, 1.0]
    )
    assert LogLine("a line on stderr", "info", "stderr") in events
    assert outcome.exit_code == 0


def test_crash_is_typed_with_exit_code_and_stderr_tail() -> None:
    job, _ = run("crash")
    outcome = job.wait(30)
    assert outcome is not None
    assert outcome.state is JobState.CRASHED
    assert outcome.exit_code == 139
    assert "exit code 139" in outcome.message
    assert outcome.stderr_tail[-1] == "Segmentation fault (simulated)"
    assert len(outcome.stderr_tail) == 20
    assert "Segmentation fault (simulated)" in str(outcome)


def test_garbage_output_is_logged_and_ends_as_no_result() -> None:
    job, events = run("garbage")
    outcome = job.wait(30)
    assert outcome is not None and outcome.state is JobState.CRASHED
    assert "without reporting a result" in outcome.message
    raw = [e.message for e in events if isinstance(e, LogLine) and e.stream == "stdout"]
    assert "this is not json" in raw and "{broken json" in raw
    assert any("invalid utf-8" in line for line in raw)
    assert len(raw) == 6


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")
def test_cancel_reaps_a_hung_worker_and_its_children_within_5s() -> None:
    job, events = run("hang")
    deadline = time.monotonic() + 20
    while not any(isinstance(e, Progress) for e in events) and time.monotonic() < deadline:
        time.sleep(0.02)
    child_pid = int(next(e.message.split()[1] for e in events if isinstance(e, LogLine)))
    started = time.monotonic()
    job.cancel()
    outcome = job.wait(5)
    assert outcome is not None, "cancel did not reap the worker within 5 s"
    assert time.monotonic() - started < 5
    assert outcome.state is JobState.CANCELLED
    assert not psutil.pid_exists(job.pid) or psutil.Process(job.pid).status() == "zombie"
    deadline = time.monotonic() + 2
    while psutil.pid_exists(child_pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not psutil.pid_exists(child_pid) or psutil.Process(child_pid).status() == "zombie"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")
def test_cancel_reaches_a_child_that_outlives_its_worker() -> None:
    job, events = run("orphan", grace=0.5)
    deadline = time.monotonic() + 20
    while not any(isinstance(e, LogLine) for e in events) and time.monotonic() < deadline:
        time.sleep(0.02)
    child_pid = int(next(e.message.split()[1] for e in events if isinstance(e, LogLine)))
    job.cancel()  # the worker dies of the SIGTERM; its child ignores it
    outcome = job.wait(10)
    assert outcome is not None, "the child kept the job alive past its kill"
    deadline = time.monotonic() + 2
    while psutil.pid_exists(child_pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not psutil.pid_exists(child_pid) or psutil.Process(child_pid).status() == "zombie"


def test_interactive_commands_reach_the_worker() -> None:
    job, events = run("interactive", interactive=True)
    job.send("echo", text="héllo")
    job.send("exit")
    outcome = job.wait(30)
    assert outcome is not None and outcome.was_successful(), outcome
    assert [e.text for e in events if hasattr(e, "text")] == ["héllo"]


def test_fifty_start_cancel_cycles_leave_no_children() -> None:
    me = psutil.Process(os.getpid())
    before = {p.pid for p in me.children(recursive=True)}
    jobs = []
    for _ in range(50):
        job, _events = run("hang", grace=0.5)
        job.cancel()
        jobs.append(job)
    for job in jobs:
        assert job.wait(10) is not None
    deadline = time.monotonic() + 5
    leftover: set[int] = set()
    while time.monotonic() < deadline:
        leftover = {
            p.pid
            for p in me.children(recursive=True)
            if p.pid not in before and p.status() != psutil.STATUS_ZOMBIE
        }
        if not leftover:
            break
        time.sleep(0.05)
    assert not leftover


def test_send_to_a_finished_worker_is_a_clear_error() -> None:
    from rocmpanel.base.errors import PanelError

    job, _ = run("interactive", interactive=True)
    job.send("exit")
    job.wait(30)
    with pytest.raises(PanelError, match="not running"):
        job.send("echo", text="late")


def test_wait_returns_only_after_the_exit_callback_ran() -> None:
    # The window waits for its jobs at close and then deletes their Qt objects: no callback
    # may still be running into them after wait() returns.
    finished: list[bool] = []

    def slow_exit(_outcome) -> None:
        time.sleep(0.3)
        finished.append(True)

    spec = JobSpec("ok", SCRIPTS / "ok.py")
    job = JobProcess(prepare(spec), lambda e: None, slow_exit)
    job.start()
    assert job.wait(30) is not None
    assert finished == [True]
