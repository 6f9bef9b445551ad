"""The machine's facts, detected once and shared: every GPU, the host, the ROCm install.

:func:`detect_inventory` is the one entry point that detects a machine: it runs the GPU
detection of :mod:`rocmpanel.machine.detect` (rocminfo, KFD topology, DRM sysfs, amdgpu's
IP discovery table, ``lspci`` as a last resort; PowerShell CIM and hipInfo on Windows, every
record completed from the PCI id table of :mod:`rocmpanel.machine.pci_ids`) and gathers the
host facts of :mod:`rocmpanel.machine.host_facts`. Setup, PyTorch, Monitor, Chat and About
read the one :class:`Inventory` the GUI's app context holds (``gui.inventory``), refreshed
on demand; the ``doctor`` CLI calls :func:`detect_inventory` itself (blocking is fine there).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo

if TYPE_CHECKING:  # detection is imported when it runs (off the GUI thread), not at start-up
    from rocmpanel.machine.detect import Detection


@dataclass(frozen=True)
class Inventory:
    """One detection of a machine. ``system.gpus`` lists every GPU found; ``live`` is False
    when it describes a captured /sys tree rather than the machine the panel runs on."""

    system: SystemInfo
    host: HostFacts = field(default_factory=HostFacts)
    detected_at: float = 0.0
    live: bool = True

    @property
    def gpus(self) -> tuple[GpuInfo, ...]:
        return self.system.gpus

    @property
    def has_amd_gpu(self) -> bool:
        return bool(self.system.gpus)

    def gpu_by_bdf(self, bdf: str | None) -> GpuInfo | None:
        """The GPU in PCI slot ``bdf`` ("0000:03:00.0"), or None."""
        if not bdf:
            return None
        wanted = bdf.lower()
        return next((g for g in self.system.gpus if (g.bdf or "").lower() == wanted), None)

    def discrete_first(self) -> tuple[GpuInfo, ...]:
        """The GPUs with discrete cards first (the ones GPU work usually runs on)."""
        return tuple(sorted(self.system.gpus, key=lambda g: bool(g.integrated)))


def host_facts_for(detection: Detection, env: Mapping[str, str] | None = None) -> HostFacts:
    """The host facts that go with ``detection``: looked up on this host when it is live,
    otherwise only what the captured rocminfo output says (the rest stays unknown)."""
    from rocmpanel.machine.host_facts import linux_host_facts, windows_host_facts

    if detection.live and detection.system.os == "windows":
        return windows_host_facts(env)
    if detection.live:
        return linux_host_facts(env, rocminfo=detection.rocminfo)
    report = detection.rocminfo
    return HostFacts(
        kfd_error=report.kfd_error if report else None,
        wsl=bool(report and report.wsl),
        hsa_status=report.hsa_status if report else None,
    )


def detect_inventory(
    env: Mapping[str, str] | None = None,
    *,
    sysfs_root: Path | str = "/sys",
    rocminfo_text: str | None = None,
    os_name: str | None = None,
) -> Inventory:
    """Detect this machine, or the captured /sys tree at ``sysfs_root`` (with the captured
    ``rocminfo_text`` when given). Blocking: runs rocminfo and reads many sysfs files, so
    the GUI calls it off its thread (through ``gui.inventory.InventoryHolder``)."""
    from rocmpanel.machine.detect import detect

    env = os.environ if env is None else env
    detection = detect(sysfs_root=sysfs_root, rocminfo_text=rocminfo_text, os_name=os_name, env=env)
    return Inventory(
        system=detection.system,
        host=host_facts_for(detection, env),
        detected_at=time.time(),
        live=detection.live,
    )
