"""The machine's facts, detected once and shared: every GPU, the host, the ROCm install.

Setup, PyTorch, Monitor, Chat and About read one :class:`Inventory` (held by the GUI's
app context, refreshed on demand) instead of each detecting on its own.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo


@dataclass(frozen=True)
class Inventory:
    """One detection of this machine. ``system.gpus`` lists every GPU found."""

    system: SystemInfo
    host: HostFacts = field(default_factory=HostFacts)
    detected_at: float = 0.0

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


def detect_inventory(env: Mapping[str, str] | None = None) -> Inventory:
    """Detect this machine (blocking: runs rocminfo; call it off the GUI thread)."""
    from rocmpanel.machine.host_facts import local_diagnosis

    system, host = local_diagnosis(env)
    return Inventory(system=system, host=host, detected_at=time.time())
