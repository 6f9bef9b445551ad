"""GPUs as the DRM subsystem sees them: /sys/class/drm/card*/device.

``card0`` is a symlink into the PCI device tree; its ``device`` link leads to the PCI
device directory with ``vendor``/``device`` (hex), ``uevent`` (DRIVER=, PCI_ID=,
PCI_SLOT_NAME=), ``mem_info_vram_total`` (bytes, amdgpu only), ``boot_vga`` and a
``driver`` link. Any of these can be missing, NUL-padded or unreadable; a captured
``device`` directory (as in a bug report) works the same as the live tree.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.ip_discovery import GcVersion, read_gc_version
from rocmpanel.machine.pci_ids import AMD_VENDOR_ID, normalize_id
from rocmpanel.machine.sysfs import printable, read_int, read_text

_CARD_RE = re.compile(r"^card\d+$")


@dataclass(frozen=True)
class DrmDevice:
    """One display/compute device's PCI directory, as read."""

    card: str | None
    vendor_id: str | None  # "1002"
    device_id: str | None  # "744c"
    slot: str | None  # "0000:03:00.0"
    driver: str | None
    vram_total: int | None
    product_name: str | None
    pci_class: str | None  # "030000"
    gc_version: GcVersion | None = None  # from ip_discovery, when the kernel publishes it

    @property
    def pci_id(self) -> str | None:
        if self.vendor_id and self.device_id:
            return f"{self.vendor_id}:{self.device_id}"
        return None


MAX_VRAM_BYTES = 1 << 50  # 1 PiB: a larger mem_info_vram_total is a bad reading


def parse_uevent(text: str | None) -> dict[str, str]:
    """The KEY=value lines of a ``uevent`` file's text (the one uevent parser)."""
    values: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    return values


def read_uevent(path: Path | str) -> dict[str, str]:
    """The KEY=value lines of the ``uevent`` file in device directory ``path``; {} when it
    is missing or unreadable."""
    return parse_uevent(read_text(Path(path) / "uevent"))


def read_device_dir(path: Path | str, card: str | None = None) -> DrmDevice | None:
    """Read one PCI device directory; None when it shows no PCI identity at all."""
    path = Path(path)
    uevent = read_uevent(path)
    vendor = normalize_id(read_text(path / "vendor"))
    device = normalize_id(read_text(path / "device")) if (path / "device").is_file() else None
    if "PCI_ID" in uevent:
        u_vendor, _, u_device = uevent["PCI_ID"].partition(":")
        vendor = vendor or normalize_id(u_vendor)
        device = device or normalize_id(u_device)
    if vendor is None and device is None:
        return None
    driver = uevent.get("DRIVER")
    if driver is None:
        try:
            driver = os.path.basename(os.readlink(path / "driver"))
        except OSError:
            driver = None
    pci_class = read_text(path / "class") or uevent.get("PCI_CLASS")
    vram = read_int(path / "mem_info_vram_total")
    return DrmDevice(
        card=card,
        vendor_id=vendor,
        device_id=device,
        slot=uevent.get("PCI_SLOT_NAME") or _slot_from_link(path),
        driver=driver,
        vram_total=vram if vram and vram <= MAX_VRAM_BYTES else None,
        product_name=printable(read_text(path / "product_name")),
        pci_class=pci_class.lower().removeprefix("0x") if pci_class else None,
        gc_version=read_gc_version(path) if vendor == AMD_VENDOR_ID else None,
    )


def _slot_from_link(path: Path) -> str | None:
    try:
        name = Path(os.path.realpath(path)).name
    except OSError:
        return None
    return name if re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d", name) else None


def scan_drm(sysfs_root: Path | str = "/sys") -> list[DrmDevice]:
    """Every ``class/drm/cardN/device`` under ``sysfs_root`` (connectors like card0-DP-1
    are skipped); [] when there is no DRM class directory."""
    base = Path(sysfs_root) / "class" / "drm"
    try:
        cards = sorted(
            (p for p in base.iterdir() if _CARD_RE.match(p.name)),
            key=lambda p: int(p.name[4:]),
        )
    except OSError:
        return []
    devices = []
    for card in cards:
        dev = read_device_dir(card / "device", card.name)
        if dev is not None:
            devices.append(dev)
    return devices


def is_device_dir(path: Path) -> bool:
    """Whether ``path`` looks like a captured PCI device directory itself."""
    return (path / "uevent").is_file() or (path / "vendor").is_file()


def gpus_from_drm(devices: list[DrmDevice]) -> list[GpuInfo]:
    """AMD devices only; other vendors' cards are not ROCm's business."""
    gpus = []
    for dev in devices:
        if dev.vendor_id != AMD_VENDOR_ID:
            continue
        gpus.append(
            GpuInfo(
                name=dev.product_name or "",  # filled from the PCI table on merge
                pci_id=dev.pci_id,
                bdf=dev.slot,
                vram_bytes=dev.vram_total,
                sources=("drm",),
                drm_card=dev.card,
            )
        )
    return gpus


def gpus_from_ip_discovery(devices: list[DrmDevice]) -> list[GpuInfo]:
    """A record per AMD device whose IP discovery table names its gfx target (source
    ``ip_discovery``): the target for a GPU that KFD and rocminfo do not show."""
    gpus = []
    for dev in devices:
        gfx = dev.gc_version.gfx if dev.gc_version else None
        if dev.vendor_id != AMD_VENDOR_ID or gfx is None:
            continue
        gpus.append(
            GpuInfo(name="", gfx=gfx, pci_id=dev.pci_id, bdf=dev.slot, sources=("ip_discovery",))
        )
    return gpus
