"""The active tuning preset reaches the environment of a job the panel launches.

A user preset is saved in the preset store (tmp HOME) and made active in the settings; a
JobManager whose env_provider is job_env_for (as the main window's) starts a test worker
that sends its environment back as its result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from rocmpanel.base.settings import Settings
from rocmpanel.jobs import workload
from rocmpanel.jobs.job_env import job_env_for
from rocmpanel.jobs.presets import HEADER_VAR, NO_PRESET, Item, Preset, PresetStore
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.runner import JobManager
from rocmpanel.jobs.spec import JobSpec

ENV_WORKER = """
import json, os
print(json.dumps({"event": "result", "data": {"env": dict(os.environ)}}))
"""

PRESET = Preset(
    id="reach-test",
    name="Reach test",
    env=(Item("env", "MIOPEN_FIND_MODE", "FAST"),),
    torch=(Item("torch", "float32_matmul_precision", "high"),),
)


@pytest.fixture
def manager(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> Iterator[JobManager]:
    """A JobManager that gives jobs the env of job_env_for, the preset saved and active."""
    monkeypatch.delenv("MIOPEN_FIND_MODE", raising=False)
    monkeypatch.delenv(HEADER_VAR, raising=False)
    monkeypatch.setattr(workload, "env_for_python", lambda python: None)
    PresetStore().save(PRESET)
    settings = Settings.load()
    settings.general.active_preset = PRESET.id
    settings.save()
    jobs = JobManager(grace_s=1.0)
    jobs.env_provider = job_env_for
    yield jobs
    jobs.shutdown(5)


def run_env_job(qtbot: QtBot, jobs: JobManager, worker: Path, **spec: object) -> dict[str, str]:
    job = jobs.start(JobSpec("env", worker, **spec))  # type: ignore[arg-type]
    with qtbot.waitSignal(job.finished, timeout=60_000) as blocker:
        pass
    outcome = blocker.args[0] if blocker.args else job.outcome
    assert isinstance(outcome, JobOutcome) and outcome.was_successful(), str(outcome)
    assert outcome.result is not None
    env = outcome.result["env"]
    assert isinstance(env, dict)
    return env


def test_the_active_preset_reaches_a_launched_job(
    qtbot: QtBot, manager: JobManager, tmp_path: Path
) -> None:
    worker = tmp_path / "env_worker.py"
    worker.write_text(ENV_WORKER)
    env = run_env_job(qtbot, manager, worker)
    assert env["MIOPEN_FIND_MODE"] == "FAST"
    assert json.loads(env[HEADER_VAR]) == {
        "id": "reach-test",
        "name": "Reach test",
        "torch": {"float32_matmul_precision": "high"},
    }
    # A job that asks for no preset runs with the environment as it is.
    plain = run_env_job(qtbot, manager, worker, preset=NO_PRESET)
    assert "MIOPEN_FIND_MODE" not in plain and HEADER_VAR not in plain
