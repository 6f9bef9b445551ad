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

import sys


def translate(context: str, text: str, disambiguation: str | None = None, n: int = -1) -> str:
    """``text`` in the window's language (English where no translation is loaded)."""
    qtcore = sys.modules.get("PySide6.QtCore")
    if qtcore is None:  # a headless command: no translator can be installed
        return text
    return str(qtcore.QCoreApplication.translate(context, text, disambiguation, n))


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # the name lupdate looks for
    """Mark ``text`` for extraction without translating it now (module-level constants):
    the code that shows it calls ``translate(context, text)``."""
    del context
    return text
