"""Start-up time of ``rocmpanel --smoke-test`` against a bare PySide6 + pyqtgraph window.

Both are started alternately, several times each, in this one run. Each reports the time
from its process's start (interpreter start-up included, read from the kernel's process
start time) to its first paint event. Prints the medians and, as the last line, their
ratio. Goal: ratio <= 1.2. The wall time to the smoke test's JSON line is printed too; it
also includes building the tabs that are not shown, which happens after the first paint.

    python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def time_to_first_paint(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(first paint ms as the process reports it, wall ms until its JSON line)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    wall = (time.perf_counter() - started) * 1000.0
    _out, err = proc.communicate(timeout=60)
    if proc.returncode != 0 or not line.startswith(b"{"):
        raise SystemExit(f"{argv} failed ({proc.returncode}): {line!r} {err.decode()[-2000:]}")
    return float(json.loads(line)["first_paint_ms"]), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    with tempfile.TemporaryDirectory() as home:
        env["ROCMPANEL_HOME"] = home  # a fresh user: no saved state skews the figure
        panel = [sys.executable, "-m", "rocmpanel", "--smoke-test"]
        bare = [sys.executable, str(HERE / "_bare_window.py")]
        # One warm-up of each so both read from the page cache.
        time_to_first_paint(panel, env)
        time_to_first_paint(bare, env)
        panel_ms: list[float] = []
        bare_ms: list[float] = []
        panel_wall: list[float] = []
        for _ in range(args.runs):
            paint, wall = time_to_first_paint(panel, env)
            panel_ms.append(paint)
            panel_wall.append(wall)
            bare_ms.append(time_to_first_paint(bare, env)[0])
    p, b = statistics.median(panel_ms), statistics.median(bare_ms)
    print(f"rocmpanel --smoke-test  first paint median {p:7.1f} ms  runs {panel_ms}")
    print(f"bare PySide6+pyqtgraph  first paint median {b:7.1f} ms  runs {bare_ms}")
    wall = statistics.median(panel_wall)
    print(f"rocmpanel with every tab built (wall, to its JSON line) median {wall:.0f} ms")
    print("goal: ratio <= 1.2")
    print(f"ratio {p / b:.2f}")


if __name__ == "__main__":
    main()
