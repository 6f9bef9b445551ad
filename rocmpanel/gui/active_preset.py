"""The tuning preset jobs run under, shared by the views that show or change it.

The main window fills it from the settings at start (so the status bar names the preset
before the Tuning tab is ever opened); the Tuning tab changes it. The holder keeps the id
(what jobs resolve) and the name (what people read), so ``gui`` needs no feature module.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from rocmpanel.base.i18n import translate


class ActivePresetHolder(QObject):
    """The active preset's ``ident`` ("" = none) and ``name``; ``changed`` follows each
    change of either."""

    changed = Signal()

    def __init__(self, ident: str = "", name: str = "", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ident = ident
        self.name = name or ident

    def set(self, ident: str, name: str = "") -> None:
        """Make ``ident`` (shown as ``name``; "" = none) the active preset."""
        name = (name or ident) if ident else ""
        if (ident, name) == (self.ident, self.name):
            return
        self.ident, self.name = ident, name
        self.changed.emit()

    def clear(self) -> None:
        """No preset: jobs run with their environment as it is."""
        self.set("")

    def label(self) -> str:
        """What the status bar shows: ``Preset: NAME`` or ``Preset: none``."""
        if self.ident:
            return translate("ActivePresetHolder", "Preset: {name}").format(name=self.name)
        return translate("ActivePresetHolder", "Preset: none")
