"""amdgpu telemetry from sysfs and hwmon, read in-process: the Linux :class:`GpuSource`.

Each GPU's files are probed once (:mod:`~rocmpanel.monitor.sysfs_probe`); every tick
reads only what exists. The device's ``power/runtime_status`` is read first: a
runtime-suspended GPU is reported asleep and only its ``mem_info_*`` files (which do not
wake it) are read. Any failure of one file (NUL padding, EBUSY/EPERM/ENODATA, a file
that vanished, a 0xFFFF sentinel) makes that one figure ``None`` for that tick.

Which GPUs: both read the machine's one DRM scan
(:func:`~rocmpanel.machine.drm_sysfs.scan_drm`). ``gpus_for`` takes the GPUs the app's
machine inventory lists, so the Monitor (and ``rocmpanel telemetry``) shows the same cards
under the same names as the other tabs; ``discover_gpus`` finds every amdgpu card of a
/sys-like tree on its own (captured trees, or when the machine detection failed).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP
from rocmpanel.machine import pci_ids
from rocmpanel.machine.drm_sysfs import DrmDevice, scan_drm
from rocmpanel.machine.kfd_topology import read_nodes
from rocmpanel.machine.sysfs import printable, read_int, read_text
from rocmpanel.monitor.sample import GpuIdentity, GpuSample
from rocmpanel.monitor.source import Capabilities
from rocmpanel.monitor.sysfs_probe import GpuFiles, probe_gpu

log = logging.getLogger(__name__)

CAPABILITIES = Capabilities(
    QT_TRANSLATE_NOOP("Capabilities", "amdgpu sysfs"),
    temperatures=True,
    power=True,
    clocks=True,
    fan=True,
)
_DPM_LEVEL = re.compile(r"^\s*\d+:\s*(\d+)\s*[Mm][Hh]z\s*\*")


def _percent(path: str | None) -> float | None:
    value = read_int(path)  # outside 0 to 100: monitor.ranges drops it and says why
    return float(value) if value is not None else None


def _scaled(path: str | None, scale: int) -> float | None:
    value = read_int(path, scale)
    return value / scale if value is not None else None


def _dpm_current_mhz(path: str | None) -> float | None:
    """The ``*`` level of a pp_dpm_* table ("1: 31Mhz *" gives 31)."""
    text = read_text(path)
    if text is None:
        return None
    for line in text.splitlines():
        match = _DPM_LEVEL.match(line)
        if match:
            return float(match.group(1))
    return None


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
        return read_text(self.files.runtime_status) in ("suspended", "suspending")

    def read(self) -> GpuSample:
        f = self.files
        lim = self._limits
        asleep = self.is_asleep()  # first: nothing below may wake a suspended GPU
        if lim.vram_total is None:
            lim.vram_total = read_int(f.vram_total)
        if lim.vis_vram_total is None:
            lim.vis_vram_total = read_int(f.vis_vram_total)
        if lim.gtt_total is None:
            lim.gtt_total = read_int(f.gtt_total)
        crit = lim.crit_c
        base = GpuSample(
            self.identity,
            asleep=True,
            vram_used_bytes=read_int(f.vram_used),
            vram_total_bytes=lim.vram_total,
            vis_vram_used_bytes=read_int(f.vis_vram_used),
            vis_vram_total_bytes=lim.vis_vram_total,
            gtt_used_bytes=read_int(f.gtt_used),
            gtt_total_bytes=lim.gtt_total,
            crit_edge_c=crit.get("edge"),
            crit_junction_c=crit.get("junction"),
            crit_mem_c=crit.get("mem"),
        )
        if asleep:
            return base
        if not lim.crit_read:
            self._read_crit()
            crit = lim.crit_c
        temps = {t.sensor: _scaled(t.input, 1000) for t in f.temps}
        pwm = read_int(f.pwm)
        pwm_max = read_int(f.pwm_max) if f.pwm_max else 255
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
            fan_rpm=read_int(f.fan_rpm),
            fan_percent=(round(100.0 * pwm / pwm_max, 1) if pwm is not None and pwm_max else None),
            link=self._link(),
            perf_level=printable(read_text(f.perf_level)),
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
        speed = printable(read_text(self.files.link_speed))
        width = read_int(self.files.link_width)
        if speed is None or speed.lower().startswith("unknown"):
            return None
        speed = speed.removesuffix("PCIe").strip()
        return f"{speed} x{width}" if width else speed


class SysfsSource:
    """The :class:`~rocmpanel.monitor.source.GpuSource` over a list of :class:`SysfsGpu`."""

    def __init__(self, gpus: Iterable[SysfsGpu]) -> None:
        self.gpus = list(gpus)

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def identities(self) -> tuple[GpuIdentity, ...]:
        return tuple(gpu.identity for gpu in self.gpus)

    def read(self) -> tuple[GpuSample, ...]:
        return tuple(gpu.read() for gpu in self.gpus)

    def close(self) -> None:
        return None  # plain files: nothing is held open between ticks


# -- which GPUs ---------------------------------------------------------------------------


def _is_amdgpu(dev: DrmDevice) -> bool:
    """Whether a DRM device is driven by amdgpu (not radeon, vfio-pci or another vendor's
    driver); with no driver named, whether it is AMD's."""
    if dev.driver is not None:
        return dev.driver == "amdgpu"
    return dev.vendor_id == pci_ids.AMD_VENDOR_ID


def _device_dir(root: Path, dev: DrmDevice) -> Path:
    return root / "class" / "drm" / str(dev.card) / "device"


def _pci_entry(pci_id: str | None) -> pci_ids.PciEntry | None:
    """The PCI-id table's entry (family name, gfx target), when the table loads."""
    try:
        return pci_ids.lookup(pci_id)
    except PanelError as exc:  # a broken data file must not stop telemetry
        log.warning("%s %s", exc.message, exc.detail)
        return None


def _gfx_by_slot(root: Path) -> dict[str, str]:
    return {n.bdf: n.gfx for n in read_nodes(root) if n.bdf and n.gfx}


def identify(dev: DrmDevice, gfx_by_slot: Mapping[str, str]) -> GpuIdentity:
    """The identity of an amdgpu device (callers keep to those: :func:`_is_amdgpu`)."""
    card = str(dev.card)
    pci_id = dev.pci_id
    slot = dev.slot
    known = _pci_entry(pci_id)
    name = dev.product_name or (known.name if known else None)
    name = name or (f"AMD GPU {pci_id}" if pci_id else f"AMD GPU ({card})")
    # KFD's word on the gfx target wins, then the IP discovery table's, then the PCI-id
    # table's (a table entry covers a family): the order of the machine inventory.
    gfx = (
        (gfx_by_slot.get(slot) if slot else None)
        or (dev.gc_version.gfx if dev.gc_version else None)
        or (known.gfx if known else None)
    )
    return GpuIdentity(
        key=slot or card, card=card, pci_slot=slot, pci_id=pci_id, name=name, gfx=gfx
    )


def discover_gpus(sysfs_root: Path | str = "/sys") -> list[SysfsGpu]:
    """Every amdgpu card under ``<sysfs_root>/class/drm`` (symlinks followed), probed once.

    The cards come from the machine's one DRM scan (:func:`~rocmpanel.machine.drm_sysfs.
    scan_drm`), which reads only files that never wake a runtime-suspended GPU."""
    root = Path(sysfs_root)
    devices = [d for d in scan_drm(root) if _is_amdgpu(d)]  # scan_drm names every card
    gfx_by_slot = _gfx_by_slot(root) if devices else {}
    gpus: list[SysfsGpu] = []
    keys: set[str] = set()
    for dev in devices:
        identity = identify(dev, gfx_by_slot)
        if identity.key in keys:  # two captured trees may share a slot: keep both apart
            identity = replace(identity, key=f"{identity.key} ({dev.card})")
        keys.add(identity.key)
        gpus.append(SysfsGpu(identity, probe_gpu(_device_dir(root, dev))))
    return gpus


def gpus_for(
    wanted: Iterable[GpuIdentity], sysfs_root: Path | str = "/sys"
) -> tuple[list[SysfsGpu], list[GpuIdentity]]:
    """The amdgpu devices of the GPUs in ``wanted`` (the machine inventory's), found by
    card name or PCI slot, keeping their names; and the GPUs that have no amdgpu device
    in the tree (driver not bound, another driver)."""
    root = Path(sysfs_root)
    devices = scan_drm(root)
    by_name = {d.card: d for d in devices}
    by_slot = {d.slot.lower(): d for d in devices if d.slot}
    gfx_by_slot: dict[str, str] | None = None
    found: list[SysfsGpu] = []
    missing: list[GpuIdentity] = []
    for want in wanted:
        slot = (want.pci_slot or "").lower()
        dev = by_name.get(want.card or "")
        if dev is None or (dev.slot or "").lower() != slot:
            # The slot decides when the card numbers moved since detection; the card name
            # when two captured trees share a slot, or when neither has a slot.
            dev = by_slot.get(slot) or dev
        if dev is not None and slot and (dev.slot or slot).lower() != slot:
            dev = None  # the card numbers moved since detection: the slot decides
        if dev is None or not _is_amdgpu(dev):
            missing.append(want)
            continue
        if gfx_by_slot is None:
            gfx_by_slot = _gfx_by_slot(root)
        seen = identify(dev, gfx_by_slot)
        card = str(dev.card)
        identity = replace(
            want,
            card=card,
            pci_slot=want.pci_slot or dev.slot,
            pci_id=want.pci_id or seen.pci_id,
            name=want.name or seen.name,
            gfx=want.gfx or seen.gfx,
        )
        found.append(SysfsGpu(identity, probe_gpu(_device_dir(root, dev))))
    return found, missing
