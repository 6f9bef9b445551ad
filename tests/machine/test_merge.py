"""Merging single-source records into one GpuInfo per GPU."""

from __future__ import annotations

from pathlib import Path

from rocmpanel.machine.detect import detect, merge_gpus
from rocmpanel.machine.gpu_model import GpuInfo

from .test_parsers import ROCMINFO


def test_same_gpu_from_three_sources_merges_by_bdf() -> None:
    records = [
        GpuInfo(
            "",
            gfx="gfx1030",
            pci_id="1002:73BF",
            bdf="0000:0b:00.0",
            vram_bytes=1,
            sources=("kfd",),
            kfd_node=1,
        ),
        GpuInfo(
            "AMD Radeon RX 6800 XT",
            gfx="gfx1030",
            pci_id="1002:73bf",
            bdf="0000:0b:00.0",
            vram_bytes=2,
            sources=("rocminfo",),
            kfd_node=1,
        ),
        GpuInfo(
            "",
            pci_id="1002:73bf",
            bdf="0000:0B:00.0",
            vram_bytes=17163091968,
            sources=("drm",),
            drm_card="card1",
        ),
    ]
    (gpu,) = merge_gpus(records)
    assert gpu.name == "AMD Radeon RX 6800 XT"
    assert gpu.vram_bytes == 17163091968  # DRM's byte count wins over pools
    assert gpu.sources == ("kfd", "rocminfo", "drm")
    assert gpu.drm_card == "card1" and gpu.kfd_node == 1
    assert gpu.integrated is False  # from the PCI table


def test_two_identical_cards_stay_two() -> None:
    records = [
        GpuInfo(
            "MI25", gfx="gfx900", pci_id="1002:6860", bdf="0000:63:00.0", sources=("rocminfo",)
        ),
        GpuInfo(
            "MI25", gfx="gfx900", pci_id="1002:6860", bdf="0000:66:00.0", sources=("rocminfo",)
        ),
        GpuInfo("", pci_id="1002:6860", bdf="0000:66:00.0", sources=("drm",)),
    ]
    gpus = merge_gpus(records)
    assert len(gpus) == 2
    assert gpus[1].sources == ("rocminfo", "drm")


def test_sysfs_only_gpu_gets_table_name_and_gfx() -> None:
    (gpu,) = merge_gpus([GpuInfo("", pci_id="1002:164e", sources=("lspci",))])
    assert gpu.gfx == "gfx1036" and gpu.integrated is True
    assert "Raphael" in gpu.name and "pci-table" in gpu.sources


def test_unknown_device_keeps_what_is_known() -> None:
    (gpu,) = merge_gpus([GpuInfo("", pci_id="1002:ffff", sources=("drm",))])
    assert gpu.gfx is None and gpu.name == "AMD GPU (1002:ffff)"


def test_wsl_rocminfo_without_bdf_matches_by_pci_id() -> None:
    records = [
        GpuInfo("AMD Radeon RX 7900 XTX", gfx="gfx1100", pci_id="1002:744c", sources=("rocminfo",)),
        GpuInfo(
            "AMD Radeon RX 7900 XTX", pci_id="1002:744c", vram_bytes=25753026560, sources=("cim",)
        ),
    ]
    (gpu,) = merge_gpus(records)
    assert gpu.vram_bytes == 25753026560


def test_detect_on_a_captured_tree_runs_nothing_live(tmp_path: Path) -> None:
    dev = tmp_path / "device"
    dev.mkdir()
    (dev / "uevent").write_text("DRIVER=amdgpu\nPCI_ID=1002:73BF\nPCI_SLOT_NAME=0000:0b:00.0\n")
    (dev / "mem_info_vram_total").write_text("17163091968\n")
    detection = detect(sysfs_root=dev, rocminfo_text=ROCMINFO)
    assert not detection.live
    system = detection.system
    assert system.os_version is None and system.rocm_version is None
    assert system.driver == "amdgpu 6.10.5"
    (gpu,) = system.gpus
    assert gpu.sources == ("rocminfo", "drm")
    assert gpu.vram_bytes == 17163091968


def test_windows_detection_without_powershell_says_so(monkeypatch) -> None:
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv("HIP_PATH", raising=False)
    detection = detect(os_name="windows")
    assert detection.system.os == "windows" and detection.system.gpus == ()
    assert any("PowerShell was not found" in n for n in detection.system.notes)
