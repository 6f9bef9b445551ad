"""Detection off the GUI thread: a worker object moved to a QThread that reports
``(result, error)`` back through a queued signal."""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from rocmpanel.machine.gpu_model import HostFacts, SystemInfo

log = logging.getLogger(__name__)


def default_detector() -> tuple[SystemInfo, HostFacts]:
    from rocmpanel.machine.host_facts import local_diagnosis

    return local_diagnosis()


class DetectWorker(QObject):
    """Runs one detection on its thread and reports ``(result, error)``."""

    finished = Signal(object, object)

    def __init__(self, detector: Callable[[], tuple[SystemInfo, HostFacts]]) -> None:
        super().__init__()
        self._detector = detector

    @Slot()
    def run(self) -> None:
        try:
            result = self._detector()
        except Exception as exc:  # every failure reaches the tab as a message
            log.exception("GPU detection failed")
            self.finished.emit(None, exc)
            return
        self.finished.emit(result, None)
