"""What every tab gets from the main window: settings, the job manager, the machine
inventory and the status line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocmpanel.gui.active_preset import ActivePresetHolder
from rocmpanel.gui.gpu_choice_holder import GpuChoiceHolder
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.gui.probe_result import ProbeResultHolder
from rocmpanel.machine.live import LiveGpuMemory

if TYPE_CHECKING:  # annotations only: whoever builds the context has imported them
    from rocmpanel.base.settings import Settings
    from rocmpanel.jobs.runner import JobManager


@dataclass
class AppContext:
    """Shared services. ``notify`` shows a message in the status bar (GUI thread only);
    ``inventory`` is the machine's GPUs and host facts; ``live_memory`` the VRAM of each
    GPU as the Monitor's sampler last read it.

    Hooks the main window fills in (None in a bare tab, e.g. in a test: a view then hides
    the button that would call it):

    - ``demo``: the panel runs on bundled recordings (``rocmpanel --demo``), not this
      machine; views say so where it matters and never change this machine's settings.
    - ``show_demo``: open the demo (the "Show a demo" button of the no-GPU states).
    - ``install_packages``: install an install profile's packages (``"llm"`` for the
      "PyTorch + local LLM" profile) into the active workload environment; the PyTorch
      tab runs it as a job and shows its progress.
    """

    settings: Settings
    jobs: JobManager
    notify: Callable[[str], None] = print
    inventory: InventoryHolder = field(default_factory=InventoryHolder)
    live_memory: LiveGpuMemory = field(default_factory=LiveGpuMemory)
    demo: bool = False
    show_demo: Callable[[], None] | None = None
    install_packages: Callable[[str], None] | None = None
    #: The last probe of the workload Python (Setup runs it; About shows it).
    probe_result: ProbeResultHolder = field(default_factory=ProbeResultHolder)
    #: The tuning preset jobs run under (the Tuning tab sets it; the status bar shows it).
    active_preset: ActivePresetHolder = field(default_factory=ActivePresetHolder)
    #: The GPUs jobs run on, as last read (the status bar's GPU button reads and sets it).
    gpu_choice: GpuChoiceHolder = field(default_factory=GpuChoiceHolder)

    def workload_python(self) -> str:
        """The interpreter GPU jobs run in ("" = the panel's own)."""
        return self.settings.general.workload_python
