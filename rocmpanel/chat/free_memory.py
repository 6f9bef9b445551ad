"""How much memory a model may take: the free VRAM of the card it runs on, or free RAM.

Two ways to know, one per caller. The Chat tab never reads sysfs: it takes the GPUs from
the app's inventory (discrete cards first), the card's total from there and its used
VRAM from the Monitor's sampler (:class:`rocmpanel.machine.live.LiveGpuMemory`), for the
card the worker reported (its PCI slot) or, before a load, the card a load would use. The
headless ``rocmpanel chat`` has neither: it detects the inventory itself and reads the
used VRAM from sysfs (it runs on no GUI thread), then picks the card as the tab does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocmpanel.base.enums import Device
from rocmpanel.machine.drm_sysfs import DrmDevice, read_device_dir, scan_drm
from rocmpanel.machine.inventory import Inventory, detect_inventory
from rocmpanel.machine.live import LiveGpuMemory
from rocmpanel.machine.pci_ids import is_amd_vendor
from rocmpanel.machine.sysfs import read_int


@dataclass(frozen=True)
class Budget:
    """The memory of the device a model goes to: ``free`` when it was measured, else at
    least the ``total`` when the device's size is known (None: not known)."""

    device: Device  # GPU or CPU
    free: int | None
    total: int | None = None
    bdf: str | None = None  # the card's PCI slot, for a GPU


@dataclass(frozen=True)
class VramReading:
    """One AMD card's VRAM as sysfs reports it (bytes)."""

    card: str
    bdf: str | None
    total: int
    used: int

    @property
    def free(self) -> int:
        return max(0, self.total - self.used)


def gpu_budget(inventory: Inventory | None, live: LiveGpuMemory, bdf: str | None = None) -> Budget:
    """The VRAM of card ``bdf`` (the worker's), or of the first discrete card when the
    worker has not said; free VRAM from the sampler's newest reading when it has one."""
    gpu = inventory.gpu_by_bdf(bdf) if inventory is not None else None
    if gpu is None and inventory is not None and not bdf:
        gpu = next(iter(inventory.discrete_first()), None)
    slot = bdf or (gpu.bdf if gpu is not None else None)
    total = gpu.vram_bytes if gpu is not None else None
    reading = live.reading(slot)
    if reading is not None:
        total = reading.total_bytes or total
        return Budget(Device.GPU, reading.free_bytes, total, slot)
    return Budget(Device.GPU, None, total, slot)


def ram_budget() -> Budget:
    """Available system memory (psutil; one small /proc read)."""
    return Budget(Device.CPU, free_ram())


def free_ram() -> int | None:
    """Available system memory (psutil), or None when it cannot be read."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a dependency
        return None
    try:
        return int(psutil.virtual_memory().available)
    except OSError:  # pragma: no cover - only on exotic platforms
        return None


def read_device_vram(device: Path, card: str = "") -> VramReading | None:
    """One ``cardN/device`` folder's VRAM, or None (not AMD, or the files are missing)."""
    found = read_device_dir(device, card or None)
    return _vram(found, device) if found is not None else None


def read_amd_vram(sysfs_root: Path | str = "/sys") -> list[VramReading]:
    """VRAM of every AMD card under ``sysfs_root``; cards without the files are skipped."""
    base = Path(sysfs_root) / "class" / "drm"
    readings = []
    for device in scan_drm(sysfs_root):
        if device.card is not None:
            reading = _vram(device, base / device.card / "device")
            if reading is not None:
                readings.append(reading)
    return readings


def _vram(found: DrmDevice, device: Path) -> VramReading | None:
    if not is_amd_vendor(found.vendor_id) or not found.vram_total:
        return None
    used = read_int(device / "mem_info_vram_used")
    if used is None or not 0 <= used <= found.vram_total:
        return None  # unreadable, or more in use than the card has: no reading
    return VramReading(found.card or "", found.slot, found.vram_total, used)


def detected_gpu_budget(
    sysfs_root: Path | str = "/sys", inventory: Inventory | None = None
) -> Budget:
    """For the CLI: the card the Chat tab would judge before a load, picked the same way
    (:func:`gpu_budget`: the first of the inventory's discrete-first GPUs), with its used
    VRAM read from sysfs where the Monitor's sampler would have read it. ``inventory``:
    one already detected, else :func:`~rocmpanel.machine.inventory.detect_inventory` runs
    (blocking: rocminfo and many sysfs files, fine for a command about to load a model)."""
    if inventory is None:
        inventory = detect_inventory(sysfs_root=sysfs_root)
    live = LiveGpuMemory()
    for reading in read_amd_vram(sysfs_root):
        if reading.bdf:
            live.publish(reading.bdf, reading.used, reading.total)
    return gpu_budget(inventory, live)
