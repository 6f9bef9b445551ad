"""The all-reduce worker (workers/allreduce.py), for real: torchrun with gloo on the CPU."""

from __future__ import annotations

import importlib
import os
import socket
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil
import pytest

from rocmpanel.jobs.process import JobOutcome, JobProcess, JobState
from rocmpanel.jobs.protocol import CheckDone, WorkerError
from rocmpanel.jobs.spec import JobSpec, prepare

WORKERS = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers"

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def worker() -> ModuleType:
    pytest.importorskip("torch")
    sys.path.insert(0, str(WORKERS))
    try:
        return importlib.import_module("allreduce")
    finally:
        sys.path.remove(str(WORKERS))


def launch(
    *args: str, procs: int = 2, env: dict[str, str | None] | None = None, torchrun: bool = True
) -> tuple[JobProcess, list[object]]:
    pytest.importorskip("torch")
    events: list[object] = []
    launcher = (
        ("-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={procs}")
        if torchrun
        else ()
    )
    spec = JobSpec(
        "collective",
        "allreduce",
        ("--device", "cpu", *args),
        python=sys.executable,
        env={"OMP_NUM_THREADS": "1", **(env or {})},
        launcher=launcher,
    )
    job = JobProcess(prepare(spec), events.append, lambda o: None, grace_s=3.0)
    job.start()
    return job, events


def finish(job: JobProcess, timeout: float = 120) -> JobOutcome:
    outcome = job.wait(timeout)
    assert outcome is not None, "the collective did not finish"
    return outcome


def test_two_processes_measure_every_size_with_rccl_tests_figures() -> None:
    job, events = launch("--min-bytes", "1024", "--max-bytes", "65536", "--iters", "5")
    outcome = finish(job)
    assert outcome.was_successful(), str(outcome)
    data = outcome.result
    assert data is not None
    assert (data["world_size"], data["backend"], data["device"]) == (2, "gloo", "cpu")
    assert data["devices"] == ["CPU", "CPU"] and data["torch_version"]
    assert data["socket_ifname"] == "lo"  # kept on this machine
    sizes = data["sizes"]
    assert [s["bytes"] for s in sizes] == [1024 * 2**k for k in range(7)]
    for size in sizes:
        assert size["count"] == size["bytes"] // 4
        assert size["time_us"] > 0 and size["algbw_gbs"] > 0
        assert size["algbw_gbs"] == pytest.approx(size["bytes"] / (size["time_us"] * 1e-6) / 1e9)
        assert size["busbw_gbs"] == pytest.approx(size["algbw_gbs"] * 2 * (2 - 1) / 2)
        assert 1 <= size["iters"] <= 5
    # One check event per size, from rank 0 only (rank 1 writes nothing on stdout).
    checks = [e.record for e in events if isinstance(e, CheckDone)]
    assert [c["bytes"] for c in checks] == [s["bytes"] for s in sizes]
    assert {c["status"] for c in checks} == {"pass"}


def test_three_processes_apply_the_bus_bandwidth_factor() -> None:
    job, _ = launch("--min-bytes", "4096", "--max-bytes", "16384", "--iters", "3", procs=3)
    outcome = finish(job)
    assert outcome.was_successful(), str(outcome)
    assert outcome.result is not None and outcome.result["world_size"] == 3
    for size in outcome.result["sizes"]:
        assert size["busbw_gbs"] == pytest.approx(size["algbw_gbs"] * 4 / 3)


def test_a_rank_that_adds_the_wrong_value_is_caught() -> None:
    job, events = launch("--max-bytes", "4096", "--corrupt-rank", "1")
    outcome = finish(job)
    assert outcome.state is JobState.FAILED
    assert outcome.error is not None and outcome.error.kind == "wrong_data"
    assert "the collective returned wrong data" in outcome.error.message
    assert "expected 3" in outcome.error.message
    assert [e for e in events if isinstance(e, WorkerError)] == [outcome.error]  # rank 0 only


def test_the_check_and_the_figures_in_process(worker: ModuleType) -> None:
    import torch

    assert worker.sizes(1024, 4096) == [1024, 2048, 4096]
    assert worker.sizes(1024, 1 << 30, 4)[-1] == 1 << 30
    assert worker.sizes(1000, 1000) == [1000]
    algbw, busbw = worker.bandwidths(8 * 10**9, 2.0, 4)
    assert (algbw, busbw) == pytest.approx((4.0, 6.0))
    assert worker.expected_sum(2) == 3 and worker.expected_sum(8) == 36
    good = torch.full((16,), 3.0)
    assert worker.wrong_elements(good, 3.0) == (0, None)
    bad = good.clone()
    bad[5] = 4.0
    assert worker.wrong_elements(bad, 3.0) == (1, 4.0)
    assert worker.iterations(0.001, "cpu", 20) == 20
    assert worker.iterations(5.0, "cpu", 20) == 1
    assert worker.size_label(1 << 30) == "1 GiB" and worker.size_label(1000) == "1000 B"


def test_cancel_with_sigterm_leaves_no_process() -> None:
    job, events = launch("--min-bytes", "1024", "--max-bytes", str(1 << 30))
    deadline = time.monotonic() + 60
    while not any(isinstance(e, CheckDone) for e in events) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(isinstance(e, CheckDone) for e in events), "no size finished"
    assert job.pid is not None
    family = [psutil.Process(job.pid), *psutil.Process(job.pid).children(recursive=True)]
    assert len(family) >= 3  # torchrun and its two ranks
    job.cancel()
    outcome = finish(job, 30)
    assert outcome.state is JobState.CANCELLED
    _gone, alive = psutil.wait_procs(family, timeout=10)
    assert not alive, f"left running: {[p.pid for p in alive]}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_rendezvous_nobody_joins_is_an_error_within_the_timeout() -> None:
    # Rank 0 of 2, without torchrun and without rank 1: the group never forms.
    env: dict[str, str | None] = {
        "RANK": "0",
        "LOCAL_RANK": "0",
        "WORLD_SIZE": "2",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
    }
    started = time.monotonic()
    job, _ = launch("--timeout-s", "3", env=env, torchrun=False)
    outcome = finish(job, 60)
    took = time.monotonic() - started
    assert outcome.state is JobState.FAILED
    assert outcome.error is not None and outcome.error.kind == "timeout"
    assert "3 s rendezvous timeout" in outcome.error.message
    assert took < 30


def test_without_torchrun_it_says_how_to_launch_it() -> None:
    env: dict[str, str | None] = {"RANK": None, "WORLD_SIZE": None}
    job, _ = launch(env=env, torchrun=False)
    outcome = finish(job, 60)
    assert outcome.state is JobState.FAILED
    assert outcome.error is not None and outcome.error.kind == "no_launcher"


def test_no_stray_process_of_this_module() -> None:
    # Every test above waited for its job; nothing it started may still run.
    me = psutil.Process(os.getpid())
    leftovers: list[Any] = [
        p for p in me.children(recursive=True) if "allreduce" in " ".join(p.cmdline())
    ]
    assert leftovers == []
