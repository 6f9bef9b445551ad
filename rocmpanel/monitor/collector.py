"""One tick of telemetry from every source: GPUs, processes, host → one ``Sample``.

The sources come from :func:`~rocmpanel.monitor.source_factory.open_sources`, which knows
the platforms; the collector only paces them. A GPU source whose readings need a minimum
interval (PDH) is read at most that often and its last reading reused in between. The
process scan is the dearest part, so it runs at most every ``process_interval_s`` and the
last result is reused in between. A process's VRAM is checked against its GPU's total,
found by PCI slot or, for a GPU without one (Windows without the inventory's slot), by key.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rocmpanel.machine.live import LiveGpuMemory
from rocmpanel.monitor import ranges
from rocmpanel.monitor.host_source import HostSource
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, ProcessSample, Sample
from rocmpanel.monitor.source import FoundGpus, NullGpuSource
from rocmpanel.monitor.source_factory import SourceSet, open_sources


def publish_vram(sample: Sample, store: LiveGpuMemory) -> None:
    """Hand each GPU's VRAM figures to other features (Chat), by PCI slot."""
    for gpu in sample.gpus:
        slot = gpu.identity.pci_slot
        if slot:
            store.publish(slot, gpu.vram_used_bytes, gpu.vram_total_bytes)


def vram_totals(gpus: Sequence[GpuSample]) -> dict[str, int]:
    """Each GPU's VRAM total by lower-case PCI slot, and by key for a GPU without a slot
    (a process row names its GPU by either: pdh_source's rows without a slot)."""
    totals = ranges.vram_totals(gpus)
    for g in gpus:
        if not g.identity.pci_slot and g.vram_total_bytes:
            totals.setdefault(g.identity.key.lower(), g.vram_total_bytes)
    return totals


class TelemetryCollector:
    """Owns the sources; ``collect()`` reads them all once. Built once, on the sampler thread.

    ``gpus``: the GPUs to read (the app's inventory), or None to find them in the tree.
    ``clock``: what paces the sources (tests pass a fake one).
    """

    def __init__(
        self,
        sysfs_root: Path | str = "/sys",
        proc_root: Path | str = "/proc",
        *,
        processes: bool = True,
        host: bool = True,
        process_interval_s: float = 1.0,
        allow_fallbacks: bool | None = None,
        gpus: Sequence[GpuIdentity] | None = None,
        platform: str = sys.platform,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self.sysfs_root = Path(sysfs_root)
        self.proc_root = Path(proc_root)
        self._processes_wanted = processes
        self._fallbacks = allow_fallbacks
        self._platform = platform
        self.process_interval_s = process_interval_s
        self.sources = self._open(gpus)
        self._host = HostSource() if host else None
        self._reset()

    def _open(self, gpus: Sequence[GpuIdentity] | None) -> SourceSet:
        return open_sources(
            self.sysfs_root,
            self.proc_root,
            gpus=gpus,
            processes=self._processes_wanted,
            fallbacks=self._fallbacks,
            platform=self._platform,
        )

    def _reset(self) -> None:
        self._gpus: tuple[GpuSample, ...] = ()
        self._gpus_at: float | None = None
        self._processes: tuple[ProcessSample, ...] = ()
        self._processes_at: float | None = None

    def set_gpus(self, gpus: Sequence[GpuIdentity] | None) -> None:
        """Read these GPUs from now on (the inventory changed); None: find them."""
        self._close_sources()
        self.sources = self._open(gpus)
        self._reset()

    @property
    def identities(self) -> tuple[GpuIdentity, ...]:
        return self.sources.gpus.identities()

    def found(self) -> FoundGpus:
        """What the sources found, and why there is no GPU when there is none."""
        source = self.sources.gpus
        note = source.reason if isinstance(source, NullGpuSource) else self.sources.note
        return FoundGpus(self.identities, source.capabilities, note)

    def read_gpus(self) -> tuple[GpuSample, ...]:
        source = self.sources.gpus
        now = self._clock()
        wait = source.capabilities.min_interval_s
        if wait and self._gpus_at is not None and now - self._gpus_at < wait:
            return self._gpus
        self._gpus = ranges.check_gpus(source.read())
        self._gpus_at = now
        return self._gpus

    def read_processes(
        self, worker_pids: Mapping[int, str] | None = None, *, force: bool = False
    ) -> tuple[ProcessSample, ...]:
        source = self.sources.processes
        now = self._clock()
        interval = max(self.process_interval_s, source.min_interval_s)
        due = self._processes_at is None or now - self._processes_at >= interval
        if force or due:
            self._processes = source.scan(worker_pids, now)
            self._processes_at = now
        return self._processes

    def collect(self, worker_pids: Mapping[int, str] | None = None) -> Sample:
        """One Sample; figures outside their physical range are None, with the reason
        (:mod:`~rocmpanel.monitor.ranges`), whichever source read them."""
        t = time.time()
        gpus = self.read_gpus()
        host = self._host.read() if self._host is not None else None
        processes = self.read_processes(worker_pids)
        if processes:
            processes = ranges.check_processes(processes, vram_totals(gpus))
        return Sample(t, gpus, host, processes)

    def _close_sources(self) -> None:
        self.sources.processes.close()
        self.sources.gpus.close()

    def close(self) -> None:
        self._close_sources()
