"""Host telemetry through psutil: CPU (overall and per core), RAM, swap, load average.

``psutil.cpu_percent`` measures since its previous call, so the first reading of a fresh
``HostSource`` is a baseline; the sampler keeps one source for its whole life.
"""

from __future__ import annotations

import contextlib
import os

import psutil

from rocmpanel.monitor.sample import HostSample


class HostSource:
    """Reads the host once per call; never raises (a failing figure becomes None)."""

    def __init__(self) -> None:
        # Prime the CPU counters so the first real read covers one interval.
        with contextlib.suppress(OSError, RuntimeError):
            psutil.cpu_percent(percpu=True)

    def read(self) -> HostSample:
        try:
            cores = tuple(float(c) for c in psutil.cpu_percent(percpu=True))
        except (OSError, RuntimeError):
            cores = ()
        cpu = round(sum(cores) / len(cores), 1) if cores else None
        ram_used = ram_total = swap_used = swap_total = None
        try:
            vm = psutil.virtual_memory()
            ram_total, ram_used = int(vm.total), int(vm.total - vm.available)
        except (OSError, RuntimeError):
            pass
        try:
            sw = psutil.swap_memory()
            swap_total, swap_used = int(sw.total), int(sw.used)
        except (OSError, RuntimeError):
            pass
        load: tuple[float, float, float] | None = None
        if hasattr(os, "getloadavg"):
            try:
                one, five, fifteen = os.getloadavg()
                load = (round(one, 2), round(five, 2), round(fifteen, 2))
            except OSError:
                load = None
        return HostSample(cpu, cores, ram_used, ram_total, swap_used, swap_total, load)
