"""``rocmpanel telemetry --prometheus`` and ``--node``: this machine's telemetry served as a
Prometheus page (until Ctrl+C or SIGTERM; 127.0.0.1 unless a host is given; behind the
stored telemetry API key unless ``--no-key``, which only a loopback address allows), and
another machine's page read once (AMD's GPU metrics exporter or another rocmpanel).

The ``telemetry`` command (:mod:`rocmpanel.monitor.cli`) declares the options and hands
these two modes to :func:`read_node` and :func:`serve_prometheus`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from typing import TYPE_CHECKING, Any

from rocmpanel.base.units import format_gib

if TYPE_CHECKING:
    from rocmpanel.monitor.prometheus_read import RemoteGpu

log = logging.getLogger(__name__)

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
mode 0600); the start shows it masked, --show-key prints it whole, --new-key replaces it.
Another rocmpanel reads the page with --node URL --key-file FILE (a copy of the key).
Metrics: rocmpanel_gpu_* with labels gpu, bdf, name, host; units in the names (_percent,
_bytes, _celsius, _watts, _hertz); rocmpanel_gpu_info's labels gfx, link, perf_level."""


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


def misplaced_options(args: argparse.Namespace) -> str:
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


# -- --node: another machine's page, once ----------------------------------------------
def read_node(args: argparse.Namespace) -> int:
    import sys

    from rocmpanel.monitor.nodes import NodeSpec, Problem, check_name, poll

    key = None
    if args.key_file is not None:
        key, problem = _key_from_file(args.key_file)
        if problem:
            print(f"{PROG}: {problem}", file=sys.stderr)
            return 1
    result = poll(NodeSpec(check_name("", args.node), args.node, key))
    if result.reading is None:
        message = result.error.message if result.error else "no answer"
        if result.error is not None and result.error.kind is Problem.NEEDS_KEY:
            message += " " + (
                "Give it with --key-file FILE: a file holding the node's key, one line (on a "
                "rocmpanel node it is telemetry/api-key in its config folder; "
                "'rocmpanel telemetry --prometheus … --show-key' prints it)."
                if key is None
                else f"Check that {args.key_file} holds the node's current key."
            )
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
        print("\n".join(node_gpu_lines(g)), flush=True)
    return 0


def node_gpu_lines(gpu: RemoteGpu) -> list[str]:
    """One GPU of another node: only what its page carries (an exporter page has no fan,
    GTT or link, say), rather than a row of "n/a" that reads as if the GPU lacked them."""
    from rocmpanel.monitor.cli import fmt  # the telemetry command's figures, as it prints

    g = gpu.sample
    ident = g.identity
    head = f"{ident.key}  {ident.name}"
    if ident.pci_slot and ident.pci_slot != ident.key:
        head += f"  [{ident.pci_slot}]"
    head += f"  {ident.gfx}" if ident.gfx else ""
    head += f"  host {gpu.host}" if gpu.host else ""
    if g.asleep:
        head += "  asleep (not woken)"

    def pair(label: str, used: int | None, total: int | None) -> str | None:
        if used is None and total is None:
            return None
        return f"{label} {format_gib(used, digits=2)} / {format_gib(total, digits=2)}"

    def one(label: str, value: float | int | None, unit: str, digits: int = 0) -> str | None:
        return None if value is None else f"{label} {fmt(value, unit, digits)}"

    power = one("power", g.power_w, " W", 1)
    if g.power_cap_w is not None:
        power = f"{power or 'power n/a'} / cap {fmt(g.power_cap_w, ' W')}"
    ecc = None
    if gpu.ecc_correctable is not None or gpu.ecc_uncorrectable is not None:
        ecc = f"ECC errors: {fmt(gpu.ecc_correctable)} corrected, "
        ecc += f"{fmt(gpu.ecc_uncorrectable)} uncorrected"
    groups: list[list[str | None]] = [
        [one("busy", g.busy_percent, " %"), one("memory bandwidth", g.mem_busy_percent, " %")],
        [pair("VRAM", g.vram_used_bytes, g.vram_total_bytes),
         pair("GTT", g.gtt_used_bytes, g.gtt_total_bytes)],
        [one(s, g.temp_c(s), " °C") for s in ("edge", "junction", "mem")],
        [power, one("sclk", g.sclk_mhz, " MHz"), one("mclk", g.mclk_mhz, " MHz")],
        [one("fan", g.fan_rpm, " rpm"), one("fan duty", g.fan_percent, " %"),
         g.link and f"link {g.link}", g.perf_level and f"perf level {g.perf_level}"],
        [ecc, None if gpu.healthy is None else
         "health: " + ("healthy" if gpu.healthy else "UNHEALTHY")],
    ]  # fmt: skip
    lines = [head]
    for group in groups:
        shown = [item for item in group if item]
        if shown:
            lines.append("  " + "   ".join(shown))
    lines += [f"  no value for {name}: {reason}" for name, reason in g.invalid]
    return lines


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
def serve_prometheus(args: argparse.Namespace) -> int:
    import sys
    import time

    from rocmpanel.base.errors import PanelError
    from rocmpanel.monitor.cli import inventory_gpus
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
        if os.name == "posix":  # as the server binds (on Windows it would share the port)
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
        if show_key:
            print(f"API key: {key} ({key_note}).")
        else:
            print(f"API key: {mask(key)} ({key_note}; masked here: --show-key prints it whole).")
        print("Another rocmpanel reads this page with: rocmpanel telemetry --node URL "
              "--key-file FILE (FILE: a copy of the key).")  # fmt: skip
        path = key_note.split("stored in ", 1)[-1]
        print(f'Example: curl -H "Authorization: Bearer $(cat {shlex.quote(path)})" {url}')
    if not _is_loopback(host):
        print(
            f"{PROG}: warning: listening on {host}: anyone who can reach this machine there "
            "and has the key can read its telemetry, as plain HTTP (no TLS).",
            file=sys.stderr,
        )
    print("Press Ctrl+C to stop.", flush=True)
