"""The typed records of what rocmpanel knows about a machine and its GPUs.

Detection (rocmpanel.system) fills these in; the compatibility matcher, the install planner,
the chat memory check and the UI read them. ``None`` means "not known / not reported".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rocmpanel.machine.long_paths import LongPaths


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
    hip_index: int | None = None  # HIP's device number (hipInfo's device#N), on Windows


@dataclass(frozen=True)
class SystemInfo:
    """The machine: OS, installed ROCm, kernel driver, and the GPUs found."""

    os: str  # "linux" or "windows"
    os_version: str | None = None
    rocm_version: str | None = None
    driver: str | None = None
    gpus: tuple[GpuInfo, ...] = ()
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class HostFacts:
    """What was found about the host; None = not known (captured text, other OS)."""

    kfd_present: bool | None = None
    kfd_rw: bool | None = None
    kfd_error: str | None = None  # e.g. "Permission denied" (rocminfo's words)
    render_nodes: tuple[str, ...] | None = None
    render_rw: bool | None = None
    user: str | None = None
    process_groups: frozenset[str] | None = None  # groups this login session has
    member_groups: frozenset[str] | None = None  # groups /etc/group lists the user in
    existing_groups: frozenset[str] = frozenset({"render", "video"})
    amdgpu_loaded: bool | None = None
    rocm_installs: tuple[str, ...] | None = None
    rocm_path_valid: bool | None = None
    wsl: bool = False
    hsa_status: str | None = None  # rocminfo's HSA_STATUS_ERROR_*, if any
    env: Mapping[str, str] = field(default_factory=dict)
    long_paths: LongPaths | None = None  # Windows only: LongPathsEnabled, as read
