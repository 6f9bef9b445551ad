"""The application icon, drawn as SVG in resources/."""

from __future__ import annotations

from importlib import resources

from PySide6.QtGui import QIcon


def icon_path() -> str:
    return str(resources.files("rocmpanel.resources").joinpath("rocmpanel.svg"))


def app_icon() -> QIcon:
    return QIcon(icon_path())
