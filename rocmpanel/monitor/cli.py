"""``rocmpanel telemetry``: read GPU, host and per-process telemetry without the window.

One sample (``--once``, the default) or ``--count N`` samples ``--interval S`` apart; with
``--json`` one JSON object per line. ``--sysfs-root``/``--proc-root`` read a captured tree
laid out like /sys and /proc (``class/drm/cardN/device`` may be a symlink). The GPUs and
their names come from the machine inventory of the tree read, as in the window (a CLI may
block on the detection); when the detection fails or lists no GPU, they are found in the
tree and named from sysfs and the PCI-id table.

``--prometheus [HOST:]PORT`` serves the same telemetry as a Prometheus page until Ctrl+C
or SIGTERM (127.0.0.1 unless a host is given; behind the stored telemetry API key unless
``--no-key``, which only 127.0.0.1 allows). ``--node URL`` reads another machine's page
once (AMD's GPU metrics exporter or another rocmpanel) and prints its GPUs.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmpanel.base import cliargs
from rocmpanel.base.units import format_gib
from rocmpanel.monitor.prometheus_cli import SCRAPE_EXAMPLE, listen_address, node_url
from rocmpanel.monitor.sample import GpuIdentity, Sample

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

MIN_INTERVAL_S = 0.1
MAX_INTERVAL_S = 86400.0  # a day
MAX_COUNT = 10**9


PROG = "rocmpanel telemetry"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "telemetry",
        help="print GPU, host and per-process telemetry (one sample or a series)",
        description="Read the AMD GPUs' telemetry (load, VRAM, temperatures, power, clocks, "
        "fans), the host's and each process's GPU memory, the way the Monitor tab does, and "
        "print one sample or a series of them; or serve it to Prometheus (--prometheus), or "
        "read another machine's GPUs from its Prometheus page (--node).",
        epilog=SCRAPE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="one sample (the default)")
    mode.add_argument(
        "--count",
        type=cliargs.integer(0, MAX_COUNT),
        default=None,
        metavar="N",
        help="take N samples (0: until Ctrl+C)",
    )
    parser.add_argument(
        "--interval",
        type=cliargs.number(MIN_INTERVAL_S, MAX_INTERVAL_S, what="a number of seconds"),
        default=1.0,
        metavar="S",
        help=f"seconds between samples ({MIN_INTERVAL_S:g} to {MAX_INTERVAL_S:g}; default 1)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per sample; figures outside their physical range are null, "
        'with the reason in "invalid"',
    )
    parser.add_argument(
        "--sysfs-root",
        type=cliargs.folder("a /sys-like tree"),
        default=None,
        metavar="DIR",
        help="a /sys-like tree",
    )
    parser.add_argument(
        "--proc-root",
        type=cliargs.folder("a /proc-like tree"),
        default=None,
        metavar="DIR",
        help="a /proc-like tree",
    )
    remote = parser.add_mutually_exclusive_group()
    remote.add_argument(
        "--prometheus",
        type=listen_address,
        default=None,
        metavar="[HOST:]PORT",
        help="serve this machine's telemetry as a Prometheus page at /metrics until Ctrl+C "
        "(off by default; HOST 127.0.0.1 unless given: another address lets the network "
        "read it, over plain HTTP); sampled every --interval seconds",
    )
    remote.add_argument(
        "--node",
        type=node_url,
        default=None,
        metavar="URL",
        help="read another machine's GPUs once from its Prometheus page (AMD's GPU metrics "
        "exporter, default port 5000, or another rocmpanel) and print them",
    )
    parser.add_argument(
        "--key-file",
        type=cliargs.nonempty("a file name", has_default=False),
        default=None,
        metavar="FILE",
        help="with --node: the node's API key, read from this file (one line)",
    )
    parser.add_argument(
        "--show-key", action="store_true", help="with --prometheus: print the whole API key"
    )
    parser.add_argument(
        "--new-key",
        action="store_true",
        help="with --prometheus: replace the stored API key (the old one is backed up)",
    )
    parser.add_argument(
        "--no-key",
        action="store_true",
        help="with --prometheus on 127.0.0.1 only: serve without a key (any local user "
        "can read the page)",
    )
    parser.set_defaults(func=run)


def fmt(value: float | int | None, unit: str = "", digits: int = 0) -> str:
    """A figure with its unit, or "n/a"."""
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}{unit}"


def _gib(value: int | None) -> str:
    return format_gib(value, digits=2)


def text_lines(sample: Sample) -> list[str]:
    """A readable rendering of one Sample."""
    lines: list[str] = []
    if not sample.gpus:
        lines.append("No AMD GPU found.")
    for g in sample.gpus:
        ident = g.identity
        first = ident.card or ident.key
        slot = ident.pci_slot or "n/a"
        head = f"{first}  {ident.name}" + ("" if slot == first else f"  [{slot}]")
        if g.asleep:
            lines.append(f"{head}  asleep (not woken)")
            lines.append(f"  VRAM {_gib(g.vram_used_bytes)} / {_gib(g.vram_total_bytes)}")
            continue
        temps = "  ".join(f"{s} {fmt(g.temp_c(s), ' °C')}" for s in ("edge", "junction", "mem"))
        lines += [
            head,
            f"  busy {fmt(g.busy_percent, ' %')}   "
            f"memory bandwidth {fmt(g.mem_busy_percent, ' %')}",
            f"  VRAM {_gib(g.vram_used_bytes)} / {_gib(g.vram_total_bytes)}   "
            f"GTT {_gib(g.gtt_used_bytes)} / {_gib(g.gtt_total_bytes)}",
            f"  {temps}",
            f"  power {fmt(g.power_w, ' W', 1)} / cap {fmt(g.power_cap_w, ' W')}   "
            f"sclk {fmt(g.sclk_mhz, ' MHz')}  mclk {fmt(g.mclk_mhz, ' MHz')}",
            f"  fan {fmt(g.fan_rpm, ' rpm')} ({fmt(g.fan_percent, ' %')})   "
            f"link {g.link or 'n/a'}   perf level {g.perf_level or 'n/a'}",
        ]
        lines += [f"  no value for {name}: {reason}" for name, reason in g.invalid]
    host = sample.host
    if host is not None:
        lines.append(
            f"host  CPU {fmt(host.cpu_percent, ' %')}   RAM {_gib(host.ram_used_bytes)} / "
            f"{_gib(host.ram_total_bytes)}   swap {_gib(host.swap_used_bytes)}"
        )
    for p in sample.processes:
        label = f" (rocmpanel job {p.worker})" if p.worker else ""
        lines.append(
            f"  pid {p.pid} {p.name}{label} on {p.pci_slot or 'n/a'}: VRAM {_gib(p.vram_bytes)}"
            f"  GTT {_gib(p.gtt_bytes)}  engine {fmt(p.engine_percent, ' %')}"
        )
        lines += [f"    no value for {name}: {reason}" for name, reason in p.invalid]
    return lines


def inventory_gpus(sysfs_root: Path | str) -> list[GpuIdentity] | None:
    """The GPUs the machine detection lists for ``sysfs_root``, named as the window names
    them; None when the detection fails or lists none (the GPUs are then found in the tree)."""
    from rocmpanel.machine.inventory import detect_inventory
    from rocmpanel.monitor.source_factory import identity_of

    try:
        inventory = detect_inventory(sysfs_root=sysfs_root)
    except Exception as exc:  # a detection bug must not stop telemetry: name them ourselves
        log.warning("machine detection failed, naming the GPUs from sysfs: %s", exc)
        log.debug("machine detection failed", exc_info=True)
        return None
    return [identity_of(gpu) for gpu in inventory.gpus] or None


def run(args: argparse.Namespace) -> int:
    import sys

    from rocmpanel.monitor.prometheus_cli import misplaced_options, read_node, serve_prometheus

    wrong = misplaced_options(args)
    if wrong:
        print(f"{PROG}: {wrong}", file=sys.stderr)
        return 2
    if args.node is not None:
        return read_node(args)
    if args.prometheus is not None:
        return serve_prometheus(args)
    return _print_samples(args)


def _print_samples(args: argparse.Namespace) -> int:
    import time

    from rocmpanel.monitor.collector import TelemetryCollector

    count = 1 if args.count is None else args.count  # argparse checked both ranges
    sysfs_root = args.sysfs_root or "/sys"
    gpus = inventory_gpus(sysfs_root)
    collector = TelemetryCollector(
        sysfs_root, args.proc_root or "/proc", process_interval_s=0.0, gpus=gpus
    )
    time.sleep(0.25)  # CPU percent and engine percent need an interval to measure over
    collector.read_processes(force=True)
    try:
        taken = 0
        next_at = time.monotonic()
        while count == 0 or taken < count:
            sample = collector.collect()
            if args.json:
                print(json.dumps(sample.to_json()), flush=True)
            else:
                print("\n".join(text_lines(sample)), flush=True)
            taken += 1
            if count and taken >= count:
                break
            next_at += args.interval
            time.sleep(max(0.0, next_at - time.monotonic()))
    finally:
        collector.close()
    return 0
