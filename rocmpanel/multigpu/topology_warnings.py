"""The warnings of a GPU topology: what is wrong with how the GPUs are connected and, in
one line each, what a user can do about it.

:func:`warnings_for` is pure: it takes the GPUs and pair links that
:func:`rocmpanel.multigpu.topology.build` works out and returns the warnings most useful
first. Checks: the PCIe link of each discrete GPU (degraded, slot-limited, driver-capped,
idle, below its maximum), NUMA (GPUs away from this process's CPUs, pairs across sockets),
XGMI (GPUs of a family that can be joined by Infinity Fabric but are not), and the plain
facts (one GPU, an integrated GPU, no links listed).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.machine.pcie_link import PcieVerdict

if TYPE_CHECKING:  # topology imports this module; the model types are only annotations here
    from rocmpanel.multigpu.topology import GpuPlace, PairLink


class Severity(enum.Enum):
    """WARNING: something to fix; INFO: worth knowing, perhaps nothing wrong."""

    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class TopologyWarning:
    """Something a user can act on: what is wrong and, in one line, what to do."""

    code: str  # stable: "pcie-degraded", "numa-process", "no-xgmi", ...
    severity: Severity
    gpus: tuple[int, ...]
    message: str
    what_to_do: str


#: gfx targets whose products can join GPUs with XGMI (Infinity Fabric) links. Sources:
#: ROCm docs reference/gpu-arch/mi100.md (MI100 hives of four GPUs over Infinity Fabric
#: links), mi250.md (MI200: Infinity Fabric links between GPUs), MLCommons inference v4.1
#: system 8xMI300X_2xEPYC-9374F ("accelerator_interconnect": "XGMI"); gfx950 (MI350
#: series) follows AMD's OAM platforms. Several PCIe cards (MI210, MI100) have XGMI only
#: with a bridge fitted, so the warning says "can". The Radeon Pro Vega II Duo and W6800X
#: Duo share gfx906/gfx1030 with cards that have no XGMI; they would need PCI ids.
XGMI_FAMILIES: Mapping[str, str] = {
    "gfx908": "Instinct MI100",
    "gfx90a": "Instinct MI200 series",
    "gfx942": "Instinct MI300 series",
    "gfx950": "Instinct MI350 series",
}
_UNDER_LOAD = QT_TRANSLATE_NOOP(
    "topology_warnings", "At idle the link may train down; check under load."
)
_RELOAD = QT_TRANSLATE_NOOP(
    "topology_warnings",
    "Read again (Refresh, or run rocmpanel topo) while a job keeps this GPU busy.",
)


def _names(indices: Iterable[int]) -> str:
    items = [str(i) for i in indices]
    if len(items) == 1:
        return translate("topology_warnings", "GPU {index}").format(index=items[0])
    return translate("topology_warnings", "GPUs {indices}").format(indices=", ".join(items))


def _pcie_warning(g: GpuPlace) -> TopologyWarning | None:
    a, pcie = g.pcie_assessment, g.pcie
    if a is None or pcie is None or g.integrated:
        return None
    who = f"{g.label} ({g.name})"
    where = f" ({pcie.source_note})"
    top = pcie.driver_top
    under_load = translate("topology_warnings", _UNDER_LOAD)
    reload = translate("topology_warnings", _RELOAD)
    if a.verdict is PcieVerdict.DEGRADED:
        return TopologyWarning(
            "pcie-degraded",
            Severity.WARNING,
            (g.index,),
            translate(
                "topology_warnings", "{gpu} runs at {now}; card and slot support {possible}{where}."
            ).format(gpu=who, now=a.now, possible=a.possible, where=where),
            translate(
                "topology_warnings",
                "Reseat the card, check any riser cable, check in the board manual that the slot "
                "has all its lanes (some share them with M.2 slots), and set the slot to Auto in "
                "the BIOS.",
            ),
        )
    if a.verdict is PcieVerdict.SLOT_LIMITED:
        return TopologyWarning(
            "pcie-slot",
            Severity.WARNING,
            (g.index,),
            translate(
                "topology_warnings",
                "{gpu} runs at {now}, all its slot supports; the card supports {card}{where}.",
            ).format(gpu=who, now=a.now, card=a.card, where=where),
            translate(
                "topology_warnings",
                "Move the card to a slot wired for {card} (usually the first x16 slot, on the "
                "CPU) if host-GPU transfers matter; inference with the model in VRAM barely "
                "notices.",
            ).format(card=a.card),
        )
    if a.verdict is PcieVerdict.DRIVER_CAPPED:
        return TopologyWarning(
            "pcie-driver-cap",
            Severity.WARNING,
            (g.index,),
            translate(
                "topology_warnings",
                "{gpu}: the amdgpu driver allows at most {possible}, below what card ({card}) "
                "and slot support{where}.",
            ).format(gpu=who, possible=a.possible, card=a.card, where=where),
            translate(
                "topology_warnings",
                "Look for amdgpu.pcie_gen_cap or amdgpu.pcie_lane_cap in /proc/cmdline and for "
                "a PCIe speed limit in the BIOS, and remove it.",
            ),
        )
    if a.verdict is PcieVerdict.IDLE and top is not None:
        driver = f"PCIe {top.speed_gts:g} GT/s x{top.width}"
        return TopologyWarning(
            "pcie-idle",
            Severity.INFO,
            (g.index,),
            translate(
                "topology_warnings", "{gpu} is at {now} now; its driver allows up to {driver}."
            ).format(gpu=who, now=a.now, driver=driver)
            + " "
            + under_load,
            reload,
        )
    if a.verdict is PcieVerdict.BELOW_MAX:
        return TopologyWarning(
            "pcie-below-max",
            Severity.INFO,
            (g.index,),
            translate(
                "topology_warnings", "{gpu} is at {now}, below its maximum {card}{where}."
            ).format(gpu=who, now=a.now, card=a.card, where=where)
            + " "
            + under_load,
            reload,
        )
    return None


def _numa_warnings(
    gpus: tuple[GpuPlace, ...], pairs: tuple[PairLink, ...], proc: tuple[int, ...] | None
) -> list[TopologyWarning]:
    out = []
    if proc:
        for g in gpus:
            if g.numa_node is not None and g.numa_node not in proc:
                n = g.numa_node
                out.append(
                    TopologyWarning(
                        "numa-process",
                        Severity.WARNING,
                        (g.index,),
                        translate(
                            "topology_warnings",
                            "{gpu} is attached to NUMA node {node}, but this process may run "
                            "only on CPUs of node {nodes}.",
                        ).format(gpu=g.label, node=n, nodes=", ".join(map(str, proc))),
                        translate(
                            "topology_warnings",
                            "Run work for {gpu} on node {node}'s CPUs, e.g. "
                            "numactl --cpunodebind={node} --membind={node} <command>.",
                        ).format(gpu=g.label, node=n),
                    )
                )
    by_index = {g.index: g for g in gpus}
    crossing = sorted(
        {
            i
            for p in pairs
            if p.a < p.b and p.kind != "XGMI"  # a < b: never the same GPU
            for i in (p.a, p.b)
            if (
                by_index[p.a].numa_node is not None
                and by_index[p.b].numa_node is not None
                and by_index[p.a].numa_node != by_index[p.b].numa_node
            )
            or (p.hops or 0) >= 3
        }
    )
    if crossing:
        groups: dict[str, list[int]] = {}
        for i in crossing:
            node = by_index[i].numa_node
            unknown = translate("topology_warnings", "unknown")
            groups.setdefault(unknown if node is None else str(node), []).append(i)
        on_node = translate("topology_warnings", "{gpus} on NUMA node {node}")
        where = "; ".join(
            on_node.format(gpus=_names(ix), node=n) for n, ix in sorted(groups.items())
        )
        out.append(
            TopologyWarning(
                "numa-pair",
                Severity.WARNING,
                tuple(crossing),
                translate(
                    "topology_warnings",
                    "Some GPUs sit on different CPU sockets ({where}): data between them "
                    "crosses the link between the sockets.",
                ).format(where=where),
                translate(
                    "topology_warnings",
                    "For a multi-GPU job choose GPUs on one NUMA node, or expect lower "
                    "all-reduce bandwidth between the groups.",
                ),
            )
        )
    return out


def _xgmi_warnings(
    gpus: tuple[GpuPlace, ...], pairs: tuple[PairLink, ...]
) -> list[TopologyWarning]:
    out = []
    by_gfx: dict[str, list[int]] = {}
    for g in gpus:
        if g.gfx is not None and g.gfx in XGMI_FAMILIES:
            by_gfx.setdefault(g.gfx, []).append(g.index)
    for gfx, members in sorted(by_gfx.items()):
        if len(members) < 2:
            continue
        inside = [p for p in pairs if p.a in members and p.b in members and p.a != p.b]
        if any(p.kind == "XGMI" for p in inside) or not any(p.has_path for p in inside):
            continue  # XGMI is there, or no link is known at all ("no-links" says that)
        family = XGMI_FAMILIES[gfx]
        out.append(
            TopologyWarning(
                "no-xgmi",
                Severity.WARNING,
                tuple(members),
                translate(
                    "topology_warnings",
                    "{gpus} ({family}, {gfx}) reach each other only over PCIe, though "
                    "{family} GPUs can be joined by Infinity Fabric (XGMI) links.",
                ).format(gpus=_names(members), family=family, gfx=gfx),
                translate(
                    "topology_warnings",
                    "On PCIe cards fit the Infinity Fabric Link bridge; on an OAM server look in "
                    "`sudo dmesg | grep -i xgmi` for the hive the driver failed to set up.",
                ),
            )
        )
    return out


def warnings_for(
    gpus: tuple[GpuPlace, ...],
    pairs: tuple[PairLink, ...],
    process_numa_nodes: tuple[int, ...] | None,
    numa_node_count: int,
) -> tuple[TopologyWarning, ...]:
    """What a user can act on, most useful first (pure)."""
    out: list[TopologyWarning] = []
    if len(gpus) == 1:
        out.append(
            TopologyWarning(
                "single-gpu",
                Severity.INFO,
                (0,),
                translate("topology_warnings", "One GPU: there is no pair of GPUs to compare."),
                translate(
                    "topology_warnings",
                    "Nothing to do; the link matrix fills in with a second GPU.",
                ),
            )
        )
    discrete = tuple(g for g in gpus if not g.integrated)
    if len(gpus) > 1 and len(discrete) < len(gpus):
        for g in gpus:
            if g.integrated:
                out.append(
                    TopologyWarning(
                        "integrated-gpu",
                        Severity.INFO,
                        (g.index,),
                        translate(
                            "topology_warnings",
                            "{gpu} ({name}) is integrated: it shares system memory and is much "
                            "slower than a discrete GPU.",
                        ).format(gpu=g.label, name=g.name),
                        translate(
                            "topology_warnings",
                            "Leave it out of multi-GPU jobs (the default GPU choice does).",
                        ),
                    )
                )
    known = [p for p in pairs if p.a != p.b]
    if known and not any(p.has_path for p in known):
        out.append(
            TopologyWarning(
                "no-links",
                Severity.INFO,
                tuple(g.index for g in gpus),
                translate(
                    "topology_warnings",
                    "The KFD topology lists no links between these GPUs (a captured tree may "
                    "leave io_links out), so the matrix has no types.",
                ),
                translate(
                    "topology_warnings",
                    "Read the live /sys of the machine, or capture its "
                    "class/kfd/kfd/topology/nodes/*/io_links too.",
                ),
            )
        )
    out += [w for g in gpus if (w := _pcie_warning(g)) is not None]
    discrete_pairs = tuple(
        p
        for p in pairs
        if p.a in {g.index for g in discrete} and p.b in {g.index for g in discrete}
    )
    if numa_node_count > 1 or any(p.hops and p.hops >= 3 for p in discrete_pairs):
        out += _numa_warnings(discrete, discrete_pairs, process_numa_nodes)
    out += _xgmi_warnings(discrete, discrete_pairs)
    order = {Severity.WARNING: 0, Severity.INFO: 1}
    return tuple(sorted(out, key=lambda w: order[w.severity]))


__all__ = ["XGMI_FAMILIES", "Severity", "TopologyWarning", "warnings_for"]
