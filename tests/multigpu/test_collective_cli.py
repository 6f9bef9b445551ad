"""``rocmpanel collective``: a real CPU run (torchrun, gloo, 2 processes) at small sizes,
its JSON, a failure with its cause, and bad arguments."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import pytest

from rocmpanel.multigpu import collective_cli
from rocmpanel.multigpu.collective_store import CollectiveStore


@pytest.fixture
def two_gpus(tmp_path: Any, kfd: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorded /sys with two RX 7900 XTX: the GPU choice finds them (no real GPU)."""
    root = kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX, kfd.RX7900XTX_2)
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(root))


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="rocmpanel")
    sub = parser.add_subparsers(dest="command")
    collective_cli.register(sub)
    args = parser.parse_args(["collective", *argv])
    return int(args.func(args))


@pytest.mark.torch
def test_a_cpu_run_prints_the_table_and_is_saved(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    code = run_cli("--max-size", "4K", "--python", sys.executable)
    out = capsys.readouterr().out
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == (
        "Running on: No AMD GPU: running on the CPU with gloo and 2 processes (figures are "
        "the CPU's, not a GPU's)"
    )
    assert lines[1].split() == [
        "size",
        "count",
        "time",
        "(us)",
        "algbw",
        "(GB/s)",
        "busbw",
        "(GB/s)",
    ]
    rows = [line.split() for line in lines[2:5]]
    assert [r[:3] for r in rows] == [["1", "KiB", "256"], ["2", "KiB", "512"], ["4", "KiB", "1024"]]
    assert all(float(r[3]) > 0 and float(r[4]) > 0 and r[4] == r[5] for r in rows)  # n=2: equal
    assert "Peak bus bandwidth:" in out
    [run] = CollectiveStore().list_runs()
    assert f"Saved as run #{run.id} in {CollectiveStore().path}." in out
    assert [s.bytes for s in run.sizes] == [1024, 2048, 4096]


@pytest.mark.torch
def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    code = run_cli(
        "--cpu", "--procs", "2", "--max-size", "2K", "--python", sys.executable, "--json"
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert data["outcome"] == "done" and data["backend"] == "gloo"
    assert [s["bytes"] for s in data["sizes"]] == [1024, 2048]
    assert data["peak"]["busbw_gbs"] == max(s["busbw_gbs"] for s in data["sizes"])
    assert data["id"] == 1


def test_a_python_without_torch_fails_with_its_cause(
    capsys: pytest.CaptureFixture[str], python_without_torch: str
) -> None:
    code = run_cli("--max-size", "2K", "--python", python_without_torch)
    captured = capsys.readouterr()
    err = captured.err
    assert code == 1
    assert "Cause: PyTorch is not installed in the workload Python." in err
    [run] = CollectiveStore().list_runs()
    assert run.outcome == "failed" and run.cause is not None
    # No size finished: no bare table header; the summary, then where it was saved.
    assert "busbw" not in captured.out
    lines = captured.out.splitlines()
    assert lines[1:] == [
        "2 processes, gloo",
        f"Saved as run #{run.id} in {CollectiveStore().path}.",
    ]


def test_a_failed_gpu_run_says_rccl_not_nccl(
    capsys: pytest.CaptureFixture[str], python_without_torch: str, two_gpus: None
) -> None:
    code = run_cli("--max-size", "2K", "--python", python_without_torch)
    captured = capsys.readouterr()
    assert code == 1, captured.err
    lines = captured.out.splitlines()
    assert lines[0] == "Running on: all 2 GPUs, RCCL, 2 processes"
    assert lines[1] == "2 processes, RCCL"
    assert "busbw" not in captured.out
    assert "nccl" not in captured.out.lower()


def test_cpu_asked_for_next_to_gpus_is_not_called_no_gpu(
    capsys: pytest.CaptureFixture[str], python_without_torch: str, two_gpus: None
) -> None:
    assert run_cli("--cpu", "--max-size", "2K", "--python", python_without_torch) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Running on: On the CPU with gloo and 2 processes, as asked")


def test_cpu_and_gpus_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("--cpu", "--gpus", "all", "--python", sys.executable) == 2
    err = capsys.readouterr().err
    assert err == (
        "rocmpanel collective: --cpu runs the test on the CPU: leave out --gpus, or --cpu "
        "to use GPUs.\n"
    )
    assert CollectiveStore().list_runs() == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--max-size", "lots"), "is not a size"),
        (("--procs", "1"), "below the minimum 2"),
        (("--min-size", "2"), "below 4 bytes"),
    ],
)
def test_bad_arguments(argv: tuple[str, ...], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as caught:
        run_cli(*argv)
    assert caught.value.code == 2
    assert message in capsys.readouterr().err


def test_an_upside_down_range_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("--min-size", "1M", "--max-size", "1K", "--python", sys.executable) == 2
    assert "is above the largest" in capsys.readouterr().err
