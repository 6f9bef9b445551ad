"""Translation of user-visible text through Qt's machinery, usable from Qt-free code.

Every string a user sees is written ``translate("Context", "English text")``: in the
window (which imports Qt and installs the translator, see ``rocmpanel.shell.translations``)
it returns ``QCoreApplication.translate``'s answer; in a headless command, which never
imports Qt, it returns the English text. ``pyside6-lupdate`` finds these calls by their
name, so the first two arguments must be string literals (use ``str.format`` with named
fields for the variable parts, never an f-string). Text kept in a module-level constant is
marked with :func:`QT_TRANSLATE_NOOP` and translated where it is shown.

``scripts/translations.py`` extracts the marked strings into ``resources/translations``
(.ts, committed) and builds the .qm files the window loads.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Iterator

# Set by english(): this thread (context) writes English whatever the window's language.
_ENGLISH: contextvars.ContextVar[bool] = contextvars.ContextVar("rocmpanel_english", default=False)


def translate(context: str, text: str, disambiguation: str | None = None, n: int = -1) -> str:
    """``text`` in the window's language (English where no translation is loaded)."""
    qtcore = sys.modules.get("PySide6.QtCore")
    if qtcore is None or _ENGLISH.get():  # headless (no translator can be installed), or
        return text  # English asked for (english())
    return str(qtcore.QCoreApplication.translate(context, text, disambiguation, n))


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # the name lupdate looks for
    """Mark ``text`` for extraction without translating it now (module-level constants):
    the code that shows it calls ``translate(context, text)``."""
    del context
    return text


@contextlib.contextmanager
def english() -> Iterator[None]:
    """Within it, :func:`translate` answers English in this thread only (text meant for
    others whatever the window's language: the health report). Other threads, the GUI
    thread among them, keep the window's language."""
    token = _ENGLISH.set(True)
    try:
        yield
    finally:
        _ENGLISH.reset(token)
