"""``rocmpanel topo`` on built trees, registered on a parser of the test's own."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocmpanel.multigpu import topo_cli


def run_topo(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="rocmpanel")
    topo_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["topo", *argv])
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_matrix_of_four_xgmi_gpus(tmp_path: Path, capsys, topo_trees):
    code, out, err = run_topo(capsys, "--sysfs-root", str(topo_trees.mi300x_box(tmp_path, 4)))
    assert code == 0 and err == ""
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith(" ") and "GPU0" in line)
    assert header.split() == ["GPU0", "GPU1", "GPU2", "GPU3"]
    row1 = next(line for line in lines if line.startswith("GPU1  ") and "XGMI" in line)
    assert row1.split() == ["GPU1", "XGMI", "1/15", "-", "XGMI", "1/15", "XGMI", "1/15"]
    assert "NUMA node 0; PCIe 5.0 x16 now, card max PCIe 5.0 x16" in out
    assert "Nothing to act on." in out


def test_text_warnings_have_what_to_do(tmp_path: Path, capsys, topo_trees):
    code, out, _ = run_topo(capsys, "--sysfs-root", str(topo_trees.navi_behind_switch(tmp_path)))
    assert code == 0
    assert "WARNING: GPU 0" in out and "runs at PCIe 4.0 x4" in out
    assert "  What to do: Reseat the card" in out
    assert "read at 0000:01:00.0, the upstream port of the card's own PCIe switch" in out
    assert "GPU0  " in out and "GPU1" not in out  # one GPU: no matrix


def test_json(tmp_path: Path, capsys, topo_trees):
    code, out, _ = run_topo(
        capsys, "--json", "--sysfs-root", str(topo_trees.two_socket_radeons(tmp_path))
    )
    assert code == 0
    data = json.loads(out)
    assert data["found"] is True
    assert data["links"][0]["hops"] == 3
    assert data["process_numa_nodes"] is None  # a captured tree is not this process's machine
    assert [w["code"] for w in data["warnings"]] == ["numa-pair"]


def test_without_kfd_one_sentence_and_status_zero(tmp_path: Path, capsys):
    code, out, err = run_topo(capsys, "--sysfs-root", str(tmp_path))
    assert code == 0 and err == ""
    assert out.strip() == topo_cli.NO_TOPOLOGY.format(root=str(tmp_path))
    code, out, _ = run_topo(capsys, "--json", "--sysfs-root", str(tmp_path))
    data = json.loads(out)
    assert code == 0 and data["found"] is False and "No ROCm kernel driver" in data["message"]


def test_missing_sysfs_root_is_a_usage_error(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_topo(capsys, "--sysfs-root", str(tmp_path / "nope"))
    assert exit_info.value.code == 2


def test_this_machine_runs_without_a_traceback():
    # This machine may or may not have KFD; either way: status 0, no traceback.
    code = (
        "import argparse, sys\n"
        "from rocmpanel.multigpu import topo_cli\n"
        "p = argparse.ArgumentParser()\n"
        "topo_cli.register(p.add_subparsers())\n"
        "a = p.parse_args(['topo'])\n"
        "sys.exit(a.func(a))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.strip()


def test_the_recorded_tree_of_rocmpanel_sysfs_root_is_read(
    tmp_path: Path, capsys, monkeypatch, topo_trees
):
    # As the window, the GPU button and --gpus read it (their errors point here).
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(topo_trees.mi300x_box(tmp_path, 2)))
    code, out, _ = run_topo(capsys)
    assert code == 0 and "GPU1" in out and "XGMI" in out


def test_kfd_without_a_readable_gpu_node_says_so(tmp_path: Path, capsys):
    node = tmp_path / "class/kfd/kfd/topology/nodes/1"
    node.mkdir(parents=True)
    (node / "properties").write_text("simd_count -1\n")
    code, out, _ = run_topo(capsys, "--sysfs-root", str(tmp_path))
    assert code == 0
    assert "lists no GPU node that could be read" in out and "No ROCm kernel" not in out
