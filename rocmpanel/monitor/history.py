"""Telemetry history in numpy ring buffers of fixed size, apart from any widget.

Two tiers per source: every sample of the last hour at the fastest interval (100 ms), and
min/mean/max per 10 s bucket for 24 h. Memory is allocated once and never grows: for one
GPU's 12 series about 3 MB. Missing figures are stored as NaN. Byte series are kept in MiB
(float32 keeps MiB exact far past any VRAM size). Not thread-safe: one thread writes and
reads (the GUI thread, which appends each sample the sampler sends).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rocmpanel.base.units import MIB
from rocmpanel.monitor.interval import MIN_INTERVAL_S
from rocmpanel.monitor.sample import GpuSample, HostSample, Sample

FloatArray = npt.NDArray[np.float64]

FULL_SECONDS = 3600.0  # at MIN_INTERVAL_S, the fastest interval MonitorSettings allows
COARSE_SECONDS = 24 * 3600.0
BUCKET_S = 10.0


def _mib(value: int | None) -> float | None:
    return value / MIB if value is not None else None


# (series name, unit, how to get it from a GpuSample)
GPU_SERIES: tuple[tuple[str, str, Callable[[GpuSample], float | None]], ...] = (
    ("busy_percent", "%", lambda g: g.busy_percent),
    ("mem_busy_percent", "%", lambda g: g.mem_busy_percent),
    ("vram_used_mib", "MiB", lambda g: _mib(g.vram_used_bytes)),
    ("gtt_used_mib", "MiB", lambda g: _mib(g.gtt_used_bytes)),
    ("temp_edge_c", "°C", lambda g: g.temp_edge_c),
    ("temp_junction_c", "°C", lambda g: g.temp_junction_c),
    ("temp_mem_c", "°C", lambda g: g.temp_mem_c),
    ("power_w", "W", lambda g: g.power_w),
    ("sclk_mhz", "MHz", lambda g: g.sclk_mhz),
    ("mclk_mhz", "MHz", lambda g: g.mclk_mhz),
    ("fan_rpm", "rpm", lambda g: g.fan_rpm),
    ("fan_percent", "%", lambda g: g.fan_percent),
)
GPU_SERIES_NAMES: tuple[str, ...] = tuple(name for name, _, _ in GPU_SERIES)

HOST_SERIES: tuple[tuple[str, str, Callable[[HostSample], float | None]], ...] = (
    ("cpu_percent", "%", lambda h: h.cpu_percent),
    ("ram_used_mib", "MiB", lambda h: _mib(h.ram_used_bytes)),
    ("swap_used_mib", "MiB", lambda h: _mib(h.swap_used_bytes)),
)
HOST_SERIES_NAMES: tuple[str, ...] = tuple(name for name, _, _ in HOST_SERIES)
HOST_KEY = "host"


@dataclass(frozen=True)
class Window:
    """Samples in a time range: ``times`` (Unix s, ascending) and ``values[i, series]``."""

    names: tuple[str, ...]
    times: FloatArray
    values: npt.NDArray[np.float32]

    def series(self, name: str) -> npt.NDArray[np.float32]:
        return self.values[:, self.names.index(name)]


class SeriesHistory:
    """Ring buffers for a fixed set of series: a full-resolution tier and a 3-stat tier."""

    def __init__(
        self,
        names: Sequence[str],
        *,
        full_capacity: int = int(FULL_SECONDS / MIN_INTERVAL_S),
        bucket_s: float = BUCKET_S,
        coarse_capacity: int = int(COARSE_SECONDS / BUCKET_S),
    ) -> None:
        self.names = tuple(names)
        n = len(self.names)
        self.bucket_s = bucket_s
        self._times = np.full(full_capacity, np.nan)
        self._values = np.full((full_capacity, n), np.nan, dtype=np.float32)
        self._head = 0  # next slot to write
        self._count = 0
        self._ctimes = np.full(coarse_capacity, np.nan)
        self._cstats = np.full((coarse_capacity, 3, n), np.nan, dtype=np.float32)
        self._chead = 0
        self._ccount = 0
        self._bucket: int | None = None
        self._cache: dict[int, tuple[object, FloatArray, npt.NDArray[np.float32]]] = {}
        self._acc_sum = np.zeros(n)
        self._acc_n = np.zeros(n)
        self._acc_min = np.full(n, np.inf)
        self._acc_max = np.full(n, -np.inf)

    def nbytes(self) -> int:
        arrays = (self._times, self._values, self._ctimes, self._cstats, self._acc_sum,
                  self._acc_n, self._acc_min, self._acc_max)  # fmt: skip
        return sum(a.nbytes for a in arrays)

    def __len__(self) -> int:
        return self._count

    def append(self, t: float, values: Sequence[float | None]) -> None:
        row = np.array([math.nan if v is None else v for v in values], dtype=np.float64)
        cap = len(self._times)
        self._times[self._head] = t
        self._values[self._head] = row
        self._head = (self._head + 1) % cap
        self._count = min(self._count + 1, cap)
        bucket = int(t // self.bucket_s)
        if self._bucket is not None and bucket != self._bucket:
            self._flush_bucket()
        self._bucket = bucket
        seen = ~np.isnan(row)
        self._acc_sum[seen] += row[seen]
        self._acc_n[seen] += 1
        self._acc_min = np.fmin(self._acc_min, row)
        self._acc_max = np.fmax(self._acc_max, row)

    def _flush_bucket(self) -> None:
        assert self._bucket is not None
        empty = self._acc_n == 0
        mean = np.divide(self._acc_sum, np.maximum(self._acc_n, 1))
        stats = np.vstack([self._acc_min, mean, self._acc_max])
        stats[:, empty] = np.nan
        slot = self._chead
        self._ctimes[slot] = (self._bucket + 0.5) * self.bucket_s
        self._cstats[slot] = stats
        self._chead = (slot + 1) % len(self._ctimes)
        self._ccount = min(self._ccount + 1, len(self._ctimes))
        self._acc_sum[:] = 0.0
        self._acc_n[:] = 0.0
        self._acc_min[:] = np.inf
        self._acc_max[:] = -np.inf

    @staticmethod
    def _segments(head: int, count: int, cap: int) -> list[tuple[int, int]]:
        if count < cap:
            return [(0, count)]
        return [(head, cap), (0, head)] if head else [(0, cap)]

    def _select(
        self, times: FloatArray, head: int, count: int, t_from: float, t_to: float
    ) -> list[tuple[int, int]]:
        parts = []
        for start, stop in self._segments(head, count, len(times)):
            seg = times[start:stop]
            lo = int(np.searchsorted(seg, t_from, side="left"))
            hi = int(np.searchsorted(seg, t_to, side="right"))
            if hi > lo:
                parts.append((start + lo, start + hi))
        return parts

    def oldest_full_time(self) -> float | None:
        if not self._count:
            return None
        return float(self._times[0 if self._count < len(self._times) else self._head])

    def _gather(
        self, times: FloatArray, values: npt.NDArray[np.float32], parts: list[tuple[int, int]]
    ) -> tuple[FloatArray, npt.NDArray[np.float32]]:
        if not parts:
            return np.empty(0), np.empty((0, values.shape[1]), dtype=np.float32)
        if len(parts) == 1:
            a, b = parts[0]
            return times[a:b], values[a:b]
        return (
            np.concatenate([times[a:b] for a, b in parts]),
            np.concatenate([values[a:b] for a, b in parts]),
        )

    def window(
        self, t_from: float, t_to: float, max_points: int | None = None, stat: int = 1
    ) -> Window:
        """Samples with ``t_from <= t <= t_to``; with ``max_points``, at most about that many.

        Full-resolution samples when the full tier covers the range and (with
        ``max_points``) they are few enough; else the 10 s buckets (``stat``: 0 min, 1 mean,
        2 max) followed by the full-resolution samples after the last bucket. Thinning takes
        the mean of runs of samples; the thinned buckets are cached until the next bucket.
        """
        n = len(self.names)
        full = self._select(self._times, self._head, self._count, t_from, t_to)
        full_count = sum(b - a for a, b in full)
        oldest = self.oldest_full_time()
        use_coarse = oldest is None or t_from < oldest
        if max_points is not None and full_count > max_points:
            use_coarse = use_coarse or (t_to - t_from) >= max_points * self.bucket_s / 4
        if not use_coarse:
            times, values = self._gather(self._times, self._values, full)
            if max_points is not None and len(times) > max_points > 0:
                times, values = _decimate(times, values, max_points)
            return Window(self.names, times, values)
        coarse = self._select(self._ctimes, self._chead, self._ccount, t_from, t_to)
        key = (tuple(coarse), self._chead, self._ccount, max_points, stat)
        cached = self._cache.get(stat)
        if cached is not None and cached[0] == key:
            ctimes, cvalues = cached[1], cached[2]
        else:
            ctimes, cvalues = self._gather(self._ctimes, self._cstats[:, stat, :], coarse)
            if max_points is not None and len(ctimes) > max_points > 0:
                ctimes, cvalues = _decimate(ctimes, cvalues, max_points)
            self._cache[stat] = (key, ctimes, cvalues)
        tail_from = t_from
        if len(ctimes):
            last_bucket = self._ctimes[coarse[-1][1] - 1] if coarse else ctimes[-1]
            tail_from = max(t_from, float(last_bucket) + self.bucket_s / 2)
        tail = self._select(self._times, self._head, self._count, tail_from, t_to)
        ttimes, tvalues = self._gather(self._times, self._values, tail)
        if not len(ctimes) and not len(ttimes):
            return Window(self.names, np.empty(0), np.empty((0, n), dtype=np.float32))
        return Window(
            self.names, np.concatenate([ctimes, ttimes]), np.concatenate([cvalues, tvalues])
        )


def _decimate(
    times: FloatArray, values: npt.NDArray[np.float32], max_points: int
) -> tuple[FloatArray, npt.NDArray[np.float32]]:
    """Mean of each run of ``k`` samples (NaN-aware, no warnings for all-NaN runs)."""
    k = math.ceil(len(times) / max_points)
    m = len(times) // k
    start = len(times) - m * k  # keep the newest samples whole
    t = times[start:].reshape(m, k).mean(axis=1)
    v = values[start:].reshape(m, k, values.shape[1])
    missing = np.isnan(v)
    total = np.where(missing, 0.0, v).sum(axis=1)
    count = (~missing).sum(axis=1)
    out = np.full(total.shape, np.nan, dtype=np.float32)
    np.divide(total, count, out=out, where=count > 0, casting="unsafe")
    return t, out


class TelemetryHistory:
    """History of every GPU (keyed by ``GpuIdentity.key``) and of the host."""

    def __init__(self, **tier_sizes: int) -> None:
        self._tier_sizes = tier_sizes
        self.gpus: dict[str, SeriesHistory] = {}
        self.host = SeriesHistory(HOST_SERIES_NAMES, **tier_sizes)
        self.last: Sample | None = None

    def add(self, sample: Sample) -> None:
        for gpu in sample.gpus:
            key = gpu.identity.key
            history = self.gpus.get(key)
            if history is None:
                history = self.gpus[key] = SeriesHistory(GPU_SERIES_NAMES, **self._tier_sizes)
            history.append(sample.t, [get(gpu) for _, _, get in GPU_SERIES])
        if sample.host is not None:
            host = sample.host
            self.host.append(sample.t, [get(host) for _, _, get in HOST_SERIES])
        self.last = sample

    def nbytes(self) -> int:
        return self.host.nbytes() + sum(h.nbytes() for h in self.gpus.values())
