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
from typing import Any

from rocmpanel.base import cliargs
from rocmpanel.base.units import format_gib
from rocmpanel.monitor.sample import GpuIdentity, Sample

log = logging.getLogger(__name__)

MIN_INTERVAL_S = 0.1
MAX_INTERVAL_S = 86400.0  # a day
MAX_COUNT = 10**9


PROG = "rocmpanel telemetry"
SCRAPE_EXAMPLE = """\
Serving to Prometheus (--prometheus): the page is http://HOST:PORT/metrics. With a key
(the default), tell Prometheus to send it, from a file only it can read:

  scrape_configs:
    - job_name: rocmpanel
      authorization:
        credentials_file: /etc/prometheus/rocmpanel.key   # a copy of the key, one line
      static_configs:
        - targets: ["127.0.0.1:9400"]

The key is made on first use and kept in rocmpanel's config folder (telemetry/api-key,
mode 0600); --show-key prints it, --new-key replaces it. Metrics: rocmpanel_gpu_* with
labels gpu, bdf, name, host; units in the names (_percent, _bytes, _celsius, _watts,
_hertz)."""


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


def listen_address(text: str) -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[IPv6]:PORT`` -> (host, port); the host is 127.0.0.1
    when none is given."""
    from rocmpanel.monitor.prometheus_export import DEFAULT_HOST

    value = text.strip()
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = DEFAULT_HOST, value
    host = host.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or any(c.isspace() or c in "/?#@[]" for c in host):
        raise argparse.ArgumentTypeError(f"{text!r}: give [HOST:]PORT, as in 127.0.0.1:9400")
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the port must be a number from 0 to 65535, as in 127.0.0.1:9400"
        )
    return host, int(port_text)


def node_url(text: str) -> str:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.monitor.nodes import check_url

    try:
        return check_url(text)
    except PanelError as exc:
        raise argparse.ArgumentTypeError(exc.message) from exc


def _fmt(value: float | int | None, unit: str = "", digits: int = 0) -> str:
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
        head = f"{ident.card or ident.key}  {ident.name}  [{ident.pci_slot or 'n/a'}]"
        if g.asleep:
            lines.append(f"{head}  asleep (not woken)")
            lines.append(f"  VRAM {_gib(g.vram_used_bytes)} / {_gib(g.vram_total_bytes)}")
            continue
        temps = "  ".join(f"{s} {_fmt(g.temp_c(s), ' °C')}" for s in ("edge", "junction", "mem"))
        lines += [
            head,
            f"  busy {_fmt(g.busy_percent, ' %')}   "
            f"memory bandwidth {_fmt(g.mem_busy_percent, ' %')}",
            f"  VRAM {_gib(g.vram_used_bytes)} / {_gib(g.vram_total_bytes)}   "
            f"GTT {_gib(g.gtt_used_bytes)} / {_gib(g.gtt_total_bytes)}",
            f"  {temps}",
            f"  power {_fmt(g.power_w, ' W', 1)} / cap {_fmt(g.power_cap_w, ' W')}   "
            f"sclk {_fmt(g.sclk_mhz, ' MHz')}  mclk {_fmt(g.mclk_mhz, ' MHz')}",
            f"  fan {_fmt(g.fan_rpm, ' rpm')} ({_fmt(g.fan_percent, ' %')})   "
            f"link {g.link or 'n/a'}   perf level {g.perf_level or 'n/a'}",
        ]
        lines += [f"  no value for {name}: {reason}" for name, reason in g.invalid]
    host = sample.host
    if host is not None:
        lines.append(
            f"host  CPU {_fmt(host.cpu_percent, ' %')}   RAM {_gib(host.ram_used_bytes)} / "
            f"{_gib(host.ram_total_bytes)}   swap {_gib(host.swap_used_bytes)}"
        )
    for p in sample.processes:
        label = f" (rocmpanel job {p.worker})" if p.worker else ""
        lines.append(
            f"  pid {p.pid} {p.name}{label} on {p.pci_slot or 'n/a'}: VRAM {_gib(p.vram_bytes)}"
            f"  GTT {_gib(p.gtt_bytes)}  engine {_fmt(p.engine_percent, ' %')}"
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

    wrong = _misplaced_options(args)
    if wrong:
        print(f"{PROG}: {wrong}", file=sys.stderr)
        return 2
    if args.node is not None:
        return _read_node(args)
    if args.prometheus is not None:
        return _serve_prometheus(args)
    return _print_samples(args)


def _misplaced_options(args: argparse.Namespace) -> str:
    if args.key_file is not None and args.node is None:
        return "--key-file goes with --node"
    if args.prometheus is None:
        if args.show_key or args.new_key or args.no_key:
            return "--show-key, --new-key and --no-key go with --prometheus"
        return ""
    if args.count is not None or args.once:
        return "--prometheus serves until Ctrl+C: --once and --count do not go with it"
    if args.no_key and (args.show_key or args.new_key):
        return "--no-key serves without a key: --show-key and --new-key do not go with it"
    if args.no_key and not _is_loopback(args.prometheus[0]):
        return (
            f"--no-key is allowed only on 127.0.0.1 (or ::1): on {args.prometheus[0]} anyone "
            "who can reach this machine could read the page"
        )
    return ""


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


# -- --node: another machine's page, once ----------------------------------------------
def _read_node(args: argparse.Namespace) -> int:
    import sys

    from rocmpanel.monitor.nodes import NodeSpec, check_name, poll
    from rocmpanel.monitor.prometheus_read import RemoteGpu

    key = None
    if args.key_file is not None:
        key, problem = _key_from_file(args.key_file)
        if problem:
            print(f"{PROG}: {problem}", file=sys.stderr)
            return 1
    result = poll(NodeSpec(check_name("", args.node), args.node, key))
    if result.reading is None:
        message = result.error.message if result.error else "no answer"
        print(f"{PROG}: {args.node}: {message}", file=sys.stderr)
        return 1
    reading = result.reading

    def extra(g: RemoteGpu) -> dict[str, Any]:
        return {"host": g.host, "serial": g.serial, "ecc_correctable": g.ecc_correctable,
                "ecc_uncorrectable": g.ecc_uncorrectable, "healthy": g.healthy}  # fmt: skip

    if args.json:
        gpus = [{**g.sample.to_json(), "key": g.sample.identity.key, **extra(g)}
                for g in reading.gpus]  # fmt: skip
        doc = {"url": args.node, "source": reading.source, "t": round(result.t, 3), "gpus": gpus}
        print(json.dumps(doc), flush=True)
        return 0
    print(f"{args.node}: {reading.source}, {len(reading.gpus)} GPU(s)")
    for g in reading.gpus:
        lines = text_lines(Sample(result.t, (g.sample,), None))
        errors = f"  ECC errors: {_fmt(g.ecc_correctable)} corrected, "
        errors += f"{_fmt(g.ecc_uncorrectable)} uncorrected"
        if g.healthy is not None:
            errors += "   health: " + ("healthy" if g.healthy else "UNHEALTHY")
        where = f"  host {g.host}" if g.host else ""
        print("\n".join([lines[0] + where, *lines[1:], errors]), flush=True)
    return 0


def _key_from_file(path: str) -> tuple[str | None, str]:
    from rocmpanel.base.files import read_text

    try:
        value = read_text(path, 4096).strip()
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"the key file {path} cannot be read ({getattr(exc, 'strerror', None) or exc})"
    if not value or not value.isprintable():
        return None, f"the key file {path} does not hold one line of text (the key)"
    return value, ""


# -- --prometheus: serve this machine's telemetry ------------------------------------------
def _serve_prometheus(args: argparse.Namespace) -> int:
    import sys
    import time

    from rocmpanel.base.errors import PanelError
    from rocmpanel.monitor.collector import TelemetryCollector
    from rocmpanel.monitor.prometheus_export import MetricsServer, OwnCollector, registry_for

    host, port = args.prometheus
    try:
        key, key_note = _telemetry_key(args, host, port)
    except PanelError as exc:
        print(f"{PROG}: {exc.message}", file=sys.stderr)
        return 1
    sysfs_root = args.sysfs_root or "/sys"
    collector = TelemetryCollector(
        sysfs_root, args.proc_root or "/proc", gpus=inventory_gpus(sysfs_root)
    )
    try:
        own = OwnCollector()
        own.update(collector.collect())
        try:
            server = MetricsServer(registry_for(own), host, port, key=key)
        except PanelError as exc:
            print(f"{PROG}: {exc.message}", file=sys.stderr)
            return 1
        with server:
            _announce(server.url, key, key_note, args.show_key, host)
            try:
                next_at = time.monotonic()
                while True:
                    next_at += args.interval
                    time.sleep(max(0.0, next_at - time.monotonic()))
                    own.update(collector.collect())
            except KeyboardInterrupt:  # Ctrl+C, or SIGTERM/SIGHUP through jobs.lifetime
                print("Stopped serving telemetry.", file=sys.stderr, flush=True)
    finally:
        collector.close()
    return 0


def _telemetry_key(args: argparse.Namespace, host: str, port: int) -> tuple[str | None, str]:
    """(the key or None, where it is kept); the port is checked before --new-key replaces
    the stored key, so a refused run changes nothing."""
    from rocmpanel.base import api_key
    from rocmpanel.base.errors import PanelError

    if args.no_key:
        return None, ""
    if args.new_key:
        problem = _port_problem(host, port)
        if problem:
            raise PanelError(problem)
    stored = (
        api_key.regenerate(api_key.TELEMETRY)
        if args.new_key
        else api_key.load_or_create(api_key.TELEMETRY)
    )
    if stored.note:
        import sys

        print(f"{PROG}: {stored.note}", file=sys.stderr)
    made = "new, " if stored.created else ""
    return stored.value, f"{made}stored in {stored.path}"


def _port_problem(host: str, port: int) -> str:
    import socket

    from rocmpanel.monitor.prometheus_export import listen_problem

    if port == 0:
        return ""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return listen_problem(host, port, exc)
    return ""


def _announce(url: str, key: str | None, key_note: str, show_key: bool, host: str) -> None:
    import shlex
    import sys

    from rocmpanel.base.api_key import mask

    print(f"Serving GPU telemetry at {url} (Prometheus text format).", flush=True)
    if key is None:
        print("No API key: any program on this machine can read the page.")
        print(f"Example: curl {url}")
    else:
        print(f"API key: {key if show_key else mask(key)} ({key_note}).")
        path = key_note.split("stored in ", 1)[-1]
        print(f'Example: curl -H "Authorization: Bearer $(cat {shlex.quote(path)})" {url}')
    if not _is_loopback(host):
        print(
            f"{PROG}: warning: listening on {host}: anyone who can reach this machine there "
            "and has the key can read its telemetry, as plain HTTP (no TLS).",
            file=sys.stderr,
        )
    print("Press Ctrl+C to stop.", flush=True)
