"""Recent telemetry peaks for the health report, from the Monitor's history.

The Monitor keeps its history in memory (``monitor.history``), so only the window has
telemetry to report: it calls :func:`peaks_from_history` on the GUI thread (the history
is not thread-safe; a max over an hour of samples takes about a millisecond) and hands
the result to :func:`rocmpanel.shell.report.gather_report`. Where the full-resolution
tier no longer covers the window, the 10 s buckets' maxima are used, so a short spike
is never averaged away.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable

import numpy as np

from rocmpanel.monitor.history import HOST_KEY, SeriesHistory, TelemetryHistory
from rocmpanel.monitor.sample import Sample
from rocmpanel.shell.report import GpuPeaks, TelemetryPeaks

WINDOW_S = 3600.0
_MAX = 2  # SeriesHistory.window's stat index of a bucket's maximum


def _peak(history: SeriesHistory, name: str, t_from: float, t_to: float) -> float | None:
    values = history.window(t_from, t_to, stat=_MAX).series(name)
    if not len(values) or bool(np.isnan(values).all()):
        return None
    return float(np.nanmax(values))


def _figure(value: float | None, unit: str, digits: int = 0) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:.{digits}f} {unit}"


def _span(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return f"{minutes} min" if minutes < 120 else f"{minutes / 60:.1f} h"


def peaks_from_history(
    history: TelemetryHistory | None,
    now: float | None = None,
    window_s: float = WINDOW_S,
    names: dict[str, str] | None = None,
) -> TelemetryPeaks | None:
    """The peaks of the last ``window_s`` seconds, or None when nothing was recorded.
    ``names``: a display name per GPU key (default: the name of the last sample)."""
    if history is None:
        return None
    t_to = time.time() if now is None else now
    t_from = t_to - window_s
    known = dict(names or {})
    if history.last is not None:
        for gpu in history.last.gpus:
            known.setdefault(gpu.identity.key, gpu.identity.name)
    oldest = t_to
    gpus = []
    for key, series in history.gpus.items():
        first = series.oldest_full_time()
        if first is None:
            continue
        # Counted in the full-resolution tier (a window reaching past it gets buckets).
        count = len(series.window(max(t_from, first), t_to).times)
        if not count:
            continue
        oldest = min(oldest, first)
        vram = _peak(series, "vram_used_mib", t_from, t_to)
        gpus.append(
            GpuPeaks(
                name=f"{known.get(key, key)} ({key})" if key in known else key,
                samples=count,
                busy=_figure(_peak(series, "busy_percent", t_from, t_to), "%"),
                vram=_figure(None if vram is None else vram / 1024, "GiB", 2),
                temp_edge=_figure(_peak(series, "temp_edge_c", t_from, t_to), "°C"),
                temp_junction=_figure(_peak(series, "temp_junction_c", t_from, t_to), "°C"),
                temp_mem=_figure(_peak(series, "temp_mem_c", t_from, t_to), "°C"),
                power=_figure(_peak(series, "power_w", t_from, t_to), "W"),
            )
        )
    host = ""
    host_first = history.host.oldest_full_time()
    if host_first is not None and len(history.host.window(max(t_from, host_first), t_to).times):
        oldest = min(oldest, host_first)
        cpu = _peak(history.host, "cpu_percent", t_from, t_to)
        ram = _peak(history.host, "ram_used_mib", t_from, t_to)
        ram_text = _figure(None if ram is None else ram / 1024, "GiB", 1)
        host = f"{HOST_KEY}: CPU up to {_figure(cpu, '%')}, RAM used up to {ram_text}"
    if not gpus and not host:
        return None
    span = min(window_s, max(0.0, t_to - oldest))
    return TelemetryPeaks(window=f"last {_span(span or window_s)}", gpus=tuple(gpus), host=host)


def peaks_from_samples(
    samples: Iterable[Sample], now: float | None = None
) -> TelemetryPeaks | None:
    """The peaks of ``samples`` (the CLI's demo replays the demo's past minutes)."""
    history = TelemetryHistory()
    for sample in samples:
        history.add(sample)
    return peaks_from_history(history, now)
