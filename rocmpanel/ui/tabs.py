"""The tabs of the main window, in order: (module, class, title).

The window imports and builds a tab only when it is first shown, or shortly after the
first paint, so start-up pays for one tab. The title is listed here for that reason and
must equal the class's ``title`` (a test checks it).

A tab class is a QWidget with a class attribute ``title``, built as ``Cls(ctx, parent)``
with an :class:`~rocmpanel.ui.context.AppContext`; it may define ``shutdown()``, called
when the window closes. Only tabs that work are listed: no placeholders.
"""

from __future__ import annotations

TABS: tuple[tuple[str, str, str], ...] = (
    ("rocmpanel.ui.setup_tab", "SetupTab", "Setup"),
    ("rocmpanel.ui.monitor_tab", "MonitorTab", "Monitor"),
    ("rocmpanel.ui.pytorch_tab", "PyTorchTab", "PyTorch"),
    ("rocmpanel.ui.chat_tab", "ChatTab", "Chat"),
)
