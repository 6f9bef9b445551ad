"""The tabs of the main window, in order: (module, class, title).

The window imports and builds a tab only when it is first shown, or shortly after the
first paint, so start-up pays for one tab. The title is listed here for that reason and
must equal the class's ``title`` (a test checks it).

A tab class is a QWidget with a class attribute ``title``, built as ``Cls(ctx, parent)``
with an :class:`~rocmpanel.gui.context.AppContext`; it may define ``shutdown()``, called
when the window closes. Only tabs that work are listed: no placeholders.
"""

from __future__ import annotations

TABS: tuple[tuple[str, str, str], ...] = (
    ("rocmpanel.setup.views.tab", "SetupTab", "Setup"),
    ("rocmpanel.monitor.views.tab", "MonitorTab", "Monitor"),
    ("rocmpanel.pytorch.views.tab", "PyTorchTab", "PyTorch"),
    ("rocmpanel.chat.views.tab", "ChatTab", "Chat"),
)
