"""The one inventory: amdgpu's IP discovery table as a gfx source, the uevent parser, and
detect_inventory on a captured tree (GPUs and host facts together)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.machine import drm_sysfs
from rocmpanel.machine.detect import detect
from rocmpanel.machine.inventory import Inventory, detect_inventory
from rocmpanel.machine.ip_discovery import GcVersion, read_gc_version
from rocmpanel.machine.pci_ids import parse_table

from .test_parsers import ROCMINFO


def _gc(device: Path, version: tuple[int, int, int], block: str = "GC") -> None:
    folder = device / "ip_discovery/die/0" / block / "0"
    folder.mkdir(parents=True)
    for name, value in zip(("major", "minor", "revision"), version, strict=True):
        (folder / name).write_text(f"{value}\n")


def _amd_device(root: Path, device_id: str, slot: str = "0000:03:00.0") -> Path:
    device = root / "device"
    device.mkdir(parents=True)
    (device / "uevent").write_text(
        f"DRIVER=amdgpu\nPCI_ID=1002:{device_id}\nPCI_SLOT_NAME={slot}\n"
    )
    return device


@pytest.mark.parametrize(
    ("version", "gfx"),
    [
        ((11, 0, 0), "gfx1100"),
        ((11, 0, 3), "gfx1101"),  # not a formula: the compiler's 11.0.1
        ((10, 3, 1), "gfx1033"),
        ((9, 4, 2), "gfx90a"),
        ((12, 0, 1), "gfx1201"),
        # kfd_device.c (gregkh/linux @ 2519003dd5fb): GC 9.4.3 and 9.4.4 are both 90402 now;
        # older kernels chose by chip revision, which the generator marks ambiguous instead.
        ((9, 4, 3), "gfx942"),
        ((11, 5, 3), "gfx1153"),  # kfd_device.c: GC 11.5.3 -> 110503
        ((12, 1, 0), "gfx1250"),  # kfd_device.c: GC 12.1.0 -> 120500
        ((99, 0, 0), None),
    ],
)
def test_gc_version_names_the_target(version: tuple[int, int, int], gfx: str | None) -> None:
    assert GcVersion(*version).gfx == gfx


def test_gc_version_reads_the_table_it_is_given() -> None:
    table = parse_table("gc_ip_targets:\n  11.0.3: gfx1101\ndevices: {}\n")
    assert GcVersion(11, 0, 3).gfx_in(table) == "gfx1101"
    assert GcVersion(11, 0, 0).gfx_in(table) is None  # not in this table: not guessed


def test_read_gc_version_by_name_or_hardware_id(tmp_path: Path) -> None:
    _gc(tmp_path / "new", (11, 0, 0))
    _gc(tmp_path / "old", (10, 3, 0), block="11")
    (tmp_path / "none").mkdir()
    assert read_gc_version(tmp_path / "new") == GcVersion(11, 0, 0)
    assert read_gc_version(tmp_path / "old") == GcVersion(10, 3, 0)
    assert read_gc_version(tmp_path / "none") is None


def test_ip_discovery_gives_a_target_no_table_knows(tmp_path: Path) -> None:
    # An id the PCI table lacks, no KFD, no rocminfo: only ip_discovery knows the target.
    device = _amd_device(tmp_path, "7fff")
    _gc(device, (12, 0, 1))
    (gpu,) = detect(sysfs_root=device).system.gpus
    assert gpu.gfx == "gfx1201"
    assert gpu.sources == ("drm", "ip_discovery")
    assert gpu.bdf == "0000:03:00.0"


def test_ip_discovery_yields_to_rocminfo(tmp_path: Path) -> None:
    device = _amd_device(tmp_path, "73bf", slot="0000:0b:00.0")
    _gc(device, (11, 0, 0))  # deliberately wrong, to see who wins
    (gpu,) = detect(sysfs_root=device, rocminfo_text=ROCMINFO).system.gpus
    assert gpu.gfx == "gfx1030"
    assert gpu.sources == ("rocminfo", "drm", "ip_discovery")


def test_other_vendors_are_not_asked_for_ip_discovery(tmp_path: Path) -> None:
    device = tmp_path / "device"
    device.mkdir()
    (device / "uevent").write_text("DRIVER=i915\nPCI_ID=8086:A780\n")
    _gc(device, (11, 0, 0))
    dev = drm_sysfs.read_device_dir(device)
    assert dev is not None and dev.gc_version is None
    assert drm_sysfs.gpus_from_ip_discovery([dev]) == []


def test_one_uevent_parser() -> None:
    text = "DRIVER=amdgpu\nPCI_ID=1002:744C\n\nnot a pair\nPCI_SLOT_NAME = 0000:03:00.0\n"
    assert drm_sysfs.parse_uevent(text) == {
        "DRIVER": "amdgpu",
        "PCI_ID": "1002:744C",
        "PCI_SLOT_NAME": "0000:03:00.0",
    }
    assert drm_sysfs.parse_uevent(None) == {}


def test_read_uevent_of_a_missing_directory(tmp_path: Path) -> None:
    assert drm_sysfs.read_uevent(tmp_path / "nowhere") == {}


def test_detect_inventory_on_a_captured_tree(tmp_path: Path) -> None:
    device = _amd_device(tmp_path, "73bf", slot="0000:0b:00.0")
    inventory = detect_inventory(sysfs_root=device, rocminfo_text=ROCMINFO)
    assert isinstance(inventory, Inventory) and not inventory.live
    assert inventory.detected_at > 0
    (gpu,) = inventory.gpus
    assert inventory.gpu_by_bdf("0000:0B:00.0") == gpu
    # A captured tree says nothing about this host: only rocminfo's own findings count.
    assert inventory.host.kfd_present is None and inventory.host.user is None
    assert inventory.host.env == {}


def test_detect_inventory_of_a_captured_failing_rocminfo(shared_fixtures: Path, tmp_path) -> None:
    text = (shared_fixtures / "tools/rocminfo_error_wsl_out_of_resources_rocm6.4.2.txt").read_text()
    inventory = detect_inventory(sysfs_root=tmp_path, rocminfo_text=text)
    assert inventory.host.hsa_status == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"
    assert inventory.host.wsl and not inventory.gpus
