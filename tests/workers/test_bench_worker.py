"""The A/B benchmark worker (workers/bench.py), for real, in this interpreter's CPU torch."""

from __future__ import annotations

import ast
import hashlib
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
from rocmpanel.tuning import bench

WORKERS = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers"

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
    assert data["preset_hash"] is None
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
    assert data["preset_hash"] == hashlib.sha256(header.encode()).hexdigest()[:12]
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
        "The chat workload needs a model folder: choose a model in the Chat tab, or pass "
        "--model DIR to `rocmpanel bench`."
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


# -- pure parts, without torch ---------------------------------------------------------------
@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """workers/bench.py as a module (its main() is not run)."""
    import importlib

    monkeypatch.syspath_prepend(str(WORKERS))
    import bench as worker_bench  # type: ignore[import-not-found]

    return importlib.reload(worker_bench)


@pytest.mark.parametrize(
    ("quick", "count", "largest", "peak"),
    [
        (True, 64, 3_670_016, 99_590_144),  # 3.5 Mi elements (14 MiB); 0.09 GiB
        (False, 128, 14_680_064, 893_128_704),  # 14 Mi elements (56 MiB); 0.83 GiB
    ],
)
def test_the_alloc_workload_holds_at_most_its_planned_peak(
    worker: ModuleType, quick: bool, count: int, largest: int, peak: int
) -> None:
    sizes = worker.alloc_pattern(quick)
    assert sizes == worker.alloc_pattern(quick)  # the same mix in every run
    assert len(sizes) == count
    assert max(sizes) == largest and max(sizes) <= 7 << (worker.ALLOC_TOP[quick] - 1)
    assert min(sizes) >= 1024
    assert worker.alloc_peak_bytes(sizes) == peak
    assert peak < 1 << 30  # a full run fits an 8 GiB card with room to spare


def test_alloc_peak_is_the_larger_of_all_held_and_the_odd_ones_with_the_refill(
    worker: ModuleType,
) -> None:
    assert worker.alloc_peak_bytes([4, 1, 1]) == 6 * 4  # all 6; odd 1 + refill 4 = 5
    assert worker.alloc_peak_bytes([1, 2, 3, 4]) == 11 * 4  # all 10; odd 6 + refill 5 = 11
    assert worker.alloc_peak_bytes([]) == 0


def _constant(name: str) -> object:
    tree = ast.parse((WORKERS / "bench.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    pytest.fail(f"bench.py has no constant {name}")


def test_the_workers_copies_equal_the_panels() -> None:
    assert _constant("WORKLOADS") == bench.WORKLOADS
    assert _constant("CHAT_NEEDS_MODEL") == bench.CHAT_NEEDS_MODEL
