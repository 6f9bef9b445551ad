"""The GPUs jobs run on, as the window last read them, shared by the views that show it.

The status bar's GPU button reads the choice off the GUI thread and sets it here; the
Multi-GPU tab and the Chat tab's vLLM command read it from here without touching sysfs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    from rocmpanel.jobs.gpu_choice import GpuChoice


class GpuChoiceHolder(QObject):
    """``choice``: the last reading (None until the first); ``changed`` follows each."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.choice: GpuChoice | None = None
        self.reading = False  # a reading is under way (one at a time)

    def set(self, choice: GpuChoice) -> None:
        self.choice = choice
        self.changed.emit()
