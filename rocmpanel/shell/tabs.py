"""The tabs of the main window, in order.

The window imports and builds a tab only when it is first shown, or shortly after the
first paint, so start-up pays for one tab. The title is listed here for that reason and
must equal the class's ``title`` (a test checks it, and that every class listed keeps the
:class:`~rocmpanel.gui.tab.Tab` protocol). Only tabs that work are listed: no placeholders.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import cast

from rocmpanel.gui.tab import TabFactory


@dataclass(frozen=True)
class TabEntry:
    """A tab named by where its class lives, imported on first use."""

    module: str
    cls: str
    title: str

    def load(self) -> TabFactory:
        """Import the module and return the tab class (ImportError, AttributeError)."""
        return cast(TabFactory, getattr(importlib.import_module(self.module), self.cls))


TABS: tuple[TabEntry, ...] = (
    TabEntry("rocmpanel.setup.views.tab", "SetupTab", "Setup"),
    TabEntry("rocmpanel.monitor.views.tab", "MonitorTab", "Monitor"),
    TabEntry("rocmpanel.pytorch.views.tab", "PyTorchTab", "PyTorch"),
    TabEntry("rocmpanel.tuning.views.tab", "TuningTab", "Tuning"),
    TabEntry("rocmpanel.chat.views.tab", "ChatTab", "Chat"),
    TabEntry("rocmpanel.multigpu.views.tab", "MultiGpuTab", "Multi-GPU"),
)
