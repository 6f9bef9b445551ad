"""The typed records of what rocmpanel knows about a machine and its GPUs.

Detection (rocmpanel.system) fills these in; the compatibility matcher, the install planner,
the chat memory check and the UI read them. ``None`` means "not known / not reported".
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class GpuInfo:
    """One GPU, merged from every source that saw it."""

    name: str
    gfx: str | None = None  # LLVM target, e.g. "gfx1100"
    pci_id: str | None = None  # "1002:744c", lower-case hex
    bdf: str | None = None  # PCI slot "0000:03:00.0"
    vram_bytes: int | None = None
    integrated: bool | None = None
    sources: tuple[str, ...] = ()
    drm_card: str | None = None  # "card0", when seen through DRM sysfs
    kfd_node: int | None = None  # KFD topology node id, when seen through KFD


@dataclass(frozen=True)
class SystemInfo:
    """The machine: OS, installed ROCm, kernel driver, and the GPUs found."""

    os: str  # "linux" or "windows"
    os_version: str | None = None
    rocm_version: str | None = None
    driver: str | None = None
    gpus: tuple[GpuInfo, ...] = ()
    notes: tuple[str, ...] = field(default=())
