"""Baseline for benchmarks/startup.py: a bare PySide6 window that also imports pyqtgraph.

Prints the same JSON line as ``rocmpanel --smoke-test`` after its first paint.
"""

import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph  # noqa: F401  (imported on purpose: the panel imports it too)
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow, QTabWidget

from rocmpanel.shell.app import process_age_ms  # the same clock as the smoke test

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
    print(json.dumps({"first_paint_ms": round(painted[0], 1), "tabs": []}), flush=True)
    app.exit(0)


watcher = Watcher()
app.installEventFilter(watcher)
window.show()
sys.exit(app.exec())
