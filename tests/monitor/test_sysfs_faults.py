"""The amdgpu sysfs source under faults: every failure is "n/a" for one tick, never a raise.

The device directories here are built by the tests (small, synthetic, in tmp_path).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from rocmpanel.machine import sysfs as sysfs_reader
from rocmpanel.machine.drm_sysfs import DrmDevice
from rocmpanel.machine.gfx import gfx_from_kfd as gfx_name
from rocmpanel.monitor import sysfs_source
from rocmpanel.monitor.ranges import check_gpu
from rocmpanel.monitor.sysfs_source import discover_gpus


def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())


def make_gpu(root: Path, card: str = "card0", **overrides: str | None) -> Path:
    """A plausible RDNA3 device dir under root/class/drm/<card>/device; None removes a file."""
    device = root / "devices" / card
    files: dict[str, str | None] = {
        "uevent": "DRIVER=amdgpu\nPCI_ID=1002:744C\nPCI_SLOT_NAME=0000:03:00.0\n",
        "gpu_busy_percent": "42\n",
        "mem_busy_percent": "7\n",
        "mem_info_vram_total": "21458059264\n",
        "mem_info_vram_used": "1073741824\n",
        "mem_info_gtt_total": "33554432000\n",
        "mem_info_gtt_used": "52428800\n",
        "current_link_speed": "16.0 GT/s PCIe\n",
        "current_link_width": "16\n",
        "power_dpm_force_performance_level": "auto\n",
        "pp_dpm_sclk": "0: 500Mhz\n1: 1900Mhz *\n2: 2400Mhz\n",
        "pp_dpm_mclk": "0: 96Mhz\n1: 1249Mhz *\n",
        "pcie_bw": "0 0 128\n",
        "power/runtime_status": "active\n",
        "hwmon/hwmon3/temp1_label": "junction\n",
        "hwmon/hwmon3/temp1_input": "71000\n",
        "hwmon/hwmon3/temp1_crit": "110000\n",
        "hwmon/hwmon3/temp2_label": "edge\n",
        "hwmon/hwmon3/temp2_input": "60000\n",
        "hwmon/hwmon3/temp2_crit": "100000\n",
        "hwmon/hwmon3/power1_input": "150000000\n",
        "hwmon/hwmon3/power1_cap": "300000000\n",
        "hwmon/hwmon3/fan1_input": "1200\n",
        "hwmon/hwmon3/pwm1": "128\n",
        "hwmon/hwmon3/pwm1_max": "255\n",
    }
    files.update({k.replace("__", "/"): v for k, v in overrides.items()})
    for name, text in files.items():
        if text is not None:
            write(device / name, text)
    link = root / "class" / "drm" / card
    link.mkdir(parents=True, exist_ok=True)
    (link / "device").symlink_to(device, target_is_directory=True)
    return device


def only_gpu(root: Path) -> sysfs_source.SysfsGpu:
    (gpu,) = discover_gpus(root)
    return gpu


def test_healthy_device_reads_every_figure(tmp_path: Path) -> None:
    make_gpu(tmp_path)
    s = only_gpu(tmp_path).read()
    assert (s.busy_percent, s.mem_busy_percent) == (42.0, 7.0)
    assert (s.vram_used_bytes, s.vram_total_bytes) == (1073741824, 21458059264)
    assert (s.temp_edge_c, s.temp_junction_c, s.temp_mem_c) == (60.0, 71.0, None)
    assert (s.crit_edge_c, s.crit_junction_c) == (100.0, 110.0)
    assert (s.power_w, s.power_cap_w) == (150.0, 300.0)  # power1_input when no average
    assert (s.sclk_mhz, s.mclk_mhz) == (1900.0, 1249.0)  # the * level of pp_dpm_*
    assert (s.fan_rpm, s.fan_percent) == (1200, 50.2)
    assert s.link == "16.0 GT/s x16"
    assert s.perf_level == "auto"
    assert not s.asleep


def test_nul_padding_is_stripped(tmp_path: Path) -> None:
    make_gpu(tmp_path, gpu_busy_percent=b"17\n".ljust(4096, b"\0").decode())
    assert only_gpu(tmp_path).read().busy_percent == 17.0


@pytest.mark.parametrize("code", [errno.EBUSY, errno.EPERM, errno.ENODATA, errno.EIO])
@pytest.mark.parametrize("stage", ["open", "read"])
def test_errno_on_one_file_is_none_for_that_tick(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, stage: str
) -> None:
    make_gpu(tmp_path)
    gpu = only_gpu(tmp_path)
    real_open, real_read = os.open, os.read
    failing: set[int] = set()

    def fake_open(path: str, flags: int, *args: int) -> int:
        if str(path).endswith("temp2_input") and stage == "open":
            raise OSError(code, os.strerror(code))
        fd = real_open(path, flags, *args)
        if str(path).endswith("temp2_input"):
            failing.add(fd)
        return fd

    def fake_read(fd: int, n: int) -> bytes:
        if fd in failing:
            failing.discard(fd)
            raise OSError(code, os.strerror(code))
        return real_read(fd, n)

    monkeypatch.setattr(sysfs_reader.os, "open", fake_open)
    monkeypatch.setattr(sysfs_reader.os, "read", fake_read)
    s = gpu.read()
    assert s.temp_edge_c is None
    assert s.temp_junction_c == 71.0  # the other files still read
    monkeypatch.undo()
    assert gpu.read().temp_edge_c == 60.0  # and the next tick recovers


def test_vanishing_file_is_none_then_comes_back(tmp_path: Path) -> None:
    device = make_gpu(tmp_path)
    gpu = only_gpu(tmp_path)
    (device / "hwmon/hwmon3/fan1_input").unlink()
    (device / "gpu_busy_percent").unlink()
    s = gpu.read()
    assert (s.fan_rpm, s.busy_percent) == (None, None)
    assert s.power_w == 150.0
    write(device / "gpu_busy_percent", "5\n")
    assert gpu.read().busy_percent == 5.0


def test_whole_device_vanishing_never_raises(tmp_path: Path) -> None:
    device = make_gpu(tmp_path)
    gpu = only_gpu(tmp_path)
    gpu.read()
    for path in sorted(device.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    s = gpu.read()
    assert s.busy_percent is None and s.temp_edge_c is None and s.link is None


@pytest.mark.parametrize(
    ("name", "text", "attr"),
    [
        ("gpu_busy_percent", "65535", "busy_percent"),
        ("hwmon__hwmon3__temp2_input", "65535000", "temp_edge_c"),
        ("hwmon__hwmon3__temp1_input", "4294967295", "temp_junction_c"),
        ("hwmon__hwmon3__power1_input", "65535000000", "power_w"),
        ("hwmon__hwmon3__fan1_input", "65535", "fan_rpm"),
        ("gpu_busy_percent", "250", "busy_percent"),  # a percent over 100 is no reading
        ("gpu_busy_percent", "not a number", "busy_percent"),
        ("gpu_busy_percent", "", "busy_percent"),
    ],
)
def test_sentinels_and_garbage_are_none(tmp_path: Path, name: str, text: str, attr: str) -> None:
    make_gpu(tmp_path, **{name: text})
    # As the collector hands samples on: checked against physical ranges.
    assert getattr(check_gpu(only_gpu(tmp_path).read()), attr) is None


def test_suspended_gpu_is_asleep_and_not_woken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = make_gpu(tmp_path, power__runtime_status="suspended\n")
    gpu = only_gpu(tmp_path)
    opened: list[str] = []
    real_open = os.open

    def recording_open(path: str, flags: int, *args: int) -> int:
        opened.append(str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(sysfs_reader.os, "open", recording_open)
    s = gpu.read()
    assert s.asleep
    assert s.vram_used_bytes == 1073741824  # mem_info_* does not wake the GPU
    assert s.busy_percent is None and s.temp_edge_c is None and s.power_w is None
    assert opened[0].endswith("power/runtime_status")  # checked before anything else
    assert not [p for p in opened if "/hwmon/" in p or p.endswith("gpu_busy_percent")]
    # It wakes up: now everything is read, including the crit limits skipped while asleep.
    write(device / "power/runtime_status", "active\n")
    s = gpu.read()
    assert not s.asleep and s.temp_edge_c == 60.0 and s.crit_edge_c == 100.0


def test_pcie_bw_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_gpu(tmp_path)
    opened: list[str] = []
    real_open = os.open

    def recording_open(path: str, flags: int, *args: int) -> int:
        opened.append(str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(sysfs_reader.os, "open", recording_open)
    gpu = only_gpu(tmp_path)
    gpu.read()
    gpu.read()
    assert opened and not [p for p in opened if p.endswith("pcie_bw")]


def test_probe_reads_only_files_that_exist(tmp_path: Path) -> None:
    make_gpu(tmp_path, mem_busy_percent=None, hwmon__hwmon3__fan1_input=None)
    files = only_gpu(tmp_path).files
    assert files.mem_busy is None and files.fan_rpm is None
    assert files.power is not None and files.power.endswith("power1_input")
    assert files.sclk is None and files.sclk_dpm is not None  # no freq1_label here


def test_unlabelled_temps_follow_amdgpu_order_and_freq_labels_win(tmp_path: Path) -> None:
    make_gpu(
        tmp_path,
        hwmon__hwmon3__temp1_label=None,
        hwmon__hwmon3__temp2_label=None,
        hwmon__hwmon3__freq1_label="sclk\n",
        hwmon__hwmon3__freq1_input="2105000000\n",
    )
    s = only_gpu(tmp_path).read()
    assert (s.temp_edge_c, s.temp_junction_c) == (71.0, 60.0)  # temp1 edge, temp2 junction
    assert s.sclk_mhz == 2105.0 and s.mclk_mhz == 1249.0


def test_discovery_skips_other_vendors_and_reads_ids_without_uevent_pci_id(
    tmp_path: Path,
) -> None:
    make_gpu(
        tmp_path, "card0", uevent="DRIVER=i915\nPCI_ID=8086:A780\nPCI_SLOT_NAME=0000:00:02.0\n"
    )
    make_gpu(
        tmp_path,
        "card1",
        uevent="DRIVER=amdgpu\nPCI_SLOT_NAME=0000:0c:00.0\n",
        vendor="0x1002\n",
        device="0x73bf\n",
    )
    (gpu,) = discover_gpus(tmp_path)
    assert gpu.identity.card == "card1"
    assert gpu.identity.pci_id == "1002:73bf"
    # No product_name: the family name and gfx target from resources/pci_ids.yaml.
    assert "6900 XT" in gpu.identity.name and gpu.identity.gfx == "gfx1030"


def test_unknown_device_id_gets_a_plain_name(tmp_path: Path) -> None:
    make_gpu(tmp_path, uevent="DRIVER=amdgpu\nPCI_ID=1002:FFF0\nPCI_SLOT_NAME=0000:03:00.0\n")
    ident = only_gpu(tmp_path).identity
    assert (ident.name, ident.gfx) == ("AMD GPU 1002:fff0", None)


def test_missing_tree_finds_nothing(tmp_path: Path) -> None:
    assert discover_gpus(tmp_path / "nowhere") == []


def test_gfx_from_kfd_topology(tmp_path: Path) -> None:
    make_gpu(tmp_path)
    node = tmp_path / "class/kfd/kfd/topology/nodes/1"
    write(node / "gpu_id", "48612\n")
    # location_id = bus << 8 | device << 3 | function: 0000:03:00.0
    # KFD's word wins over the PCI-id table (which says gfx1100 for 744c).
    write(node / "properties", "simd_count 168\ngfx_target_version 110001\nlocation_id 768\n")
    write(tmp_path / "class/kfd/kfd/topology/nodes/0/properties", "simd_count 0\n")
    assert only_gpu(tmp_path).identity.gfx == "gfx1101"


def test_gfx_names() -> None:
    assert gfx_name(110000) == "gfx1100"
    assert gfx_name(90010) == "gfx90a"
    assert gfx_name(100300) == "gfx1030"
    assert gfx_name(0) is None


def test_discovery_reads_the_machines_one_drm_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_gpu(tmp_path)
    scanned: list[Path] = []
    real_scan = sysfs_source.scan_drm

    def spy(root: Path | str = "/sys") -> list[DrmDevice]:
        scanned.append(Path(root))
        return real_scan(root)

    monkeypatch.setattr(sysfs_source, "scan_drm", spy)
    (gpu,) = discover_gpus(tmp_path)
    found, missing = sysfs_source.gpus_for([gpu.identity], tmp_path)
    assert scanned == [tmp_path, tmp_path]
    assert [g.identity.card for g in found] == ["card0"] and not missing


def test_gfx_from_the_ip_discovery_table_when_kfd_is_silent(tmp_path: Path) -> None:
    # 744c is gfx1100 in the PCI-id table; the discovery table (GC 11.0.3) says gfx1101,
    # as the machine inventory would.
    block = "ip_discovery/die/0/GC/0"
    make_gpu(
        tmp_path,
        **{f"{block}/major": "11\n", f"{block}/minor": "0\n", f"{block}/revision": "3\n"},
    )
    assert only_gpu(tmp_path).identity.gfx == "gfx1101"


def test_discovering_a_suspended_gpu_reads_no_sensor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_gpu(tmp_path, power__runtime_status="suspended\n")
    opened: list[str] = []
    real_open = os.open

    def recording_open(path: str, flags: int, *args: int) -> int:
        opened.append(str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(sysfs_reader.os, "open", recording_open)
    only_gpu(tmp_path)
    sensors = ("_input", "busy_percent", "pp_dpm_sclk", "pp_dpm_mclk", "pcie_bw", "link_speed")
    assert opened and not [p for p in opened if p.endswith(sensors)]
