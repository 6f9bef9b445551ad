"""The tabs of the main window, in order.

The window imports and builds a tab only when it is first shown, or shortly after the
first paint, so start-up pays for one tab. The title is listed here for that reason and
must equal the class's ``title`` (a test checks it, and that every class listed keeps the
:class:`~rocmpanel.gui.tab.Tab` protocol). Only tabs that work are listed: no placeholders.
The title stays English (settings and code name tabs by it); the tab bar shows it translated
(context "Tabs").
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import cast

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP
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
    TabEntry("rocmpanel.setup.views.tab", "SetupTab", QT_TRANSLATE_NOOP("Tabs", "Setup")),
    TabEntry("rocmpanel.monitor.views.tab", "MonitorTab", QT_TRANSLATE_NOOP("Tabs", "Monitor")),
    TabEntry("rocmpanel.pytorch.views.tab", "PyTorchTab", QT_TRANSLATE_NOOP("Tabs", "PyTorch")),
    TabEntry("rocmpanel.tuning.views.tab", "TuningTab", QT_TRANSLATE_NOOP("Tabs", "Tuning")),
    TabEntry("rocmpanel.chat.views.tab", "ChatTab", QT_TRANSLATE_NOOP("Tabs", "Chat")),
    TabEntry("rocmpanel.multigpu.views.tab", "MultiGpuTab", QT_TRANSLATE_NOOP("Tabs", "Multi-GPU")),
)
