"""The application icon: the SVG in resources/ plus its renderings in the hicolor sizes.

Qt picks the closest pixmap for each size it needs (title bar, task bar, Alt+Tab, the
About dialog at 1x and 2x): the PNGs, rendered once by ``scripts/make_icons.py``, keep
small sizes crisp without the SVG plugin scaling the full drawing down, and the SVG
covers every size in between and above.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QIcon

from rocmpanel.base.resources import resource_path

#: The sizes ``scripts/make_icons.py`` renders (freedesktop hicolor sizes up to 512).
ICON_SIZES: tuple[int, ...] = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def icon_path() -> str:
    return str(resource_path("rocmpanel.svg"))


def png_path(size: int) -> Path:
    """The rendering of the icon at ``size`` pixels (it may be absent in a bare checkout)."""
    return resource_path(f"icons/hicolor/{size}x{size}/apps/rocmpanel.png")


def app_icon() -> QIcon:
    icon = QIcon(icon_path())
    for size in ICON_SIZES:
        path = png_path(size)
        if path.is_file():  # a missing rendering leaves that size to the SVG
            icon.addFile(str(path), QSize(size, size))
    return icon
