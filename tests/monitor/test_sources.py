"""The source factory per platform, the null source, Windows without pywin32 (the PDH source
itself: tests/monitor/test_pdh.py), GPUs taken from the machine inventory, and VRAM
published for Chat."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.live import LiveGpuMemory
from rocmpanel.monitor.amdsmi_source import AmdSmiSource
from rocmpanel.monitor.collector import TelemetryCollector, publish_vram
from rocmpanel.monitor.fdinfo_source import FdinfoScanner
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, Sample
from rocmpanel.monitor.source import NullGpuSource, NullProcessSource
from rocmpanel.monitor.source_factory import identity_of, open_sources
from rocmpanel.monitor.sysfs_source import SysfsSource, gpus_for

SLOT = "0000:03:00.0"


def make_device(root: Path, card: str = "card0", slot: str = SLOT) -> Path:
    device = root / "devices" / card
    (device / "power").mkdir(parents=True)
    (device / "uevent").write_text(f"DRIVER=amdgpu\nPCI_ID=1002:744C\nPCI_SLOT_NAME={slot}\n")
    (device / "mem_info_vram_used").write_text("1073741824\n")
    (device / "mem_info_vram_total").write_text("21458059264\n")
    (device / "gpu_busy_percent").write_text("12\n")
    link = root / "class" / "drm" / card
    link.mkdir(parents=True)
    (link / "device").symlink_to(device, target_is_directory=True)
    return device


def test_a_captured_tree_gets_sysfs_and_fdinfo(tmp_path: Path) -> None:
    make_device(tmp_path)
    sources = open_sources(tmp_path, tmp_path / "proc")
    assert isinstance(sources.gpus, SysfsSource)
    assert isinstance(sources.processes, FdinfoScanner)
    assert [g.pci_slot for g in sources.gpus.identities()] == [SLOT]
    assert sources.gpus.capabilities.temperatures


def test_no_gpu_is_the_null_source_with_its_reason(tmp_path: Path) -> None:
    sources = open_sources(tmp_path, tmp_path)
    assert isinstance(sources.gpus, NullGpuSource)
    assert sources.gpus.read() == () and sources.gpus.identities() == ()
    assert "No AMD GPU found" in sources.note and str(tmp_path / "class" / "drm") in sources.note
    collector = TelemetryCollector(tmp_path, tmp_path, host=False)
    found = collector.found()
    assert found.identities == () and found.capabilities.source == "none"
    assert found.note == sources.note


def test_windows_without_pdh_says_why_and_has_no_process_list(tmp_path: Path) -> None:
    sources = open_sources("/sys", tmp_path, platform="win32")  # no win32pdh here: really
    assert isinstance(sources.gpus, NullGpuSource)
    assert isinstance(sources.processes, NullProcessSource)
    assert sources.note == (
        "Windows GPU counters need the pywin32 package, which is missing: run "
        f"`{sys.executable} -m pip install pywin32` (or reinstall rocmpanel), then restart "
        "the panel."
    )


def test_gpus_follow_the_inventory_by_slot_with_its_names(tmp_path: Path) -> None:
    make_device(tmp_path, "card1", SLOT)
    make_device(tmp_path, "card0", "0000:0c:00.0")
    inventory = [
        GpuInfo("Radeon RX 7900 XTX", gfx="gfx1100", pci_id="1002:744c", bdf=SLOT,
                drm_card="card0"),  # card numbers moved since: the slot decides
        GpuInfo("Radeon RX 6800", bdf="0000:2f:00.0", drm_card="card7"),
    ]  # fmt: skip
    found, missing = gpus_for([identity_of(g) for g in inventory], tmp_path)
    (gpu,) = found
    assert gpu.identity.card == "card1" and gpu.identity.name == "Radeon RX 7900 XTX"
    assert gpu.identity.key == SLOT and gpu.identity.gfx == "gfx1100"
    assert gpu.read().vram_used_bytes == 2**30
    assert [m.name for m in missing] == ["Radeon RX 6800"]
    sources = open_sources(tmp_path, tmp_path, gpus=[identity_of(g) for g in inventory])
    assert [i.name for i in sources.gpus.identities()] == ["Radeon RX 7900 XTX"]
    assert "Radeon RX 6800" in sources.note


def test_an_empty_inventory_samples_no_gpu(tmp_path: Path) -> None:
    make_device(tmp_path)
    sources = open_sources(tmp_path, tmp_path, gpus=())
    assert isinstance(sources.gpus, NullGpuSource)
    assert "detection lists none" in sources.note


def test_amdsmi_names_its_gpus_as_the_inventory_does() -> None:
    class FakeSmi:
        def amdsmi_get_processor_handles(self) -> list[str]:
            return ["h0", "h1"]

        def amdsmi_get_gpu_device_bdf(self, handle: str) -> str:
            return {"h0": SLOT, "h1": "0000:0c:00.0"}[handle]

        def amdsmi_get_gpu_asic_info(self, handle: str) -> dict[str, Any]:
            return {"market_name": "AMD Instinct MI300X"}

    known = [GpuIdentity(SLOT, "card0", SLOT, "1002:74a1", "Instinct MI300X (inventory)")]
    source = AmdSmiSource(FakeSmi(), known)
    assert [i.name for i in source.identities()] == [
        "Instinct MI300X (inventory)",
        "AMD Instinct MI300X",
    ]


def test_vram_is_published_by_pci_slot() -> None:
    live = LiveGpuMemory()
    ident = GpuIdentity(SLOT, "card0", SLOT.upper(), "1002:744c", "RX 7900 XTX")
    no_slot = GpuIdentity("amdsmi0", None, None, None, "unknown slot")
    sample = Sample(
        0.0,
        (
            GpuSample(ident, False, vram_used_bytes=5, vram_total_bytes=20),
            GpuSample(no_slot, False, vram_used_bytes=1, vram_total_bytes=2),
        ),
        None,
    )
    publish_vram(sample, live)
    reading = live.reading(SLOT)
    assert reading is not None and (reading.used_bytes, reading.free_bytes) == (5, 15)
    assert len(live.all()) == 1
