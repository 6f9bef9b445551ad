"""The KFD topology: which GPU nodes ROCm sees, their gfx target, gpu_id and PCI slot.

``/sys/class/kfd/kfd/topology/nodes/N/properties`` holds "name value" lines
(``gfx_target_version`` as MMmmss decimal, ``simd_count`` 0 on CPU nodes, ``domain`` and
``location_id`` = bus << 8 | device << 3 | function); ``nodes/N/gpu_id`` names the
per-process files ``/sys/class/kfd/kfd/proc/<pid>/vram_<gpu_id>``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rocmpanel.telemetry.sysfs_read import read_number, read_raw


def gfx_name(target_version: int) -> str | None:
    """KFD ``gfx_target_version`` (MMmmss decimal) to an LLVM target: 110000 → gfx1100."""
    if target_version <= 0:
        return None
    major, minor, step = (
        target_version // 10000,
        (target_version // 100) % 100,
        target_version % 100,
    )
    return f"gfx{major}{minor:x}{step:x}"


@dataclass(frozen=True)
class KfdNode:
    """A GPU node of the KFD topology: its gpu_id (names kfd/proc/<pid>/vram_<gpu_id>)."""

    gpu_id: int
    pci_slot: str | None
    gfx: str | None


def read_kfd_topology(sysfs_root: Path) -> list[KfdNode]:
    """GPU nodes under class/kfd/kfd/topology/nodes (CPU nodes, simd_count 0, are left out)."""
    nodes_dir = sysfs_root / "class" / "kfd" / "kfd" / "topology" / "nodes"
    try:
        entries = sorted(os.listdir(nodes_dir))
    except OSError:
        return []
    nodes: list[KfdNode] = []
    for entry in entries:
        props = parse_properties(read_raw(str(nodes_dir / entry / "properties")))
        gpu_id = read_number(str(nodes_dir / entry / "gpu_id"))
        if not gpu_id or props.get("simd_count", 0) == 0:
            continue
        slot = None
        if "location_id" in props:
            loc, domain = props["location_id"], props.get("domain", 0)
            slot = f"{domain:04x}:{loc >> 8:02x}:{(loc >> 3) & 0x1F:02x}.{loc & 0x7:x}"
        nodes.append(KfdNode(gpu_id, slot, gfx_name(props.get("gfx_target_version", 0))))
    return nodes


def parse_properties(text: str | None) -> dict[str, int]:
    """A KFD ``properties`` file: "name value" integer lines."""
    result: dict[str, int] = {}
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                result[parts[0]] = int(parts[1])
            except ValueError:
                continue
    return result
