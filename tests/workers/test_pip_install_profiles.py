"""The pip_install worker with an install profile, for real (pip, a venv, local wheels, no
network): torch's call first, then the chat packages in their own call, which keep the
installed ROCm torch although their "PyPI" offers a newer torch; and ``--python``, which adds
packages to an existing environment without making a new one."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.jobs.process import JobOutcome, JobProcess, JobState
from rocmpanel.jobs.protocol import LogLine
from rocmpanel.jobs.spec import JobSpec, prepare

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory, tiny_wheel: Any) -> tuple[Path, Path]:
    """(torch's index: a ROCm torch; "PyPI": a newer plain torch and packages needing torch)."""
    wheel = tiny_wheel
    rocm, pypi = tmp_path_factory.mktemp("rocm-index"), tmp_path_factory.mktemp("pypi")
    wheel(rocm, "torch", "2.13.0+rocm7.2")
    wheel(pypi, "torch", "2.14.0")  # what pip would fetch if torch were missing
    wheel(pypi, "accelerate", "1.0", ("torch>=2.0",))
    wheel(pypi, "safetensors", "0.8.0")
    return rocm, pypi


def run_worker(args: list[str]) -> tuple[JobOutcome, list[str]]:
    lines: list[str] = []

    def on_event(event: object) -> None:
        if isinstance(event, LogLine):
            lines.append(event.message)

    job = JobProcess(prepare(JobSpec("t", "pip_install", tuple(args))), on_event, lambda o: None)
    job.start()
    outcome = job.wait(180)
    assert outcome is not None, "the worker did not finish in time"
    return outcome, lines


def version_in(python: Path, module: str) -> str:
    code = f"import {module}; print({module}.VERSION)"
    return subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()


def test_torch_first_then_the_profile_keeps_the_rocm_torch(
    tmp_path: Path, sources: tuple[Path, Path]
) -> None:
    rocm, pypi = sources
    env_dir = tmp_path / "env"
    torch_call = ["torch==2.13.*", "--no-index", "--find-links", str(rocm)]
    chat_call = ["accelerate", "--no-index", "--find-links", str(pypi)]
    outcome, lines = run_worker(
        ["--env-dir", str(env_dir), "--", *torch_call, "--then", *chat_call]
    )
    assert outcome.was_successful(), str(outcome)
    assert outcome.result is not None
    assert outcome.result["installed"] == {"torch": "2.13.0+rocm7.2", "accelerate": "1.0"}
    assert lines.index("pip call 1 of 2") < lines.index("pip call 2 of 2")
    python = Path(outcome.result["python"])
    assert version_in(python, "torch") == "2.13.0+rocm7.2"

    # --python: the missing package goes into that environment; nothing new is made.
    outcome, _ = run_worker(
        ["--python", str(python), "--", "safetensors", "--no-index", "--find-links", str(pypi)]
    )
    assert outcome.was_successful(), str(outcome)
    assert outcome.result is not None and outcome.result["env_dir"] is None
    assert outcome.result["installed"] == {"safetensors": "0.8.0"}
    assert version_in(python, "safetensors") == "0.8.0"
    assert version_in(python, "torch") == "2.13.0+rocm7.2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env"]


def test_in_the_other_order_pip_would_install_pypis_torch(
    tmp_path: Path, sources: tuple[Path, Path]
) -> None:
    # Why the order matters: the chat packages first pull torch from "PyPI".
    _, pypi = sources
    outcome, _ = run_worker(
        ["--env-dir", str(tmp_path / "env"), "--", "accelerate", "--no-index", "-f", str(pypi)]
    )
    assert outcome.was_successful(), str(outcome)
    assert outcome.result is not None
    assert version_in(Path(outcome.result["python"]), "torch") == "2.14.0"


def test_a_missing_interpreter_is_refused(tmp_path: Path) -> None:
    outcome, _ = run_worker(["--python", str(tmp_path / "nope"), "--", "accelerate"])
    assert outcome.state is JobState.FAILED
    assert outcome.message == (
        f"{tmp_path / 'nope'} does not exist: there is no environment to install into."
    )


def test_the_pinned_torch_stops_a_package_that_wants_another(
    tmp_path: Path, sources: tuple[Path, Path], tiny_wheel: Any
) -> None:
    # What add_packages does: the installed torch pinned in the packages' own call.
    rocm, pypi = sources
    tiny_wheel(pypi, "wantsnewtorch", "1.0", ("torch>=2.14",))
    outcome, _ = run_worker(
        ["--env-dir", str(tmp_path / "env"), "--", "torch==2.13.*", "--no-index", "-f", str(rocm)]
    )
    assert outcome.was_successful(), str(outcome)
    assert outcome.result is not None
    python = Path(outcome.result["python"])
    pinned = ["wantsnewtorch", "torch==2.13.0+rocm7.2", "--no-index", "-f", str(pypi)]
    outcome, _ = run_worker(["--python", str(python), "--", *pinned])
    assert outcome.state is JobState.FAILED
    assert version_in(python, "torch") == "2.13.0+rocm7.2"
    # Without the pin pip would replace the ROCm torch with "PyPI's".
    outcome, _ = run_worker(["--python", str(python), "--", *pinned[:1], *pinned[2:]])
    assert outcome.was_successful(), str(outcome)
    assert version_in(python, "torch") == "2.14.0"
