"""amdgpu telemetry from sysfs and hwmon, read in-process.

Each GPU's files are probed once (``probe_gpu``); every tick reads only what exists. The
device's ``power/runtime_status`` is read first: a runtime-suspended GPU is reported asleep
and only its ``mem_info_*`` files (which do not wake it) are read. Any failure of one file
(NUL padding, EBUSY/EPERM/ENODATA, a file that vanished, a 0xFFFF sentinel) makes that one
figure ``None`` for that tick. ``pcie_bw`` is never read: it blocks about a second.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from rocmpanel.monitor.kfd_topology import read_kfd_topology
from rocmpanel.monitor.sample import TEMP_SENSORS, GpuIdentity, GpuSample
from rocmpanel.monitor.sysfs_read import read_number, read_raw
from rocmpanel.setup import compat_data
from rocmpanel.setup.compat_data import PciEntry

log = logging.getLogger(__name__)

AMD_VENDOR = "1002"
_CARD = re.compile(r"card(\d+)$")
_DPM_LEVEL = re.compile(r"^\s*\d+:\s*(\d+)\s*[Mm][Hh]z\s*\*")


def _percent(path: str | None) -> float | None:
    value = read_number(path)
    return float(value) if value is not None and 0 <= value <= 100 else None


def _scaled(path: str | None, scale: int) -> float | None:
    value = read_number(path, scale)
    return value / scale if value is not None else None


def _dpm_current_mhz(path: str | None) -> float | None:
    """The ``*`` level of a pp_dpm_* table ("1: 31Mhz *" gives 31)."""
    text = read_raw(path) if path is not None else None
    if text is None:
        return None
    for line in text.splitlines():
        match = _DPM_LEVEL.match(line)
        if match:
            return float(match.group(1))
    return None


def _existing(path: Path) -> str | None:
    return str(path) if path.exists() else None


def parse_uevent(text: str | None) -> dict[str, str]:
    result: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            result[key.strip()] = value.strip()
    return result


@dataclass(frozen=True)
class TempFiles:
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
        label = read_raw(str(hwmon / f"temp{index}_label"))
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
        if read_raw(str(hwmon / f"freq{index}_label")) == wanted:
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


@dataclass
class _Limits:
    """Figures that do not change tick to tick, read once when they first read cleanly."""

    vram_total: int | None = None
    vis_vram_total: int | None = None
    gtt_total: int | None = None
    crit_c: dict[str, float | None] = field(default_factory=dict)
    crit_read: bool = False


class SysfsGpu:
    """One amdgpu device: its identity and probed files; ``read()`` makes a ``GpuSample``."""

    def __init__(self, identity: GpuIdentity, files: GpuFiles) -> None:
        self.identity = identity
        self.files = files
        self._limits = _Limits()

    def is_asleep(self) -> bool:
        if self.files.runtime_status is None:
            return False
        return read_raw(self.files.runtime_status) in ("suspended", "suspending")

    def read(self) -> GpuSample:
        f = self.files
        lim = self._limits
        asleep = self.is_asleep()  # first: nothing below may wake a suspended GPU
        if lim.vram_total is None:
            lim.vram_total = read_number(f.vram_total)
        if lim.vis_vram_total is None:
            lim.vis_vram_total = read_number(f.vis_vram_total)
        if lim.gtt_total is None:
            lim.gtt_total = read_number(f.gtt_total)
        crit = self._limits.crit_c
        base = GpuSample(
            self.identity,
            asleep=True,
            vram_used_bytes=read_number(f.vram_used),
            vram_total_bytes=lim.vram_total,
            vis_vram_used_bytes=read_number(f.vis_vram_used),
            vis_vram_total_bytes=lim.vis_vram_total,
            gtt_used_bytes=read_number(f.gtt_used),
            gtt_total_bytes=lim.gtt_total,
            crit_edge_c=crit.get("edge"),
            crit_junction_c=crit.get("junction"),
            crit_mem_c=crit.get("mem"),
        )
        if asleep:
            return base
        if not lim.crit_read:
            self._read_crit()
            crit = self._limits.crit_c
        temps = {t.sensor: _scaled(t.input, 1000) for t in f.temps}
        pwm = read_number(f.pwm)
        pwm_max = read_number(f.pwm_max) if f.pwm_max else 255
        return replace(
            base,
            asleep=False,
            busy_percent=_percent(f.busy),
            mem_busy_percent=_percent(f.mem_busy),
            temp_edge_c=temps.get("edge"),
            temp_junction_c=temps.get("junction"),
            temp_mem_c=temps.get("mem"),
            crit_edge_c=crit.get("edge"),
            crit_junction_c=crit.get("junction"),
            crit_mem_c=crit.get("mem"),
            power_w=_scaled(f.power, 1_000_000),
            power_cap_w=_scaled(f.power_cap, 1_000_000),
            sclk_mhz=_scaled(f.sclk, 1_000_000) if f.sclk else _dpm_current_mhz(f.sclk_dpm),
            mclk_mhz=_scaled(f.mclk, 1_000_000) if f.mclk else _dpm_current_mhz(f.mclk_dpm),
            fan_rpm=read_number(f.fan_rpm),
            fan_percent=(round(100.0 * pwm / pwm_max, 1) if pwm is not None and pwm_max else None),
            link=self._link(),
            perf_level=read_raw(f.perf_level) if f.perf_level else None,
        )

    def _read_crit(self) -> None:
        crit: dict[str, float | None] = {}
        complete = True
        for t in self.files.temps:
            value = _scaled(t.crit, 1000)
            if value is None and t.crit is not None:
                complete = False
            crit[t.sensor] = value
        self._limits.crit_c = crit
        self._limits.crit_read = complete

    def _link(self) -> str | None:
        speed = read_raw(self.files.link_speed) if self.files.link_speed else None
        width = read_number(self.files.link_width)
        if speed is None or speed.lower().startswith("unknown"):
            return None
        speed = speed.removesuffix("PCIe").strip()
        return f"{speed} x{width}" if width else speed


def _natural(name: str) -> int:
    match = _CARD.match(name)
    return int(match.group(1)) if match else 1 << 30


def _pci_entry(pci_id: str | None) -> PciEntry | None:
    """The project's PCI-id table entry (family name, gfx target), when the data loads."""
    try:
        return compat_data.load().pci_entry(pci_id)
    except Exception:  # a broken data file must not stop telemetry
        log.warning("resources/pci_ids.yaml could not be read", exc_info=True)
        return None


def identify(card: str, device: Path, sysfs_root: Path) -> GpuIdentity | None:
    """The identity of an AMD GPU's device directory, or None when it is not AMD's."""
    uevent = parse_uevent(read_raw(str(device / "uevent")))
    pci_id = uevent.get("PCI_ID", "").lower() or None
    if pci_id is None:
        vendor = (read_raw(str(device / "vendor")) or "").lower().removeprefix("0x")
        dev_id = (read_raw(str(device / "device")) or "").lower().removeprefix("0x")
        pci_id = f"{vendor}:{dev_id}" if vendor and dev_id else None
    driver = uevent.get("DRIVER")
    if driver is not None and driver != "amdgpu":  # radeon, vfio-pci, other vendors
        return None
    if driver is None and not (pci_id or "").startswith(AMD_VENDOR + ":"):
        return None
    slot = uevent.get("PCI_SLOT_NAME") or None
    product = read_raw(str(device / "product_name"))
    known = _pci_entry(pci_id)
    name = product or (known.name if known else None)
    name = name or (f"AMD GPU {pci_id}" if pci_id else f"AMD GPU ({card})")
    gfx = next((n.gfx for n in read_kfd_topology(sysfs_root) if slot and n.pci_slot == slot), None)
    gfx = gfx or (known.gfx if known else None)
    return GpuIdentity(
        key=slot or card, card=card, pci_slot=slot, pci_id=pci_id, name=name, gfx=gfx
    )


def discover_gpus(sysfs_root: Path | str = "/sys") -> list[SysfsGpu]:
    """Every amdgpu card under ``<sysfs_root>/class/drm`` (symlinks followed), probed once."""
    root = Path(sysfs_root)
    drm = root / "class" / "drm"
    try:
        cards = sorted((n for n in os.listdir(drm) if _CARD.match(n)), key=_natural)
    except OSError:
        return []
    gpus: list[SysfsGpu] = []
    keys: set[str] = set()
    for card in cards:
        device = drm / card / "device"
        if not device.is_dir():
            continue
        identity = identify(card, device, root)
        if identity is None:
            continue
        if identity.key in keys:  # two captured trees may share a slot: keep both apart
            identity = GpuIdentity(
                f"{identity.key} ({card})",
                card,
                identity.pci_slot,
                identity.pci_id,
                identity.name,
                identity.gfx,
            )
        keys.add(identity.key)
        gpus.append(SysfsGpu(identity, probe_gpu(device)))
    return gpus
