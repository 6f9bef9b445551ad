"""``rocmpanel topo``: the GPU topology as ``rocm-smi --showtopo`` shows it, with advice.

Prints the link matrix (type, hops, weight of each GPU pair), each GPU's NUMA node and
PCIe link (now and maximum, and where it was read), and the warnings with what to do.
``--json`` prints :meth:`Topology.to_json` instead. ``--sysfs-root DIR`` reads a captured
/sys-like tree (a friend's ``class/kfd``, ``bus/pci/devices`` and ``devices`` folders); by
default ``$ROCMPANEL_SYSFS_ROOT`` when set (as the window and ``--gpus`` read it), else /sys.

Exit status 0, also when no KFD topology is found (the one sentence that says so is the
answer, not a failure); 2 for a usage error (argparse's).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmpanel.base import cliargs
from rocmpanel.jobs.gpu_choice import SYSFS_ROOT_VARIABLE

if TYPE_CHECKING:  # the model is imported when the command runs: --help stays fast
    from rocmpanel.multigpu.topology import GpuPlace, Topology

NO_TOPOLOGY = (
    "No ROCm kernel driver topology was found under {root}/class/kfd: the amdgpu driver "
    "has no compute (KFD) interface here, so there are no GPUs to connect."
)
NO_GPU_NODE = (
    "The KFD topology under {root}/class/kfd lists no GPU node that could be read (their "
    "properties files are missing or damaged), so there are no GPUs to connect."
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "topo",
        help="show how the GPUs are connected (XGMI/PCIe, NUMA, PCIe speed) with advice",
        description="Read the KFD topology and PCI sysfs: the link type, hops and weight "
        "between each pair of GPUs (like rocm-smi --showtopo), each GPU's NUMA node and "
        "PCIe link, and warnings with what to do. Exit code 0, also when no GPU topology "
        "is found.",
    )
    parser.add_argument("--json", action="store_true", help="print the topology as JSON")
    parser.add_argument(
        "--sysfs-root",
        type=cliargs.folder("a /sys-like tree"),
        default=None,
        metavar="DIR",
        help="read a captured /sys-like tree instead of this machine's /sys",
    )
    parser.set_defaults(func=run)


def _cell(text: str, width: int) -> str:
    return text.ljust(width)


def matrix_lines(topo: Topology) -> list[str]:
    """The link matrix as an ASCII table: "XGMI 1/15" = type, hops/weight."""
    from rocmpanel.multigpu.topology import NO_PATH, SAME

    labels = [f"GPU{g.index}" for g in topo.gpus]
    cells: list[list[str]] = []
    for a in topo.gpus:
        row = []
        for b in topo.gpus:
            pair = topo.link(a.index, b.index)
            if pair.kind == SAME:
                row.append("-")
            elif pair.kind == NO_PATH:
                row.append("n/a")
            else:
                hops = "?" if pair.hops is None else str(pair.hops)
                weight = "?" if pair.weight is None else str(pair.weight)
                row.append(f"{pair.kind} {hops}/{weight}")
        cells.append(row)
    width = max([len(x) for row in cells for x in row] + [len(x) for x in labels]) + 2
    rows = [
        (_cell(label, 6) + "".join(_cell(x, width) for x in row)).rstrip()
        for label, row in zip(labels, cells, strict=True)
    ]
    head = (_cell("", 6) + "".join(_cell(x, width) for x in labels)).rstrip()
    lines = [head, "-" * max(len(x) for x in (head, *rows)), *rows]
    lines.append("(type hops/weight; hops: links on the path in the KFD graph, 1 = direct)")
    return lines


def _pcie_line(g: GpuPlace) -> str:
    from rocmpanel.machine.pcie_link import describe

    if g.pcie is None:
        return "PCIe n/a (no link files found)"
    link = g.pcie.link
    now = describe(link.speed_gts, link.width)
    most = describe(link.max_speed_gts, link.max_width)
    return f"{now} now, card max {most} ({g.pcie.source_note})"


def text_lines(topo: Topology) -> list[str]:
    """The whole report as text."""
    lines = []
    for g in topo.gpus:
        numa = "n/a" if g.numa_node is None else str(g.numa_node)
        kind = " integrated" if g.integrated else ""
        lines.append(f"GPU{g.index}  {g.name}{kind}  [{g.bdf or 'n/a'}]  {g.gfx or 'gfx n/a'}")
        lines.append(f"      NUMA node {numa}; {_pcie_line(g)}")
    if len(topo.gpus) > 1:
        lines.append("")
        lines += matrix_lines(topo)
    if topo.process_numa_nodes is not None:
        nodes = ", ".join(map(str, topo.process_numa_nodes)) or "n/a"
        lines.append(f"This process may run on CPUs of NUMA node {nodes}.")
    lines.append("")
    if not topo.warnings:
        lines.append("Nothing to act on.")
    for w in topo.warnings:
        lines.append(f"{w.severity.value.upper()}: {w.message}")
        lines.append(f"  What to do: {w.what_to_do}")
    return lines


def run(args: argparse.Namespace) -> int:
    from rocmpanel.multigpu.topology import read_topology

    # As the window and the GPU choice do: a recorded tree named by $ROCMPANEL_SYSFS_ROOT.
    root = args.sysfs_root or os.environ.get(SYSFS_ROOT_VARIABLE) or "/sys"
    topo = read_topology(root)
    missing = ""
    if not topo.found:
        nodes = Path(root) / "class/kfd/kfd/topology/nodes"
        missing = (NO_GPU_NODE if nodes.is_dir() else NO_TOPOLOGY).format(root=root.rstrip("/"))
    if args.json:
        data = topo.to_json()
        if missing:
            data["message"] = missing
        print(json.dumps(data, indent=2))
        return 0
    if missing:
        print(missing)
        return 0
    print("\n".join(text_lines(topo)))
    return 0
