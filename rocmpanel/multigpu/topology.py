"""The machine's GPU topology: how each pair of GPUs is connected, where each GPU sits, and
what a user can do about what is wrong.

Built from the KFD topology (:mod:`rocmpanel.machine.kfd_links`) and PCI sysfs
(:mod:`rocmpanel.machine.pcie_link`), like ``rocm-smi --showtopo``: for each pair of GPUs
the link type (XGMI when the pair has a direct Infinity Fabric link, PCIe when the path goes
through the host), the hops (links on the path in the KFD graph: 1 direct, 2 through one CPU
node, 3 across two sockets) and the summed weight. GPUs are numbered as the ROCm runtime
numbers them (KFD order, CPU nodes skipped): the indices ``ROCR_VISIBLE_DEVICES`` takes.

Qt-free: :func:`read_topology` reads (a few hundred small files at most), :func:`build`
is pure and is what the tests drive.
"""

from __future__ import annotations

import heapq
import itertools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.machine import pci_ids
from rocmpanel.machine.kfd_links import IOLINK_PCIE, KfdGraph, KfdLink, read_graph
from rocmpanel.machine.kfd_topology import KfdNode
from rocmpanel.machine.pcie_link import (
    PcieAssessment,
    PcieLink,
    PcieVerdict,
    assess,
    read_pcie_link,
)
from rocmpanel.machine.sysfs import read_text
from rocmpanel.multigpu.topology_warnings import TopologyWarning, warnings_for

SAME = "same GPU"
NO_PATH = "none"
# The link kinds that are words, not names (XGMI, PCIe), translated where shown.
_KIND_WORDS = {
    SAME: QT_TRANSLATE_NOOP("PairLink", "same GPU"),
    NO_PATH: QT_TRANSLATE_NOOP("PairLink", "none"),
}


def link_kind_name(kind: str) -> str:
    """A link kind as the window shows it: the words translated, names (XGMI) as they are."""
    word = _KIND_WORDS.get(kind)
    return kind if word is None else translate("PairLink", word)


@dataclass(frozen=True)
class GpuPlace:
    """One GPU: runtime index, KFD node, PCI address, name, NUMA node, PCIe link."""

    index: int
    node: int
    bdf: str | None
    name: str
    gfx: str | None
    integrated: bool | None
    numa_node: int | None
    pcie: PcieLink | None
    pcie_assessment: PcieAssessment | None

    @property
    def label(self) -> str:
        return f"GPU {self.index}"


@dataclass(frozen=True)
class PairLink:
    """How GPU ``a`` reaches GPU ``b``: ``kind`` is "XGMI", "PCIe", another CRAT type
    name, :data:`SAME` or :data:`NO_PATH`; ``hops`` and ``weight`` None when unknown."""

    a: int
    b: int
    kind: str
    hops: int | None
    weight: int | None
    max_bandwidth_mbs: int | None = None
    via_p2p_entry: bool = False  # known only from the kernel's p2p_links

    @property
    def has_path(self) -> bool:
        """False when KFD lists no way from ``a`` to ``b``."""
        return self.kind != NO_PATH

    @property
    def tooltip(self) -> str:
        if self.kind == SAME:
            return translate("PairLink", "GPU {a}: the same GPU").format(a=self.a)
        if self.kind == NO_PATH:
            return translate("PairLink", "GPU {a} to GPU {b}: KFD lists no path").format(
                a=self.a, b=self.b
            )
        parts = [
            translate("PairLink", "GPU {a} to GPU {b}: {kind}").format(
                a=self.a, b=self.b, kind=self.kind
            )
        ]
        if not self.hops:
            parts.append(translate("PairLink", "hops n/a"))
        elif self.hops == 1:
            parts.append(translate("PairLink", "1 hop"))
        else:
            parts.append(translate("PairLink", "{hops} hops").format(hops=self.hops))
        if self.weight is None:
            parts.append(translate("PairLink", "weight n/a"))
        else:
            parts.append(translate("PairLink", "weight {weight}").format(weight=self.weight))
        if self.max_bandwidth_mbs:
            parts.append(
                translate("PairLink", "up to {bandwidth} MB/s").format(
                    bandwidth=self.max_bandwidth_mbs
                )
            )
        return ", ".join(parts)


@dataclass(frozen=True)
class Topology:
    """The GPUs, the link of every ordered pair, and the warnings.

    ``process_numa_nodes``: the NUMA nodes whose CPUs this process may run on; None when
    not checked (a captured tree, or a platform without affinity). ``numa_node_count``:
    the NUMA nodes of the machine read (0 = not known)."""

    gpus: tuple[GpuPlace, ...]
    pairs: tuple[PairLink, ...]
    warnings: tuple[TopologyWarning, ...]
    process_numa_nodes: tuple[int, ...] | None = None
    numa_node_count: int = 0
    sysfs_root: str = "/sys"

    @property
    def found(self) -> bool:
        return bool(self.gpus)

    def link(self, a: int, b: int) -> PairLink:
        for pair in self.pairs:
            if (pair.a, pair.b) == (a, b):
                return pair
        raise KeyError((a, b))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the shape ``rocmpanel topo --json`` prints)."""
        return {
            "found": self.found,
            "sysfs_root": self.sysfs_root,
            "gpus": [_gpu_json(g) for g in self.gpus],
            "links": [
                {
                    "from": p.a,
                    "to": p.b,
                    "type": p.kind,
                    "hops": p.hops,
                    "weight": p.weight,
                    "max_bandwidth_mbs": p.max_bandwidth_mbs,
                }
                for p in self.pairs
                if p.a != p.b
            ],
            "process_numa_nodes": (
                list(self.process_numa_nodes) if self.process_numa_nodes is not None else None
            ),
            "numa_node_count": self.numa_node_count,
            "warnings": [
                {
                    "code": w.code,
                    "severity": w.severity.value,
                    "gpus": list(w.gpus),
                    "message": w.message,
                    "what_to_do": w.what_to_do,
                }
                for w in self.warnings
            ],
        }


def _gpu_json(g: GpuPlace) -> dict[str, Any]:
    pcie: dict[str, Any] | None = None
    if g.pcie is not None:
        link = g.pcie.link
        pcie = {
            "read_at": g.pcie.source_bdf,
            "behind_amd_switch": g.pcie.behind_amd_switch,
            "speed_gts": link.speed_gts,
            "width": link.width,
            "max_speed_gts": link.max_speed_gts,
            "max_width": link.max_width,
            "slot_port": g.pcie.slot_bdf,
            "driver_levels": [
                {"speed_gts": d.speed_gts, "width": d.width, "active": d.active}
                for d in g.pcie.dpm_levels
            ],
            "verdict": g.pcie_assessment.verdict.value if g.pcie_assessment else None,
        }
    return {
        "index": g.index,
        "kfd_node": g.node,
        "bdf": g.bdf,
        "name": g.name,
        "gfx": g.gfx,
        "integrated": g.integrated,
        "numa_node": g.numa_node,
        "pcie": pcie,
    }


# -- paths ---------------------------------------------------------------------------------
def _adjacency(links: Iterable[KfdLink], nodes: Iterable[int]) -> dict[int, list[KfdLink]]:
    """Physical links both ways (the kernel lists most in both directions, not all),
    between ``nodes`` only: a link to a node the topology does not list is damage, and a
    path through it would be made up."""
    known = set(nodes)
    adjacency: dict[int, list[KfdLink]] = {}
    for link in links:
        if link.indirect or link.node_from == link.node_to:
            continue
        if link.node_from not in known or link.node_to not in known:
            continue
        adjacency.setdefault(link.node_from, []).append(link)
        reverse = KfdLink(link.node_to, link.node_from, link.type, link.weight)
        adjacency.setdefault(link.node_to, []).append(reverse)
    return adjacency


def _path(adjacency: Mapping[int, list[KfdLink]], start: int, goal: int) -> list[KfdLink] | None:
    """Fewest hops, then least summed weight (the path ``rocm-smi`` reports)."""
    order = itertools.count()  # ties never compare the paths themselves
    queue: list[tuple[int, int, int, int, list[KfdLink]]] = [(0, 0, next(order), start, [])]
    done: set[int] = set()
    while queue:
        hops, weight, _, node, path = heapq.heappop(queue)
        if node == goal:
            return path
        if node in done:
            continue
        done.add(node)
        for link in adjacency.get(node, ()):
            if link.node_to not in done:
                cost = (hops + 1, weight + (link.weight or 0))
                heapq.heappush(queue, (*cost, next(order), link.node_to, [*path, link]))
    return None


def _pair(
    graph: KfdGraph, adjacency: Mapping[int, list[KfdLink]], a: GpuPlace, b: GpuPlace
) -> PairLink:
    if a.index == b.index:
        return PairLink(a.index, b.index, SAME, 0, 0)
    path = _path(adjacency, a.node, b.node)
    if path:
        types = {link.type for link in path}
        if len(types) == 1:
            kind = path[0].type_name
        elif IOLINK_PCIE in types:
            kind = "PCIe"  # a path through the host counts as PCIe, as rocm-smi shows it
        else:
            kind = "+".join(sorted(link.type_name for link in path))
        weights = [link.weight for link in path]
        direct = next(
            (x for x in graph.links if (x.node_from, x.node_to) == (a.node, b.node)), None
        )
        return PairLink(
            a.index,
            b.index,
            kind,
            len(path),
            None if None in weights else sum(w or 0 for w in weights),
            direct.max_bandwidth_mbs if direct is not None and len(path) == 1 else None,
        )
    p2p = next(
        (x for x in graph.links if x.indirect and (x.node_from, x.node_to) == (a.node, b.node)),
        None,
    )
    if p2p is not None:
        return PairLink(a.index, b.index, p2p.type_name, None, p2p.weight, None, True)
    return PairLink(a.index, b.index, NO_PATH, None, None)


# -- NUMA ----------------------------------------------------------------------------------
def parse_cpulist(text: str | None) -> frozenset[int]:
    """A kernel CPU list ("0-7,16-23") as a set; empty when unreadable."""
    cpus: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        try:
            if "-" in part:
                low, high = (int(x) for x in part.split("-", 1))
                cpus.update(range(low, min(high, low + 65536) + 1))
            elif part:
                cpus.add(int(part))
        except ValueError:
            return frozenset()
    return frozenset(cpus)


def numa_cpus(sysfs_root: Path | str = "/sys") -> dict[int, frozenset[int]]:
    """Each NUMA node's CPUs (``devices/system/node/nodeN/cpulist``); {} when unknown."""
    base = Path(sysfs_root) / "devices" / "system" / "node"
    try:
        names = [p.name for p in base.iterdir() if p.name.startswith("node")]
    except OSError:
        return {}
    nodes = {}
    for name in names:
        if name[4:].isdigit():
            nodes[int(name[4:])] = parse_cpulist(read_text(base / name / "cpulist"))
    return nodes


def process_nodes(nodes: Mapping[int, frozenset[int]], affinity: Iterable[int]) -> tuple[int, ...]:
    """The NUMA nodes that hold at least one CPU of ``affinity``."""
    cpus = set(affinity)
    return tuple(sorted(n for n, node_cpus in nodes.items() if node_cpus & cpus))


def this_process_affinity() -> frozenset[int] | None:
    """The CPUs this process may run on; None where the platform cannot say (Windows)."""
    getter = getattr(os, "sched_getaffinity", None)
    if getter is None:
        return None
    try:
        return frozenset(getter(0))
    except OSError:
        return None


# -- building ------------------------------------------------------------------------------
def _name(node: KfdNode) -> tuple[str, bool | None]:
    entry = None
    if node.device_id:
        entry = pci_ids.lookup(f"{node.vendor_id or 0x1002:04x}:{node.device_id:04x}")
    if entry is not None:
        return entry.name, entry.integrated
    return (f"AMD GPU {node.gfx}" if node.gfx else "AMD GPU"), None


def build(
    graph: KfdGraph,
    pcie: Mapping[str, PcieLink],
    *,
    numa_node_cpus: Mapping[int, frozenset[int]] | None = None,
    affinity: Iterable[int] | None = None,
    sysfs_root: str = "/sys",
    names: Mapping[int, tuple[str, bool | None]] | None = None,
) -> Topology:
    """The topology of ``graph`` with the PCIe links by PCI address. ``affinity``: the
    CPUs of the process to check GPUs against (None: not checked). ``names``: a name and
    integrated flag per KFD node (default: the PCI-id table)."""
    gpus = []
    for index, node in enumerate(graph.gpus):
        name, integrated = (names or {}).get(node.node) or _name(node)
        link = pcie.get(node.bdf) if node.bdf else None
        gpus.append(
            GpuPlace(
                index=index,
                node=node.node,
                bdf=node.bdf,
                name=name,
                gfx=node.gfx,
                integrated=integrated,
                numa_node=graph.numa.get(node.node),
                pcie=link,
                pcie_assessment=assess(link) if link is not None else None,
            )
        )
    adjacency = _adjacency(graph.links, graph.node_ids)
    pairs = tuple(_pair(graph, adjacency, a, b) for a in gpus for b in gpus)
    nodes = dict(numa_node_cpus or {})
    proc = process_nodes(nodes, affinity) if affinity is not None and nodes else None
    warnings = warnings_for(tuple(gpus), pairs, proc, len(nodes))
    return Topology(tuple(gpus), pairs, warnings, proc, len(nodes), sysfs_root)


def read_topology(
    sysfs_root: Path | str = "/sys", *, check_process: bool | None = None
) -> Topology:
    """Read the topology under ``sysfs_root`` (blocking: run it off the GUI thread).

    ``check_process``: compare GPUs' NUMA nodes with this process's CPUs; by default only
    when reading this machine's /sys (a captured tree is another machine)."""
    root = str(sysfs_root)
    graph = read_graph(root)
    pcie = {}
    for node in graph.gpus:
        if node.bdf:
            link = read_pcie_link(node.bdf, root)
            if link is not None:
                pcie[node.bdf] = link
    if check_process is None:
        check_process = Path(root).resolve() == Path("/sys")
    return build(
        graph,
        pcie,
        numa_node_cpus=numa_cpus(root),
        affinity=this_process_affinity() if check_process else None,
        sysfs_root=root,
    )


__all__ = [
    "NO_PATH",
    "SAME",
    "GpuPlace",
    "PairLink",
    "PcieVerdict",
    "Topology",
    "build",
    "read_topology",
]
