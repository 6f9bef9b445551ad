from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs.process import JobState, decide_outcome
from rocmpanel.jobs.protocol import WorkerError
from rocmpanel.jobs.spec import JobSpec, prepare


def test_prepare_builds_argv_with_the_worker_by_path() -> None:
    job = prepare(JobSpec("probe", "probe", args=("--x",)), base_env={"PATH": "/bin"})
    assert job.argv[0] == sys.executable
    assert job.argv[1] == "-u"
    assert Path(job.argv[2]).name == "probe.py" and Path(job.argv[2]).is_file()
    assert job.argv[3:] == ("--x",)
    assert job.env["PYTHONUNBUFFERED"] == "1"


def test_prepare_applies_and_removes_env() -> None:
    base = {"KEEP": "1", "DROP": "x", "PYTHONPATH": "/panel"}
    job = prepare(JobSpec("p", "probe", env={"NEW": "v", "DROP": None}), base_env=base)
    assert job.env["NEW"] == "v" and job.env["KEEP"] == "1"
    assert "DROP" not in job.env and "PYTHONPATH" not in job.env


def test_missing_python_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PanelError, match="does not exist"):
        prepare(JobSpec("p", "probe", python=str(tmp_path / "nope" / "python")))


def test_python_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PanelError, match="not an executable"):
        prepare(JobSpec("p", "probe", python=str(tmp_path)))


def test_missing_worker_script_is_a_clear_error() -> None:
    with pytest.raises(PanelError, match="worker script"):
        prepare(JobSpec("p", "no_such_worker"))


def test_python_found_on_path() -> None:
    job = prepare(JobSpec("p", "probe", python=Path(sys.executable).name))
    assert Path(job.argv[0]).is_absolute()


def _outcome(**kw):
    base = dict(
        exit_code=0,
        cancelled=False,
        interactive=False,
        result={"x": 1},
        error=None,
        stderr_tail=(),
        duration_s=0.1,
    )
    base.update(kw)
    return decide_outcome(**base)


def test_outcome_rules() -> None:
    assert _outcome().state is JobState.SUCCEEDED
    assert _outcome(result=None).state is JobState.CRASHED
    assert _outcome(result=None, interactive=True).state is JobState.SUCCEEDED
    assert _outcome(exit_code=3).state is JobState.CRASHED
    killed = _outcome(exit_code=-9, result=None)
    assert killed.state is JobState.CRASHED and killed.signal_name == "SIGKILL"
    assert "SIGKILL" in killed.message
    failed = _outcome(exit_code=1, error=WorkerError("no GPU", "nogpu"))
    assert failed.state is JobState.FAILED and failed.message == "no GPU"
    assert _outcome(exit_code=-15, cancelled=True).state is JobState.CANCELLED
    stale = WorkerError("folder refused", "refused")
    assert _outcome(exit_code=0, interactive=True, error=stale).state is JobState.SUCCEEDED
    assert _outcome(exit_code=-9, interactive=True, error=stale).state is JobState.CRASHED
    assert _outcome(exit_code=1, interactive=True, error=stale).state is JobState.FAILED
