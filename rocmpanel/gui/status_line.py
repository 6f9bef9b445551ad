"""A view's status line: its messages, its errors, and the one slow call it runs at a time.

Views that write files or wait on the system (the environment editor's apply, say) put a
:class:`StatusLine` under their buttons: ``run(doing, work, on_done)`` runs ``work`` through
:func:`~rocmpanel.gui.background.run_in_background`, shows "doing…" with a busy bar and
refuses a second call until the first has delivered; ``show_error`` goes through
:func:`~rocmpanel.gui.report.report`, so the detail reaches the log.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from rocmpanel.base.i18n import translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.report import report

ERROR_COLOR = "#b00020"


class StatusLine(QWidget):
    """A word-wrapped message and a busy bar; ``busy_changed`` follows each call's start
    and end. ``notify`` (the status bar, usually) also gets the plain messages."""

    busy_changed = Signal(bool)

    def __init__(
        self, parent: QWidget | None = None, notify: Callable[[str], None] | None = None
    ) -> None:
        super().__init__(parent)
        self._notify = notify
        self._doing = ""
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)  # how long the call takes is not known
        self.progress.setMaximumWidth(140)
        self.progress.setMaximumHeight(14)
        self.progress.setTextVisible(False)
        self.progress.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.progress, 0, Qt.AlignmentFlag.AlignVCenter)

    @property
    def busy(self) -> bool:
        return bool(self._doing)

    @property
    def doing(self) -> str:
        """What runs now, in a few words ("" = nothing)."""
        return self._doing

    def text(self) -> str:
        return self.message.text()

    def run(
        self,
        doing: str,
        work: Callable[[], Any],
        on_done: Callable[[Any, BaseException | None], None],
    ) -> bool:
        """Run ``work()`` off the GUI thread, then ``on_done(result, error)`` on it; False
        (and nothing runs) while another call has not delivered yet."""
        if self._doing:
            return False
        self._doing = doing
        self.progress.show()
        running_text = translate("StatusLine", "{doing}…").format(doing=doing)
        self._set(running_text, error=False)
        self.busy_changed.emit(True)

        def done(result: object, error: BaseException | None) -> None:
            self._doing = ""
            self.progress.hide()
            if self.message.text() == running_text:  # a message shown meanwhile stays
                self._set("", error=False)
            try:
                on_done(result, error)
            finally:
                self.busy_changed.emit(False)

        run_in_background(work, done, owner=self, what=doing.lower())
        return True

    def show_message(self, text: str, *, error: bool = False) -> None:
        """Show ``text`` (in red when ``error``); plain messages also go to ``notify``."""
        self._set(text, error=error)
        if text and not error and self._notify is not None:
            self._notify(text)

    def show_error(self, error: BaseException, doing: str = "") -> str:
        """Show ``error`` here through the one error path (its detail is logged)."""
        self._set("", error=True)
        return report(error, doing, label=self.message)

    def _set(self, text: str, *, error: bool) -> None:
        self.message.setStyleSheet(f"color: {ERROR_COLOR};" if error else "")
        self.message.setText(text)
