"""The app's one copy of the machine inventory, detected off the GUI thread.

Tabs read ``ctx.inventory.current`` (None until the first detection ends) and connect to
``changed``; Refresh buttons and finished installs call ``refresh()``. Requests made while
a detection runs are folded into one more run after it.

``ROCMPANEL_SYSFS_ROOT`` (a recorded /sys-like tree) is read by the default detection as
by the Monitor: Setup, PyTorch, Chat and About then describe that tree, and no tool of
this machine (rocminfo, lspci) runs.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping

from PySide6.QtCore import QObject, Signal

from rocmpanel.gui.background import run_in_background
from rocmpanel.machine.inventory import Inventory, detect_inventory

log = logging.getLogger(__name__)

SYSFS_ROOT_VARIABLE = "ROCMPANEL_SYSFS_ROOT"


def detect_from_environment(env: Mapping[str, str] | None = None) -> Inventory:
    """This machine, or the recorded tree ``ROCMPANEL_SYSFS_ROOT`` names (blocking)."""
    env = os.environ if env is None else env
    root = env.get(SYSFS_ROOT_VARIABLE)
    if root:
        return detect_inventory(env, sysfs_root=root)
    return detect_inventory(env)


class InventoryHolder(QObject):
    """Holds the latest :class:`Inventory`; ``changed`` carries each new one, ``failed``
    the error of a detection that raised (the previous inventory stays)."""

    changed = Signal(object)
    failed = Signal(object)

    def __init__(
        self,
        detector: Callable[[], Inventory] = detect_from_environment,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._detector = detector
        self.current: Inventory | None = None
        self.error: BaseException | None = None
        self._running = False
        self._again = False

    @property
    def busy(self) -> bool:
        return self._running

    def refresh(self) -> None:
        """Detect again in the background (GUI thread only)."""
        if self._running:
            self._again = True
            return
        self._running = True
        run_in_background(
            self._detector, self._on_detected, owner=self, what="detecting the machine"
        )

    def ensure(self) -> None:
        """Start a first detection unless one ran or runs."""
        if self.current is None and not self._running:
            self.refresh()

    def set_current(self, inventory: Inventory) -> None:
        """Use ``inventory`` (a captured machine, a test) as if it had been detected."""
        self.current = inventory
        self.error = None
        self.changed.emit(inventory)

    def _on_detected(self, inventory: Inventory | None, error: BaseException | None) -> None:
        self._running = False
        if error is not None or inventory is None:
            self.error = error
            log.warning("machine detection failed", exc_info=error)
            self.failed.emit(error)
        else:
            self.set_current(inventory)
        if self._again:
            self._again = False
            self.refresh()
