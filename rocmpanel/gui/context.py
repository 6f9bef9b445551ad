"""What every tab gets from the main window: settings, the job manager, the status line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rocmpanel.base.settings import Settings
from rocmpanel.jobs.runner import JobManager


@dataclass
class AppContext:
    """Shared services. ``notify`` shows a message in the status bar (GUI thread only)."""

    settings: Settings
    jobs: JobManager
    notify: Callable[[str], None] = print

    def workload_python(self) -> str:
        """The interpreter GPU jobs run in ("" = the panel's own)."""
        return str(self.settings.get("workload_python"))
