"""Windows GPU telemetry from Performance Data Helper (PDH) counters, no admin needed.

Counters (the ones Task Manager uses):
``\\GPU Engine(*)\\Utilization Percentage`` with instances like
``pid_1234_luid_0x00000000_0x0000C3B4_phys_0_eng_0_engtype_3D``;
``\\GPU Adapter Memory(*)\\Dedicated Usage``/``Shared Usage`` per ``luid_..._phys_0``;
``\\GPU Process Memory(*)\\Dedicated Usage``/``Shared Usage`` per ``pid_..._luid_..._phys_0``.
An adapter's utilisation is the busiest engine's, each engine summed over processes. PDH
needs two collections for a rate (the first returns 0) and an interval of at least 1 s.
Temperatures and power need AMD's ADLX and are not read here. The parsing functions are
pure and tested on Linux; ``PdhSource`` imports ``win32pdh`` only when built.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocmpanel.monitor.sample import GpuIdentity, GpuSample, ProcessSample

ENGINE_COUNTER = r"\GPU Engine(*)\Utilization Percentage"
ADAPTER_DEDICATED = r"\GPU Adapter Memory(*)\Dedicated Usage"
ADAPTER_SHARED = r"\GPU Adapter Memory(*)\Shared Usage"
PROCESS_DEDICATED = r"\GPU Process Memory(*)\Dedicated Usage"
PROCESS_SHARED = r"\GPU Process Memory(*)\Shared Usage"
MIN_INTERVAL_S = 1.0

_INSTANCE = re.compile(
    r"^(?:pid_(?P<pid>\d+)_)?luid_(?P<hi>0x[0-9A-Fa-f]+)_(?P<lo>0x[0-9A-Fa-f]+)_phys_(?P<phys>\d+)"
    r"(?:_eng_(?P<eng>\d+)_engtype_(?P<engtype>.*))?$"
)


@dataclass(frozen=True)
class PdhInstance:
    """A parsed PDH instance name. ``adapter`` is "luid_<hi>_<lo>_phys_<n>"."""

    adapter: str
    pid: int | None
    engine: int | None
    engine_type: str | None


def parse_instance(name: str) -> PdhInstance | None:
    match = _INSTANCE.match(name.strip())
    if match is None:
        return None
    adapter = f"luid_{match['hi'].lower()}_{match['lo'].lower()}_phys_{match['phys']}"
    return PdhInstance(
        adapter=adapter,
        pid=int(match["pid"]) if match["pid"] else None,
        engine=int(match["eng"]) if match["eng"] is not None else None,
        engine_type=match["engtype"] if match["engtype"] is not None else None,
    )


def utilisation_by_adapter(engine_values: Mapping[str, float]) -> dict[str, float]:
    """Per adapter: the max over its engines of each engine's sum over processes (0–100)."""
    per_engine: dict[tuple[str, int], float] = {}
    for name, value in engine_values.items():
        inst = parse_instance(name)
        if inst is None or inst.engine is None:
            continue
        key = (inst.adapter, inst.engine)
        per_engine[key] = per_engine.get(key, 0.0) + max(0.0, float(value))
    result: dict[str, float] = {}
    for (adapter, _), value in per_engine.items():
        result[adapter] = min(100.0, max(result.get(adapter, 0.0), value))
    return result


def memory_by_adapter(values: Mapping[str, float]) -> dict[str, int]:
    """Adapter-memory counter values (bytes) keyed by adapter."""
    result: dict[str, int] = {}
    for name, value in values.items():
        inst = parse_instance(name)
        if inst is not None and inst.pid is None:
            result[inst.adapter] = result.get(inst.adapter, 0) + int(value)
    return result


def processes_from_counters(
    engine_values: Mapping[str, float],
    dedicated: Mapping[str, float],
    shared: Mapping[str, float],
    names: Mapping[int, str],
    workers: Mapping[int, str] | None = None,
) -> list[ProcessSample]:
    """One row per (pid, adapter): dedicated memory as VRAM, shared as GTT, busiest engine."""
    rows: dict[tuple[int, str], dict[str, Any]] = {}

    def row(inst: PdhInstance) -> dict[str, Any]:
        assert inst.pid is not None
        return rows.setdefault((inst.pid, inst.adapter), {"vram": None, "gtt": None, "engines": {}})

    for counter, key in ((dedicated, "vram"), (shared, "gtt")):
        for name, value in counter.items():
            inst = parse_instance(name)
            if inst is not None and inst.pid is not None:
                row(inst)[key] = int(value)
    for name, value in engine_values.items():
        inst = parse_instance(name)
        if inst is None or inst.pid is None or inst.engine_type is None:
            continue
        engines = row(inst)["engines"]
        engines[inst.engine_type] = min(100.0, engines.get(inst.engine_type, 0.0) + value)
    samples = []
    for (pid, adapter), data in sorted(rows.items()):
        engines = tuple(sorted((k, round(float(v), 1)) for k, v in data["engines"].items()))
        if not engines and not data["vram"] and not data["gtt"]:
            continue
        samples.append(
            ProcessSample(
                pid=pid,
                name=names.get(pid, str(pid)),
                pci_slot=adapter,
                vram_bytes=data["vram"],
                gtt_bytes=data["gtt"],
                engine_percent=max((v for _, v in engines), default=None),
                engines=engines,
                worker=(workers or {}).get(pid),
                sources=("pdh",),
            )
        )
    return samples


def gpu_samples(
    identities: Mapping[str, GpuIdentity],
    engine_values: Mapping[str, float],
    dedicated: Mapping[str, float],
    shared: Mapping[str, float],
) -> list[GpuSample]:
    """One GpuSample per adapter seen in any counter."""
    busy = utilisation_by_adapter(engine_values)
    vram = memory_by_adapter(dedicated)
    gtt = memory_by_adapter(shared)
    samples = []
    for adapter in sorted(set(busy) | set(vram) | set(gtt)):
        identity = identities.get(adapter) or GpuIdentity(adapter, None, None, None, adapter)
        samples.append(
            GpuSample(
                identity,
                asleep=False,
                busy_percent=round(busy[adapter], 1) if adapter in busy else None,
                vram_used_bytes=vram.get(adapter),
                gtt_used_bytes=gtt.get(adapter),
            )
        )
    return samples


class PdhSource:
    """Collects the counters through pywin32's ``win32pdh`` (Windows only)."""

    def __init__(self) -> None:
        import win32pdh

        self._pdh: Any = win32pdh
        self._query = win32pdh.OpenQuery()
        self._counters = {
            path: win32pdh.AddEnglishCounter(self._query, path)
            for path in (ENGINE_COUNTER, ADAPTER_DEDICATED, ADAPTER_SHARED)
        }
        win32pdh.CollectQueryData(self._query)  # the first collection only sets the baseline

    def _values(self, path: str) -> dict[str, float]:
        try:
            values = self._pdh.GetFormattedCounterArray(
                self._counters[path], self._pdh.PDH_FMT_DOUBLE
            )
        except Exception:  # pywintypes.error when an instance vanished between collections
            return {}
        return {str(k): float(v) for k, v in dict(values).items()}

    def read(self, identities: Mapping[str, GpuIdentity] | None = None) -> list[GpuSample]:
        try:
            self._pdh.CollectQueryData(self._query)
        except Exception:
            return []
        return gpu_samples(
            identities or {},
            self._values(ENGINE_COUNTER),
            self._values(ADAPTER_DEDICATED),
            self._values(ADAPTER_SHARED),
        )

    def close(self) -> None:
        try:
            self._pdh.CloseQuery(self._query)
        except Exception:
            return
