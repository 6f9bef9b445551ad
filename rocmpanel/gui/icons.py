"""The application icon, drawn as SVG in resources/."""

from __future__ import annotations

from PySide6.QtGui import QIcon

from rocmpanel.base.resources import resource_path


def icon_path() -> str:
    return str(resource_path("rocmpanel.svg"))


def app_icon() -> QIcon:
    return QIcon(icon_path())
