"""What every tab gets from the main window: settings, the job manager, the machine
inventory and the status line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.machine.live import LiveGpuMemory

if TYPE_CHECKING:  # annotations only: whoever builds the context has imported them
    from rocmpanel.base.settings import Settings
    from rocmpanel.jobs.runner import JobManager


@dataclass
class AppContext:
    """Shared services. ``notify`` shows a message in the status bar (GUI thread only);
    ``inventory`` is the machine's GPUs and host facts; ``live_memory`` the VRAM of each
    GPU as the Monitor's sampler last read it."""

    settings: Settings
    jobs: JobManager
    notify: Callable[[str], None] = print
    inventory: InventoryHolder = field(default_factory=InventoryHolder)
    live_memory: LiveGpuMemory = field(default_factory=LiveGpuMemory)

    def workload_python(self) -> str:
        """The interpreter GPU jobs run in ("" = the panel's own)."""
        return self.settings.general.workload_python
