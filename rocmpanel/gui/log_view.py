"""The panel's log viewer, and the dialog showing one job's log.

Log records may come from any thread; they reach the widget through a queued signal. Every
view takes lines in batches, keeps a bounded number of them, and when lines come faster
than anyone reads them (a job printing 20,000 a second) shows only the newest of each
batch, with a note saying how many it left out: Qt spends about 10 µs on each appended
line, so what the GUI thread pays stays bounded however fast the lines come. A job's own
log (``Job.log``) keeps every line it is given; Copy log copies from there.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

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

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.jobs.runner import LOG_LINES_KEPT

if TYPE_CHECKING:
    from rocmpanel.jobs.process import JobOutcome
    from rocmpanel.jobs.protocol import LogLine
    from rocmpanel.jobs.runner import Job

MAX_BLOCKS = 5000
# How a job ended, by JobState value, as the job's log says it.
STATE_NAMES = {
    "running": QT_TRANSLATE_NOOP("JobState", "Running"),
    "succeeded": QT_TRANSLATE_NOOP("JobState", "Succeeded"),
    "failed": QT_TRANSLATE_NOOP("JobState", "Failed"),
    "cancelled": QT_TRANSLATE_NOOP("JobState", "Cancelled"),
    "crashed": QT_TRANSLATE_NOOP("JobState", "Crashed"),
}
# A view shows new lines at most every VIEW_INTERVAL_MS, and no more than VIEW_LINES_PER_S
# on average: a burst after a quiet spell, up to VIEW_BURST_LINES, is shown whole; of a
# flood, each batch shows the newest lines and a note counts the others. So a batch costs
# at most ~10 ms, and a flood ~25 ms of every second.
VIEW_INTERVAL_MS = 100
VIEW_LINES_PER_S = 2500
VIEW_BURST_LINES = 1000
SKIPPED_NOTE = QT_TRANSLATE_NOOP(
    "LogText", "[… {count:,} lines not shown: they came faster than they can be read]"
)
JOB_SKIPPED_NOTE = QT_TRANSLATE_NOOP(
    "LogText",
    "[… {count:,} lines not shown: they came faster than they can be read;"
    " Copy log copies the job's last {kept} lines]",
)


class LogText(QPlainTextEdit):
    """Read-only, monospace, bounded text that takes lines in batches.

    ``append_lines`` takes strings, or any items when ``format_line`` is given: only the
    lines shown are formatted. The first batch after a quiet spell is shown at once, later
    ones at most every ``VIEW_INTERVAL_MS``, within the ``VIEW_LINES_PER_S`` budget;
    ``skipped`` counts the lines a flood kept out of the view.
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        format_line: Callable[[Any], str] | None = None,
        skipped_note: str = SKIPPED_NOTE,
    ) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMaximumBlockCount(MAX_BLOCKS)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.format_line = format_line
        self.skipped_note = translate("LogText", skipped_note)
        self.skipped = 0  # lines left out of the view so far
        self._pending: list[Any] = []
        self._pending_skipped = 0
        self._budget = float(VIEW_BURST_LINES)  # lines the view may show now
        self._last_shown = -math.inf
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._show_pending)

    def append_lines(self, lines: Iterable[Any]) -> None:
        """Queue lines for the view; what the next batch cannot show is only counted."""
        pending = self._pending
        pending.extend(lines)
        if len(pending) > 2 * VIEW_BURST_LINES:  # bounded while the flood lasts
            cut = len(pending) - VIEW_BURST_LINES
            del pending[:cut]
            self._pending_skipped += cut
        if not pending or self._timer.isActive():
            return
        wait_ms = (self._last_shown - time.monotonic()) * 1000 + VIEW_INTERVAL_MS
        if wait_ms <= 0:
            self._show_pending()
        else:
            self._timer.start(math.ceil(wait_ms))

    def show_lines(self, lines: Iterable[Any]) -> None:
        """Show lines at once, up to ``MAX_BLOCKS`` of them (filling a new view)."""
        self._show_pending()
        self._append(list(lines)[-MAX_BLOCKS:], 0)

    @Slot()
    def _show_pending(self) -> None:
        self._timer.stop()
        now = time.monotonic()
        refill = (now - self._last_shown) * VIEW_LINES_PER_S
        self._budget = min(float(VIEW_BURST_LINES), self._budget + refill)
        self._last_shown = now
        lines, self._pending = self._pending, []
        skipped, self._pending_skipped = self._pending_skipped, 0
        room = max(1, int(self._budget))
        if len(lines) > room:
            skipped += len(lines) - room
            lines = lines[-room:]
        self._budget -= len(lines)
        self._append(lines, skipped)

    def _append(self, lines: list[Any], skipped: int) -> None:
        if not lines and not skipped:
            return
        texts = [self.format_line(line) for line in lines] if self.format_line else lines
        if skipped:
            self.skipped += skipped
            texts.insert(0, self.skipped_note.format(count=skipped))
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 2
        # One appendPlainText for the whole batch: one layout pass.
        self.appendPlainText("\n".join(texts))
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
        self.handler = QtLogHandler()
        self.handler.emitter.record.connect(self._on_record, Qt.ConnectionType.QueuedConnection)
        logging.getLogger().addHandler(self.handler)
        self.destroyed.connect(lambda *_: logging.getLogger().removeHandler(self.handler))

    def detach(self) -> None:
        logging.getLogger().removeHandler(self.handler)

    @Slot(str)
    def _on_record(self, text: str) -> None:
        self.append_lines((text,))


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
        self.setWindowTitle(translate("JobLogDialog", "Job log: {name}").format(name=job.name))
        layout = QVBoxLayout(self)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status)
        self.text = LogText(
            self,
            format_line=format_log_line,
            skipped_note=translate("LogText", JOB_SKIPPED_NOTE).replace(
                "{kept}", f"{LOG_LINES_KEPT:,}"
            ),
        )
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = QPushButton(translate("JobLogDialog", "&Copy log"))
        copy.clicked.connect(self._on_copy_clicked)
        buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.text.show_lines(job.log)
        job.log_added.connect(self._on_job_log_added)
        job.finished.connect(self._on_job_finished)
        self._update_status()
        self.resize(820, 480)

    def _update_status(self) -> None:
        argv = " ".join(self.job.argv)
        if self.job.outcome is None:
            self.status.setText(
                translate("JobLogDialog", "Running (pid {pid}): {command}").format(
                    pid=self.job.pid, command=argv
                )
            )
        else:
            outcome = self.job.outcome
            state = translate("JobState", STATE_NAMES.get(outcome.state.value, outcome.state.value))
            self.status.setText(f"{state}: {outcome}")

    @Slot(object)
    def _on_job_log_added(self, lines: list[LogLine]) -> None:
        self.text.append_lines(lines)

    @Slot(object)
    def _on_job_finished(self, _outcome: JobOutcome) -> None:
        self._update_status()

    @Slot()
    def _on_copy_clicked(self) -> None:
        # The job's own log: the view may have left lines out of a flood.
        lines = [format_log_line(line) for line in self.job.log]
        QGuiApplication.clipboard().setText("\n".join([*lines, self.status.text()]))
