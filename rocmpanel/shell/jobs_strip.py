"""The jobs strip: one chip per job (name, progress, step, cancel), click for its log.

The strip is as tall with no chips as with many, so the tabs above it never move when a
job starts or its chip goes. A chip's cancel button says what the job calls cancelling
(``Job.cancel_label``: a loaded chat model is "Unload"ed, not "Cancel"led). Running jobs
always show; of the finished ones only the newest few do, the rest are counted ("… and 3
more done"), so a run of many short jobs (an A/B benchmark) never scrolls off the edge."""

from __future__ import annotations

import html
import math
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QScrollArea,
    QToolButton,
    QWidget,
)

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.jobs.spec import GPU_NOTES_VAR, GPUS_VAR

if TYPE_CHECKING:
    from rocmpanel.gui.log_view import JobLogDialog
    from rocmpanel.jobs.process import JobOutcome
    from rocmpanel.jobs.protocol import Progress
    from rocmpanel.jobs.runner import Job, JobManager

FINISHED_CHIP_LINGER_MS = 60_000
CHIP_AREA_HEIGHT = 34  # px: the strip's least height, chips or none
# A chip shows a job's progress at most this often; the latest one wins.
CHIP_UPDATE_MS = 200
FINISHED_CHIPS_SHOWN = 3  # the newest finished chips that show; older ones are counted
_ENDING_TEXT = {  # by Job.cancel_label
    "Cancel": QT_TRANSLATE_NOOP("JobChip", "Cancelling…"),
    "Unload": QT_TRANSLATE_NOOP("JobChip", "Unloading…"),
}
_STATE_TEXT = {  # by JobState value
    "succeeded": QT_TRANSLATE_NOOP("JobChip", "✓ done"),
    "failed": QT_TRANSLATE_NOOP("JobChip", "✗ failed"),
    "crashed": QT_TRANSLATE_NOOP("JobChip", "✗ crashed"),
    "cancelled": QT_TRANSLATE_NOOP("JobChip", "cancelled"),
}
# Job.cancel_label's words (the jobs set them in English): shown translated.
_CANCEL_LABELS = (QT_TRANSLATE_NOOP("JobChip", "Cancel"), QT_TRANSLATE_NOOP("JobChip", "Unload"))


class JobChip(QFrame):
    """One job in the strip."""

    log_requested = Signal(object)  # Job
    dismissed = Signal(object)  # JobChip

    def __init__(self, job: Job, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.setObjectName("jobChip")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        where = job.spec.env.get(GPUS_VAR)
        notes = job.spec.env.get(GPU_NOTES_VAR)
        runs_on = "\n" + translate("JobChip", "Runs on {gpus}.").format(gpus=where) if where else ""
        runs_on += f"\n{notes}" if where and notes else ""
        self.setToolTip(
            translate("JobChip", "{job}: click to see its log").format(job=job.name) + runs_on
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 4, 2)
        self.name = QLabel(f"<b>{html.escape(job.name)}</b>")
        self.bar = QProgressBar()
        self.bar.setFixedWidth(110)
        self.bar.setMaximumHeight(14)
        self.bar.setTextVisible(False)
        self.bar.setRange(0, 0)
        self.step = QLabel(translate("JobChip", "Starting…"))
        self.step.setMinimumWidth(80)
        self.step.setMaximumWidth(260)
        self.cancel_button = QToolButton()
        self._on_job_cancel_label_changed(job.cancel_label)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        for widget in (self.name, self.bar, self.step, self.cancel_button):
            layout.addWidget(widget)
        self._shown: Progress | None = None
        self._latest: Progress | None = None
        self._last_shown = -math.inf
        self._update_timer = QTimer(self)
        self._update_timer.setSingleShot(True)
        self._update_timer.timeout.connect(self._show_latest)
        job.progress_changed.connect(self._on_job_progress_changed)
        job.finished.connect(self._on_job_finished)
        job.cancel_label_changed.connect(self._on_job_cancel_label_changed)
        if job.outcome is not None:
            self._on_job_finished(job.outcome)

    @Slot(object)
    def _on_job_progress_changed(self, progress: Progress) -> None:
        self._latest = progress
        if self._update_timer.isActive():
            return
        wait_ms = (self._last_shown - time.monotonic()) * 1000 + CHIP_UPDATE_MS
        if wait_ms <= 0:
            self._show_latest()
        else:
            self._update_timer.start(math.ceil(wait_ms))

    @Slot()
    def _show_latest(self) -> None:
        progress, self._latest = self._latest, None
        if progress is None or self.job.outcome is not None:
            return
        self._last_shown = time.monotonic()
        if progress == self._shown:
            return
        self._shown = progress
        if progress.fraction is None:
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(round(progress.fraction * 1000))
        self.step.setText(progress.step or "")
        self.step.setToolTip(progress.step or "")

    @Slot(str)
    def _on_job_cancel_label_changed(self, label: str) -> None:
        if self.job.outcome is not None:  # the button removes the chip now
            return
        shown = translate("JobChip", label)
        self.cancel_button.setText(shown)
        self.cancel_button.setToolTip(
            translate("JobChip", "{action} {job}").format(action=shown, job=self.job.name)
        )

    @Slot(object)
    def _on_job_finished(self, outcome: JobOutcome) -> None:
        self._update_timer.stop()
        self._latest = None
        self.bar.setRange(0, 1000)
        self.bar.setValue(1000 if outcome.was_successful() else 0)
        self.bar.hide()
        state = outcome.state.value
        self.step.setText(
            translate("JobChip", _STATE_TEXT[state]) if state in _STATE_TEXT else state
        )
        self.step.setToolTip(str(outcome))
        self.cancel_button.setText("×")
        self.cancel_button.setToolTip(translate("JobChip", "Remove from the strip"))
        QTimer.singleShot(FINISHED_CHIP_LINGER_MS, self, self._dismiss)

    @Slot()
    def _on_cancel_clicked(self) -> None:
        if self.job.running:
            self.cancel_button.setEnabled(False)
            ending = _ENDING_TEXT.get(self.job.cancel_label)
            self.step.setText(
                translate("JobChip", ending) if ending else translate("JobChip", "Stopping…")
            )
            self.job.cancel()
        else:
            self._dismiss()

    def _dismiss(self) -> None:
        self.dismissed.emit(self)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.log_requested.emit(self.job)
        super().mouseReleaseEvent(event)


class JobsStrip(QWidget):
    """Every job of the manager, newest last; says so when there are none."""

    def __init__(self, manager: JobManager, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.manager = manager
        self.chips: list[JobChip] = []
        self.dialogs: list[JobLogDialog] = []
        outer = QHBoxLayout(self)
        outer.setContentsMargins(4, 0, 4, 0)
        title = QLabel(translate("JobsStrip", "Jobs:"))
        outer.addWidget(title)
        self.empty = QLabel(translate("JobsStrip", "none running"))
        self.empty.setEnabled(False)
        outer.addWidget(self.empty)
        self.chip_area = QScrollArea()
        self.chip_area.setWidgetResizable(True)
        self.chip_area.setFrameShape(QFrame.Shape.NoFrame)
        self.chip_area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # A chip is a tool button tall plus its margins; big fonts make both taller.
        height = max(CHIP_AREA_HEIGHT, QToolButton().sizeHint().height() + 11)
        self.chip_area.setFixedHeight(height)
        inner = QWidget()
        self.row = QHBoxLayout(inner)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.more_label = QLabel("")  # "… and K more done": the finished chips not shown
        self.more_label.setEnabled(False)
        self.more_label.hide()
        self.row.addWidget(self.more_label)
        self.row.addStretch(1)
        self.chip_area.setWidget(inner)
        outer.addWidget(self.chip_area, 1)
        self.spacer = QWidget()
        outer.addWidget(self.spacer, 1)
        # As tall with chips as without: nothing above the strip moves when chips come and go.
        self.setFixedHeight(height)
        manager.job_added.connect(self._on_manager_job_added)
        for job in manager.jobs:
            self._on_manager_job_added(job)
        self._refresh_empty()

    @Slot(object)
    def _on_manager_job_added(self, job: Job) -> None:
        chip = JobChip(job)
        chip.log_requested.connect(self.show_log)
        chip.dismissed.connect(self._on_chip_dismissed)
        job.finished.connect(lambda _outcome: self._refresh_empty())
        self.row.insertWidget(self.row.count() - 1, chip)
        self.chips.append(chip)
        self._refresh_empty()

    @Slot(object)
    def _on_chip_dismissed(self, chip: JobChip) -> None:
        if chip in self.chips:
            self.chips.remove(chip)
            chip.deleteLater()
        self._refresh_empty()

    def _refresh_empty(self) -> None:
        finished = [chip for chip in self.chips if chip.job.outcome is not None]
        hidden = finished[: max(0, len(finished) - FINISHED_CHIPS_SHOWN)]
        for chip in self.chips:
            chip.setVisible(chip not in hidden)
        more = translate("JobsStrip", "… and {count} more done").format(count=len(hidden))
        self.more_label.setText(more if hidden else "")
        self.more_label.setToolTip("\n".join(chip.job.name for chip in hidden))
        self.more_label.setVisible(bool(hidden))
        self.empty.setVisible(not self.chips)
        self.chip_area.setVisible(bool(self.chips))
        self.spacer.setVisible(not self.chips)

    @Slot(object)
    def show_log(self, job: Job) -> JobLogDialog:
        from rocmpanel.gui.log_view import JobLogDialog  # the log views: after start-up

        dialog = JobLogDialog(job, self.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialogs.append(dialog)
        dialog.destroyed.connect(lambda *_: self.dialogs.remove(dialog))
        dialog.show()
        return dialog
