"""The window's colours: a light and a dark palette on the Fusion style, chosen by the
Theme setting; ``Theme.SYSTEM`` follows the desktop's light or dark scheme, also when it
changes while the panel runs.

Fusion draws every widget from the palette alone, so one palette gives the same window
on Linux, Windows and macOS (the native styles ignore parts of a custom palette). The
plots (pyqtgraph) take their colours when they are made: :func:`apply_theme` runs before
the first window, so they start right; a plot made before a switch keeps its old
background until its tab is rebuilt (the feature views read the palette once).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import logging
import sys
import types
from collections.abc import Sequence

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from rocmpanel.base.enums import Theme
from rocmpanel.base.settings import Settings

log = logging.getLogger(__name__)

Role = QPalette.ColorRole
Group = QPalette.ColorGroup

# (role, colour) pairs; the disabled group is derived (see _palette).
_LIGHT: dict[QPalette.ColorRole, str] = {
    Role.Window: "#efefef",
    Role.WindowText: "#1e1e1e",
    Role.Base: "#ffffff",
    Role.AlternateBase: "#f5f5f5",
    Role.ToolTipBase: "#ffffdc",
    Role.ToolTipText: "#1e1e1e",
    Role.PlaceholderText: "#7a7a7a",
    Role.Text: "#1e1e1e",
    Role.Button: "#efefef",
    Role.ButtonText: "#1e1e1e",
    Role.BrightText: "#ffffff",
    Role.Light: "#ffffff",
    Role.Midlight: "#e3e3e3",
    Role.Mid: "#b8b8b8",
    Role.Dark: "#9f9f9f",
    Role.Shadow: "#767676",
    Role.Highlight: "#b3261e",  # AMD-ish red, dark enough for white text (contrast 6:1)
    Role.HighlightedText: "#ffffff",
    Role.Link: "#0b57d0",
    Role.LinkVisited: "#6a3fb5",
}
_DARK: dict[QPalette.ColorRole, str] = {
    Role.Window: "#2b2b2d",
    Role.WindowText: "#e6e6e6",
    Role.Base: "#1e1e20",
    Role.AlternateBase: "#262628",
    Role.ToolTipBase: "#3a3a3d",
    Role.ToolTipText: "#e6e6e6",
    Role.PlaceholderText: "#8c8c8c",
    Role.Text: "#e6e6e6",
    Role.Button: "#353538",
    Role.ButtonText: "#e6e6e6",
    Role.BrightText: "#ffffff",
    Role.Light: "#48484c",
    Role.Midlight: "#3e3e42",
    Role.Mid: "#2f2f32",
    Role.Dark: "#1a1a1c",
    Role.Shadow: "#000000",
    Role.Highlight: "#cc3d33",  # white text on it: contrast 4.9:1 (WCAG AA)
    Role.HighlightedText: "#ffffff",
    Role.Link: "#8ab4f8",
    Role.LinkVisited: "#c58af9",
}
# Disabled text: this much of the way from the text colour to the window colour.
_DISABLED_FADE = 0.55


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


def _palette(colours: dict[QPalette.ColorRole, str]) -> QPalette:
    palette = QPalette()
    for role, name in colours.items():
        palette.setColor(role, QColor(name))
    window = QColor(colours[Role.Window])
    for role in (Role.WindowText, Role.Text, Role.ButtonText, Role.HighlightedText):
        faded = _mix(QColor(colours[role]), window, _DISABLED_FADE)
        palette.setColor(Group.Disabled, role, faded)
    palette.setColor(Group.Disabled, Role.Highlight, QColor(colours[Role.Mid]))
    return palette


def light_palette() -> QPalette:
    return _palette(_LIGHT)


def dark_palette() -> QPalette:
    return _palette(_DARK)


def is_dark(theme: Theme, system: Qt.ColorScheme) -> bool:
    """Whether ``theme`` means the dark palette while the desktop's scheme is ``system``
    (an unknown system scheme is light: most desktops that do not say are)."""
    if theme is Theme.DARK:
        return True
    if theme is Theme.LIGHT:
        return False
    return system == Qt.ColorScheme.Dark


def plot_colours(palette: QPalette) -> tuple[QColor, QColor]:
    """(background, foreground) for plots: the palette's text field and text."""
    return palette.color(Role.Base), palette.color(Role.Text)


class ThemeController(QObject):
    """Applies the palette for a theme, and follows the desktop's scheme for SYSTEM."""

    def __init__(self, app: QApplication, theme: Theme) -> None:
        super().__init__(app)
        self.app = app
        self.theme = theme
        self.dark: bool | None = None  # what was applied last
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_color_scheme_changed)

    def set_theme(self, theme: Theme) -> None:
        """Switch now (the Settings dialog calls this when the theme changes)."""
        self.theme = theme
        self.apply()

    def apply(self, system: Qt.ColorScheme | None = None) -> bool:
        """Apply the palette the theme asks for; whether it is the dark one."""
        if system is None:
            system = QGuiApplication.styleHints().colorScheme()
        dark = is_dark(self.theme, system)
        if dark == self.dark:
            return dark
        palette = dark_palette() if dark else light_palette()
        self.app.setPalette(palette)
        _plot_defaults(palette)
        self.dark = dark
        log.info("colours: %s (%s theme)", "dark" if dark else "light", self.theme.value)
        return dark

    @Slot(Qt.ColorScheme)
    def _on_color_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        if self.theme is Theme.SYSTEM:
            self.apply(scheme)


def _plot_defaults(palette: QPalette) -> None:
    """pyqtgraph's default colours for plots made from now on. Not imported yet: given
    the moment it is (importing it now would slow the first frame for nothing)."""
    background, foreground = plot_colours(palette)
    pg = sys.modules.get("pyqtgraph")
    if pg is not None:
        pg.setConfigOptions(background=background, foreground=foreground)
        return
    _PlotConfigOnImport.install((background, foreground))


class _PlotConfigOnImport(importlib.abc.MetaPathFinder):
    """Sets pyqtgraph's colours right after it is first imported (by whichever view
    imports it, at whatever time), before any plot of it exists."""

    colours: tuple[QColor, QColor] | None = None

    @classmethod
    def install(cls, colours: tuple[QColor, QColor]) -> None:
        cls.colours = colours
        if not any(isinstance(f, cls) for f in sys.meta_path):
            sys.meta_path.insert(0, cls())

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "pyqtgraph":
            return None
        sys.meta_path.remove(self)  # once, and not for the lookup below
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: types.ModuleType) -> None:
            run(module)
            colours = type(self).colours
            if colours is not None:
                background, foreground = colours
                module.setConfigOptions(background=background, foreground=foreground)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


_controller: ThemeController | None = None


def apply_theme(app: QApplication, settings: Settings) -> ThemeController:
    """Fusion style and the palette the Theme setting asks for, before the first window."""
    global _controller
    app.setStyle("Fusion")
    if _controller is None or _controller.app is not app:
        _controller = ThemeController(app, settings.general.theme)
    else:
        _controller.theme = settings.general.theme
    _controller.apply()
    return _controller


def controller() -> ThemeController | None:
    """The controller :func:`apply_theme` made (None before, e.g. in tests)."""
    return _controller
