"""The panel's log viewer, and the dialog showing one job's log.

Log records may come from any thread; they reach the widget through a queued signal and
are appended in batches, with a bounded number of lines kept.
"""

from __future__ import annotations

import contextlib
import logging

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.protocol import LogLine
from rocmpanel.jobs.runner import Job

MAX_BLOCKS = 5000


class LogText(QPlainTextEdit):
    """Read-only, monospace, bounded text that takes lines in batches."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMaximumBlockCount(MAX_BLOCKS)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

    def append_lines(self, lines: list[str]) -> None:
        if not lines:
            return
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 2
        # One appendPlainText for the whole batch: a flood costs one layout pass.
        self.appendPlainText("\n".join(lines[-MAX_BLOCKS:]))
        if at_end:
            bar.setValue(bar.maximum())


class _Emitter(QObject):
    record = Signal(str)


class QtLogHandler(logging.Handler):
    """A logging handler that hands formatted records to the GUI thread."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.emitter = _Emitter()
        self.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S")
        )

    def emit(self, record: logging.LogRecord) -> None:
        # RuntimeError: the emitter was already deleted at shutdown.
        with contextlib.suppress(RuntimeError):
            self.emitter.record.emit(self.format(record))


class LogView(LogText):
    """The application log (View → Log)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("appLog")
        self._pending: list[str] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._on_timer_timeout)
        self.handler = QtLogHandler()
        self.handler.emitter.record.connect(self._on_record, Qt.ConnectionType.QueuedConnection)
        logging.getLogger().addHandler(self.handler)
        self.destroyed.connect(lambda *_: logging.getLogger().removeHandler(self.handler))

    def detach(self) -> None:
        logging.getLogger().removeHandler(self.handler)

    @Slot(str)
    def _on_record(self, text: str) -> None:
        self._pending.append(text)
        if not self._timer.isActive():
            self._timer.start()

    @Slot()
    def _on_timer_timeout(self) -> None:
        lines, self._pending = self._pending, []
        self.append_lines(lines)


def format_log_line(line: LogLine) -> str:
    prefix = {"stderr": "[stderr] ", "stdout": "[stdout] "}.get(line.stream, "")
    if line.stream == "worker" and line.level not in ("info", ""):
        prefix = f"[{line.level}] "
    return prefix + line.message


class JobLogDialog(QDialog):
    """One job's log, live while it runs, with its outcome at the end."""

    def __init__(self, job: Job, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.setWindowTitle(f"Job log: {job.name}")
        layout = QVBoxLayout(self)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status)
        self.text = LogText(self)
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = QPushButton("&Copy log")
        copy.clicked.connect(self._on_copy_clicked)
        buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.text.append_lines([format_log_line(line) for line in job.log])
        job.log_added.connect(self._on_job_log_added)
        job.finished.connect(self._on_job_finished)
        self._update_status()
        self.resize(820, 480)

    def _update_status(self) -> None:
        argv = " ".join(self.job.argv)
        if self.job.outcome is None:
            self.status.setText(f"Running (pid {self.job.pid}): {argv}")
        else:
            self.status.setText(f"{self.job.outcome.state.value.capitalize()}: {self.job.outcome}")

    @Slot(list)
    def _on_job_log_added(self, lines: list[LogLine]) -> None:
        self.text.append_lines([format_log_line(line) for line in lines])

    @Slot(object)
    def _on_job_finished(self, _outcome: JobOutcome) -> None:
        self._update_status()

    @Slot()
    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText() + "\n" + self.status.text())
