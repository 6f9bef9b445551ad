"""Physical ranges of telemetry: a figure no GPU can report is no reading, with the reason.

A sensor fault, a firmware bug or a doctored captured tree can report what no GPU does:
1e26 W, -123456 rpm, 9.5e13 GiB of VRAM held by one process, control bytes in the link
text. Such a figure is neither shown, plotted, alerted on nor exported: :func:`check_gpu`
and :func:`check_processes` (the collector runs them on every sample, whatever the
source) make it None and record why in the sample's ``invalid`` map, which ``telemetry
--json`` prints (``"invalid": {"power_w": "1e+26 W is outside the physical range 0 to
2000 W"}``). Text (link, perf level, GPU and process names) loses its control characters; a link or
perf level that was not UTF-8 is no reading ("the perf level is not UTF-8 text").

The bounds, in this one place:

==========================  ============================  ===================================
figure                      accepted                      why
==========================  ============================  ===================================
power, power cap            0 to 2000 W                   the largest board is AMD Instinct
                                                          MI355X at 1400 W total board power
fan speed                   0 to 30000 rpm                GPU fans stay under ~6000 rpm;
                                                          blower and server fans under 30000
fan duty, utilisation,      0 to 100 %                    percentages
engine use
temperatures and limits     -50 to 200 °C                 silicon stops working long before
clocks                      0 to 10000 MHz                shader and memory clocks are < 4 GHz
VRAM / GTT total            0 to 1 PiB                    the largest GPU memory is < 1 TiB
VRAM / GTT used             0 to the total (to 1 PiB      more in use than there is
                            when no total is known)       is a bad reading
process VRAM                0 to its GPU's VRAM total     (1 PiB when the total is unknown)
process GTT                 0 to 1 PiB
PCIe link                   "<speed> GT/s x<width>",      PCIe 1.0 is 2.5 GT/s, PCIe 7.0 is
                            speed 2.5 to 128 GT/s,        128 GT/s; links are x1 to x16
                            width x1 to x32               (x32 is in the specification)
perf level                  at most 64 characters         amdgpu's longest is 20
==========================  ============================  ===================================
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rocmpanel.base.units import GIB, MIB
from rocmpanel.machine.sysfs import printable
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, ProcessSample

PIB = GIB * MIB  # 1 PiB


@dataclass(frozen=True)
class Range:
    """Closed interval ``[low, high]`` of a figure in ``unit``."""

    low: float
    high: float
    unit: str

    def problem(self, value: float) -> str | None:
        """Why ``value`` cannot be a reading, or None when it can."""
        if isinstance(value, float) and not math.isfinite(value):
            return f"{value} is not a number"
        if self.low <= value <= self.high:
            return None
        return (
            f"{_show(value)} {self.unit} is outside the physical range "
            f"{_show(self.low)} to {_show(self.high)} {self.unit}"
        )


def _show(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e15 else f"{float(value):.3g}"


POWER_W = Range(0, 2000, "W")
FAN_RPM = Range(0, 30000, "rpm")
PERCENT = Range(0, 100, "%")
TEMP_C = Range(-50, 200, "°C")
CLOCK_MHZ = Range(0, 10000, "MHz")
LINK_GTS = Range(2.5, 128, "GT/s")
LINK_WIDTH = Range(1, 32, "lanes")
TEXT_MAX = 64  # a perf level or link text longer than this is not one
REPLACEMENT = "\ufffd"  # what a sysfs read decodes a byte that is not UTF-8 to
NAME_MAX = 128  # GPU and process names are cut to this many characters

# Each simple figure: the GpuSample field, its name in ``telemetry --json``, its range.
_GPU_FIGURES: tuple[tuple[str, str, Range], ...] = (
    ("busy_percent", "busy_percent", PERCENT),
    ("mem_busy_percent", "mem_busy_percent", PERCENT),
    ("temp_edge_c", "temps_c.edge", TEMP_C),
    ("temp_junction_c", "temps_c.junction", TEMP_C),
    ("temp_mem_c", "temps_c.mem", TEMP_C),
    ("crit_edge_c", "temp_crit_c.edge", TEMP_C),
    ("crit_junction_c", "temp_crit_c.junction", TEMP_C),
    ("crit_mem_c", "temp_crit_c.mem", TEMP_C),
    ("power_w", "power_w", POWER_W),
    ("power_cap_w", "power_cap_w", POWER_W),
    ("sclk_mhz", "sclk_mhz", CLOCK_MHZ),
    ("mclk_mhz", "mclk_mhz", CLOCK_MHZ),
    ("fan_rpm", "fan_rpm", FAN_RPM),
    ("fan_percent", "fan_percent", PERCENT),
)
_TOTALS = ("vram_total_bytes", "vis_vram_total_bytes", "gtt_total_bytes")
# (used, total) pairs: a used figure may not exceed its total.
_USED_OF: tuple[tuple[str, str], ...] = (
    ("vram_used_bytes", "vram_total_bytes"),
    ("vis_vram_used_bytes", "vis_vram_total_bytes"),
    ("gtt_used_bytes", "gtt_total_bytes"),
)
_LINK_RE = re.compile(r"(\d+(?:\.\d+)?) GT/s(?: x(\d+))?")


def _gib(value: float) -> str:
    return f"{value / GIB:.3g} GiB"


def _total_problem(total: int) -> str | None:
    if total < 0:
        return f"{total} bytes is below zero"
    if total > PIB:
        return f"{_gib(total)} is more than 1 PiB"
    return None


def _used_problem(used: int, total: int | None) -> str | None:
    if used < 0:
        return f"{used} bytes in use is below zero"
    if total is not None and used > total:
        return f"{_gib(used)} in use is more than the total of {_gib(total)}"
    if total is None and used > PIB:
        return f"{_gib(used)} in use is more than 1 PiB"
    return None


def link_problem(text: str) -> str | None:
    """Why a link text ("16.0 GT/s x16") cannot be a PCIe link, or None when it can."""
    match = _LINK_RE.fullmatch(text)
    if match is None:
        return f"{text[:TEXT_MAX]!r} is not a PCIe link speed"
    speed = LINK_GTS.problem(float(match.group(1)))
    if speed is not None:
        return speed
    if match.group(2) is not None:
        return LINK_WIDTH.problem(int(match.group(2)))
    return None


def _clean_name(text: str, fallback: str) -> str:
    clean = printable(text) or fallback
    return clean if len(clean) <= NAME_MAX else clean[: NAME_MAX - 1] + "…"


def _clean_identity(identity: GpuIdentity) -> GpuIdentity:
    if identity.name.isprintable() and len(identity.name) <= NAME_MAX:
        return identity
    return replace(identity, name=_clean_name(identity.name, identity.key))


def check_gpu(sample: GpuSample) -> GpuSample:
    """``sample`` with every figure outside its physical range made None and the reason
    recorded in ``invalid`` (keyed by the figure's name in ``telemetry --json``); text
    without control characters. The same object when nothing needed changing."""
    changes: dict[str, Any] = {}
    reasons: dict[str, str] = dict(sample.invalid)
    for attr, key, bounds in _GPU_FIGURES:
        value = getattr(sample, attr)
        if value is None:
            continue
        problem = bounds.problem(value)
        if problem is not None:
            changes[attr] = None
            reasons[key] = problem
    for attr in _TOTALS:
        value = getattr(sample, attr)
        problem = _total_problem(value) if value is not None else None
        if problem is not None:
            changes[attr], reasons[attr] = None, problem
    for used_attr, total_attr in _USED_OF:
        used = getattr(sample, used_attr)
        if used is None:
            continue
        total = changes.get(total_attr, getattr(sample, total_attr))
        problem = _used_problem(used, total)
        if problem is not None:
            changes[used_attr] = None
            reasons[used_attr] = problem
    for attr, check in (("link", link_problem), ("perf_level", None)):
        text = getattr(sample, attr)
        if text is None:
            continue
        clean = printable(text)
        problem = None
        if REPLACEMENT in text:  # read_text put U+FFFD where the bytes were not UTF-8
            problem = f"the {attr.replace('_', ' ')} is not UTF-8 text"
        elif clean is not None and len(clean) > TEXT_MAX:
            problem = f"{len(clean)} characters is too long for a {attr.replace('_', ' ')}"
        elif clean is not None and check is not None:
            problem = check(clean)
        if problem is not None:
            changes[attr], reasons[attr] = None, problem
        elif clean != text:
            changes[attr] = clean
    identity = _clean_identity(sample.identity)
    if identity is not sample.identity:
        changes["identity"] = identity
    if not changes:
        return sample
    return replace(sample, **changes, invalid=tuple(sorted(reasons.items())))


def check_gpus(samples: Sequence[GpuSample]) -> tuple[GpuSample, ...]:
    return tuple(check_gpu(s) for s in samples)


def check_process(process: ProcessSample, vram_total: int | None = None) -> ProcessSample:
    """``process`` with VRAM beyond its GPU's total (or 1 PiB), GTT beyond 1 PiB and engine
    percents outside 0 to 100 made None, the reasons in ``invalid``; a printable name."""
    changes: dict[str, Any] = {}
    reasons: dict[str, str] = dict(process.invalid)
    if process.vram_bytes is not None:
        problem = _used_problem(process.vram_bytes, vram_total)
        if problem is not None:
            changes["vram_bytes"], reasons["vram_bytes"] = None, problem
    if process.gtt_bytes is not None:
        problem = _used_problem(process.gtt_bytes, None)
        if problem is not None:
            changes["gtt_bytes"], reasons["gtt_bytes"] = None, problem
    if process.engine_percent is not None:
        problem = PERCENT.problem(process.engine_percent)
        if problem is not None:
            changes["engine_percent"], reasons["engine_percent"] = None, problem
    engines = tuple((n, v) for n, v in process.engines if PERCENT.problem(v) is None)
    if len(engines) != len(process.engines):
        changes["engines"] = engines
        reasons.setdefault("engines", "an engine's use is outside 0 to 100 %")
    if not process.name.isprintable() or len(process.name) > NAME_MAX:
        changes["name"] = _clean_name(process.name, str(process.pid))
    if not changes:
        return process
    return replace(process, **changes, invalid=tuple(sorted(reasons.items())))


def check_processes(
    processes: Sequence[ProcessSample], vram_totals: Mapping[str, int]
) -> tuple[ProcessSample, ...]:
    """:func:`check_process` for each, with the VRAM total of its GPU (by PCI slot)."""
    return tuple(
        check_process(p, vram_totals.get(p.pci_slot.lower()) if p.pci_slot else None)
        for p in processes
    )


def vram_totals(gpus: Sequence[GpuSample]) -> dict[str, int]:
    """The (valid) VRAM total of each GPU, by lower-case PCI slot."""
    return {
        g.identity.pci_slot.lower(): g.vram_total_bytes
        for g in gpus
        if g.identity.pci_slot and g.vram_total_bytes
    }
