"""The KFD topology as telemetry needs it: each GPU node's gpu_id, PCI slot and gfx target.

``nodes/N/gpu_id`` names the per-process files ``/sys/class/kfd/kfd/proc/<pid>/vram_<gpu_id>``.
The parsing itself is the detector's (:mod:`rocmpanel.machine.kfd_topology`); it is read
once when the sources are probed, never per sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocmpanel.machine.kfd_topology import read_nodes


@dataclass(frozen=True)
class KfdNode:
    """A GPU node of the KFD topology: its gpu_id (names kfd/proc/<pid>/vram_<gpu_id>)."""

    gpu_id: int
    pci_slot: str | None
    gfx: str | None


def read_kfd_topology(sysfs_root: Path) -> list[KfdNode]:
    """GPU nodes that have a gpu_id (CPU nodes and unreadable nodes are left out)."""
    return [
        KfdNode(node.gpu_id, node.bdf, node.gfx) for node in read_nodes(sysfs_root) if node.gpu_id
    ]
