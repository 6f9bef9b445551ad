"""Free memory for a model: from the inventory and the Monitor's live readings (the tab),
or from an inventory the CLI detects itself and sysfs readings (the CLI)."""

from __future__ import annotations

import shutil
from pathlib import Path

from rocmpanel.base.enums import Device
from rocmpanel.base.units import GIB
from rocmpanel.chat.free_memory import (
    detected_gpu_budget,
    gpu_budget,
    ram_budget,
    read_amd_vram,
    read_device_vram,
)
from rocmpanel.machine.gpu_model import GpuInfo, SystemInfo
from rocmpanel.machine.inventory import Inventory, detect_inventory
from rocmpanel.machine.live import LiveGpuMemory

IGPU = GpuInfo(name="Radeon 780M", bdf="0000:c5:00.0", vram_bytes=2 * GIB, integrated=True)
DGPU = GpuInfo(name="RX 7900 XTX", bdf="0000:03:00.0", vram_bytes=24 * GIB, integrated=False)
OTHER = GpuInfo(name="RX 7600", bdf="0000:07:00.0", vram_bytes=8 * GIB, integrated=False)
INVENTORY = Inventory(SystemInfo("linux", gpus=(IGPU, DGPU, OTHER)))


def test_the_workers_card_is_read_not_the_one_with_most_free() -> None:
    live = LiveGpuMemory()
    live.publish("0000:03:00.0", 20 * GIB, 24 * GIB)  # busy big card
    live.publish("0000:07:00.0", 1 * GIB, 8 * GIB)  # idle small card
    budget = gpu_budget(INVENTORY, live, "0000:07:00.0")
    assert budget == gpu_budget(INVENTORY, live, "0000:07:00.0".upper())
    assert (budget.device, budget.free, budget.total) == (Device.GPU, 7 * GIB, 8 * GIB)
    assert gpu_budget(INVENTORY, live, "0000:03:00.0").free == 4 * GIB


def test_before_a_load_the_first_discrete_card_is_judged() -> None:
    live = LiveGpuMemory()
    live.publish(IGPU.bdf or "", 0, 2 * GIB)
    live.publish(DGPU.bdf or "", 4 * GIB, 24 * GIB)
    budget = gpu_budget(INVENTORY, live)
    assert budget.bdf == DGPU.bdf and budget.free == 20 * GIB


def test_without_a_live_reading_only_the_total_is_known() -> None:
    budget = gpu_budget(INVENTORY, LiveGpuMemory())
    assert budget.free is None and budget.total == 24 * GIB
    assert gpu_budget(None, LiveGpuMemory()) == gpu_budget(None, LiveGpuMemory(), None)
    assert gpu_budget(None, LiveGpuMemory()).total is None


def test_ram_budget_reads_available_memory() -> None:
    budget = ram_budget()
    assert budget.device is Device.CPU and budget.free is not None and budget.free > 0


def _card(
    root: Path, name: str, vendor: str, total: int | None, used: int | None, pci: str = "0x744c"
) -> None:
    device = root / "class" / "drm" / name / "device"
    device.mkdir(parents=True)
    (device / "vendor").write_text(vendor + "\n")
    (device / "device").write_text(pci + "\n")
    (device / "uevent").write_text(f"DRIVER=amdgpu\nPCI_SLOT_NAME=0000:0{name[-1]}:00.0\n")
    if total is not None:
        (device / "mem_info_vram_total").write_text(f"{total}\n")
    if used is not None:
        (device / "mem_info_vram_used").write_text(f"{used}\n")


def test_the_cli_reads_amd_cards_from_sysfs(tmp_path: Path) -> None:
    _card(tmp_path, "card0", "0x1002", 16 * GIB, 1 * GIB)
    _card(tmp_path, "card1", "0x10de", 32 * GIB, 0)  # not AMD
    _card(tmp_path, "card2", "0x1002", 8 * GIB, 7 * GIB)
    _card(tmp_path, "card3", "0x1002", None, None)  # an APU without the files
    (tmp_path / "class" / "drm" / "card0-DP-1").mkdir()
    readings = read_amd_vram(tmp_path)
    assert [(r.card, r.bdf) for r in readings] == [
        ("card0", "0000:00:00.0"),
        ("card2", "0000:02:00.0"),
    ]
    budget = detected_gpu_budget(tmp_path)
    assert (budget.free, budget.total, budget.bdf) == (15 * GIB, 16 * GIB, "0000:00:00.0")
    missing = detected_gpu_budget(tmp_path / "missing")
    assert missing.free is None and missing.total is None


def test_real_sysfs_snapshots(shared_fixtures: Path, tmp_path: Path) -> None:
    sysfs = shared_fixtures / "sysfs"
    rx6900 = read_device_vram(sysfs / "rx6900xt", "card0")
    assert rx6900 is not None
    assert (rx6900.total, rx6900.used) == (17163091968, 668274688)
    assert rx6900.free == 17163091968 - 668274688 and rx6900.bdf == "0000:0c:00.0"
    # These snapshots lack the mem_info files: not reported, not zero.
    assert read_device_vram(sysfs / "rx7900xt", "card1") is None
    drm = tmp_path / "class" / "drm" / "card0"
    drm.mkdir(parents=True)
    shutil.copytree(sysfs / "rx6900xt", drm / "device", symlinks=True)
    assert detected_gpu_budget(tmp_path).free == 17163091968 - 668274688


def test_the_cli_judges_the_card_the_tab_would_not_the_largest(tmp_path: Path) -> None:
    # A Strix Halo APU with a 64 GiB carve-out beside an 8 GiB RX 7600: the Chat tab judges
    # the discrete card (inventory order, discrete first), and so must the CLI.
    _card(tmp_path, "card0", "0x1002", 64 * GIB, 2 * GIB, pci="0x1586")
    _card(tmp_path, "card1", "0x1002", 8 * GIB, 1 * GIB, pci="0x7480")
    inventory = detect_inventory(sysfs_root=tmp_path)
    assert [g.integrated for g in inventory.gpus] == [True, False]
    budget = detected_gpu_budget(tmp_path)
    assert (budget.free, budget.total, budget.bdf) == (7 * GIB, 8 * GIB, "0000:01:00.0")
    live = LiveGpuMemory()
    live.publish("0000:01:00.0", 1 * GIB, 8 * GIB)
    live.publish("0000:00:00.0", 2 * GIB, 64 * GIB)
    assert budget == gpu_budget(inventory, live)
    assert detected_gpu_budget(tmp_path, inventory=inventory) == budget
