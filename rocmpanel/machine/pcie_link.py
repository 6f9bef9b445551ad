"""A GPU's PCIe link from PCI sysfs: the speed and width it runs at against what it can do.

Each PCI device folder (``/sys/bus/pci/devices/<bdf>``, a link into ``/sys/devices/pci…``)
has ``current_link_speed`` ("16.0 GT/s PCIe"), ``max_link_speed``, ``current_link_width``
and ``max_link_width``. Three things make a plain reading of the GPU's own files wrong:

- **An internal switch.** Navi (RDNA) cards put AMD's own PCIe switch between the slot and
  the GPU function: upstream port, downstream port, GPU, all vendor 0x1002. The GPU's files
  then describe the link inside the card; the slot's link is the one of the switch's
  upstream port. :func:`read_pcie_link` walks up the device's parents (the components of
  its resolved path that are PCI addresses) and reads the topmost AMD bridge above the GPU,
  and says which device the figures came from.
- **Power saving.** amdgpu lowers the link at idle (``pp_dpm_pcie`` lists the levels it may
  use and marks the current one with ``*``); a GPU read at idle looks slow when it is not.
- **Caps.** The driver's top level can sit below what card and slot could train
  (``amdgpu.pcie_gen_cap``/``pcie_lane_cap``, a BIOS setting), and a slot can be narrower
  or older than the card; the port above the card tells what the slot supports.

:func:`assess` sorts these out into one :class:`PcieVerdict`. Pure reads (missing file:
None) and pure parsing; nothing here raises on a bad tree.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path

from rocmpanel.machine import pci_ids
from rocmpanel.machine.sysfs import read_text

#: Transfer rate (GT/s) of each PCIe generation (PCI-SIG base specifications 1.0-6.0).
GENERATIONS: tuple[tuple[float, int], ...] = (
    (2.5, 1),
    (5.0, 2),
    (8.0, 3),
    (16.0, 4),
    (32.0, 5),
    (64.0, 6),
)
_BDF_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_SPEED_RE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*GT/s", re.IGNORECASE)
_DPM_RE = re.compile(r"^\s*(\d+):\s*([0-9]+(?:\.[0-9]+)?)\s*GT/s,\s*x(\d+)(.*)$", re.IGNORECASE)
_BRIDGE_CLASS = 0x0604  # PCI class 06 (bridge), subclass 04 (PCI-to-PCI): switch ports


def parse_link_speed(text: str | None) -> float | None:
    """GT/s from a link speed file ("16.0 GT/s PCIe", "8 GT/s"); None for "Unknown"."""
    match = _SPEED_RE.search(text or "")
    return float(match.group(1)) if match else None


def parse_link_width(text: str | None) -> int | None:
    """Lanes from a link width file ("16"); None when unreadable or 0 (link down)."""
    try:
        value = int((text or "").split()[0])
    except (ValueError, IndexError):
        return None
    return value if 0 < value <= 32 else None


def generation(gts: float | None) -> int | None:
    """The PCIe generation of a transfer rate (16.0 -> 4); None when it is not one."""
    if gts is None:
        return None
    for rate, gen in GENERATIONS:
        if abs(rate - gts) < 0.05:
            return gen
    return None


def describe(gts: float | None, width: int | None) -> str:
    """ "PCIe 4.0 x16", "PCIe 4.0" (width unknown), "x16" (speed unknown) or "n/a"."""
    if gts is None and not width:
        return "n/a"
    gen = generation(gts)
    parts = [f"PCIe {gen}.0" if gen else f"PCIe {gts:g} GT/s"] if gts else []
    if width:
        parts.append(f"x{width}")
    return " ".join(parts)


@dataclass(frozen=True)
class LinkState:
    """One device's link figures; None where its file is missing or unreadable."""

    speed_gts: float | None
    width: int | None
    max_speed_gts: float | None
    max_width: int | None

    @property
    def known(self) -> bool:
        return any(v is not None for v in (self.speed_gts, self.width))


@dataclass(frozen=True)
class DpmLevel:
    """One line of ``pp_dpm_pcie``: a link level the driver may pick; ``active`` marked *."""

    index: int
    speed_gts: float
    width: int
    active: bool


def parse_pp_dpm_pcie(text: str | None) -> tuple[DpmLevel, ...]:
    """The levels of a ``pp_dpm_pcie`` file ("1: 16.0GT/s, x16 619Mhz *")."""
    levels = []
    for line in (text or "").splitlines():
        match = _DPM_RE.match(line)
        if match:
            index, speed, width, rest = match.groups()
            levels.append(DpmLevel(int(index), float(speed), int(width), "*" in rest))
    return tuple(levels)


def read_link_state(device_dir: Path) -> LinkState:
    """The four link files of one PCI device folder."""
    return LinkState(
        speed_gts=parse_link_speed(read_text(device_dir / "current_link_speed")),
        width=parse_link_width(read_text(device_dir / "current_link_width")),
        max_speed_gts=parse_link_speed(read_text(device_dir / "max_link_speed")),
        max_width=parse_link_width(read_text(device_dir / "max_link_width")),
    )


@dataclass(frozen=True)
class PcieLink:
    """The link of GPU ``gpu_bdf`` to its slot.

    ``link`` was read at ``source_bdf``: the GPU itself, or the upstream port of the card's
    own AMD switch (``behind_amd_switch``). ``slot`` is the port above that (a root port or
    a board switch): its maximum is what the slot supports. ``dpm_levels`` are the GPU's
    ``pp_dpm_pcie`` levels (empty when the driver does not list them).
    """

    gpu_bdf: str
    source_bdf: str
    behind_amd_switch: bool
    link: LinkState
    slot_bdf: str | None
    slot: LinkState | None
    dpm_levels: tuple[DpmLevel, ...] = ()

    @property
    def source_note(self) -> str:
        if self.behind_amd_switch:
            return f"read at {self.source_bdf}, the upstream port of the card's own PCIe switch"
        return f"read at {self.source_bdf}, the GPU itself"

    @property
    def driver_top(self) -> DpmLevel | None:
        """The fastest level the driver allows (by speed, then width)."""
        if not self.dpm_levels:
            return None
        return max(self.dpm_levels, key=lambda level: (level.speed_gts, level.width))

    @property
    def driver_now(self) -> DpmLevel | None:
        """The fastest level marked current (some drivers mark several)."""
        active = [level for level in self.dpm_levels if level.active]
        return max(active, key=lambda level: (level.speed_gts, level.width)) if active else None


class PcieVerdict(enum.Enum):
    """What a link's figures mean."""

    FULL = "full"  # running at what the card supports
    UNKNOWN = "unknown"  # figures missing
    IDLE = "idle"  # the driver has the link at a power-saving level right now
    BELOW_MAX = "below-max"  # below the maximum, cause unknown (no pp_dpm_pcie)
    SLOT_LIMITED = "slot-limited"  # the slot supports less than the card
    DRIVER_CAPPED = "driver-capped"  # the driver's top level is below what both support
    DEGRADED = "degraded"  # trained below what card, slot and driver allow


@dataclass(frozen=True)
class PcieAssessment:
    """A verdict with the figures it rests on: ``now`` the link as running, ``card`` what
    the card supports, ``possible`` what card and slot (and the driver) both allow."""

    verdict: PcieVerdict
    now: str
    card: str
    possible: str


def _min(a: float | int | None, b: float | int | None) -> float | int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def assess(pcie: PcieLink) -> PcieAssessment:
    """Sort the link's figures into a verdict (see :class:`PcieVerdict`)."""
    link = pcie.link
    now = describe(link.speed_gts, link.width)
    card = describe(link.max_speed_gts, link.max_width)
    if None in (link.speed_gts, link.width, link.max_speed_gts, link.max_width):
        return PcieAssessment(PcieVerdict.UNKNOWN, now, card, card)
    assert link.speed_gts is not None and link.width is not None
    assert link.max_speed_gts is not None and link.max_width is not None
    slot = pcie.slot
    speed_ok = _min(link.max_speed_gts, slot.max_speed_gts if slot else None)
    width_ok = _min(link.max_width, slot.max_width if slot else None)
    possible = describe(speed_ok, int(width_ok) if width_ok else None)
    if link.speed_gts >= link.max_speed_gts and link.width >= link.max_width:
        return PcieAssessment(PcieVerdict.FULL, now, card, possible)
    top, current = pcie.driver_top, pcie.driver_now
    if (
        top is not None
        and current is not None
        and (current.speed_gts, current.width)
        < (
            top.speed_gts,
            top.width,
        )
    ):
        return PcieAssessment(PcieVerdict.IDLE, now, card, possible)
    assert speed_ok is not None and width_ok is not None
    if link.speed_gts >= speed_ok and link.width >= width_ok:
        return PcieAssessment(PcieVerdict.SLOT_LIMITED, now, card, possible)
    # The driver's top level is below what card and slot allow, and the link runs at it.
    if (
        top is not None
        and (top.speed_gts < speed_ok or top.width < width_ok)
        and link.speed_gts >= top.speed_gts
        and link.width >= top.width
    ):
        capped = describe(min(top.speed_gts, speed_ok), int(min(top.width, width_ok)))
        return PcieAssessment(PcieVerdict.DRIVER_CAPPED, now, card, capped)
    if top is None:
        return PcieAssessment(PcieVerdict.BELOW_MAX, now, card, possible)
    return PcieAssessment(PcieVerdict.DEGRADED, now, card, possible)


def _is_amd_bridge(device_dir: Path) -> bool:
    if not pci_ids.is_amd_vendor(read_text(device_dir / "vendor")):
        return False
    try:
        return int(read_text(device_dir / "class") or "", 16) >> 8 == _BRIDGE_CLASS
    except ValueError:
        return False


def _resolved_dir(path: Path) -> Path | None:
    try:
        path = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return path if path.is_dir() else None


def _drm_device_dir(bdf: str, sysfs_root: Path | str) -> Path | None:
    """``class/drm/cardN/device`` of ``bdf``: a captured tree (the demo's among them) may
    hold the GPU there and not under bus/pci/devices."""
    try:
        cards = sorted((Path(sysfs_root) / "class" / "drm").glob("card[0-9]*/device"))
    except OSError:
        return None
    for device in cards[:64]:
        uevent = read_text(device / "uevent") or ""
        if f"PCI_SLOT_NAME={bdf}" in uevent.splitlines():
            return _resolved_dir(device)
    return None


def pci_device_dir(bdf: str, sysfs_root: Path | str = "/sys") -> Path | None:
    """The resolved folder of PCI device ``bdf`` (its path names its parents), from
    bus/pci/devices, else from the DRM card whose uevent names ``bdf``."""
    found = _resolved_dir(Path(sysfs_root) / "bus" / "pci" / "devices" / bdf)
    return found or _drm_device_dir(bdf, sysfs_root)


def pci_parents(device_dir: Path) -> list[Path]:
    """The PCI devices above ``device_dir``, nearest first (path components that are PCI
    addresses; ``pci0000:00`` and what lies above it are not devices)."""
    parents = []
    for parent in device_dir.parents:
        if not _BDF_RE.match(parent.name):
            break
        parents.append(parent)
    return parents


def read_pcie_link(bdf: str, sysfs_root: Path | str = "/sys") -> PcieLink | None:
    """The link of the GPU at ``bdf`` (see the module's notes); None when sysfs has no
    such PCI device or it reports no link at all."""
    gpu_dir = pci_device_dir(bdf, sysfs_root)
    if gpu_dir is None:
        return None
    source = gpu_dir
    parents = pci_parents(gpu_dir)
    slot_dir: Path | None = None
    for i, parent in enumerate(parents):
        if not _is_amd_bridge(parent):
            slot_dir = parent
            break
        source = parent
        slot_dir = parents[i + 1] if i + 1 < len(parents) else None
    link = read_link_state(source)
    if not link.known:
        return None
    slot = read_link_state(slot_dir) if slot_dir is not None else None
    return PcieLink(
        gpu_bdf=bdf,
        source_bdf=source.name if _BDF_RE.match(source.name) else bdf,
        behind_amd_switch=source is not gpu_dir,
        link=link,
        slot_bdf=slot_dir.name if slot_dir is not None else None,
        slot=slot if slot is not None and (slot.max_speed_gts or slot.max_width) else None,
        dpm_levels=parse_pp_dpm_pcie(read_text(gpu_dir / "pp_dpm_pcie")),
    )
