"""Unhandled exceptions end in a dialog with the traceback and a copy button, not silence.

The hook works from any thread: the traceback travels to the GUI thread through a queued
signal. Exceptions raised before the window exists are kept and shown once it does.
"""

from __future__ import annotations

import html
import logging
import sys
import threading
import traceback
from types import TracebackType

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base import paths
from rocmpanel.base.i18n import translate

log = logging.getLogger(__name__)


class CrashDialog(QDialog):
    """Shows one unexpected error: what happened, the traceback, Copy, Close."""

    def __init__(self, summary: str, details: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(translate("CrashDialog", "rocmpanel: unexpected error"))
        self.details = details
        layout = QVBoxLayout(self)
        label = QLabel(
            f"<b>{html.escape(summary)}</b><br>"
            + translate(
                "CrashDialog",
                "The panel is still running; nothing was lost. The details are also in the "
                "log at {path}.",
            ).format(path=html.escape(str(paths.log_dir() / "rocmpanel.log")))
        )
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(label)
        self.text = QPlainTextEdit(details)
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = QPushButton(translate("CrashDialog", "&Copy details"))
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(self._on_copy_clicked)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(760, 460)

    @Slot()
    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.details)
        self.copy_button.setText(translate("CrashDialog", "Copied"))


class ExceptionReporter(QObject):
    """Receives exceptions from any thread and shows them on the GUI thread."""

    exception_caught = Signal(str, str)

    def __init__(self) -> None:
        super().__init__()
        self._window: QWidget | None = None
        self._pending: list[tuple[str, str]] = []
        self.dialogs: list[CrashDialog] = []
        self.exception_caught.connect(self._on_exception_caught, Qt.ConnectionType.QueuedConnection)

    def set_parent_window(self, window: QWidget) -> None:
        self._window = window
        pending, self._pending = self._pending, []
        for summary, details in pending:
            self._show(summary, details)

    def report(
        self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
    ) -> None:
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        log.critical("unhandled exception\n%s", details)
        summary = f"{exc_type.__name__}: {exc}"
        self.exception_caught.emit(summary, details)

    @Slot(str, str)
    def _on_exception_caught(self, summary: str, details: str) -> None:
        if self._window is None:
            self._pending.append((summary, details))
            return
        self._show(summary, details)

    def _show(self, summary: str, details: str) -> None:
        dialog = CrashDialog(summary, details, self._window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.destroyed.connect(lambda *_: self.dialogs.remove(dialog))
        self.dialogs.append(dialog)
        dialog.show()


_reporter: ExceptionReporter | None = None


def install_excepthook() -> ExceptionReporter:
    """Route sys.excepthook and threading.excepthook to the crash dialog."""
    global _reporter
    if _reporter is None:
        _reporter = ExceptionReporter()
        reporter = _reporter

        def hook(
            exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
        ) -> None:
            if issubclass(exc_type, KeyboardInterrupt):
                sys.__excepthook__(exc_type, exc, tb)
                return
            reporter.report(exc_type, exc, tb)

        def thread_hook(args: threading.ExceptHookArgs) -> None:
            if args.exc_value is not None:
                hook(args.exc_type, args.exc_value, args.exc_traceback)

        _reporter.previous_hooks = (sys.excepthook, threading.excepthook)  # type: ignore[attr-defined]
        sys.excepthook = hook
        threading.excepthook = thread_hook
    return _reporter


def uninstall_excepthook() -> None:
    """Put back the hooks that were there before (tests use this)."""
    global _reporter
    if _reporter is not None:
        sys.excepthook, threading.excepthook = _reporter.previous_hooks  # type: ignore[attr-defined]
        _reporter = None
