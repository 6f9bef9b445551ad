"""The light and dark palettes: chosen by the Theme setting; SYSTEM follows the desktop's
scheme, also when it changes while the panel runs; pyqtgraph gets the palette's colours."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from rocmpanel.base.enums import Theme
from rocmpanel.base.settings import Settings
from rocmpanel.gui import palette as pal

Role = QPalette.ColorRole


@pytest.fixture
def restored_app(qapp: QApplication):  # type: ignore[no-untyped-def]
    """The application's palette and style as the test found them; no controller left."""
    saved_palette, saved_style = qapp.palette(), qapp.style().name()
    yield qapp
    if pal._controller is not None:
        QGuiApplication.styleHints().colorSchemeChanged.disconnect(
            pal._controller._on_color_scheme_changed
        )
        pal._controller.deleteLater()
        pal._controller = None
    qapp.setStyle(saved_style)
    qapp.setPalette(saved_palette)


def _lightness(palette: QPalette, role: QPalette.ColorRole) -> int:
    return palette.color(role).lightness()


def test_the_dark_palette_is_dark_and_the_light_one_light() -> None:
    dark, light = pal.dark_palette(), pal.light_palette()
    assert _lightness(dark, Role.Window) < 80 < 200 < _lightness(light, Role.Window)
    assert _lightness(dark, Role.Text) > 200 > 60 > _lightness(light, Role.Text)
    # Disabled text is dimmer than enabled text in both (a disabled button reads as one).
    for palette in (dark, light):
        enabled = palette.color(QPalette.ColorGroup.Active, Role.Text)
        disabled = palette.color(QPalette.ColorGroup.Disabled, Role.Text)
        window = palette.color(Role.Window)
        assert abs(disabled.lightness() - window.lightness()) < abs(
            enabled.lightness() - window.lightness()
        )


@pytest.mark.parametrize(
    ("theme", "system", "dark"),
    [
        (Theme.DARK, Qt.ColorScheme.Light, True),
        (Theme.LIGHT, Qt.ColorScheme.Dark, False),
        (Theme.SYSTEM, Qt.ColorScheme.Dark, True),
        (Theme.SYSTEM, Qt.ColorScheme.Light, False),
        (Theme.SYSTEM, Qt.ColorScheme.Unknown, False),
    ],
)
def test_the_theme_setting_chooses_the_palette(
    theme: Theme, system: Qt.ColorScheme, dark: bool
) -> None:
    assert pal.is_dark(theme, system) is dark


@pytest.mark.parametrize(("theme", "dark"), [(Theme.DARK, True), (Theme.LIGHT, False)])
def test_apply_theme_sets_the_setting_s_palette_and_fusion(
    restored_app: QApplication, theme: Theme, dark: bool
) -> None:
    settings = Settings()
    settings.general.theme = theme
    controller = pal.apply_theme(restored_app, settings)
    assert controller.dark is dark
    assert restored_app.style().name().lower() == "fusion"
    window = restored_app.palette().color(Role.Window)
    expected = (pal.dark_palette() if dark else pal.light_palette()).color(Role.Window)
    assert window == expected


def test_system_follows_the_desktop_scheme_as_it_changes(
    restored_app: QApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    hints = QGuiApplication.styleHints()
    scheme = {"now": Qt.ColorScheme.Light}
    monkeypatch.setattr(type(hints), "colorScheme", lambda _self: scheme["now"])
    controller = pal.apply_theme(restored_app, Settings())  # Theme.SYSTEM by default
    assert controller.dark is False
    assert restored_app.palette().color(Role.Window) == pal.light_palette().color(Role.Window)

    scheme["now"] = Qt.ColorScheme.Dark
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # what the desktop sends
    assert controller.dark is True
    assert restored_app.palette().color(Role.Window) == pal.dark_palette().color(Role.Window)

    controller.set_theme(Theme.LIGHT)  # a fixed theme stops following
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert controller.dark is False


def test_plots_get_the_palette_s_colours(restored_app: QApplication) -> None:
    import pyqtgraph as pg

    saved = (pg.getConfigOption("background"), pg.getConfigOption("foreground"))
    try:
        settings = Settings()
        settings.general.theme = Theme.DARK
        pal.apply_theme(restored_app, settings)
        background = pg.mkColor(pg.getConfigOption("background"))
        assert background == pal.dark_palette().color(Role.Base)
        settings.general.theme = Theme.LIGHT
        pal.apply_theme(restored_app, settings)
        assert pg.mkColor(pg.getConfigOption("background")) == pal.light_palette().color(Role.Base)
    finally:
        pg.setConfigOptions(background=saved[0], foreground=saved[1])


def test_plots_imported_later_get_the_colours_at_their_import(
    restored_app: QApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyqtgraph not imported yet: its first import (by a tab) sets the colours."""
    for name in [n for n in sys.modules if n == "pyqtgraph" or n.startswith("pyqtgraph.")]:
        monkeypatch.delitem(sys.modules, name)
    settings = Settings()
    settings.general.theme = Theme.DARK
    pal.apply_theme(restored_app, settings)
    assert "pyqtgraph" not in sys.modules  # the first frame does not pay for it
    import pyqtgraph as fresh

    try:
        background = fresh.mkColor(fresh.getConfigOption("background"))
        assert background == pal.dark_palette().color(Role.Base)
    finally:
        assert not any(isinstance(f, pal._PlotConfigOnImport) for f in sys.meta_path)


def _luminance(colour: QColor) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in (colour.red(), colour.green(), colour.blue()))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@pytest.mark.parametrize("make", [pal.light_palette, pal.dark_palette])
def test_selected_text_is_readable_on_the_highlight(make) -> None:  # type: ignore[no-untyped-def]
    palette = make()
    a = _luminance(palette.color(Role.Highlight))
    b = _luminance(palette.color(Role.HighlightedText))
    ratio = (max(a, b) + 0.05) / (min(a, b) + 0.05)
    assert ratio >= 4.5  # WCAG AA for normal text
