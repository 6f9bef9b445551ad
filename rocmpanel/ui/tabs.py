"""The tabs of the main window, in order: (module, class) under rocmpanel.ui.

A tab class is a QWidget with a class attribute ``title``, built as ``Cls(ctx, parent)``
with an :class:`~rocmpanel.ui.context.AppContext`; it may define ``shutdown()``, called
when the window closes. Only tabs that work are listed: no placeholders.
"""

from __future__ import annotations

TABS: tuple[tuple[str, str], ...] = (
    ("rocmpanel.ui.setup_tab", "SetupTab"),
    ("rocmpanel.ui.monitor_tab", "MonitorTab"),
    ("rocmpanel.ui.chat_tab", "ChatTab"),
    ("rocmpanel.ui.pytorch_tab", "PyTorchTab"),
)
