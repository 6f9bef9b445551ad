"""GPUs as the KFD (ROCm's kernel interface) sees them: /sys/class/kfd/kfd/topology/nodes.

Each node directory has a ``properties`` file of ``key value`` lines. CPU nodes have
``simd_count 0``; GPU nodes carry ``gfx_target_version`` (MMmmss decimal), the PCI
``vendor_id``/``device_id``, ``location_id`` (bus << 8 | devfn, plus ``domain``) and
``drm_render_minor`` (128 = /dev/dri/renderD128). ``nodes/N/gpu_id`` names the per-process
files ``/sys/class/kfd/kfd/proc/<pid>/vram_<gpu_id>``.

The one KFD topology reader: detection builds GpuInfo records from it, and the Monitor
reads it once when it probes its sources (gfx targets, gpu_id to PCI slot), never per tick.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocmpanel.machine.gfx import gfx_from_kfd
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.sysfs import read_text

TOPOLOGY = Path("class/kfd/kfd/topology/nodes")


@dataclass(frozen=True)
class KfdNode:
    """One GPU node of the KFD topology."""

    node: int
    gfx_target_version: int | None
    simd_count: int
    vendor_id: int | None
    device_id: int | None
    location_id: int | None
    domain: int | None
    drm_render_minor: int | None
    local_mem_bytes: int | None
    gpu_id: int | None = None  # names /sys/class/kfd/kfd/proc/<pid>/vram_<gpu_id>

    @property
    def gfx(self) -> str | None:
        return gfx_from_kfd(self.gfx_target_version or 0)

    @property
    def bdf(self) -> str | None:
        if self.location_id is None:
            return None
        bus, devfn = (self.location_id >> 8) & 0xFF, self.location_id & 0xFF
        return f"{self.domain or 0:04x}:{bus:02x}:{devfn >> 3:02x}.{devfn & 7}"


def parse_properties(text: str) -> dict[str, int]:
    """``key value`` lines as a dict of integers (non-integer lines are skipped)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                values[parts[0]] = int(parts[1])
            except ValueError:
                continue
    return values


def _node_from(
    node_id: int, props: dict[str, int], mem_bytes: int | None, gpu_id: int | None = None
) -> KfdNode | None:
    if props.get("simd_count", 0) <= 0:
        return None  # a CPU node
    return KfdNode(
        node=node_id,
        gfx_target_version=props.get("gfx_target_version"),
        simd_count=props["simd_count"],
        vendor_id=props.get("vendor_id"),
        device_id=props.get("device_id"),
        location_id=props.get("location_id"),
        domain=props.get("domain"),
        drm_render_minor=props.get("drm_render_minor"),
        local_mem_bytes=mem_bytes,
        gpu_id=gpu_id,
    )


MAX_BANK_BYTES = 1 << 50  # 1 PiB: a larger memory bank is a bad reading


def read_nodes(sysfs_root: Path | str = "/sys") -> list[KfdNode]:
    """GPU nodes under ``sysfs_root``; [] when KFD is absent or unreadable."""
    base = Path(sysfs_root) / TOPOLOGY
    try:
        entries = sorted(
            (int(p.name), p) for p in base.iterdir() if p.name.isdigit() and p.is_dir()
        )
    except OSError:
        return []
    nodes = []
    for node_id, path in entries:
        text = read_text(path / "properties")
        if not text:
            continue
        mem = _local_memory(path)
        gpu_id_text = read_text(path / "gpu_id")
        gpu_id = int(gpu_id_text) if gpu_id_text and gpu_id_text.isdigit() else None
        node = _node_from(node_id, parse_properties(text), mem, gpu_id)
        if node is not None:
            nodes.append(node)
    return nodes


def _local_memory(node_dir: Path) -> int | None:
    """The size of the node's first public memory bank (heap_type 1 = frame buffer public)."""
    banks = node_dir / "mem_banks"
    try:
        bank_dirs = sorted(banks.iterdir())
    except OSError:
        return None
    for bank in bank_dirs:
        props = parse_properties(read_text(bank / "properties") or "")
        size = props.get("size_in_bytes")
        if props.get("heap_type") in (1, 2) and size and 0 < size <= MAX_BANK_BYTES:
            return size
    return None


def gpus_from_kfd(nodes: list[KfdNode]) -> list[GpuInfo]:
    gpus = []
    for node in nodes:
        pci_id = None
        if node.device_id:
            pci_id = f"{node.vendor_id or 0x1002:04x}:{node.device_id:04x}"
        gpus.append(
            GpuInfo(
                name="",  # KFD knows no names: other sources or the PCI table fill it
                gfx=node.gfx,
                pci_id=pci_id,
                bdf=node.bdf,
                vram_bytes=node.local_mem_bytes or None,
                sources=("kfd",),
                kfd_node=node.node,
            )
        )
    return gpus
