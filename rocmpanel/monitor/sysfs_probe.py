"""Which telemetry files one amdgpu device has, found once so every tick reads only those.

``probe_gpu`` looks at names only (``exists``, hwmon labels) and reads no hardware
figure; a file the GPU lacks is None in :class:`GpuFiles`. hwmon sensors are found by
their labels (``temp2_label`` = "junction"); a kernel that gives none numbers them edge,
junction, mem. Clocks come from hwmon ``freq*_input`` when labelled, else from the
``*`` level of the ``pp_dpm_*`` tables. ``pcie_bw`` is never listed: it blocks a second.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rocmpanel.machine.sysfs import read_text
from rocmpanel.monitor.sample import TEMP_SENSORS


@dataclass(frozen=True)
class TempFiles:
    """One temperature sensor: its reading and, when present, its limits."""

    sensor: str  # edge / junction / mem
    input: str
    crit: str | None
    emergency: str | None


@dataclass(frozen=True)
class GpuFiles:
    """The files one GPU has, found once by ``probe_gpu``; None where the file is absent."""

    device: str
    runtime_status: str | None
    busy: str | None
    mem_busy: str | None
    vram_used: str | None
    vram_total: str | None
    vis_vram_used: str | None
    vis_vram_total: str | None
    gtt_used: str | None
    gtt_total: str | None
    hwmon: str | None
    temps: tuple[TempFiles, ...]
    power: str | None
    power_cap: str | None
    sclk: str | None
    mclk: str | None
    sclk_dpm: str | None
    mclk_dpm: str | None
    fan_rpm: str | None
    pwm: str | None
    pwm_max: str | None
    link_speed: str | None
    link_width: str | None
    perf_level: str | None


def _existing(path: Path) -> str | None:
    return str(path) if path.exists() else None


def _find_hwmon(device: Path) -> Path | None:
    try:
        names = sorted(n for n in os.listdir(device / "hwmon") if n.startswith("hwmon"))
    except OSError:
        return None
    return device / "hwmon" / names[0] if names else None


def _probe_temps(hwmon: Path) -> tuple[TempFiles, ...]:
    found: dict[str, TempFiles] = {}
    for index in range(1, 10):
        input_path = hwmon / f"temp{index}_input"
        if not input_path.exists():
            continue
        label = read_text(hwmon / f"temp{index}_label")
        # amdgpu numbers its sensors edge, junction, mem when a kernel gives no labels.
        if label is None and index <= len(TEMP_SENSORS):
            label = TEMP_SENSORS[index - 1]
        if label not in TEMP_SENSORS or label in found:
            continue
        found[label] = TempFiles(
            label,
            str(input_path),
            _existing(hwmon / f"temp{index}_crit"),
            _existing(hwmon / f"temp{index}_emergency"),
        )
    return tuple(found[s] for s in TEMP_SENSORS if s in found)


def _probe_freq(hwmon: Path | None, wanted: str) -> str | None:
    if hwmon is None:
        return None
    for index in (1, 2):
        if read_text(hwmon / f"freq{index}_label") == wanted:
            return _existing(hwmon / f"freq{index}_input")
    return None


def probe_gpu(device_dir: Path) -> GpuFiles:
    """Find which telemetry files this GPU has. Looks at names only, reads no hardware."""
    dev = device_dir
    hwmon = _find_hwmon(dev)
    sclk = _probe_freq(hwmon, "sclk")
    mclk = _probe_freq(hwmon, "mclk")
    power = cap = fan = pwm = pwm_max = None
    temps: tuple[TempFiles, ...] = ()
    if hwmon is not None:
        temps = _probe_temps(hwmon)
        power = _existing(hwmon / "power1_average") or _existing(hwmon / "power1_input")
        cap = _existing(hwmon / "power1_cap")
        fan = _existing(hwmon / "fan1_input")
        pwm = _existing(hwmon / "pwm1")
        pwm_max = _existing(hwmon / "pwm1_max")
    return GpuFiles(
        device=str(dev),
        runtime_status=_existing(dev / "power" / "runtime_status"),
        busy=_existing(dev / "gpu_busy_percent"),
        mem_busy=_existing(dev / "mem_busy_percent"),
        vram_used=_existing(dev / "mem_info_vram_used"),
        vram_total=_existing(dev / "mem_info_vram_total"),
        vis_vram_used=_existing(dev / "mem_info_vis_vram_used"),
        vis_vram_total=_existing(dev / "mem_info_vis_vram_total"),
        gtt_used=_existing(dev / "mem_info_gtt_used"),
        gtt_total=_existing(dev / "mem_info_gtt_total"),
        hwmon=str(hwmon) if hwmon is not None else None,
        temps=temps,
        power=power,
        power_cap=cap,
        sclk=sclk,
        mclk=mclk,
        sclk_dpm=None if sclk else _existing(dev / "pp_dpm_sclk"),
        mclk_dpm=None if mclk else _existing(dev / "pp_dpm_mclk"),
        fan_rpm=fan,
        pwm=pwm,
        pwm_max=pwm_max,
        link_speed=_existing(dev / "current_link_speed"),
        link_width=_existing(dev / "current_link_width"),
        perf_level=_existing(dev / "power_dpm_force_performance_level"),
    )
