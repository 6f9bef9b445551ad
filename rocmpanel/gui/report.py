"""The one error path of the GUI: ``report(error)`` shows the message and logs the detail.

A :class:`~rocmpanel.base.errors.PanelError` carries a message written for the user and a
detail for the log; any other exception is a bug or an unexpected failure, logged with its
traceback and shown as "<what> failed: <exception>". Where the message appears is the
caller's choice: a label of its own, a dialog, or (by default) the main window's status
bar, which the shell registers with :func:`set_sink`. Messages reported before a sink
exists are kept and handed to it when it arrives.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate

log = logging.getLogger("rocmpanel.report")

_sink: Callable[[str], None] | None = None
_pending: list[str] = []


class _TextTarget(Protocol):
    """A label."""

    def setText(self, text: str, /) -> None: ...


@runtime_checkable
class _PlainTextTarget(Protocol):
    """A text box (QPlainTextEdit, QTextEdit): the message goes in as plain text."""

    def setPlainText(self, text: str, /) -> None: ...


def user_message(error: BaseException, doing: str = "") -> str:
    """What the user reads about ``error``."""
    if isinstance(error, PanelError):
        return error.message
    text = str(error) or type(error).__name__
    if doing:
        return translate("report", "{doing} failed: {error}").format(doing=doing, error=text)
    return translate("report", "Unexpected error: {error}").format(error=text)


def report(
    error: BaseException,
    doing: str = "",
    *,
    label: _TextTarget | _PlainTextTarget | None = None,
    dialog_parent: object | None = None,
) -> str:
    """Log ``error`` with its detail and show its message; returns the message shown.

    ``doing``: what was being done, in a few words ("Deleting rocm7").
    ``label``: show the message there (a label, or a text box) instead of the status bar.
    ``dialog_parent``: show a warning dialog over this widget instead.
    """
    message = user_message(error, doing)
    prefix = f"{doing}: " if doing else ""
    if isinstance(error, PanelError):
        log.warning("%s%s%s", prefix, error.message, f"\n{error.detail}" if error.detail else "")
    else:
        log.error("%s%s", prefix, message, exc_info=error)
    if isinstance(label, _PlainTextTarget):
        label.setPlainText(message)
    elif label is not None:
        label.setText(message)
    elif dialog_parent is not None:
        from PySide6.QtWidgets import QMessageBox, QWidget

        parent = dialog_parent if isinstance(dialog_parent, QWidget) else None
        QMessageBox.warning(parent, "rocmpanel", message)
    else:
        show(message)
    return message


def show(message: str) -> None:
    """Show a message where reports go (the status bar), or keep it until there is one."""
    if _sink is None:
        _pending.append(message)
        del _pending[:-20]
        return
    _sink(message)


def set_sink(sink: Callable[[str], None] | None) -> None:
    """Where messages go (the shell sets the status bar); pending messages follow."""
    global _sink
    _sink = sink
    if sink is not None:
        pending, _pending[:] = list(_pending), []
        for message in pending:
            sink(message)


def release_sink(sink: Callable[[str], None]) -> None:
    """Stop sending to ``sink`` (a window closing); another window's sink stays."""
    global _sink
    if _sink == sink:
        _sink = None
