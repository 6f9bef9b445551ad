"""``rocmpanel launch``: printing, writing (atomic, no silent overwrite), wrong input with
exit status 2, and ``--run`` of the single-node command for real on CPU."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pytest

from rocmpanel.multigpu import launch_cli

TRAIN = """\
import os, sys
import torch.distributed as dist
import torch

dist.init_process_group("gloo")
value = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(value)
assert value.item() == 3.0
path = os.path.join(os.environ["LAUNCH_TEST_OUT"], f"rank{dist.get_rank()}.txt")
with open(path, "w") as handle:
    handle.write(" ".join(sys.argv[1:]))
print("rank", dist.get_rank(), "done", flush=True)
dist.destroy_process_group()
"""


@pytest.fixture(autouse=True)
def _no_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty /sys: no AMD GPU, whatever this machine has."""
    root = tmp_path / "sys"
    root.mkdir()
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(root))


def launch(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="rocmpanel")
    launch_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["launch", *argv])
    return int(args.func(args))


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "my train.py"
    path.write_text(TRAIN)
    return path


def test_prints_the_single_node_command(script: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert launch("torchrun", str(script), "--python", "/usr/bin/python3", "--", "--lr", "1") == 0
    out = capsys.readouterr().out
    assert out.startswith("#!/usr/bin/env bash")
    assert f"'{script}' --lr 1" in out
    assert "--nproc-per-node=1" in out  # no GPU: one process
    assert "exec /usr/bin/python3 -m torch.distributed.run --standalone" in out


def test_multinode_takes_the_endpoint_and_elastic_nodes(
    script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = launch(
        "multinode", str(script), "--nnodes", "2:4", "--nproc-per-node", "8",
        "--rdzv-endpoint", "head:29400", "--rdzv-id", "exp1",
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    for flag in ("--nnodes=2:4", "--nproc-per-node=8", "--rdzv-endpoint=head:29400"):
        assert flag in out
    assert "--rdzv-id=exp1" in out


def test_deepspeed_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert launch("deepspeed", "--offload", "--micro-batch", "4") == 0
    captured = capsys.readouterr()
    config = json.loads(captured.out)
    assert config["zero_optimization"]["stage"] == 3
    assert config["train_micro_batch_size_per_gpu"] == 4
    assert "holds no environment" in captured.err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("torchrun",), "needs your training script"),
        (("torchrun", "/no/such/train.py"), "does not exist"),
        (("multinode", "{script}", "--rdzv-endpoint", "head:99999"), "outside 1-65535"),
        (("slurm", "{script}", "--gres", "gpu 2"), "GPU request"),
        (("multinode", "{script}", "--run"), "single-node kind"),
    ],
)
def test_wrong_input_exits_2_with_a_sentence(
    argv: tuple[str, ...], words: str, script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert launch(*(a.replace("{script}", str(script)) for a in argv)) == 2
    assert words in capsys.readouterr().err


def test_windows_says_why(
    script: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    assert launch("torchrun", str(script)) == 2
    assert "Linux only" in capsys.readouterr().err


def test_out_writes_refuses_to_overwrite_and_backs_up_with_force(
    script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "job.sbatch"
    assert launch("slurm", str(script), "--out", str(out)) == 0
    first = out.read_text()
    assert first.startswith("#!/bin/bash") and os.access(out, os.X_OK)
    out.write_text("mine\n")
    assert launch("slurm", str(script), "--out", str(out)) == 1
    assert "--force" in capsys.readouterr().err
    assert out.read_text() == "mine\n"
    assert launch("slurm", str(script), "--out", str(out), "--force") == 0
    assert out.read_text() == first
    assert "the old one is kept as" in capsys.readouterr().err


def test_run_starts_the_single_node_command_for_real(
    script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    monkeypatch.setenv("LAUNCH_TEST_OUT", str(tmp_path))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")  # gloo on the loopback
    code = launch(
        "torchrun", str(script), "--run", "--python", sys.executable, "--nproc-per-node", "2",
        "--", "it's", "$HOME",
    )  # fmt: skip
    captured = capfd.readouterr()
    assert code == 0, captured.err[-3000:]
    assert (tmp_path / "rank0.txt").read_text() == "it's $HOME"
    assert (tmp_path / "rank1.txt").read_text() == "it's $HOME"
    assert "finished in" in captured.err


def test_run_reports_a_failing_script(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    bad = tmp_path / "bad.py"
    bad.write_text("raise SystemExit('broken on purpose')\n")
    code = launch("torchrun", str(bad), "--run", "--python", sys.executable)
    assert code == 1
    assert "broken on purpose" in capfd.readouterr().err
