"""One tick of telemetry from every source: GPUs, processes, host → one ``Sample``.

Linux reads amdgpu sysfs (falling back to amdsmi when the live /sys shows no AMD GPU and
amdsmi imports); Windows reads PDH counters. The process scan is the dearest part, so it runs at
most every ``process_interval_s`` and the last result is reused in between.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path

from rocmpanel.monitor.amdsmi_source import AmdSmiSource
from rocmpanel.monitor.fdinfo_source import FdinfoScanner
from rocmpanel.monitor.host_source import HostSource
from rocmpanel.monitor.pdh_source import MIN_INTERVAL_S as PDH_MIN_INTERVAL_S
from rocmpanel.monitor.pdh_source import PdhSource
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, ProcessSample, Sample
from rocmpanel.monitor.sysfs_source import SysfsGpu, discover_gpus


class TelemetryCollector:
    """Owns the sources; ``collect()`` reads them all once. Built once, on the sampler thread."""

    def __init__(
        self,
        sysfs_root: Path | str = "/sys",
        proc_root: Path | str = "/proc",
        *,
        processes: bool = True,
        host: bool = True,
        process_interval_s: float = 1.0,
        allow_fallbacks: bool | None = None,
    ) -> None:
        self.sysfs_root = Path(sysfs_root)
        self.proc_root = Path(proc_root)
        if allow_fallbacks is None:
            # A captured tree must never be mixed with the live machine's amdsmi or PDH.
            allow_fallbacks = self.sysfs_root == Path("/sys")
        self.sysfs_gpus: list[SysfsGpu] = []
        self._amdsmi: AmdSmiSource | None = None
        self._pdh: PdhSource | None = None
        self._pdh_gpus: tuple[GpuSample, ...] = ()
        self._pdh_at: float | None = None
        if sys.platform == "win32" and allow_fallbacks:
            try:
                self._pdh = PdhSource()
            except Exception:  # pywin32 missing or PDH refused: no GPU source
                self._pdh = None
        else:
            self.sysfs_gpus = discover_gpus(self.sysfs_root)
            if not self.sysfs_gpus and allow_fallbacks:
                self._amdsmi = AmdSmiSource.create()
        self._scanner = (
            FdinfoScanner(self.proc_root, self.sysfs_root) if processes and sys.platform != "win32"
            else None
        )  # fmt: skip
        self._host = HostSource() if host else None
        self.process_interval_s = process_interval_s
        self._processes: tuple[ProcessSample, ...] = ()
        self._processes_at: float | None = None

    @property
    def identities(self) -> list[GpuIdentity]:
        if self._amdsmi is not None:
            return list(self._amdsmi.identities)
        return [g.identity for g in self.sysfs_gpus]

    def read_gpus(self) -> tuple[GpuSample, ...]:
        if self._pdh is not None:
            # PDH rates are only meaningful over >= 1 s: reuse the last reading in between.
            now = time.monotonic()
            if self._pdh_at is None or now - self._pdh_at >= PDH_MIN_INTERVAL_S:
                self._pdh_gpus = tuple(self._pdh.read())
                self._pdh_at = now
            return self._pdh_gpus
        if self._amdsmi is not None:
            return tuple(self._amdsmi.read())
        return tuple(gpu.read() for gpu in self.sysfs_gpus)

    def read_processes(
        self, worker_pids: Mapping[int, str] | None = None, *, force: bool = False
    ) -> tuple[ProcessSample, ...]:
        if self._scanner is None:
            return ()
        now = time.monotonic()
        due = self._processes_at is None or now - self._processes_at >= self.process_interval_s
        if force or due:
            self._processes = self._scanner.scan(worker_pids, now)
            self._processes_at = now
        return self._processes

    def collect(self, worker_pids: Mapping[int, str] | None = None) -> Sample:
        t = time.time()
        gpus = self.read_gpus()
        host = self._host.read() if self._host is not None else None
        return Sample(t, gpus, host, self.read_processes(worker_pids))

    def close(self) -> None:
        if self._amdsmi is not None:
            self._amdsmi.close()
        if self._pdh is not None:
            self._pdh.close()
