"""``rocmpanel telemetry`` on captured trees: JSON lines of the documented shape."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.machine.inventory import Inventory
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
    (tmp_path / "proc").mkdir()
    argv = ["telemetry", "--json", "--count", "2", "--interval", "0.1"]
    assert main([*argv, "--sysfs-root", str(root), "--proc-root", str(tmp_path / "proc")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    doc = json.loads(lines[0])
    assert set(doc) == {"t", "gpus", "host", "processes"}
    first, second = doc["gpus"]
    assert first["pci_id"] == "1002:744c" and first["link"] == "16.0 GT/s x16"
    assert first["sclk_mhz"] == 31 and first["power_cap_w"] == 290.0
    assert first["invalid"] == {} and second["invalid"] == {}  # real cards: all in range
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
    with pytest.raises(SystemExit) as exit_:
        main(["telemetry", "--count", "2", "--interval", "0.01"])
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith(
        "rocmpanel telemetry: error: argument --interval: 0.01 is below the minimum 0.1\n"
    )


def test_gpus_are_named_from_the_machine_inventory_of_the_tree_read(
    shared_fixtures: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rocmpanel.machine import inventory as machine_inventory

    root = tree(tmp_path / "sys", shared_fixtures, ["rx7900xt"])
    real_detect = machine_inventory.detect_inventory
    roots: list[Path] = []

    def detect(*args: Any, sysfs_root: Path | str = "/sys", **kwargs: Any) -> Inventory:
        roots.append(Path(sysfs_root))
        found = real_detect(*args, sysfs_root=sysfs_root, **kwargs)
        (gpu,) = found.gpus  # renamed, as rocminfo would name it on a real machine
        renamed = replace(gpu, name="Radeon RX 7900 XT (inventory)", gfx="gfx1100")
        return replace(found, system=replace(found.system, gpus=(renamed,)))

    monkeypatch.setattr(machine_inventory, "detect_inventory", detect)
    argv = ["telemetry", "--json", "--sysfs-root", str(root), "--proc-root", str(tmp_path)]
    assert main(argv) == 0
    (gpu,) = json.loads(capsys.readouterr().out)["gpus"]
    assert roots == [root]  # the tree the command reads, not the live /sys
    assert (gpu["name"], gpu["gfx"]) == ("Radeon RX 7900 XT (inventory)", "gfx1100")
    assert gpu["pci_slot"] == "0000:03:00.0" and gpu["card"] == "card0"


def test_gpus_keep_their_sysfs_names_when_detection_fails(
    shared_fixtures: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rocmpanel.machine import inventory as machine_inventory

    def broken(**_kwargs: Any) -> Inventory:
        raise RuntimeError("rocminfo exploded")

    monkeypatch.setattr(machine_inventory, "detect_inventory", broken)
    root = tree(tmp_path / "sys", shared_fixtures, ["rx7900xt", "rx6900xt"])
    argv = ["telemetry", "--json", "--sysfs-root", str(root), "--proc-root", str(tmp_path)]
    assert main(argv) == 0
    gpus = json.loads(capsys.readouterr().out)["gpus"]
    assert [g["card"] for g in gpus] == ["card0", "card1"]
    assert all(g["name"] for g in gpus)
