"""Baselines for benchmarks/startup.py: a bare PySide6 window, with or without pyqtgraph.

By default it also imports pyqtgraph (the panel's plotting library), as the first
baseline always did; ``--no-pyqtgraph`` leaves it out, giving the floor any PySide6 app
pays. Prints the same JSON line as ``rocmpanel --smoke-test`` after its first paint.

    python benchmarks/_bare_window.py [--no-pyqtgraph]
"""

import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

if "--no-pyqtgraph" not in sys.argv[1:]:
    import pyqtgraph  # noqa: F401  (imported on purpose: the panel imports it too)
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow, QTabWidget


def process_age_ms():
    """Milliseconds since this process started: the clock of the smoke test
    (rocmpanel.shell.app.process_age_ms), copied so that the baseline imports nothing of
    rocmpanel (that module alone pulls in logging.handlers and pathlib, ~20 ms)."""
    with open("/proc/self/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
    with open("/proc/uptime", encoding="ascii") as handle:
        uptime = float(handle.read().split()[0])
    return max(0.0, (uptime - started) * 1000.0)


app = QApplication(sys.argv[:1])
window = QMainWindow()
window.setCentralWidget(QTabWidget())
window.resize(1180, 780)
painted = []


class Watcher(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and not painted:
            painted.append(process_age_ms())
            QTimer.singleShot(0, finish)
        return False


def finish():
    report = {
        "first_paint_ms": round(painted[0], 1),
        "tabs": [],
        "pyqtgraph_imported": "pyqtgraph" in sys.modules,
    }
    print(json.dumps(report), flush=True)
    app.exit(0)


watcher = Watcher()
app.installEventFilter(watcher)
window.show()
sys.exit(app.exec())
