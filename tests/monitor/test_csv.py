"""CSV export of a time range of history."""

from __future__ import annotations

import csv
from pathlib import Path

from rocmpanel.monitor.csv_export import HEADER, export_csv
from rocmpanel.monitor.history import TelemetryHistory
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, HostSample, Sample

IDENT = GpuIdentity("0000:0c:00.0", "card1", "0000:0c:00.0", "1002:73bf", "RX 6900 XT")


def test_export_writes_the_range_only(tmp_path: Path) -> None:
    history = TelemetryHistory(full_capacity=100, coarse_capacity=10)
    host = HostSample(12.5, (12.5,), 2**30, 2**34, None, None, None)
    for i in range(10):
        gpu = GpuSample(IDENT, False, busy_percent=float(i), temp_edge_c=50.5)
        history.add(Sample(1_700_000_000.0 + i, (gpu,), host))
    path = tmp_path / "out" / "t.csv"
    rows = export_csv(history, path, 1_700_000_002.0, 1_700_000_004.0)
    assert rows == 6  # 3 instants x (GPU + host)
    with path.open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert tuple(table[0]) == HEADER
    gpu_rows = [r for r in table if r["source"] == "0000:0c:00.0"]
    assert [r["busy_percent"] for r in gpu_rows] == ["2", "3", "4"]
    assert gpu_rows[0]["temp_edge_c"] == "50.5"
    assert gpu_rows[0]["power_w"] == ""  # not reported: empty, not 0
    assert gpu_rows[0]["time_utc"].startswith("2023-11-14T22:13:22")
    host_rows = [r for r in table if r["source"] == "host"]
    assert host_rows[0]["cpu_percent"] == "12.5" and host_rows[0]["busy_percent"] == ""
