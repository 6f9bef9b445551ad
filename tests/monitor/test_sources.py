"""The source factory per platform, the null source, the Windows process list (recorded PDH
counter values), GPUs taken from the machine inventory, and VRAM published for Chat."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.live import LiveGpuMemory
from rocmpanel.monitor import source_factory
from rocmpanel.monitor.amdsmi_source import AmdSmiSource
from rocmpanel.monitor.collector import TelemetryCollector, publish_vram
from rocmpanel.monitor.fdinfo_source import FdinfoScanner
from rocmpanel.monitor.pdh_source import (
    ADAPTER_DEDICATED,
    ADAPTER_SHARED,
    ENGINE_COUNTER,
    PROCESS_DEDICATED,
    PROCESS_SHARED,
    PdhGpuSource,
    PdhProcessSource,
    PdhQuery,
)
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, Sample
from rocmpanel.monitor.source import NullGpuSource, NullProcessSource
from rocmpanel.monitor.source_factory import identity_of, open_sources
from rocmpanel.monitor.sysfs_source import SysfsSource, gpus_for

SLOT = "0000:03:00.0"
ADAPTER = "luid_0x00000000_0x0000c3b4_phys_0"
LUID = "luid_0x00000000_0x0000C3B4_phys_0"

# Counter values as win32pdh.GetFormattedCounterArray returned them on a Windows 11 box
# running a compute job (pid 5678) next to the desktop compositor (pid 1234).
RECORDED: dict[str, dict[str, float]] = {
    ENGINE_COUNTER: {
        f"pid_1234_{LUID}_eng_0_engtype_3D": 4.0,
        f"pid_5678_{LUID}_eng_0_engtype_3D": 1.5,
        f"pid_5678_{LUID}_eng_3_engtype_Compute 0": 87.25,
        f"pid_5678_{LUID}_eng_5_engtype_Copy": 3.0,
        f"pid_9999_{LUID}_eng_0_engtype_3D": 0.0,
    },
    ADAPTER_DEDICATED: {LUID: 9.5 * 2**30},
    ADAPTER_SHARED: {LUID: 2**28},
    PROCESS_DEDICATED: {
        f"pid_1234_{LUID}": 3 * 2**20,
        f"pid_5678_{LUID}": 8 * 2**30,
        f"pid_9999_{LUID}": 0.0,
    },
    PROCESS_SHARED: {f"pid_5678_{LUID}": 2**26},
}


class RecordedPdh:
    """Stands in for the win32pdh module: counters answer with RECORDED."""

    PDH_FMT_DOUBLE = 0x200

    def __init__(self) -> None:
        self.collections = 0
        self.closed = False

    def OpenQuery(self) -> str:  # win32pdh's names
        return "query"

    def AddEnglishCounter(self, query: str, path: str) -> str:
        return path

    def CollectQueryData(self, query: str) -> None:
        self.collections += 1

    def GetFormattedCounterArray(self, handle: str, fmt: int) -> Mapping[str, float]:
        return RECORDED[handle]

    def CloseQuery(self, query: str) -> None:
        self.closed = True


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
    sources = open_sources("/sys", tmp_path, platform="win32")  # no win32pdh here
    assert isinstance(sources.gpus, NullGpuSource)
    assert isinstance(sources.processes, NullProcessSource)
    assert "PDH" in sources.note


def test_windows_process_list_comes_from_pdh_counters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pdh = RecordedPdh()
    monkeypatch.setattr(source_factory, "PdhQuery", lambda: PdhQuery(pdh))
    monkeypatch.setattr(
        "rocmpanel.monitor.pdh_source.process_names",
        lambda pids: {pid: f"app{pid}.exe" for pid in pids},
    )
    collector = TelemetryCollector("/sys", tmp_path, platform="win32", host=False)
    assert isinstance(collector.sources.gpus, PdhGpuSource)
    assert isinstance(collector.sources.processes, PdhProcessSource)
    sample = collector.collect({5678: "chat"})
    (gpu,) = sample.gpus
    assert gpu.identity.key == ADAPTER and gpu.busy_percent == 87.2
    assert gpu.vram_used_bytes == int(9.5 * 2**30)
    rows = {p.pid: p for p in sample.processes}
    assert set(rows) == {1234, 5678}  # pid 9999 holds nothing and does nothing
    job = rows[5678]
    assert (job.vram_bytes, job.gtt_bytes, job.engine_percent) == (8 * 2**30, 2**26, 87.2)
    assert job.worker == "chat" and job.name == "app5678.exe" and job.pci_slot == ADAPTER
    assert dict(job.engines) == {"3D": 1.5, "Compute 0": 87.2, "Copy": 3.0}
    assert rows[1234].name == "app1234.exe" and rows[1234].worker is None
    assert pdh.collections == 2  # the baseline, then one collection shared by both sources
    collector.close()
    assert pdh.closed


def test_pdh_query_collects_at_most_once_a_second() -> None:
    now = [100.0]
    pdh = RecordedPdh()
    query = PdhQuery(pdh, clock=lambda: now[0])
    names: list[set[int]] = []
    processes = PdhProcessSource(query, lambda pids: names.append(pids) or {})
    gpus = PdhGpuSource(query, {ADAPTER: GpuIdentity(ADAPTER, None, None, None, "RX 7900 XTX")})
    assert gpus.identities() == ()  # learnt while reading
    gpus.read()
    processes.scan()
    now[0] += 0.5
    gpus.read()
    assert pdh.collections == 2  # baseline + one
    now[0] += 0.6
    processes.scan()
    assert pdh.collections == 3
    assert [i.name for i in gpus.identities()] == ["RX 7900 XTX"]
    assert len(names) == 1  # names are looked up once per pid; none found stays unnamed


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
