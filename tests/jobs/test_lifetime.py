"""The live-jobs registry and the SIGTERM/SIGHUP handlers of rocmpanel.jobs.lifetime, and
what JobProcess gives a worker so that it can notice the panel is gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs import lifetime
from rocmpanel.jobs.process import JobOutcome, JobProcess, JobState, decide_outcome
from rocmpanel.jobs.protocol import WorkerError
from rocmpanel.jobs.spec import JobSpec, prepare

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


class FakeJob:
    """A job as lifetime sees it; records what it was asked to do."""

    def __init__(self, *, exits_on_cancel: bool = True) -> None:
        self.calls: list[str] = []
        self._running = True
        self._exits_on_cancel = exits_on_cancel

    @property
    def running(self) -> bool:
        return self._running

    def cancel(self) -> None:
        self.calls.append("cancel")
        if self._exits_on_cancel:
            self._running = False

    def kill_group(self) -> None:
        self.calls.append("kill")
        self._running = False

    def wait(self, timeout: float | None = None) -> object:
        self.calls.append("wait")
        return None


@pytest.fixture
def registered() -> Iterator[list[FakeJob]]:
    jobs: list[FakeJob] = []
    yield jobs
    for job in jobs:
        lifetime.unregister(job)


@pytest.fixture
def own_handlers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Whatever a test does to SIGTERM/SIGHUP, the previous handlers (and lifetime's record
    of a signal) come back after it."""
    monkeypatch.setattr(lifetime, "_received", None)
    monkeypatch.setattr(lifetime, "_ended", 0)
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_end_all_terminates_then_kills_only_what_is_left(registered: list[FakeJob]) -> None:
    polite, wedged, done = FakeJob(), FakeJob(exits_on_cancel=False), FakeJob()
    done._running = False
    for job in (polite, wedged, done):
        lifetime.register(job)
        registered.append(job)
    assert lifetime.live_jobs() == [polite, wedged]
    lifetime.end_all(grace_s=0.0)
    assert polite.calls == ["cancel", "wait"]
    assert wedged.calls == ["cancel", "wait", "kill"]
    assert done.calls == []


def test_without_signal_handling_windows_jobs_are_still_ended_at_exit(
    registered: list[FakeJob], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lifetime, "ENABLED", False)  # as on Windows
    job = FakeJob()
    lifetime.register(job)
    registered.append(job)
    assert lifetime.exit_signals() == ()
    assert lifetime.install_handlers(also_sigint=True) == {}
    assert lifetime.live_jobs() == [job]
    lifetime.end_all_at_exit()
    assert job.calls == ["cancel", "wait"]


def test_unregistered_jobs_are_left_alone(registered: list[FakeJob]) -> None:
    job = FakeJob()
    lifetime.register(job)
    lifetime.unregister(job)
    lifetime.unregister(job)  # twice is harmless
    assert lifetime.cancel_all() == 0
    assert job.calls == []


def test_sigterm_cancels_the_jobs_and_interrupts_the_command(
    registered: list[FakeJob], own_handlers: None
) -> None:
    job = FakeJob()
    lifetime.register(job)
    registered.append(job)
    with (
        pytest.raises(lifetime.Interrupted) as raised,
        lifetime.ending_jobs_on_signals(),
    ):
        os.kill(os.getpid(), signal.SIGTERM)
        threading.Event().wait(5)  # interrupted long before this ends
    assert raised.value.signum == signal.SIGTERM
    assert isinstance(raised.value, KeyboardInterrupt)  # Ctrl+C's clean-up applies
    assert job.calls == ["cancel"]
    assert lifetime.received_signal() == signal.SIGTERM
    assert lifetime.jobs_ended() == 1
    assert lifetime.exit_code(0) == 143


def test_without_a_signal_the_handlers_come_back_and_the_code_stands(own_handlers: None) -> None:
    before = signal.getsignal(signal.SIGHUP)
    with lifetime.ending_jobs_on_signals():
        assert signal.getsignal(signal.SIGHUP) is not before
    assert signal.getsignal(signal.SIGHUP) is before
    assert lifetime.received_signal() is None
    assert lifetime.exit_code(3) == 3


def test_handlers_are_installed_only_on_the_main_thread() -> None:
    got: list[dict[int, object]] = []
    thread = threading.Thread(target=lambda: got.append(lifetime.install_handlers()))
    thread.start()
    thread.join()
    assert got == [{}]


def test_a_second_signal_exits_at_once_with_its_code(tmp_path: Path) -> None:
    # The first SIGHUP's clean-up hangs (a wedged job): a second one ends the process.
    script = textwrap.dedent(
        """
        import os, signal, time
        from rocmpanel.jobs import lifetime
        with lifetime.ending_jobs_on_signals():
            try:
                os.kill(os.getpid(), signal.SIGHUP)
                time.sleep(5)
            except lifetime.Interrupted:
                print("interrupted", flush=True)
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
                print("not reached", flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=False
    )
    assert (done.returncode, done.stdout) == (128 + signal.SIGTERM, "interrupted\n")


SCRIPTS = Path(__file__).resolve().parents[1] / "workers" / "scripts"
ENV_REPORT = textwrap.dedent(
    """
    import json, os, stat, sys
    report = {
        "lifeline": os.environ.get("ROCMPANEL_LIFELINE"),
        "stdin_is_pipe": stat.S_ISFIFO(os.fstat(0).st_mode),
        "leader": os.getpgrp() == os.getpid(),
    }
    print(json.dumps({"event": "result", "data": report}), flush=True)
    """
)


@pytest.mark.parametrize(
    ("interactive", "expected"),
    [
        (False, {"lifeline": "stdin", "stdin_is_pipe": True, "leader": True}),
        (True, {"lifeline": None, "stdin_is_pipe": True, "leader": True}),
    ],
)
def test_a_one_shot_worker_gets_its_lifeline(
    tmp_path: Path, interactive: bool, expected: dict[str, object]
) -> None:
    script = tmp_path / "report.py"
    script.write_text(ENV_REPORT, encoding="utf-8")
    spec = JobSpec("report", script, interactive=interactive)
    job = JobProcess(prepare(spec), lambda e: None, lambda o: None)
    job.start()
    outcome = job.wait(30)
    assert outcome is not None and outcome.result == expected, outcome
    assert lifetime.LIFELINE_ENV not in prepare(spec).env  # added at start, not prepared


def test_a_running_job_is_registered_until_it_ends() -> None:
    spec = JobSpec("hang", SCRIPTS / "hang.py")
    job = JobProcess(prepare(spec), lambda e: None, lambda o: None, grace_s=0.5)
    job.start()
    assert job in lifetime.live_jobs()
    job.cancel()
    assert job.wait(10) is not None
    assert job not in lifetime.live_jobs()


def test_a_one_shot_job_takes_no_commands() -> None:
    job = JobProcess(prepare(JobSpec("ok", SCRIPTS / "ok.py")), lambda e: None, lambda o: None)
    job.start()
    try:
        with pytest.raises(PanelError) as raised:
            job.send("stop")
        assert raised.value.message == "The ok job takes no commands."
    finally:
        job.wait(30)


def _outcome(**changes: object) -> JobOutcome:
    fields: dict[str, object] = {
        "exit_code": 0,
        "cancelled": False,
        "interactive": False,
        "result": {"x": 1},
        "error": None,
        "stderr_tail": ("last line",),
        "duration_s": 0.5,
    }
    fields.update(changes)
    return decide_outcome(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "state", "message", "text"),
    [
        ({}, JobState.SUCCEEDED, "Done.", "Done."),
        ({"exit_code": -15, "cancelled": True}, JobState.CANCELLED, "Cancelled.", "Cancelled."),
        (
            {"exit_code": -9, "result": None},
            JobState.CRASHED,
            "The worker was killed by SIGKILL.",
            "The worker was killed by SIGKILL.\nLast lines of its error output:\nlast line",
        ),
        (
            {"exit_code": 3},
            JobState.CRASHED,
            "The worker crashed (exit code 3).",
            "The worker crashed (exit code 3).\nLast lines of its error output:\nlast line",
        ),
        (
            {"result": None},
            JobState.CRASHED,
            "The worker exited without reporting a result.",
            "The worker exited without reporting a result.\nLast lines of its error output:\n"
            "last line",
        ),
        (
            {"exit_code": 1, "result": None, "error": WorkerError("pip: no index", "pip")},
            JobState.FAILED,
            "pip: no index",
            "pip: no index",  # a reported failure needs no stderr tail
        ),
    ],
)
def test_the_text_of_each_outcome(
    changes: dict[str, object], state: JobState, message: str, text: str
) -> None:
    outcome = _outcome(**changes)
    assert (outcome.state, outcome.message, str(outcome)) == (state, message, text)


def test_outcome_of_an_unknown_signal_names_its_number() -> None:
    outcome = _outcome(exit_code=-200, result=None)
    assert outcome.message == "The worker was killed by signal 200."
    assert outcome.signal_name == "signal 200"
