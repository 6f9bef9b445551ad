"""History ring buffers: fixed memory, wrap-around, the 10 s min/mean/max tier, windows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rocmpanel.monitor.history import (
    GPU_SERIES_NAMES,
    SeriesHistory,
    TelemetryHistory,
)
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, HostSample, Sample


def test_memory_is_fixed_and_small() -> None:
    history = SeriesHistory(GPU_SERIES_NAMES)
    before = history.nbytes()
    for i in range(5000):
        history.append(1000.0 + i * 0.5, [float(i)] * len(GPU_SERIES_NAMES))
    assert history.nbytes() == before
    assert before < 4 * 2**20  # one GPU: 1 h at 100 ms plus 24 h of buckets


def test_ring_wraps_and_windows_stay_in_order() -> None:
    history = SeriesHistory(("a",), full_capacity=10, bucket_s=1000.0, coarse_capacity=4)
    for i in range(25):
        history.append(float(i), [float(i)])
    assert len(history) == 10
    window = history.window(0.0, 100.0)
    assert window.times.tolist() == [float(i) for i in range(15, 25)]
    assert window.series("a").tolist() == [float(i) for i in range(15, 25)]
    part = history.window(17.0, 20.0)
    assert part.times.tolist() == [17.0, 18.0, 19.0, 20.0]


def test_coarse_tier_keeps_min_mean_max_beyond_the_full_tier() -> None:
    history = SeriesHistory(("a",), full_capacity=20, bucket_s=10.0, coarse_capacity=100)
    for i in range(100):  # t = 0..99, one per second: buckets of 10
        history.append(float(i), [float(i % 10)])
    # The full tier holds t = 80..99; older data comes from the buckets.
    mean = history.window(0.0, 99.0, stat=1)
    assert mean.times[0] == 5.0  # bucket centre
    assert mean.series("a")[0] == pytest.approx(4.5)
    assert history.window(0.0, 99.0, stat=0).series("a")[0] == 0.0
    assert history.window(0.0, 99.0, stat=2).series("a")[0] == 9.0
    # The last complete bucket is followed by full-resolution samples, without overlap.
    assert np.all(np.diff(mean.times) > 0)
    assert mean.times[-1] == 99.0


def test_missing_values_are_nan_and_all_missing_buckets_stay_nan() -> None:
    history = SeriesHistory(("a", "b"), full_capacity=50, bucket_s=1000.0)
    for i in range(20):
        history.append(float(i), [float(i), None])
    window = history.window(0.0, 20.0, max_points=4)
    assert len(window.times) <= 4
    assert np.isnan(window.series("b")).all()
    assert not np.isnan(window.series("a")).any()


def test_decimation_keeps_newest_and_means() -> None:
    history = SeriesHistory(("a",), full_capacity=1000, bucket_s=1000.0)
    for i in range(1000):
        history.append(float(i), [float(i)])
    window = history.window(0.0, 999.0, max_points=100)
    assert len(window.times) == 100
    assert window.times[-1] == pytest.approx(994.5)
    assert window.series("a")[-1] == pytest.approx(994.5)


def test_long_windows_draw_from_buckets_plus_the_newest_samples() -> None:
    history = SeriesHistory(("a",), full_capacity=10_000, bucket_s=10.0)
    for i in range(5000):  # 500 s at 100 ms
        history.append(i / 10, [1.0 if i % 2 else 3.0])
    window = history.window(0.0, 499.9, max_points=100)
    # 49 complete 10 s buckets (means of 2.0), then the last, unfinished bucket in full.
    assert len(window.times) == 49 + 100
    assert np.allclose(window.series("a")[:49], 2.0)
    assert np.all(np.diff(window.times) > 0)
    again = history.window(0.05, 499.95, max_points=100)  # next frame: cached buckets
    assert np.array_equal(again.series("a")[:49], window.series("a")[:49])
    # Short windows stay at full resolution.
    assert len(history.window(490.0, 499.9, max_points=200).times) == 100


def test_empty_window() -> None:
    history = SeriesHistory(("a",))
    window = history.window(0.0, 10.0, max_points=10)
    assert window.times.shape == (0,) and window.values.shape == (0, 1)


def _sample(t: float, busy: float | None, vram: int | None) -> Sample:
    ident = GpuIdentity("0000:03:00.0", "card0", "0000:03:00.0", "1002:744c", "GPU")
    host = HostSample(10.0, (10.0,), 2**30, 2**34, 0, 0, (0.1, 0.1, 0.1))
    return Sample(t, (GpuSample(ident, False, busy_percent=busy, vram_used_bytes=vram),), host)


def test_telemetry_history_maps_samples_to_series() -> None:
    history = TelemetryHistory(full_capacity=100, coarse_capacity=10)
    history.add(_sample(1.0, 30.0, 512 * 2**20))
    history.add(_sample(2.0, None, None))
    gpu = history.gpus["0000:03:00.0"].window(0.0, 3.0)
    assert gpu.series("busy_percent")[0] == 30.0
    assert math.isnan(gpu.series("busy_percent")[1])
    assert gpu.series("vram_used_mib")[0] == 512.0
    assert history.host.window(0.0, 3.0).series("ram_used_mib")[0] == 1024.0
    assert history.last is not None and history.last.t == 2.0
