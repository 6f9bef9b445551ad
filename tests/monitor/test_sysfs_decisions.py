"""Every decision of the amdgpu sysfs source, with exact values at its boundaries (issue 19).

The cases no recorded tree has: 100 % busy, both power files, ``pwm1_max`` other than 255,
a GPU "suspending", an "Unknown" link speed, card10 after card2, two cards on one PCI slot.
What the kernel writes, as pinned here:

- ``power1_average`` (average power) and ``power1_input`` (instantaneous power): "Some GPUs
  provide support for current power, some average power, and some both" (the amdgpu patch
  that added ``power1_input``). Both are the SoC's power in microwatts; the average wins,
  as it does in rocm-smi, so a panel refreshed once a second shows a steady figure.
- ``pwm1`` is a duty level from ``pwm1_min`` to ``pwm1_max`` (amdgpu writes 255), so the
  percentage divides by ``pwm1_max`` as read.
- ``power/runtime_status`` is one of active, resuming, suspended, suspending, error or
  unsupported (the runtime PM core's words): suspended and suspending are asleep.
- ``current_link_speed`` is "Unknown" when the PCI core cannot tell (``pci_speed_string``).

The trees are the ones tests/monitor/test_sysfs_faults.py builds (a plausible RDNA3 device
in tmp_path), with one file changed per case.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.machine import pci_ids
from rocmpanel.machine.drm_sysfs import DrmDevice
from rocmpanel.machine.ip_discovery import GcVersion
from rocmpanel.monitor import sysfs_source
from rocmpanel.monitor.ranges import check_gpu
from rocmpanel.monitor.sample import GpuIdentity
from rocmpanel.monitor.source import Capabilities
from rocmpanel.monitor.sysfs_probe import GpuFiles, TempFiles, probe_gpu
from rocmpanel.monitor.sysfs_source import (
    SysfsGpu,
    SysfsSource,
    discover_gpus,
    gpus_for,
    identify,
)

SLOT = "0000:03:00.0"
HWMON = "hwmon/hwmon3"


def _faults_module() -> ModuleType:
    """test_sysfs_faults.py, loaded by path (tests/ is not a package): its tree builder."""
    name = "rocmpanel_tests_sysfs_faults"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).with_name("test_sysfs_faults.py")
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


make_gpu: Callable[..., Path] = _faults_module().make_gpu
write: Callable[[Path, str], None] = _faults_module().write


def hw(name: str) -> str:
    """The make_gpu override key of an hwmon file ("temp1_input")."""
    return f"{HWMON}/{name}"


def gpu_of(root: Path, **files: str | None) -> SysfsGpu:
    make_gpu(root, **files)
    (gpu,) = discover_gpus(root)
    return gpu


def device(**fields: object) -> DrmDevice:
    values: dict[str, object] = {
        "card": "card0",
        "vendor_id": "1002",
        "device_id": "744c",
        "slot": SLOT,
        "driver": "amdgpu",
        "vram_total": None,
        "product_name": None,
        "pci_class": "030000",
    }
    values.update(fields)
    return DrmDevice(**values)  # type: ignore[arg-type]


# -- the cases ----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "kept"), [("100\n", 100.0), ("99\n", 99.0), ("0\n", 0.0)])
def test_busy_at_the_top_and_bottom_of_the_range(tmp_path: Path, text: str, kept: float) -> None:
    s = gpu_of(tmp_path, gpu_busy_percent=text, mem_busy_percent=text).read()
    assert (s.busy_percent, s.mem_busy_percent) == (kept, kept)
    checked = check_gpu(s)
    assert (checked.busy_percent, checked.invalid) == (kept, ())


def test_busy_over_100_is_read_then_dropped_with_its_reason(tmp_path: Path) -> None:
    s = gpu_of(tmp_path, gpu_busy_percent="101\n").read()
    assert s.busy_percent == 101.0  # read as written: monitor.ranges decides
    checked = check_gpu(s)
    assert checked.busy_percent is None
    assert dict(checked.invalid) == {
        "busy_percent": "101 % is outside the physical range 0 to 100 %"
    }


def test_both_power_files_the_average_wins(tmp_path: Path) -> None:
    gpu = gpu_of(tmp_path, **{hw("power1_average"): "95500000\n"})
    assert gpu.files.power == str(tmp_path / "class/drm/card0/device" / HWMON / "power1_average")
    assert gpu.read().power_w == 95.5  # not power1_input's 150 W


def test_power_input_alone_is_read(tmp_path: Path) -> None:
    s = gpu_of(tmp_path, **{hw("power1_input"): "1000000\n"}).read()
    assert (s.power_w, s.power_cap_w) == (1.0, 300.0)


def test_no_power_file_is_no_power(tmp_path: Path) -> None:
    gpu = gpu_of(tmp_path, **{hw("power1_input"): None, hw("power1_cap"): None})
    assert (gpu.files.power, gpu.files.power_cap) == (None, None)
    s = gpu.read()
    assert (s.power_w, s.power_cap_w) == (None, None)


@pytest.mark.parametrize(
    ("pwm", "pwm_max", "percent"),
    [
        ("100\n", "200\n", 50.0),  # pwm1_max is not 255: the percentage follows it
        ("100\n", None, 39.2),  # no pwm1_max: amdgpu's 255
        ("255\n", "255\n", 100.0),
        ("0\n", "255\n", 0.0),  # a stopped fan is 0 %, not "no reading"
        ("1\n", "3\n", 33.3),  # one decimal
        ("128\n", "0\n", None),  # a zero maximum is no reading, not a division by zero
        (None, "255\n", None),
        ("128\n", "x\n", None),  # pwm1_max unreadable
    ],
)
def test_fan_percent_divides_by_pwm1_max(
    tmp_path: Path, pwm: str | None, pwm_max: str | None, percent: float | None
) -> None:
    s = gpu_of(tmp_path, **{hw("pwm1"): pwm, hw("pwm1_max"): pwm_max}).read()
    assert s.fan_percent == percent


@pytest.mark.parametrize(
    ("status", "asleep"),
    [
        ("suspending", True),
        ("suspended", True),
        ("active", False),
        ("resuming", False),  # waking already: reading waits for it, wakes nothing
        ("unsupported", False),  # runtime PM is off for this device: always awake
    ],
)
def test_runtime_status_decides_asleep(tmp_path: Path, status: str, asleep: bool) -> None:
    gpu = gpu_of(tmp_path, power__runtime_status=f"{status}\n")
    assert gpu.is_asleep() is asleep
    s = gpu.read()
    assert s.asleep is asleep
    assert s.busy_percent == (None if asleep else 42.0)
    assert s.temp_edge_c == (None if asleep else 60.0)


def test_no_runtime_status_file_is_awake(tmp_path: Path) -> None:
    gpu = gpu_of(tmp_path, power__runtime_status=None)
    assert gpu.files.runtime_status is None
    assert not gpu.is_asleep()
    assert gpu.read().busy_percent == 42.0


def test_an_asleep_sample_has_the_memory_figures_and_the_limits_read_before(
    tmp_path: Path,
) -> None:
    device_dir = make_gpu(
        tmp_path,
        mem_info_vis_vram_total="268435456\n",
        mem_info_vis_vram_used="16777216\n",
        **{hw("temp3_label"): "mem\n", hw("temp3_input"): "84000\n", hw("temp3_crit"): "105000\n"},
    )
    (gpu,) = discover_gpus(tmp_path)
    awake = gpu.read()  # awake: the crit limits are read
    assert (awake.temp_mem_c, awake.crit_mem_c) == (84.0, 105.0)
    write(device_dir / "power/runtime_status", "suspending\n")
    s = gpu.read()
    assert s.asleep
    assert (s.vram_used_bytes, s.vram_total_bytes) == (1073741824, 21458059264)
    assert (s.vis_vram_used_bytes, s.vis_vram_total_bytes) == (16777216, 268435456)
    assert (s.gtt_used_bytes, s.gtt_total_bytes) == (52428800, 33554432000)
    assert (s.crit_edge_c, s.crit_junction_c, s.crit_mem_c) == (100.0, 110.0, 105.0)
    assert (s.temp_edge_c, s.power_w, s.fan_percent, s.link, s.perf_level) == (
        None,
        None,
        None,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("speed", "width", "link"),
    [
        ("Unknown\n", "16\n", None),  # the PCI core's word when it cannot tell
        ("Unknown speed\n", "16\n", None),  # the word of kernels before 4.20
        ("16.0 GT/s PCIe\n", "16\n", "16.0 GT/s x16"),
        ("32.0 GT/s PCIe\n", "8\n", "32.0 GT/s x8"),
        ("8 GT/s\n", "4\n", "8 GT/s x4"),  # kernels before 4.20 wrote no "PCIe"
        ("2.5 GT/s PCIe\n", None, "2.5 GT/s"),  # no width file
        ("2.5 GT/s PCIe\n", "0\n", "2.5 GT/s"),
        (None, "16\n", None),
    ],
)
def test_link_text(tmp_path: Path, speed: str | None, width: str | None, link: str | None) -> None:
    s = gpu_of(tmp_path, current_link_speed=speed, current_link_width=width).read()
    assert s.link == link


def test_card10_comes_after_card2(tmp_path: Path) -> None:
    for card, slot in (("card10", "0000:0c:00.0"), ("card2", "0000:03:00.0"), ("card1", None)):
        uevent = "DRIVER=amdgpu\nPCI_ID=1002:744C\n" + (f"PCI_SLOT_NAME={slot}\n" if slot else "")
        make_gpu(tmp_path, card, uevent=uevent)
    gpus = discover_gpus(tmp_path)
    assert [(g.identity.card, g.identity.key) for g in gpus] == [
        ("card1", "card1"),  # no slot: the card name is the key
        ("card2", "0000:03:00.0"),
        ("card10", "0000:0c:00.0"),
    ]


def test_two_cards_on_one_slot_keep_apart(tmp_path: Path) -> None:
    for card in ("card0", "card1", "card2"):
        make_gpu(tmp_path, card)  # three captured trees, all from a 0000:03:00.0
    gpus = discover_gpus(tmp_path)
    assert [g.identity.key for g in gpus] == [SLOT, f"{SLOT} (card1)", f"{SLOT} (card2)"]
    assert [g.identity.pci_slot for g in gpus] == [SLOT, SLOT, SLOT]
    assert [g.files.device for g in gpus] == [
        str(tmp_path / "class/drm" / card / "device") for card in ("card0", "card1", "card2")
    ]


# -- what one tick reads ----------------------------------------------------------------------


def test_raw_sentinels_are_none_before_any_range_check(tmp_path: Path) -> None:
    s = gpu_of(
        tmp_path,
        **{
            hw("temp2_input"): "65535000\n",  # 0xFFFF degrees, once scaled
            hw("power1_input"): "4294967295\n",
            hw("fan1_input"): "65535\n",
        },
    ).read()
    assert (s.temp_edge_c, s.power_w, s.fan_rpm) == (None, None, None)
    assert s.temp_junction_c == 71.0


def test_figures_are_scaled_exactly(tmp_path: Path) -> None:
    s = gpu_of(
        tmp_path,
        **{
            hw("temp1_input"): "71500\n",
            hw("power1_input"): "150250000\n",
            hw("power1_cap"): "1000000\n",
            hw("freq1_label"): "sclk\n",
            hw("freq1_input"): "2105000000\n",
            hw("freq2_label"): "mclk\n",
            hw("freq2_input"): "1249500000\n",
        },
    ).read()
    assert (s.temp_junction_c, s.power_w, s.power_cap_w) == (71.5, 150.25, 1.0)
    assert (s.sclk_mhz, s.mclk_mhz) == (2105.0, 1249.5)
    assert (s.fan_rpm, s.perf_level) == (1200, "auto")


@pytest.mark.parametrize(
    ("table", "mhz"),
    [
        ("0: 500Mhz *\n1: 2660Mhz \n", 500.0),  # the first level
        ("0: 255Mhz\n1: 0Mhz *\n2: 1841Mhz\n", 0.0),  # RDNA3 asleep between levels
        ("0: 300MHz\n  1: 600MHz *\n", 600.0),
        ("0: 500Mhz\n1: 2400Mhz\n", None),  # no current level
        ("S: 19Mhz *\n0: 500Mhz\n", None),  # not a numbered level
        ("", None),
    ],
)
def test_dpm_table_star_level(tmp_path: Path, table: str, mhz: float | None) -> None:
    s = gpu_of(tmp_path, pp_dpm_sclk=table, pp_dpm_mclk=None).read()
    assert (s.sclk_mhz, s.mclk_mhz) == (mhz, None)


def test_totals_are_read_once_and_retried_until_they_read(tmp_path: Path) -> None:
    device_dir = make_gpu(tmp_path, mem_info_gtt_total="garbage\n")
    (gpu,) = discover_gpus(tmp_path)
    s = gpu.read()
    assert (s.vram_total_bytes, s.gtt_total_bytes) == (21458059264, None)
    write(device_dir / "mem_info_vram_total", "1\n")
    write(device_dir / "mem_info_gtt_total", "33554432000\n")
    write(device_dir / "mem_info_vram_used", "2\n")
    s = gpu.read()
    assert (s.vram_total_bytes, s.gtt_total_bytes) == (21458059264, 33554432000)
    assert s.vram_used_bytes == 2  # used figures are read every tick


def test_crit_limits_read_once_when_complete(tmp_path: Path) -> None:
    # junction (temp1) has no crit file at all: that does not make the limits incomplete.
    device_dir = make_gpu(tmp_path, **{hw("temp1_crit"): None})
    (gpu,) = discover_gpus(tmp_path)
    s = gpu.read()
    assert (s.crit_edge_c, s.crit_junction_c) == (100.0, None)
    write(device_dir / HWMON / "temp2_crit", "95000\n")
    assert gpu.read().crit_edge_c == 100.0


def test_crit_limits_are_read_again_while_one_fails(tmp_path: Path) -> None:
    device_dir = make_gpu(tmp_path, **{hw("temp1_crit"): "busy\n"})
    (gpu,) = discover_gpus(tmp_path)
    s = gpu.read()
    assert (s.crit_edge_c, s.crit_junction_c) == (100.0, None)
    write(device_dir / HWMON / "temp1_crit", "105000\n")
    write(device_dir / HWMON / "temp2_crit", "95000\n")
    s = gpu.read()
    assert (s.crit_edge_c, s.crit_junction_c) == (95.0, 105.0)
    write(device_dir / HWMON / "temp2_crit", "90000\n")
    assert gpu.read().crit_edge_c == 95.0  # complete now: read no more


def test_the_source_reads_every_gpu_in_order(tmp_path: Path) -> None:
    make_gpu(tmp_path, "card0")
    make_gpu(
        tmp_path,
        "card1",
        uevent="DRIVER=amdgpu\nPCI_ID=1002:73BF\nPCI_SLOT_NAME=0000:0c:00.0\n",
        gpu_busy_percent="3\n",
    )
    source = SysfsSource(discover_gpus(tmp_path))
    assert source.capabilities == Capabilities(
        "amdgpu sysfs", temperatures=True, power=True, clocks=True, fan=True
    )
    assert source.capabilities.min_interval_s == 0.0
    assert [i.key for i in source.identities()] == [SLOT, "0000:0c:00.0"]
    assert [(s.identity.card, s.busy_percent) for s in source.read()] == [
        ("card0", 42.0),
        ("card1", 3.0),
    ]
    source.close()  # plain files: nothing held, so the source still reads
    assert isinstance(source.identities(), tuple) and isinstance(source.read(), tuple)


# -- what the probe finds ---------------------------------------------------------------------


def test_probe_lists_every_file_of_a_full_device(tmp_path: Path) -> None:
    dev = make_gpu(
        tmp_path,
        **{
            hw("temp1_emergency"): "115000\n",
            hw("temp3_label"): "mem\n",
            hw("temp3_input"): "80000\n",
            hw("power1_average"): "120000000\n",
            hw("freq1_label"): "sclk\n",
            hw("freq1_input"): "2105000000\n",
            "mem_info_vis_vram_total": "268435456\n",
            "mem_info_vis_vram_used": "16777216\n",
        },
    )
    h = dev / HWMON
    assert probe_gpu(dev) == GpuFiles(
        device=str(dev),
        runtime_status=str(dev / "power/runtime_status"),
        busy=str(dev / "gpu_busy_percent"),
        mem_busy=str(dev / "mem_busy_percent"),
        vram_used=str(dev / "mem_info_vram_used"),
        vram_total=str(dev / "mem_info_vram_total"),
        vis_vram_used=str(dev / "mem_info_vis_vram_used"),
        vis_vram_total=str(dev / "mem_info_vis_vram_total"),
        gtt_used=str(dev / "mem_info_gtt_used"),
        gtt_total=str(dev / "mem_info_gtt_total"),
        hwmon=str(h),
        temps=(
            TempFiles("edge", str(h / "temp2_input"), str(h / "temp2_crit"), None),
            TempFiles(
                "junction",
                str(h / "temp1_input"),
                str(h / "temp1_crit"),
                str(h / "temp1_emergency"),
            ),
            TempFiles("mem", str(h / "temp3_input"), None, None),
        ),
        power=str(h / "power1_average"),
        power_cap=str(h / "power1_cap"),
        sclk=str(h / "freq1_input"),
        mclk=None,
        sclk_dpm=None,  # the hwmon clock is read instead
        mclk_dpm=str(dev / "pp_dpm_mclk"),
        fan_rpm=str(h / "fan1_input"),
        pwm=str(h / "pwm1"),
        pwm_max=str(h / "pwm1_max"),
        link_speed=str(dev / "current_link_speed"),
        link_width=str(dev / "current_link_width"),
        perf_level=str(dev / "power_dpm_force_performance_level"),
    )


def test_probe_of_a_device_without_hwmon(tmp_path: Path) -> None:
    dev = tmp_path / "bare"
    write(dev / "gpu_busy_percent", "5\n")
    files = probe_gpu(dev)
    assert (files.hwmon, files.temps, files.power, files.power_cap) == (None, (), None, None)
    assert (files.fan_rpm, files.pwm, files.pwm_max, files.sclk, files.mclk) == (None,) * 5
    assert (files.busy, files.sclk_dpm, files.runtime_status) == (
        str(dev / "gpu_busy_percent"),
        None,
        None,
    )
    write(dev / "hwmon/README", "not a hwmon directory\n")  # an empty hwmon folder
    assert probe_gpu(dev).hwmon is None


def test_probe_takes_the_first_hwmon_directory_by_name(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    write(dev / "hwmon/hwmon5/temp1_input", "50000\n")
    write(dev / "hwmon/hwmon4/temp1_input", "40000\n")
    assert probe_gpu(dev).hwmon == str(dev / "hwmon/hwmon4")


@pytest.mark.parametrize(
    ("labels", "found"),
    [
        # unlabelled: amdgpu's order edge, junction, mem (temp1 to temp3)
        ({1: None, 2: None, 3: None}, {"edge": 1, "junction": 2, "mem": 3}),
        ({3: None}, {"mem": 3}),
        ({4: None}, {}),  # a fourth unlabelled sensor has no name
        ({0: None}, {}),  # hwmon numbers its channels from 1
        ({1: "edge", 2: "edge"}, {"edge": 1}),  # the first one of a label wins
        ({1: "vddgfx", 2: "junction"}, {"junction": 2}),  # not a temperature we show
        ({9: "mem"}, {"mem": 9}),
        ({10: "mem"}, {}),
    ],
)
def test_probe_names_temperature_sensors(
    tmp_path: Path, labels: dict[int, str | None], found: dict[str, int]
) -> None:
    h = tmp_path / "dev/hwmon/hwmon0"
    for index, label in labels.items():
        write(h / f"temp{index}_input", f"{index}000\n")
        if label is not None:
            write(h / f"temp{index}_label", f"{label}\n")
    temps = probe_gpu(tmp_path / "dev").temps
    assert {t.sensor: t.input for t in temps} == {
        sensor: str(h / f"temp{index}_input") for sensor, index in found.items()
    }
    assert [t.sensor for t in temps] == [s for s in ("edge", "junction", "mem") if s in found]


def test_probe_clock_labels_at_freq1_and_freq2(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    write(dev / "hwmon/hwmon0/freq1_label", "mclk\n")
    write(dev / "hwmon/hwmon0/freq1_input", "1000000000\n")
    write(dev / "hwmon/hwmon0/freq2_label", "sclk\n")
    write(dev / "hwmon/hwmon0/freq2_input", "2000000000\n")
    write(dev / "hwmon/hwmon0/freq3_label", "fclk\n")
    write(dev / "pp_dpm_sclk", "0: 500Mhz *\n")
    write(dev / "pp_dpm_mclk", "0: 96Mhz *\n")
    files = probe_gpu(dev)
    assert files.sclk == str(dev / "hwmon/hwmon0/freq2_input")
    assert files.mclk == str(dev / "hwmon/hwmon0/freq1_input")
    assert (files.sclk_dpm, files.mclk_dpm) == (None, None)
    (dev / "hwmon/hwmon0/freq2_input").unlink()  # a label without its reading
    files = probe_gpu(dev)
    assert (files.sclk, files.sclk_dpm) == (None, str(dev / "pp_dpm_sclk"))


# -- which GPUs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("driver", "vendor", "amdgpu"),
    [
        ("amdgpu", "1002", True),
        ("radeon", "1002", False),  # AMD's, but the old driver: no amdgpu sysfs
        ("vfio-pci", "1002", False),
        (None, "1002", True),  # no driver named: AMD's is taken
        (None, "10de", False),
        ("amdgpu", "10de", True),  # the driver's word wins
    ],
)
def test_which_devices_are_amdgpu(driver: str | None, vendor: str, amdgpu: bool) -> None:
    assert sysfs_source._is_amdgpu(device(driver=driver, vendor_id=vendor)) is amdgpu


def test_identity_names_and_gfx_in_order_of_trust() -> None:
    gc = GcVersion(11, 0, 3)
    kfd = {SLOT: "gfx1101"}
    full = identify(device(product_name="Radeon RX 7900 XTX", gc_version=gc), kfd)
    assert full == GpuIdentity(SLOT, "card0", SLOT, "1002:744c", "Radeon RX 7900 XTX", "gfx1101")
    table = identify(device(), {"0000:0c:00.0": "gfx1030"})
    assert (table.name, table.gfx) == (
        "AMD Radeon RX 7900 XT / 7900 XTX / 7900 GRE / 7900M (Navi 31)",
        "gfx1100",
    )
    ip = identify(device(gc_version=GcVersion(11, 0, 2)), {})
    assert ip.gfx == "gfx1102"
    unknown = identify(device(device_id="fff0"), {})
    assert (unknown.name, unknown.gfx) == ("AMD GPU 1002:fff0", None)
    no_id = identify(device(vendor_id=None, device_id=None, slot=None, card="card3"), {})
    assert no_id == GpuIdentity("card3", "card3", None, None, "AMD GPU (card3)", None)


def test_a_broken_pci_table_leaves_the_plain_name(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(pci_id: str | None) -> pci_ids.PciEntry | None:
        raise PanelError("The PCI-id table is damaged.", "line 3: not a mapping")

    monkeypatch.setattr(pci_ids, "lookup", broken)
    with caplog.at_level(logging.WARNING, logger=sysfs_source.__name__):
        ident = identify(device(), {})
    assert (ident.name, ident.gfx) == ("AMD GPU 1002:744c", None)
    assert [r.getMessage() for r in caplog.records] == [
        "The PCI-id table is damaged. line 3: not a mapping"
    ]


def test_discovery_reads_kfd_only_when_there_is_an_amd_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []

    def read_nodes(root: Path) -> list[object]:
        calls.append(root)
        return []

    monkeypatch.setattr(sysfs_source, "read_nodes", read_nodes)
    make_gpu(tmp_path, uevent="DRIVER=i915\nPCI_ID=8086:A780\nPCI_SLOT_NAME=0000:00:02.0\n")
    assert discover_gpus(tmp_path) == [] and calls == []
    assert gpus_for([GpuIdentity("x", "card0", None, None, "Intel")], tmp_path)[0] == []
    assert calls == []


def want(card: str | None, slot: str | None, name: str = "", **kw: str | None) -> GpuIdentity:
    return GpuIdentity(slot or card or name, card, slot, kw.get("pci_id"), name, kw.get("gfx"))


def test_gpus_for_finds_by_slot_whatever_its_case(tmp_path: Path) -> None:
    make_gpu(
        tmp_path, "card1", uevent="DRIVER=amdgpu\nPCI_ID=1002:744C\nPCI_SLOT_NAME=0000:0c:00.0\n"
    )
    found, missing = gpus_for([want("card0", "0000:0C:00.0", "RX")], tmp_path)
    assert [(g.identity.card, g.identity.pci_slot, g.identity.name) for g in found] == [
        ("card1", "0000:0C:00.0", "RX")
    ]
    assert missing == []


def test_gpus_for_fills_what_the_inventory_lacks(tmp_path: Path) -> None:
    make_gpu(tmp_path, "card0")
    (gpu,), missing = gpus_for([want("card0", None)], tmp_path)  # by card name, no slot
    assert gpu.identity == GpuIdentity(
        "card0",
        "card0",
        SLOT,
        "1002:744c",
        "AMD Radeon RX 7900 XT / 7900 XTX / 7900 GRE / 7900M (Navi 31)",
        "gfx1100",
    )
    assert missing == []
    (gpu,), _ = gpus_for([want("card0", SLOT, "Mine", pci_id="1002:7448", gfx="gfx1100")], tmp_path)
    assert (gpu.identity.pci_id, gpu.identity.name, gpu.identity.gfx) == (
        "1002:7448",
        "Mine",
        "gfx1100",
    )


def test_gpus_for_a_moved_card_number_is_missing(tmp_path: Path) -> None:
    make_gpu(tmp_path, "card0")
    moved = want("card0", "0000:2f:00.0", "RX 6800")  # card0 is another GPU now
    assert gpus_for([moved], tmp_path) == ([], [moved])


def test_gpus_for_a_device_without_slot_is_found_by_name(tmp_path: Path) -> None:
    make_gpu(tmp_path, "card0", uevent="DRIVER=amdgpu\nPCI_ID=1002:744C\n")
    (gpu,), missing = gpus_for([want("card0", SLOT, "RX")], tmp_path)
    assert (gpu.identity.card, gpu.identity.pci_slot, missing) == ("card0", SLOT, [])


def test_gpus_for_another_driver_is_missing(tmp_path: Path) -> None:
    make_gpu(tmp_path, "card0", uevent=f"DRIVER=vfio-pci\nPCI_ID=1002:744C\nPCI_SLOT_NAME={SLOT}\n")
    wanted = [want("card0", SLOT, "RX"), want("card9", None, "gone")]
    assert gpus_for(wanted, tmp_path) == ([], wanted)


def test_gpus_for_two_cards_on_one_slot_each_keeps_its_card(tmp_path: Path) -> None:
    slot = "0000:0c:00.0"
    uevent = f"DRIVER=amdgpu\nPCI_ID=1002:744C\nPCI_SLOT_NAME={slot}\n"
    make_gpu(tmp_path, "card0", uevent=uevent)
    # another captured tree from the same slot
    make_gpu(tmp_path, "card1", uevent=uevent, gpu_busy_percent="3\n")
    found, missing = gpus_for([want("card0", slot, "A"), want("card1", slot, "B")], tmp_path)
    assert [(g.identity.name, g.identity.card, g.read().busy_percent) for g in found] == [
        ("A", "card0", 42.0),
        ("B", "card1", 3.0),
    ]
    assert missing == []


def test_the_live_tree_is_sys(monkeypatch: pytest.MonkeyPatch) -> None:
    roots: list[Path] = []

    def scan(root: Path) -> list[DrmDevice]:
        roots.append(root)
        return []

    monkeypatch.setattr(sysfs_source, "scan_drm", scan)
    assert discover_gpus() == [] and gpus_for([]) == ([], [])
    assert roots == [Path("/sys"), Path("/sys")]
