"""The collective test's pure parts: sizes, the plan, the job's argv, results and the
failure map (fed with real texts of torch, RCCL/NCCL, gloo and HIP)."""

from __future__ import annotations

import json
import sys

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.protocol import CheckDone, WorkerError, parse_line
from rocmpanel.jobs.spec import prepare
from rocmpanel.multigpu.collective import (
    CPU_CHOSEN,
    CPU_NOTE,
    SizeCollector,
    SizeResult,
    backend_name,
    bandwidth_text,
    collective_spec,
    explain,
    format_size,
    make_plan,
    parse_size,
    run_from_outcome,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1024", 1024),
        ("1K", 1024),
        ("1k", 1024),
        ("64MiB", 64 << 20),
        ("1G", 1 << 30),
        (" 4 KB ", 4096),
    ],
)
def test_sizes_parse_in_binary_units(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "1.5M", "-1K", "1T", "2", "lots"])
def test_bad_sizes_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


def test_sizes_format_as_units() -> None:
    assert [format_size(s) for s in (1024, 1 << 20, 1 << 30, 1000, 3 << 20)] == [
        "1 KiB",
        "1 MiB",
        "1 GiB",
        "1000 B",
        "3 MiB",
    ]


def test_no_gpu_runs_on_the_cpu_with_two_processes() -> None:
    plan = make_plan(0)
    assert (plan.device, plan.processes, plan.gpus) == ("cpu", 2, None)
    assert plan.where == CPU_NOTE.format(procs=2)
    assert plan.where.startswith("No AMD GPU: running on the CPU with gloo and 2 processes")


def test_one_gpu_is_refused_with_what_to_do() -> None:
    with pytest.raises(PanelError) as caught:
        make_plan(1, gpus=("0000:03:00.0",), label="GPU 0 Radeon RX 7900 XTX (0000:03:00.0)")
    assert "Only one GPU is chosen" in caught.value.message
    assert "--cpu" in caught.value.detail


def test_plan_checks() -> None:
    with pytest.raises(PanelError, match="is above the largest"):
        make_plan(0, min_bytes=4096, max_bytes=1024)
    with pytest.raises(PanelError, match="for the CPU"):
        make_plan(2, gpus=("a", "b"), procs=4)
    with pytest.raises(PanelError, match="2 to 64"):
        make_plan(0, procs=1)
    gpu = make_plan(2, gpus=("0000:03:00.0", "0000:04:00.0"), label="all 2 GPUs")
    assert (gpu.device, gpu.processes) == ("gpu", 2)
    asked = make_plan(2, cpu=True, procs=3)
    assert (asked.device, asked.processes) == ("cpu", 3)
    assert "as asked" in asked.where and not asked.where.startswith("No AMD GPU")


def test_the_cpu_asked_for_is_not_called_a_missing_gpu() -> None:
    # The CLI's --cpu does not read the GPUs (count 0): the text says it was asked for.
    plan = make_plan(0, cpu=True, procs=2)
    assert plan.where == CPU_CHOSEN.format(procs=2)
    assert "No AMD GPU" not in plan.where
    assert make_plan(0).where.startswith("No AMD GPU")  # the fallback keeps its sentence


def test_backends_carry_the_names_users_know() -> None:
    assert (backend_name("nccl"), backend_name("gloo")) == ("RCCL", "gloo")


def test_small_bandwidths_keep_their_digits() -> None:
    # A 1 KiB all-reduce on a busy CPU: 0.000412 GB/s, not "0.000".
    texts = [bandwidth_text(v) for v in (0.000412, 0.0123, 0.5, 1.0794, 123.4567, 0.0)]
    assert texts == ["0.000412", "0.0123", "0.500", "1.079", "123.457", "0.000"]


def test_the_job_runs_torchrun_with_one_process_per_gpu() -> None:
    plan = make_plan(2, gpus=("0000:03:00.0", "0000:04:00.0"), python=sys.executable)
    spec = collective_spec(plan)
    assert spec.gpus == ("0000:03:00.0", "0000:04:00.0")
    argv = prepare(spec).argv
    assert argv[:7] == (
        sys.executable,
        "-u",
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node=2",
        "--max-restarts=0",
    )
    assert argv[7].endswith("allreduce.py")
    assert argv[8:] == (
        "--device",
        "gpu",
        "--min-bytes",
        "1024",
        "--max-bytes",
        str(1 << 30),
        "--timeout-s",
        "60",
    )
    cpu = collective_spec(make_plan(0, procs=3, max_bytes=4096))
    assert "--nproc-per-node=3" in cpu.launcher and cpu.gpus is None
    assert cpu.args[:2] == ("--device", "cpu") and cpu.env["OMP_NUM_THREADS"] == "1"


# Real texts: gloo's (this torch, GLOO_SOCKET_IFNAME=nosuch0), NCCL's bootstrap.cc, c10d's
# socket.cpp, torch's distributed_c10d.py, HIP/CUDA's error strings, RCCL's init warnings
# (ROCm/rccl#1026), and the worker's own messages.
CASES = [
    ("wrong_data", "the collective returned wrong data (4 KiB: expected 3 ...)", "exception"),
    (
        "no_peer_access",
        "transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between "
        "these two devices'",
        "",
    ),
    (
        "no_peer_access",
        'init.cc:132 NCCL WARN Missing "HSA_FORCE_FINE_GRAIN_PCIE=1" from '
        "environment which can lead to low RCCL performance, system instablity or hang!",
        "",
    ),
    (
        "no_peer_access",
        "transport/p2p.cc:220 NCCL WARN hipIpcGetMemHandle failed : invalid argument",
        "",
    ),
    (
        "interface",
        "RuntimeError: [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/"
        "transport/tcp/device.cc:84] ifa != nullptr. Unable to find address for: nosuch0",
        "",
    ),
    ("interface", "bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found", ""),
    (
        "port_in_use",
        "torch.distributed.DistNetworkError: The server socket has failed to "
        "listen on any local network address. port: 29500, useIpv6: false, code: -98, name: "
        "EADDRINUSE, message: address already in use",
        "",
    ),
    (
        "firewall",
        "The client socket has timed out after 60000ms while trying to connect to "
        "(10.0.0.2, 29500).",
        "",
    ),
    (
        "firewall",
        "The client socket has failed to connect to any network address of (10.0.0.2, 29500).",
        "",
    ),
    ("timeout", "The 60 s rendezvous timeout passed before all 2 processes joined", "timeout"),
    ("timeout", "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", ""),
    ("oom", "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.00 GiB", ""),
    (
        "oom",
        "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: "
        "can't allocate memory: you tried to allocate 4294967296 bytes.",
        "",
    ),
    ("no_backend", "RuntimeError: Distributed package doesn't have NCCL built in", ""),
    ("no_gpu", "ProcessGroupNCCL is only supported with GPUs, no GPUs found!", ""),
    ("one_process", "An all-reduce needs at least 2 processes; this run has 1.", ""),
    (
        "no_torch",
        "/venv/bin/python: Error while finding module specification for "
        "'torch.distributed.run' (ModuleNotFoundError: No module named 'torch')",
        "",
    ),
]


@pytest.mark.parametrize(("cause_id", "text", "kind"), CASES)
def test_known_failures_map_to_causes(cause_id: str, text: str, kind: str) -> None:
    found = explain(text, kind=kind)
    assert found is not None and found.id == cause_id


def test_causes_come_from_the_stderr_tail_too() -> None:
    tail = (
        "E1204 torch/distributed/elastic/multiprocessing/api.py:1002] failed",
        "rank 1: RuntimeError: ... Unable to find address for: eth9",
    )
    found = explain("The worker crashed (exit code 1).", tail)
    assert found is not None and found.id == "interface"
    assert "GLOO_SOCKET_IFNAME" in found.advice
    assert explain("something nobody has seen") is None


def outcome(state: JobState, result=None, error=None, tail=()) -> JobOutcome:
    return JobOutcome(
        state, 0 if state is JobState.SUCCEEDED else 1, "m", result, error, tuple(tail), 2.5
    )


SIZE = {
    "bytes": 1024,
    "count": 256,
    "time_us": 100.0,
    "algbw_gbs": 0.01024,
    "busbw_gbs": 0.01024,
    "iters": 20,
}


def test_a_finished_run_keeps_its_figures() -> None:
    plan = make_plan(0)
    data = {
        "world_size": 2,
        "backend": "gloo",
        "torch_version": "2.13.0+cpu",
        "hip_version": None,
        "devices": ["CPU", "CPU"],
        "sizes": [SIZE, {**SIZE, "bytes": 2048, "busbw_gbs": 0.5, "algbw_gbs": 0.5}],
        "skipped": [{"bytes": 4096, "reason": "needs about 1 GiB"}],
    }
    run = run_from_outcome(plan, outcome(JobState.SUCCEEDED, data), created_at=5.0)
    assert run.outcome == "done" and run.error is None and run.cause is None
    assert [s.bytes for s in run.sizes] == [1024, 2048]
    assert run.peak() == SizeResult(2048, 256, 100.0, 0.5, 0.5, 20)
    assert run.skipped == ((4096, "needs about 1 GiB"),)
    assert (run.world_size, run.backend, run.devices, run.duration_s) == (
        2,
        "gloo",
        ("CPU", "CPU"),
        2.5,
    )


def check(record: dict[str, object]) -> CheckDone:
    # As rocmpanel.jobs.protocol.parse_line makes it from the worker's line.
    line = json.dumps({"event": "check", "check": record})
    event = parse_line(line)
    assert isinstance(event, CheckDone)
    return event


def test_a_failed_run_keeps_the_sizes_before_the_failure_and_the_cause() -> None:
    collector = SizeCollector()
    collector.feed(check({**SIZE, "id": "size-1024", "name": "1 KiB", "status": "pass"}))
    collector.feed(check({"id": "size-2048", "status": "skip", "bytes": 2048, "figure": "big"}))
    collector.feed(check({"id": "x", "status": "pass", "bytes": "garbled"}))
    collector.feed(WorkerError("not a size", "error"))
    assert [s.bytes for s in collector.sizes] == [1024]
    assert collector.skipped == [(2048, "big")]
    error = WorkerError("torch.OutOfMemoryError: HIP out of memory.", "oom")
    run = run_from_outcome(make_plan(0), outcome(JobState.FAILED, None, error), collector.sizes)
    assert run.outcome == "failed" and run.sizes == tuple(collector.sizes)
    assert run.error == error.message
    assert run.cause is not None and run.cause.startswith("Out of memory")
    cancelled = run_from_outcome(make_plan(0), outcome(JobState.CANCELLED))
    assert cancelled.outcome == "cancelled" and cancelled.error is None
