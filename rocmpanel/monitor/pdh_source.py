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

PDH knows an adapter only by its LUID. :func:`named_adapters` maps each LUID to the DXGI
adapter with that LUID (:mod:`~rocmpanel.monitor.dxgi`): only AMD adapters are kept (the
Basic Render Driver, other vendors, remote and software adapters are dropped), named by
their description, with their PCI id, VRAM total and, when the machine inventory has
exactly one GPU with that PCI id, its slot and gfx target. Without DXGI every adapter PDH
lists is shown under its LUID, as before. The GPU counters exist from Windows 10 version
1709 (WDDM 2.0 drivers) on: https://devblogs.microsoft.com/directx/gpus-in-the-task-manager/
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.machine import pci_ids
from rocmpanel.monitor.dxgi import AMD_VENDOR, DxgiAdapter
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, ProcessSample
from rocmpanel.monitor.source import Capabilities

log = logging.getLogger(__name__)

ENGINE_COUNTER = r"\GPU Engine(*)\Utilization Percentage"
ADAPTER_DEDICATED = r"\GPU Adapter Memory(*)\Dedicated Usage"
ADAPTER_SHARED = r"\GPU Adapter Memory(*)\Shared Usage"
PROCESS_DEDICATED = r"\GPU Process Memory(*)\Dedicated Usage"
PROCESS_SHARED = r"\GPU Process Memory(*)\Shared Usage"
MIN_INTERVAL_S = 1.0
# How often, at most, DXGI is asked again about an adapter PDH shows and it did not list.
RELIST_INTERVAL_S = 30.0
CAPABILITIES = Capabilities(
    QT_TRANSLATE_NOOP("Capabilities", "Windows PDH counters"), min_interval_s=MIN_INTERVAL_S
)

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


def luid_of(adapter: str) -> tuple[int, int] | None:
    """(HighPart, LowPart) of a PDH adapter key or instance name, as unsigned numbers."""
    inst = parse_instance(adapter)
    if inst is None:
        return None
    _, hi, lo, _ = inst.adapter.split("_", 3)
    return (int(hi, 16), int(lo, 16))


def pdh_key(luid: tuple[int, int], phys: int = 0) -> str:
    """The adapter key PDH's instance names give for ``luid`` (lower case, 8 hex digits)."""
    return f"luid_0x{luid[0]:08x}_0x{luid[1]:08x}_phys_{phys}"


@dataclass(frozen=True)
class NamedAdapter:
    """A PDH adapter (by LUID) as the Monitor shows it, with its VRAM total (DXGI's
    DedicatedVideoMemory)."""

    luid: tuple[int, int]
    identity: GpuIdentity
    vram_total_bytes: int | None = None


Lookup = Callable[[str], "pci_ids.PciEntry | None"]


def _entry(adapter: DxgiAdapter, lookup: Lookup) -> pci_ids.PciEntry | None:
    """The PCI table's entry for ``adapter``; None when unknown or the table is unreadable."""
    try:
        return lookup(adapter.pci_id)
    except PanelError:
        return None


def _integrated(adapter: DxgiAdapter, lookup: Lookup) -> bool:
    entry = _entry(adapter, lookup)
    return bool(entry is not None and entry.integrated)


def named_adapters(
    adapters: Sequence[DxgiAdapter],
    inventory: Sequence[GpuIdentity] = (),
    lookup: Lookup = pci_ids.lookup,
) -> tuple[list[NamedAdapter], str]:
    """The AMD adapters among DXGI's, as the Monitor names them, and a note on what was left
    out ("" when nothing was).

    Kept: VendorId 0x1002 without the remote or software flag (that drops the Basic Render
    Driver, vendor 0x1414, and every other vendor). An integrated AMD GPU is dropped when a
    discrete one is present; DXGI has no such flag, so the shipped PCI id table
    (``pci_ids``, which marks APU device ids) decides; an id it does not know counts as
    discrete, and a machine with only an APU keeps it. Two adapters with one description
    are told apart as "#1", "#2" in LUID order. An adapter takes its slot, gfx and key from
    ``inventory`` when exactly one inventory GPU and exactly one kept adapter have its PCI
    id; else its key is its PDH adapter key and its gfx the table's.
    """
    amd = [a for a in adapters if a.vendor_id == AMD_VENDOR and not a.is_software_or_remote]
    amd.sort(key=lambda a: a.luid)
    integrated = [a for a in amd if _integrated(a, lookup)]
    note = ""
    if integrated and len(integrated) < len(amd):
        amd = [a for a in amd if a not in integrated]
        listed = ", ".join(a.description.strip() or a.pci_id for a in integrated)
        note = translate(
            "pdh_source", "Not shown: {adapters} (integrated; a discrete AMD GPU is present)."
        ).format(adapters=listed)
    counts: dict[str, int] = {}
    for a in amd:
        counts[a.description.strip()] = counts.get(a.description.strip(), 0) + 1
    numbered: dict[str, int] = {}
    named: list[NamedAdapter] = []
    for a in amd:
        entry = _entry(a, lookup)
        base = a.description.strip() or (entry.name if entry else f"AMD GPU {a.pci_id}")
        name = base
        if counts.get(a.description.strip(), 0) > 1:
            numbered[base] = numbered.get(base, 0) + 1
            name = f"{base} #{numbered[base]}"
        same_id = [g for g in inventory if g.pci_id == a.pci_id]
        twins = [b for b in amd if b.pci_id == a.pci_id]
        if len(same_id) == 1 and len(twins) == 1:
            known = same_id[0]
            identity = GpuIdentity(
                key=known.key,
                card=known.card,
                pci_slot=known.pci_slot,
                pci_id=a.pci_id,
                name=name,
                gfx=known.gfx or (entry.gfx if entry else None),
            )
        else:
            key = pdh_key(a.luid)
            identity = GpuIdentity(key, None, None, a.pci_id, name, entry.gfx if entry else None)
        total = a.dedicated_video_memory if a.dedicated_video_memory > 0 else None
        named.append(NamedAdapter(a.luid, identity, total))
    return named, note


class AdapterNames:
    """Which GPU each PDH adapter is shown as. ``named`` None (DXGI did not answer): every
    adapter, under its PDH key; else only the named adapters, found by LUID."""

    def __init__(
        self,
        named: Sequence[NamedAdapter] | None = None,
        listed: Iterable[tuple[int, int]] = (),
    ) -> None:
        self.known = named is not None
        self._by_luid = {n.luid: n for n in named or ()}
        # Every LUID DXGI listed, the adapters left out included: a LUID outside this set
        # is an adapter DXGI has not described yet (a driver reset gives a new LUID).
        self.listed = set(listed) | set(self._by_luid)

    def replace(self, named: Sequence[NamedAdapter], listed: Iterable[tuple[int, int]]) -> None:
        """Take a new DXGI listing (in place: the process source shares this object)."""
        self._by_luid = {n.luid: n for n in named}
        self.listed = set(listed) | set(self._by_luid)

    def unlisted(self, adapters: Iterable[str]) -> set[tuple[int, int]]:
        """The LUIDs of these PDH adapter keys that DXGI did not list (none without DXGI)."""
        if not self.known:
            return set()
        luids = {luid_of(a) for a in adapters}
        return {luid for luid in luids if luid is not None} - self.listed

    def get(self, adapter: str) -> NamedAdapter | None:
        """The adapter ``adapter`` (a PDH adapter key) is shown as; None: not shown."""
        luid = luid_of(adapter)
        if luid is None:
            return None
        if not self.known:
            return NamedAdapter(luid, GpuIdentity(adapter, None, None, None, adapter))
        return self._by_luid.get(luid)

    def identities(self) -> tuple[GpuIdentity, ...]:
        """The named GPUs (none when DXGI did not answer: they are learnt while reading)."""
        return tuple(n.identity for n in self._by_luid.values())


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


def _slot(named: NamedAdapter) -> str:
    """What a process row names its GPU by: the GPU's PCI slot, else its key (the process
    table and the VRAM check look a GPU up by either)."""
    return named.identity.pci_slot or named.identity.key


def processes_from_counters(
    engine_values: Mapping[str, float],
    dedicated: Mapping[str, float],
    shared: Mapping[str, float],
    names: Mapping[int, str],
    workers: Mapping[int, str] | None = None,
    adapters: AdapterNames | None = None,
) -> list[ProcessSample]:
    """One row per (pid, GPU): dedicated memory as VRAM, shared as GTT, busiest engine.

    ``pci_slot`` of a row is its GPU's PCI slot when known, else the GPU's key (the PDH
    adapter key without DXGI). Adapters ``adapters`` does not show (Basic Render, other
    vendors) have no rows; nor have processes with neither memory nor engine time.
    """
    adapters = adapters or AdapterNames()
    rows: dict[tuple[int, str], _ProcessRow] = {}

    def row_of(name: str) -> tuple[PdhInstance, _ProcessRow] | None:
        inst = parse_instance(name)
        if inst is None or inst.pid is None:
            return None
        named = adapters.get(inst.adapter)
        if named is None:
            return None
        return inst, rows.setdefault((inst.pid, _slot(named)), _ProcessRow())

    for counter, is_vram in ((dedicated, True), (shared, False)):
        for name, value in counter.items():
            found = row_of(name)
            if found is None:
                continue
            row = found[1]
            if is_vram:
                row.vram = (row.vram or 0) + int(value)
            else:
                row.gtt = (row.gtt or 0) + int(value)
    for name, value in engine_values.items():
        found = row_of(name)
        engine = found[0].engine_type if found is not None else None
        if found is None or engine is None:
            continue
        busy = found[1].engines
        busy[engine] = min(100.0, busy.get(engine, 0.0) + value)
    samples = []
    for (pid, slot), data in sorted(rows.items()):
        engines = tuple(sorted((k, round(float(v), 1)) for k, v in data.engines.items()))
        if not any(v for _, v in engines) and not data.vram and not data.gtt:
            continue  # every process that once drew a window has idle engine instances
        samples.append(
            ProcessSample(
                pid=pid,
                name=names.get(pid, str(pid)),
                pci_slot=slot,
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
    adapters: AdapterNames,
    engine_values: Mapping[str, float],
    dedicated: Mapping[str, float],
    shared: Mapping[str, float],
) -> list[GpuSample]:
    """One GpuSample per GPU ``adapters`` shows that any counter lists (an adapter's
    ``phys_N`` parts summed; busy: the busiest part), in key order."""
    busy = utilisation_by_adapter(engine_values)
    vram = memory_by_adapter(dedicated)
    gtt = memory_by_adapter(shared)
    by_gpu: dict[str, tuple[NamedAdapter, list[str]]] = {}
    for adapter in sorted(set(busy) | set(vram) | set(gtt)):
        named = adapters.get(adapter)
        if named is not None:
            by_gpu.setdefault(named.identity.key, (named, []))[1].append(adapter)

    def total(values: Mapping[str, int], parts: list[str]) -> int | None:
        found = [values[p] for p in parts if p in values]
        return sum(found) if found else None

    samples = []
    for key in sorted(by_gpu):
        named, parts = by_gpu[key]
        busiest = [busy[p] for p in parts if p in busy]
        samples.append(
            GpuSample(
                named.identity,
                asleep=False,
                busy_percent=round(max(busiest), 1) if busiest else None,
                vram_used_bytes=total(vram, parts),
                vram_total_bytes=named.vram_total_bytes,
                gtt_used_bytes=total(gtt, parts),
            )
        )
    return samples


NO_DATA = "reading"
"""The key in a GpuSample's ``invalid`` map that says why a whole reading is missing."""


def pdh_error_text(exc: BaseException) -> str:
    """A pywintypes.error (winerror, funcname, strerror) or any error, in words."""
    strerror = getattr(exc, "strerror", None)
    funcname = getattr(exc, "funcname", None)
    winerror = getattr(exc, "winerror", None)
    if isinstance(strerror, str) and strerror:
        text = strerror.strip().rstrip(".")
        where = [str(funcname)] if funcname else []
        if isinstance(winerror, int):
            where.append(f"error 0x{winerror & 0xFFFFFFFF:08X}")
        return f"{text} ({', '.join(where)})" if where else text
    return str(exc) or type(exc).__name__


def clean_values(values: Mapping[Any, Any]) -> dict[str, float]:
    """A formatted counter array as instance name -> value: a value that is not a finite
    number is left out (no figure rather than a wrong one), and a negative one, which PDH's
    rounding gives for an idle engine or a freed allocation, reads as 0."""
    out: dict[str, float] = {}
    for name, value in dict(values).items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if math.isfinite(number):
            out[str(name)] = max(0.0, number)
    return out


class PdhQuery:
    """One PDH query holding every counter both PDH sources read, through pywin32's
    ``win32pdh`` (Windows only). The first reading comes ``MIN_INTERVAL_S`` after the
    baseline collection made here (a rate needs two collections that far apart), then at
    most one collection per ``MIN_INTERVAL_S``, so the GPU and the process source of one
    tick share a collection. ``pdh``: the win32pdh module (tests pass a stand-in);
    ``error``: why the last collection failed (None when it worked)."""

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
        self.clock = clock
        self._query = pdh.OpenQuery()
        try:
            self._counters = {
                path: pdh.AddEnglishCounter(self._query, path) for path in self.COUNTERS
            }
            pdh.CollectQueryData(self._query)  # the first collection only sets the baseline
        except BaseException:
            self.close()
            raise
        self._collected_at = clock()
        self._values: dict[str, dict[str, float]] = {}
        self.error: str | None = None

    def refresh(self) -> None:
        """Collect now unless the last collection is under ``MIN_INTERVAL_S`` old."""
        now = self.clock()
        if now - self._collected_at < MIN_INTERVAL_S:
            return
        self._collected_at = now
        try:
            self._pdh.CollectQueryData(self._query)
        except Exception as exc:  # pywintypes.error: keep nothing rather than stale figures
            self._values = {}
            self.error = translate(
                "PdhQuery", "Windows GPU counters stopped answering: {error}."
            ).format(error=pdh_error_text(exc))
            return
        self.error = None
        self._values = {path: self._read(path) for path in self.COUNTERS}

    def _read(self, path: str) -> dict[str, float]:
        try:
            values = self._pdh.GetFormattedCounterArray(
                self._counters[path], self._pdh.PDH_FMT_DOUBLE
            )
        except Exception:  # pywintypes.error when an instance vanished between collections
            return {}
        return clean_values(values)

    def values(self, path: str) -> dict[str, float]:
        """The last collection of one counter: instance name -> value."""
        return self._values.get(path, {})

    def close(self) -> None:
        try:
            self._pdh.CloseQuery(self._query)
        except Exception:  # closing twice, or PDH already gone at exit
            return


class PdhGpuSource:
    """The Windows :class:`~rocmpanel.monitor.source.GpuSource`: one GPU per adapter shown.

    ``adapters``: the named AMD adapters (DXGI), known from the start; None: every adapter
    PDH lists, learnt while reading. When a collection fails, each GPU known so far gets a
    reading without figures whose ``invalid`` says why (never the last figures again).
    """

    def __init__(
        self,
        query: PdhQuery,
        adapters: Sequence[NamedAdapter] | None = None,
        *,
        listed: Iterable[tuple[int, int]] = (),
        relist: Callable[[], tuple[list[NamedAdapter], set[tuple[int, int]]]] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.query = query
        self.adapters = AdapterNames(adapters, listed)
        self._seen: tuple[GpuIdentity, ...] = self.adapters.identities()
        # Asks DXGI again (named adapters, every LUID listed) when PDH shows an adapter it
        # did not list, at most once per RELIST_INTERVAL_S.
        self._relist = relist
        self._clock = clock if clock is not None else query.clock
        self._relisted_at: float | None = None

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def identities(self) -> tuple[GpuIdentity, ...]:
        return self._seen

    def read(self) -> tuple[GpuSample, ...]:
        self.query.refresh()
        if self.query.error is not None:
            reason = (
                NO_DATA,
                translate("PdhGpuSource", "no data: {error}").format(error=self.query.error),
            )
            return tuple(GpuSample(i, asleep=False, invalid=(reason,)) for i in self._seen)
        self._follow_new_adapters()
        samples = tuple(
            gpu_samples(
                self.adapters,
                self.query.values(ENGINE_COUNTER),
                self.query.values(ADAPTER_DEDICATED),
                self.query.values(ADAPTER_SHARED),
            )
        )
        if not self.adapters.known:
            known = {i.key for i in self._seen}
            self._seen += tuple(s.identity for s in samples if s.identity.key not in known)
        return samples

    def _follow_new_adapters(self) -> None:
        """A driver reset or a GPU enabled after start shows in PDH under a LUID DXGI did
        not list: list the adapters again, so the GPU is not lost until the panel restarts."""
        if self._relist is None:
            return
        keys = [
            inst.adapter
            for name in self.query.values(ADAPTER_DEDICATED)
            if (inst := parse_instance(name)) is not None
        ]
        now = self._clock()
        due = self._relisted_at is None or now - self._relisted_at >= RELIST_INTERVAL_S
        if not due or not self.adapters.unlisted(keys):
            return
        self._relisted_at = now
        try:
            named, listed = self._relist()
        except Exception as exc:  # DXGI failing now: keep the adapters named so far
            log.info("listing the DXGI adapters again failed: %s", exc)
            return
        self.adapters.replace(named, listed)
        self._seen = self.adapters.identities()

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
    are looked up once per pid and forgotten when the pid leaves the counters. Rows name
    their GPU as ``adapters`` shows it (its slot or key), and only GPUs it shows.
    """

    name = "pdh"
    min_interval_s = MIN_INTERVAL_S

    def __init__(
        self,
        query: PdhQuery,
        names: Callable[[set[int]], dict[int, str]] | None = None,
        adapters: AdapterNames | None = None,
    ) -> None:
        self._query = query
        self._lookup = names or process_names
        self._adapters = adapters or AdapterNames()
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
        rows = processes_from_counters(
            engines, dedicated, shared, self._names, worker_pids, self._adapters
        )
        return tuple(rows)

    def close(self) -> None:
        return None  # the query belongs to the GPU source, which closes it
