"""The Monitor's telemetry history, created once its module (numpy) has loaded.

numpy costs a tenth of a second to import, which the first paint of a window that opens
on another tab must not pay. The first sample starts the import on the thread pool; the
samples that arrive meanwhile wait here (at most ``PENDING_SAMPLES``) and go into the
history as soon as it exists. A caller that needs the history at once (the plots, a CSV
export) gets it with ``ensure()``, importing on the spot if the pool has not finished.
"""

from __future__ import annotations

import importlib
from collections import deque
from types import ModuleType
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from rocmpanel.base.i18n import translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.report import report
from rocmpanel.monitor.sample import Sample

if TYPE_CHECKING:
    from rocmpanel.monitor.history import TelemetryHistory

PENDING_SAMPLES = 600


def _load_history_module() -> ModuleType:
    return importlib.import_module("rocmpanel.monitor.history")


class LazyHistory(QObject):
    """``add`` every sample; ``current`` is None until the history exists."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.current: TelemetryHistory | None = None
        self._pending: deque[Sample] = deque(maxlen=PENDING_SAMPLES)
        self._requested = False

    def add(self, sample: Sample) -> None:
        if self.current is not None:
            self.current.add(sample)
            return
        self._pending.append(sample)
        if not self._requested:
            self._requested = True
            run_in_background(
                _load_history_module,
                self._on_module_loaded,
                owner=self,
                what="loading the telemetry history",
            )

    def _on_module_loaded(self, _module: object, error: BaseException | None) -> None:
        if error is not None:
            report(error, translate("LazyHistory", "Loading the telemetry history"))
            return
        self.ensure()

    def ensure(self) -> TelemetryHistory:
        """The history, created now (with the samples that waited) if need be."""
        if self.current is None:
            from rocmpanel.monitor.history import TelemetryHistory

            self.current = TelemetryHistory()
            for sample in self._pending:
                self.current.add(sample)
            self._pending.clear()
        return self.current
