"""The probe worker in an interpreter with CPU torch, and in one without torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocmpanel.jobs.process import JobProcess
from rocmpanel.jobs.spec import JobSpec, prepare
from rocmpanel.setup.probe_report import ProbeReport


def probe_result(python: str = "", env: dict[str, str | None] | None = None) -> dict:
    spec = JobSpec("probe", "probe", python=python, env=env or {})
    job = JobProcess(prepare(spec), lambda e: None, lambda o: None)
    job.start()
    outcome = job.wait(120)
    assert outcome is not None and outcome.was_successful(), outcome
    assert outcome.result is not None
    return dict(outcome.result)


def probe(python: str = "") -> ProbeReport:
    return ProbeReport.from_dict(probe_result(python))


@pytest.mark.torch
def test_probe_with_cpu_torch() -> None:
    torch = pytest.importorskip("torch")
    report = probe()
    assert report.torch_imported
    assert report.torch_version == torch.__version__
    assert report.build == "cpu" and report.torch_hip is None
    assert report.cuda_available is False and report.devices == ()
    assert "CPU-only build" in "\n".join(report.summary_lines())


@pytest.mark.torch
def test_probe_reports_the_preset_it_ran_under() -> None:
    pytest.importorskip("torch")
    header = {"id": "p", "name": "Probe preset", "torch": {"float32_matmul_precision": "medium"}}
    result = probe_result(env={"ROCMPANEL_PRESET": json.dumps(header)})
    assert result["torch_imported"] is True
    assert result["preset"] == {"id": "p", "name": "Probe preset"}
    assert result["preset_settings"] == [
        {
            "key": "float32_matmul_precision",
            "value": "medium",
            "applied": True,
            "note": "torch.set_float32_matmul_precision('medium')",
        }
    ]
    assert probe_result()["preset"] is None  # without a header


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    bindir = "Scripts" if sys.platform == "win32" else "bin"
    return str(next((venv / bindir).glob("python*")))


def test_probe_without_torch_reports_it(bare_python: str) -> None:
    report = probe(bare_python)
    assert not report.torch_imported
    assert report.build is None
    assert any("import torch failed" in e for e in report.errors)
    assert "not importable" in "\n".join(report.summary_lines())
    assert Path(report.python_executable).parent == Path(bare_python).parent


def test_probe_cli_json(bare_python: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rocmpanel", "probe", "--python", bare_python, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"torch_imported": false' in proc.stdout


def test_probe_cli_missing_python_exits_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rocmpanel", "probe", "--python", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == "" and "does not exist" in proc.stderr
