"""The app's last probe of the workload Python, shared by the views that show it.

Setup probes the workload Python after the window's first paint; About shows the same
result instead of starting a probe of its own. The holder keeps the probe worker's raw
report (a dict; ``setup.probe_report.ProbeReport.from_dict`` reads it) and the
interpreter it ran in, so ``gui`` needs no feature module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QObject, Signal


class ProbeResultHolder(QObject):
    """The latest successful probe (``data`` None until one ends); ``changed`` follows
    each new one."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.data: Mapping[str, Any] | None = None
        self.python = ""

    def set(self, data: Mapping[str, Any], python: str) -> None:
        """Keep the report of a probe that ran in ``python`` (its resolved path)."""
        self.data = dict(data)
        self.python = python
        self.changed.emit()
