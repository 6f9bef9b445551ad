"""Typed telemetry records: one ``Sample`` per tick, ``None`` for what a GPU does not report.

Units are converted once, here at the boundary: bytes, degrees Celsius, watts, MHz, percent.
``to_json`` gives the shape ``rocmpanel telemetry --json`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TEMP_SENSORS: tuple[str, ...] = ("edge", "junction", "mem")


@dataclass(frozen=True)
class GpuIdentity:
    """What does not change while the panel runs: where the GPU is and what it is."""

    key: str  # stable id for history and tables: the PCI slot, or the card name
    card: str | None  # "card0" on Linux, None elsewhere
    pci_slot: str | None  # "0000:03:00.0"
    pci_id: str | None  # "1002:744c", lower-case hex
    name: str  # product name when the card reports one, else a name built from the PCI id
    gfx: str | None = None  # "gfx1100" when the KFD topology says so


@dataclass(frozen=True)
class GpuSample:
    """One GPU at one instant. ``asleep``: runtime-suspended, so only memory figures are read."""

    identity: GpuIdentity
    asleep: bool
    busy_percent: float | None = None
    mem_busy_percent: float | None = None  # memory *bandwidth* in use, not fill
    vram_used_bytes: int | None = None
    vram_total_bytes: int | None = None
    vis_vram_used_bytes: int | None = None
    vis_vram_total_bytes: int | None = None
    gtt_used_bytes: int | None = None
    gtt_total_bytes: int | None = None
    temp_edge_c: float | None = None
    temp_junction_c: float | None = None
    temp_mem_c: float | None = None
    crit_edge_c: float | None = None
    crit_junction_c: float | None = None
    crit_mem_c: float | None = None
    power_w: float | None = None
    power_cap_w: float | None = None
    sclk_mhz: float | None = None
    mclk_mhz: float | None = None
    fan_rpm: int | None = None
    fan_percent: float | None = None  # pwm1 scaled to 0-100
    link: str | None = None  # "16.0 GT/s x16"
    perf_level: str | None = None  # power_dpm_force_performance_level
    # Figures read but outside their physical range (monitor.ranges), so None above:
    # (name in the JSON, reason), e.g. ("power_w", "1e+26 W is outside ... 0 to 2000 W").
    invalid: tuple[tuple[str, str], ...] = ()

    def temp_c(self, sensor: str) -> float | None:
        return {"edge": self.temp_edge_c, "junction": self.temp_junction_c, "mem": self.temp_mem_c}[
            sensor
        ]

    def crit_c(self, sensor: str) -> float | None:
        return {"edge": self.crit_edge_c, "junction": self.crit_junction_c, "mem": self.crit_mem_c}[
            sensor
        ]

    def to_json(self) -> dict[str, Any]:
        ident = self.identity
        return {
            "pci_slot": ident.pci_slot,
            "pci_id": ident.pci_id,
            "asleep": self.asleep,
            "busy_percent": _num(self.busy_percent),
            "vram_used_bytes": self.vram_used_bytes,
            "vram_total_bytes": self.vram_total_bytes,
            "gtt_used_bytes": self.gtt_used_bytes,
            "temps_c": {s: self.temp_c(s) for s in TEMP_SENSORS},
            "temp_crit_c": {s: self.crit_c(s) for s in TEMP_SENSORS},
            "power_w": self.power_w,
            "power_cap_w": self.power_cap_w,
            "sclk_mhz": _num(self.sclk_mhz),
            "mclk_mhz": _num(self.mclk_mhz),
            "fan_rpm": self.fan_rpm,
            "link": self.link,
            # Beyond the documented shape: extra figures a script may want.
            "card": ident.card,
            "name": ident.name,
            "gfx": ident.gfx,
            "mem_busy_percent": _num(self.mem_busy_percent),
            "gtt_total_bytes": self.gtt_total_bytes,
            "vis_vram_used_bytes": self.vis_vram_used_bytes,
            "vis_vram_total_bytes": self.vis_vram_total_bytes,
            "fan_percent": self.fan_percent,
            "perf_level": self.perf_level,
            "invalid": dict(self.invalid),
        }


@dataclass(frozen=True)
class HostSample:
    """The host: CPU (overall and per core), memory, swap and load average."""

    cpu_percent: float | None
    per_core_percent: tuple[float, ...]
    ram_used_bytes: int | None
    ram_total_bytes: int | None
    swap_used_bytes: int | None
    swap_total_bytes: int | None
    load_avg: tuple[float, float, float] | None

    def to_json(self) -> dict[str, Any]:
        return {
            "cpu_percent": self.cpu_percent,
            "per_core_percent": list(self.per_core_percent),
            "ram_used_bytes": self.ram_used_bytes,
            "ram_total_bytes": self.ram_total_bytes,
            "swap_used_bytes": self.swap_used_bytes,
            "swap_total_bytes": self.swap_total_bytes,
            "load_avg": list(self.load_avg) if self.load_avg is not None else None,
        }


@dataclass(frozen=True)
class ProcessSample:
    """One process's use of one GPU (summed over its de-duplicated DRM clients)."""

    pid: int
    name: str
    pci_slot: str | None
    vram_bytes: int | None
    gtt_bytes: int | None
    engine_percent: float | None  # busiest engine; None on the first scan or without engines
    engines: tuple[tuple[str, float], ...] = ()  # per-engine percent, e.g. ("gfx", 12.5)
    worker: str | None = None  # the panel's own job name when this is one of our workers
    sources: tuple[str, ...] = ()  # "fdinfo", "kfd"
    invalid: tuple[tuple[str, str], ...] = ()  # (figure, reason) dropped by monitor.ranges

    def to_json(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "name": self.name,
            "pci_slot": self.pci_slot,
            "vram_bytes": self.vram_bytes,
            "gtt_bytes": self.gtt_bytes,
            "engine_percent": self.engine_percent,
            "engines": dict(self.engines),
            "worker": self.worker,
            "sources": list(self.sources),
            "invalid": dict(self.invalid),
        }


@dataclass(frozen=True)
class Sample:
    """Everything read in one tick; ``t`` is Unix time in seconds."""

    t: float
    gpus: tuple[GpuSample, ...]
    host: HostSample | None
    processes: tuple[ProcessSample, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "t": round(self.t, 3),
            "gpus": [g.to_json() for g in self.gpus],
            "host": self.host.to_json() if self.host is not None else None,
            "processes": [p.to_json() for p in self.processes],
        }


def _num(value: float | None) -> float | int | None:
    """Whole numbers print as integers (``"busy_percent": 3``), others as floats."""
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value
