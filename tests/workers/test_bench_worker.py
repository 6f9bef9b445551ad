"""The A/B benchmark worker (workers/bench.py), for real, in this interpreter's CPU torch."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from rocmpanel.jobs.presets import HEADER_VAR
from rocmpanel.jobs.process import JobOutcome, JobProcess, JobState
from rocmpanel.jobs.protocol import LogLine, Progress
from rocmpanel.jobs.spec import JobSpec, prepare

pytestmark = pytest.mark.torch

GEMM_CASES = ["gemm 128 fp32", "gemm 128 bf16", "gemm 256 fp32", "gemm 256 bf16"]


def run_bench(
    *args: str, env: Mapping[str, str | None] | None = None, python: str = ""
) -> tuple[JobOutcome, list[object]]:
    events: list[object] = []
    spec = JobSpec("bench", "bench", args, python=python, env=dict(env or {}))
    job = JobProcess(prepare(spec), events.append, lambda o: None)
    job.start()
    outcome = job.wait(240)
    assert outcome is not None, "the worker did not finish"
    return outcome, events


def cpu_torch() -> Any:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this test is about a CPU torch")
    return torch


def check_shape(data: Mapping[str, Any], torch: Any) -> None:
    assert data["device"] == "cpu"
    assert data["device_label"] == "CPU"
    assert data["torch_version"] == torch.__version__
    for item in data["cases"]:
        assert set(item) == {"case", "unit", "higher_is_better", "value"}
        assert isinstance(item["value"], float) and item["value"] > 0


def test_gemm_quick_on_cpu_without_a_preset() -> None:
    torch = cpu_torch()
    outcome, events = run_bench("--workload", "gemm", "--device", "cpu", "--quick")
    assert outcome.was_successful(), str(outcome)
    data = outcome.result
    assert data is not None
    check_shape(data, torch)
    assert [c["case"] for c in data["cases"]] == GEMM_CASES
    assert {c["unit"] for c in data["cases"]} == {"TFLOP/s"}
    assert all(c["higher_is_better"] is True for c in data["cases"])
    assert data["preset"] is None and data["preset_settings"] == []
    steps = [e.step for e in events if isinstance(e, Progress)]
    assert steps[:2] == ["Importing torch", "GEMM 128 fp32"] and steps[-1] == "Done"


def test_gemm_runs_under_the_preset_in_its_header() -> None:
    cpu_torch()
    header = json.dumps({"id": "one-thread", "name": "One thread", "torch": {"cpu_threads": 1}})
    outcome, events = run_bench("--workload", "gemm", "--quick", env={HEADER_VAR: header})
    assert outcome.was_successful(), str(outcome)
    logs = [e.message for e in events if isinstance(e, LogLine)]
    assert "Preset One thread: applied cpu_threads." in logs
    data = outcome.result
    assert data is not None
    assert data["preset"] == {"id": "one-thread", "name": "One thread"}
    assert data["threads"] == 1
    assert data["device"] == "cpu"  # auto on a CPU torch
    [setting] = data["preset_settings"]
    assert (setting["key"], setting["value"], setting["applied"]) == ("cpu_threads", 1, True)


def test_sdpa_quick_on_cpu_reports_ms_and_the_backends() -> None:
    torch = cpu_torch()
    outcome, _ = run_bench("--workload", "sdpa", "--device", "cpu", "--quick")
    assert outcome.was_successful(), str(outcome)
    data = outcome.result
    assert data is not None
    check_shape(data, torch)
    assert [c["case"] for c in data["cases"]] == [
        "sdpa b1 h4 s128 d64 fp32",
        "sdpa b2 h8 s256 d64 fp32",
    ]
    assert all(c["unit"] == "ms" and c["higher_is_better"] is False for c in data["cases"])
    backends = data["extra"]["sdpa_backends"]
    assert {"flash", "mem_efficient", "math"} <= set(backends)
    assert all(isinstance(v, bool) for v in backends.values())


def test_alloc_quick_on_cpu_has_no_gpu_fragmentation_figure() -> None:
    torch = cpu_torch()
    outcome, _ = run_bench("--workload", "alloc", "--device", "cpu", "--quick")
    assert outcome.was_successful(), str(outcome)
    data = outcome.result
    assert data is not None
    check_shape(data, torch)
    assert [(c["case"], c["unit"], c["higher_is_better"]) for c in data["cases"]] == [
        ("alloc churn", "ms", False)
    ]
    assert data["extra"] == {}


@pytest.mark.slow
def test_chat_decode_speed_of_the_tiny_model(tiny_model: Path) -> None:
    torch = cpu_torch()
    outcome, _ = run_bench("--workload", "chat", "--quick", "--model", str(tiny_model))
    assert outcome.was_successful(), str(outcome)
    data = outcome.result
    assert data is not None
    check_shape(data, torch)
    assert [(c["case"], c["unit"], c["higher_is_better"]) for c in data["cases"]] == [
        ("chat decode", "tok/s", True),
        ("chat first token", "ms", False),
    ]
    assert data["extra"] == {"precision": "fp32", "new_tokens": 16}


def test_chat_without_a_model_says_so() -> None:
    cpu_torch()
    outcome, _ = run_bench("--workload", "chat", "--quick")
    assert outcome.state is JobState.FAILED and outcome.exit_code == 1
    assert outcome.error is not None and outcome.error.kind == "no_model"
    assert outcome.error.message == (
        "The chat workload needs a model folder (--model); choose a model in the Chat tab "
        "or pass one."
    )


def test_chat_with_a_folder_without_weights(tiny_llama: ModuleType, tmp_path: Path) -> None:
    cpu_torch()
    folder = tiny_llama.without_weights(tmp_path)
    outcome, _ = run_bench("--workload", "chat", "--model", str(folder))
    assert outcome.state is JobState.FAILED
    assert outcome.error is not None and outcome.error.kind == "no_weights"
    assert outcome.error.message == f"No weights were found in {folder} (no .safetensors files)."


def test_cuda_on_a_cpu_torch_is_refused_with_the_fix() -> None:
    torch = cpu_torch()
    outcome, _ = run_bench("--workload", "gemm", "--device", "cuda", "--quick")
    assert outcome.state is JobState.FAILED and outcome.exit_code == 1
    assert outcome.error is not None and outcome.error.kind == "no_gpu"
    assert outcome.error.message == (
        f"No GPU is visible to torch in this Python (torch {torch.__version__}); run with "
        "--device cpu or pick a ROCm build."
    )


def test_a_python_without_torch(python_without_torch: str) -> None:
    outcome, _ = run_bench("--workload", "gemm", "--quick", python=python_without_torch)
    assert outcome.state is JobState.FAILED
    assert outcome.error is not None and outcome.error.kind == "no_torch"
    assert outcome.error.message.startswith(f"torch cannot be imported in {python_without_torch}")
    assert outcome.error.message.endswith(
        "install PyTorch in the PyTorch tab or pick another workload Python."
    )
