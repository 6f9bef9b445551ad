"""Guards against known-bad Qt binding builds (see the pin in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
from PySide6.QtCore import QCoreApplication, QObject, Signal
app = QCoreApplication([])
class A(QObject):
    s = Signal()
    batch = Signal(list)
a = A()
a.batch.connect(lambda items: None)
before = sys.getrefcount(True)
for _ in range(20000):
    a.s.emit()
    a.batch.emit([1])
print(before - sys.getrefcount(True))
"""


def test_signal_emit_does_not_leak_references_to_true() -> None:
    # In a child: a leaking binding aborts the interpreter rather than failing politely.
    proc = subprocess.run(
        [sys.executable, "-c", CHECK],
        capture_output=True,
        text=True,
        timeout=120,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert abs(int(proc.stdout.strip())) < 100
