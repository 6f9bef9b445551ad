"""Export a time range of telemetry history to CSV (one row per source and instant).

Columns: ``time_utc`` (ISO 8601), ``unix_s``, ``source`` (a GPU's key, or "host"), then
every GPU series and every host series; a figure a source lacks is an empty cell. Ranges
older than the full-resolution hour come from the 10 s bucket means.

The history is not thread-safe, so an export is two steps: :func:`snapshot` copies the
range out of the ring buffers (on the thread that owns the history, a few milliseconds),
and :func:`write_csv` formats and writes the copy (anywhere: the Monitor runs it on the
thread pool, since formatting a day of history and the fsync take far longer).
"""

from __future__ import annotations

import csv
import io
import math
from datetime import datetime, timezone
from pathlib import Path

from rocmpanel.base.atomic import write_atomic
from rocmpanel.monitor.history import (
    GPU_SERIES_NAMES,
    HOST_KEY,
    HOST_SERIES_NAMES,
    TelemetryHistory,
    Window,
)

HEADER: tuple[str, ...] = ("time_utc", "unix_s", "source", *GPU_SERIES_NAMES, *HOST_SERIES_NAMES)


def _cell(value: float) -> str:
    if math.isnan(value):
        return ""
    return f"{value:.3f}".rstrip("0").rstrip(".")


Snapshot = list[tuple[str, Window]]  # (source key, its samples in the range), copied


def snapshot(history: TelemetryHistory, t_from: float, t_to: float) -> Snapshot:
    """Every source's samples with ``t_from <= t <= t_to``, copied out of the history so
    that later appends cannot change them."""
    sources = [*history.gpus.items(), (HOST_KEY, history.host)]
    copied: Snapshot = []
    for key, series in sources:
        window = series.window(t_from, t_to)
        copied.append((key, Window(window.names, window.times.copy(), window.values.copy())))
    return copied


def render_windows(windows: Snapshot) -> tuple[str, int]:
    """The CSV text of a snapshot and the number of data rows."""
    rows: list[tuple[float, str, list[str]]] = []
    for key, window in windows:
        for i, t in enumerate(window.times):
            by_name = dict(zip(window.names, window.values[i], strict=True))
            cells = [_cell(float(by_name[n])) if n in by_name else "" for n in HEADER[3:]]
            rows.append((float(t), key, cells))
    rows.sort(key=lambda r: (r[0], r[1] != HOST_KEY, r[1]))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    for t, key, cells in rows:
        stamp = datetime.fromtimestamp(t, tz=timezone.utc).isoformat(timespec="milliseconds")
        writer.writerow([stamp, f"{t:.3f}", key, *cells])
    return out.getvalue(), len(rows)


def render_csv(history: TelemetryHistory, t_from: float, t_to: float) -> tuple[str, int]:
    """The CSV text for ``t_from <= t <= t_to`` and the number of data rows."""
    return render_windows(snapshot(history, t_from, t_to))


def write_csv(path: Path, windows: Snapshot) -> int:
    """Write a snapshot to ``path`` atomically; returns the data rows written.

    Raises PanelError when the file cannot be written.
    """
    text, count = render_windows(windows)
    write_atomic(path, text.encode("utf-8"))
    return count


def export_csv(history: TelemetryHistory, path: Path, t_from: float, t_to: float) -> int:
    """Write the range to ``path`` atomically, on this thread; returns the data rows
    written. Raises PanelError when the file cannot be written."""
    return write_csv(path, snapshot(history, t_from, t_to))
