"""Windows GPU telemetry from Performance Data Helper (PDH) counters, no admin needed.

Counters (the ones Task Manager uses):
``\\GPU Engine(*)\\Utilization Percentage`` with instances like
``pid_1234_luid_0x00000000_0x0000C3B4_phys_0_eng_0_engtype_3D``;
``\\GPU Adapter Memory(*)\\Dedicated Usage``/``Shared Usage`` per ``luid_..._phys_0``;
``\\GPU Process Memory(*)\\Dedicated Usage``/``Shared Usage`` per ``pid_..._luid_..._phys_0``.
An adapter's utilisation is the busiest engine's, each engine summed over processes. PDH
needs two collections for a rate (the first returns 0) and an interval of at least 1 s.
Temperatures and power need AMD's ADLX and are not read here. The parsing functions are
pure and tested on Linux with recorded counter values; ``PdhQuery`` imports ``win32pdh``
only when built. One query serves both sources: ``PdhGpuSource`` (adapters) and
``PdhProcessSource`` (the Monitor's process table on Windows).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rocmpanel.monitor.sample import GpuIdentity, GpuSample, ProcessSample
from rocmpanel.monitor.source import Capabilities

ENGINE_COUNTER = r"\GPU Engine(*)\Utilization Percentage"
ADAPTER_DEDICATED = r"\GPU Adapter Memory(*)\Dedicated Usage"
ADAPTER_SHARED = r"\GPU Adapter Memory(*)\Shared Usage"
PROCESS_DEDICATED = r"\GPU Process Memory(*)\Dedicated Usage"
PROCESS_SHARED = r"\GPU Process Memory(*)\Shared Usage"
MIN_INTERVAL_S = 1.0
CAPABILITIES = Capabilities("Windows PDH counters", min_interval_s=MIN_INTERVAL_S)

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


@dataclass
class _ProcessRow:
    vram: int | None = None
    gtt: int | None = None
    engines: dict[str, float] = field(default_factory=dict)


def processes_from_counters(
    engine_values: Mapping[str, float],
    dedicated: Mapping[str, float],
    shared: Mapping[str, float],
    names: Mapping[int, str],
    workers: Mapping[int, str] | None = None,
) -> list[ProcessSample]:
    """One row per (pid, adapter): dedicated memory as VRAM, shared as GTT, busiest engine.

    ``pci_slot`` of a row is the adapter key ("luid_..._phys_0"), the key of that
    adapter's GpuIdentity. Processes with neither memory nor engine time are left out.
    """
    rows: dict[tuple[int, str], _ProcessRow] = {}
    for counter, is_vram in ((dedicated, True), (shared, False)):
        for name, value in counter.items():
            inst = parse_instance(name)
            if inst is None or inst.pid is None:
                continue
            row = rows.setdefault((inst.pid, inst.adapter), _ProcessRow())
            if is_vram:
                row.vram = int(value)
            else:
                row.gtt = int(value)
    for name, value in engine_values.items():
        inst = parse_instance(name)
        if inst is None or inst.pid is None or inst.engine_type is None:
            continue
        busy = rows.setdefault((inst.pid, inst.adapter), _ProcessRow()).engines
        busy[inst.engine_type] = min(100.0, busy.get(inst.engine_type, 0.0) + value)
    samples = []
    for (pid, adapter), data in sorted(rows.items()):
        engines = tuple(sorted((k, round(float(v), 1)) for k, v in data.engines.items()))
        if not any(v for _, v in engines) and not data.vram and not data.gtt:
            continue  # every process that once drew a window has idle engine instances
        samples.append(
            ProcessSample(
                pid=pid,
                name=names.get(pid, str(pid)),
                pci_slot=adapter,
                vram_bytes=data.vram,
                gtt_bytes=data.gtt,
                engine_percent=max((v for _, v in engines), default=None),
                engines=engines,
                worker=(workers or {}).get(pid),
                sources=("pdh",),
            )
        )
    return samples


def pids_in(*counters: Mapping[str, float]) -> set[int]:
    """Every pid named by an instance of these counters."""
    pids: set[int] = set()
    for counter in counters:
        for name in counter:
            inst = parse_instance(name)
            if inst is not None and inst.pid is not None:
                pids.add(inst.pid)
    return pids


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


class PdhQuery:
    """One PDH query holding every counter both PDH sources read, through pywin32's
    ``win32pdh`` (Windows only). It collects at most once per ``MIN_INTERVAL_S``, so the
    GPU and the process source of one tick share a collection and rates stay meaningful.
    ``pdh``: the win32pdh module (tests pass a recorded stand-in)."""

    COUNTERS = (
        ENGINE_COUNTER,
        ADAPTER_DEDICATED,
        ADAPTER_SHARED,
        PROCESS_DEDICATED,
        PROCESS_SHARED,
    )

    def __init__(self, pdh: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        if pdh is None:
            import win32pdh

            pdh = win32pdh
        self._pdh: Any = pdh
        self._clock = clock
        self._query = pdh.OpenQuery()
        self._counters = {path: pdh.AddEnglishCounter(self._query, path) for path in self.COUNTERS}
        pdh.CollectQueryData(self._query)  # the first collection only sets the baseline
        self._collected_at: float | None = None
        self._values: dict[str, dict[str, float]] = {}

    def refresh(self) -> None:
        """Collect now unless the last collection is under ``MIN_INTERVAL_S`` old."""
        now = self._clock()
        if self._collected_at is not None and now - self._collected_at < MIN_INTERVAL_S:
            return
        self._collected_at = now
        try:
            self._pdh.CollectQueryData(self._query)
        except Exception:  # pywintypes.error: keep nothing rather than stale figures
            self._values = {}
            return
        self._values = {path: self._read(path) for path in self.COUNTERS}

    def _read(self, path: str) -> dict[str, float]:
        try:
            values = self._pdh.GetFormattedCounterArray(
                self._counters[path], self._pdh.PDH_FMT_DOUBLE
            )
        except Exception:  # pywintypes.error when an instance vanished between collections
            return {}
        return {str(k): float(v) for k, v in dict(values).items()}

    def values(self, path: str) -> dict[str, float]:
        """The last collection of one counter: instance name -> value."""
        return self._values.get(path, {})

    def close(self) -> None:
        try:
            self._pdh.CloseQuery(self._query)
        except Exception:  # closing twice, or PDH already gone at exit
            return


class PdhGpuSource:
    """The Windows :class:`~rocmpanel.monitor.source.GpuSource`: one GPU per adapter seen."""

    def __init__(self, query: PdhQuery, names: Mapping[str, GpuIdentity] | None = None) -> None:
        self.query = query
        self._names = dict(names or {})
        self._seen: tuple[GpuIdentity, ...] = ()

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def identities(self) -> tuple[GpuIdentity, ...]:
        return self._seen

    def read(self) -> tuple[GpuSample, ...]:
        self.query.refresh()
        samples = tuple(
            gpu_samples(
                self._names,
                self.query.values(ENGINE_COUNTER),
                self.query.values(ADAPTER_DEDICATED),
                self.query.values(ADAPTER_SHARED),
            )
        )
        self._seen = tuple(s.identity for s in samples)
        return samples

    def close(self) -> None:
        self.query.close()


def process_names(pids: set[int]) -> dict[int, str]:
    """Executable names of ``pids`` through psutil; a process that ended is left out."""
    import psutil

    names: dict[int, str] = {}
    for pid in pids:
        try:
            names[pid] = psutil.Process(pid).name()
        except (psutil.Error, OSError):
            continue
    return names


class PdhProcessSource:
    """The Windows :class:`~rocmpanel.monitor.source.ProcessSource`: GPU process counters.

    PDH lists every user's processes (Windows grants that without admin rights). Names
    are looked up once per pid and forgotten when the pid leaves the counters.
    """

    name = "pdh"
    min_interval_s = MIN_INTERVAL_S

    def __init__(
        self, query: PdhQuery, names: Callable[[set[int]], dict[int, str]] | None = None
    ) -> None:
        self._query = query
        self._lookup = names or process_names
        self._names: dict[int, str] = {}

    def scan(
        self, worker_pids: Mapping[int, str] | None = None, now: float | None = None
    ) -> tuple[ProcessSample, ...]:
        self._query.refresh()
        engines = self._query.values(ENGINE_COUNTER)
        dedicated = self._query.values(PROCESS_DEDICATED)
        shared = self._query.values(PROCESS_SHARED)
        pids = pids_in(engines, dedicated, shared)
        self._names = {pid: name for pid, name in self._names.items() if pid in pids}
        unnamed = pids - set(self._names)
        if unnamed:  # a pid psutil may not name (a system process) keeps its number
            looked_up = self._lookup(unnamed)
            self._names.update({pid: looked_up.get(pid, str(pid)) for pid in unnamed})
        rows = processes_from_counters(engines, dedicated, shared, self._names, worker_pids)
        return tuple(rows)

    def close(self) -> None:
        return None  # the query belongs to the GPU source, which closes it
