"""Start-up time of ``rocmpanel --smoke-test`` against bare PySide6 windows.

Three programs are started in turn, several times each, in this one run: the panel, a
bare PySide6 window that imports pyqtgraph, and a bare PySide6 window without it. Each
reports the time from its process's start (interpreter start-up included, read from the
kernel's process start time) to its first paint event. Prints the medians, the ratio of
the panel to the bare PySide6 window (goal <= 1.5: plotting is imported only when a plot
is first built), and, as the last line, the ratio of the panel to the pyqtgraph window
(goal <= 1.2). The wall time to the smoke test's JSON line is printed too; it also
includes building the tabs that are not shown, which happens after the first paint.

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


# Problems a run reported after its first paint (a tab that failed to build): the paint
# was timed all the same, so they are printed as a warning instead of ending the run.
PROBLEMS: dict[str, str] = {}


def time_to_first_paint(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(first paint ms as the process reports it, wall ms until its JSON line)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    wall = (time.perf_counter() - started) * 1000.0
    _out, err = proc.communicate(timeout=60)
    if not line.startswith(b"{"):
        raise SystemExit(f"{argv} failed ({proc.returncode}): {line!r} {err.decode()[-2000:]}")
    if proc.returncode != 0:
        PROBLEMS[" ".join(argv[1:])] = err.decode(errors="replace").strip()[-500:]
    return float(json.loads(line)["first_paint_ms"]), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    # An installed app runs from compiled bytecode (pip compiles on install); a checkout
    # run with PYTHONDONTWRITEBYTECODE recompiles the panel's own modules on every start,
    # which bare windows of one file never pay. All three programs get a private bytecode
    # cache that the warm-up fills, so the figures compare like with like.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as pycache:
        env["ROCMPANEL_HOME"] = home  # a fresh user: no saved state skews the figure
        env["PYTHONPYCACHEPREFIX"] = pycache
        panel = [sys.executable, "-m", "rocmpanel", "--smoke-test"]
        with_pyqtgraph = [sys.executable, str(HERE / "_bare_window.py")]
        bare = [*with_pyqtgraph, "--no-pyqtgraph"]
        # One warm-up of each so all three read from the page cache.
        for argv in (panel, with_pyqtgraph, bare):
            time_to_first_paint(argv, env)
        panel_ms: list[float] = []
        pyqtgraph_ms: list[float] = []
        bare_ms: list[float] = []
        panel_wall: list[float] = []
        # Alternating, so a change in the machine's load touches all three alike.
        for _ in range(args.runs):
            paint, wall = time_to_first_paint(panel, env)
            panel_ms.append(paint)
            panel_wall.append(wall)
            pyqtgraph_ms.append(time_to_first_paint(with_pyqtgraph, env)[0])
            bare_ms.append(time_to_first_paint(bare, env)[0])
    p = statistics.median(panel_ms)
    g = statistics.median(pyqtgraph_ms)
    b = statistics.median(bare_ms)
    print(f"rocmpanel --smoke-test  first paint median {p:7.1f} ms  runs {panel_ms}")
    print(f"bare PySide6+pyqtgraph  first paint median {g:7.1f} ms  runs {pyqtgraph_ms}")
    print(f"bare PySide6            first paint median {b:7.1f} ms  runs {bare_ms}")
    wall = statistics.median(panel_wall)
    print(f"rocmpanel with every tab built (wall, to its JSON line) median {wall:.0f} ms")
    for what, problem in PROBLEMS.items():
        print(f"warning: {what} exited with problems (timed anyway): {problem}")
    print("goal: ratio vs bare PySide6 <= 1.5")
    print(f"ratio vs bare PySide6: {p / b:.2f}")
    print("goal: ratio (vs bare PySide6+pyqtgraph) <= 1.2")
    print(f"ratio {p / g:.2f}")


if __name__ == "__main__":
    main()
