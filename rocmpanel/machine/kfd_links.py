"""The links of the KFD topology: which node reaches which, over what, at what cost.

``/sys/class/kfd/kfd/topology/nodes/N/io_links/M/properties`` (and, on newer kernels,
``p2p_links/M/properties`` for GPU-to-GPU paths that go through the host) hold ``key value``
lines, one per field the kernel's ``iolink_show`` prints (amdkfd ``kfd_topology.c``):
``type``, ``version_major``, ``version_minor``, ``node_from``, ``node_to``, ``weight``,
``min_latency``, ``max_latency``, ``min_bandwidth``, ``max_bandwidth`` (MB/s),
``recommended_transfer_size`` and ``flags``.

``type`` is the CRAT IO interface type of amdkfd ``kfd_crat.h``: 2 is PCI Express and 11 is
XGMI (AMD Infinity Fabric between GPUs); the others are listed in :data:`LINK_TYPES`. The
kernel sets the weight of a GPU's PCIe link to its CPU node to 20, an XGMI link's to 15 per
hop, and a CPU-to-CPU link's to the NUMA distance, so a path's summed weight ranks paths
the way ``rocm-smi --showtopo`` does.

A GPU's NUMA node is read from its PCI device (``/sys/bus/pci/devices/<bdf>/numa_node``,
-1 = the platform does not say), not from KFD's CPU nodes, which follow ACPI proximity
domains. Everything here is a pure read of a tree given by ``sysfs_root``; a missing or
damaged file drops that link, never raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rocmpanel.machine.kfd_topology import TOPOLOGY, KfdNode, parse_properties, read_nodes
from rocmpanel.machine.sysfs import read_text

IOLINK_PCIE = 2
IOLINK_XGMI = 11

#: CRAT_IOLINK_TYPE_* of amdkfd's kfd_crat.h, as rocmpanel names them.
LINK_TYPES: Mapping[int, str] = {
    0: "undefined",
    1: "HyperTransport",
    2: "PCIe",
    3: "AMBA",
    4: "MIPI",
    5: "QPI",
    8: "RapidIO",
    9: "InfiniBand",
    11: "XGMI",
    12: "XGOP",
    13: "GZ",
    14: "Ethernet RDMA",
    15: "RDMA",
    16: "other",
}

_MAX_LINKS_PER_NODE = 1024  # a damaged tree must not make the reader list forever


def link_type_name(value: int) -> str:
    """The name of a CRAT link type ("XGMI"), or "type N" for one rocmpanel does not know."""
    return LINK_TYPES.get(value, f"type {value}")


@dataclass(frozen=True)
class KfdLink:
    """One KFD link. ``indirect``: from ``p2p_links`` (a GPU-to-GPU path the kernel
    computed through the host), not a physical ``io_links`` entry. Bandwidths in MB/s,
    None where the kernel leaves them 0."""

    node_from: int
    node_to: int
    type: int
    weight: int | None = None
    min_bandwidth_mbs: int | None = None
    max_bandwidth_mbs: int | None = None
    flags: int | None = None
    indirect: bool = False

    @property
    def type_name(self) -> str:
        return link_type_name(self.type)

    @property
    def is_xgmi(self) -> bool:
        return self.type == IOLINK_XGMI


@dataclass(frozen=True)
class KfdGraph:
    """The KFD topology as a graph: GPU nodes (``read_nodes``), every node id (CPU nodes
    included), every link, and each GPU node's NUMA node (None = not reported)."""

    gpus: tuple[KfdNode, ...]
    node_ids: tuple[int, ...]
    links: tuple[KfdLink, ...]
    numa: Mapping[int, int | None] = field(default_factory=dict)

    @property
    def cpu_node_ids(self) -> tuple[int, ...]:
        gpu_ids = {gpu.node for gpu in self.gpus}
        return tuple(n for n in self.node_ids if n not in gpu_ids)

    def links_from(self, node: int) -> tuple[KfdLink, ...]:
        return tuple(link for link in self.links if link.node_from == node)


def _positive(value: int | None) -> int | None:
    return value if value is not None and value > 0 else None


def parse_link(text: str, node_from: int, *, indirect: bool = False) -> KfdLink | None:
    """One link's properties text; ``node_from`` fills a missing ``node_from`` (the folder
    it sits in). None when the text names no ``node_to``."""
    props = parse_properties(text)
    if "node_to" not in props:
        return None
    return KfdLink(
        node_from=props.get("node_from", node_from),
        node_to=props["node_to"],
        type=props.get("type", 0),
        weight=props.get("weight"),
        min_bandwidth_mbs=_positive(props.get("min_bandwidth")),
        max_bandwidth_mbs=_positive(props.get("max_bandwidth")),
        flags=props.get("flags"),
        indirect=indirect,
    )


def _node_dirs(sysfs_root: Path | str) -> list[tuple[int, Path]]:
    base = Path(sysfs_root) / TOPOLOGY
    try:
        return sorted((int(p.name), p) for p in base.iterdir() if p.name.isdigit() and p.is_dir())
    except OSError:
        return []


def _links_in(folder: Path, node_from: int, indirect: bool) -> list[KfdLink]:
    try:
        entries = sorted(
            (int(p.name), p) for p in folder.iterdir() if p.name.isdigit() and p.is_dir()
        )[:_MAX_LINKS_PER_NODE]
    except OSError:
        return []
    links = []
    for _, path in entries:
        text = read_text(path / "properties")
        link = parse_link(text, node_from, indirect=indirect) if text else None
        if link is not None:
            links.append(link)
    return links


def read_links(sysfs_root: Path | str = "/sys") -> tuple[KfdLink, ...]:
    """Every ``io_links`` and ``p2p_links`` entry of every node; () without KFD."""
    links: list[KfdLink] = []
    for node_id, path in _node_dirs(sysfs_root):
        links += _links_in(path / "io_links", node_id, indirect=False)
        links += _links_in(path / "p2p_links", node_id, indirect=True)
    return tuple(links)


def pci_numa_node(bdf: str | None, sysfs_root: Path | str = "/sys") -> int | None:
    """The NUMA node of PCI device ``bdf``; None when unknown (-1, missing, no address)."""
    if not bdf:
        return None
    text = read_text(Path(sysfs_root) / "bus" / "pci" / "devices" / bdf / "numa_node")
    try:
        value = int(text or "")
    except ValueError:
        return None
    return value if value >= 0 else None


def read_graph(sysfs_root: Path | str = "/sys") -> KfdGraph:
    """The whole KFD topology under ``sysfs_root`` (empty without KFD)."""
    gpus = tuple(read_nodes(sysfs_root))
    return KfdGraph(
        gpus=gpus,
        node_ids=tuple(node_id for node_id, _ in _node_dirs(sysfs_root)),
        links=read_links(sysfs_root),
        numa={gpu.node: pci_numa_node(gpu.bdf, sysfs_root) for gpu in gpus},
    )
