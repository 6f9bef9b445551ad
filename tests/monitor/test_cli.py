"""``rocmpanel telemetry`` on captured trees: JSON lines of the documented shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmpanel.shell.cli import main


def tree(root: Path, shared: Path, names: list[str]) -> Path:
    for index, name in enumerate(names):
        card = root / "class" / "drm" / f"card{index}"
        card.mkdir(parents=True)
        (card / "device").symlink_to(shared / "sysfs" / name, target_is_directory=True)
    return root


def test_json_samples_from_a_captured_tree(
    shared_fixtures: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tree(tmp_path / "sys", shared_fixtures, ["rx7900xt", "rx6900xt"])
    argv = ["telemetry", "--json", "--count", "2", "--interval", "0.1"]
    assert main([*argv, "--sysfs-root", str(root), "--proc-root", str(tmp_path / "proc")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    doc = json.loads(lines[0])
    assert set(doc) == {"t", "gpus", "host", "processes"}
    first, second = doc["gpus"]
    assert first["pci_id"] == "1002:744c" and first["link"] == "16.0 GT/s x16"
    assert first["sclk_mhz"] == 31 and first["power_cap_w"] == 290.0
    assert first["vram_used_bytes"] is None  # the rx7900xt snapshot has no mem_info_vram_*
    assert second["pci_slot"] == "0000:0c:00.0" and second["vram_total_bytes"] == 17163091968
    assert second["temps_c"] == {"edge": 56.0, "junction": 59.0, "mem": 54.0}
    assert doc["host"]["ram_total_bytes"] > 0
    assert doc["processes"] == []


def test_text_output_says_when_no_gpu_is_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["telemetry", "--once", "--sysfs-root", str(tmp_path), "--proc-root", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "No AMD GPU found." in out and "host  CPU" in out


def test_rejects_a_too_short_interval(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["telemetry", "--count", "2", "--interval", "0.01"]) == 2
    assert "at least 0.1 s" in capsys.readouterr().out
