"""Validation: run the suite in the active Python and show each check, as it ends, with its
likely cause and fix; the history of runs sits beside it (``validation_history``).

Finding the interpreter (it reads the environment records) and saving the run go through
``run_in_background``; the suite is a job (a child process) whose checks arrive as typed
``CheckDone`` events.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.enums import CheckStatus
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.jobs.job_env import env_preset
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.protocol import CheckDone, Progress
from rocmpanel.jobs.runner import Job
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.knowledge.torch_builds import Override
from rocmpanel.pytorch.validation_job import (
    CheckCollector,
    resolve_target,
    run_from_outcome,
    validate_spec,
)
from rocmpanel.pytorch.validation_report import (
    check_name,
    counts_text,
    damaged_text,
    fix_for,
    outcome_text,
    status_mark,
)
from rocmpanel.pytorch.validation_run import CheckResult, RunVerdict, ValidationRun
from rocmpanel.pytorch.validation_store import ValidationStore
from rocmpanel.pytorch.views.validation_history import ValidationHistory

STATUS_COLOURS = {
    CheckStatus.PASS: "#2e7d32",
    CheckStatus.WARN: "#ef6c00",
    CheckStatus.FAIL: "#c62828",
    CheckStatus.SKIP: "#757575",
}


@dataclass(frozen=True)
class ValidationTarget:
    """What a run is labelled with: the interpreter, its managed environment, the gfx."""

    python: str
    env_name: str | None
    gfx: str | None


def prepare_validation(
    settings: Settings, gfx: str | None, vram: int | None
) -> tuple[ValidationTarget, JobSpec]:
    """The validate job for the active workload Python (reads the environment records)."""
    python, env_name, job_env = resolve_target(None, None, settings)
    spec = validate_spec(python, gfx=gfx, sysfs_vram_bytes=vram, job_env=job_env)
    return ValidationTarget(python, env_name, gfx), spec


class TorchValidationPanel(QWidget):
    """Validate button, progress, results table; the run history beside them."""

    def __init__(
        self,
        ctx: AppContext,
        target: Callable[[], tuple[str | None, int | None]],
        overrides: Callable[[], Mapping[str, Override]],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self._target = target  # () -> (detected gfx, sysfs VRAM bytes)
        self._overrides = overrides
        self.store = ValidationStore()
        self.job: Job | None = None
        self._starting = False  # the job is being prepared
        self._collector = CheckCollector()
        self._job_target = ValidationTarget("", None, None)
        self.shown_run: ValidationRun | None = None

        self.validate_button = QPushButton(
            translate("TorchValidationPanel", "&Validate active Python")
        )
        self.validate_button.setToolTip(
            translate(
                "TorchValidationPanel",
                "Run the checks (build, GPU, GEMM vs CPU, SDPA, memory, bandwidth, TFLOPS) "
                "in the active workload Python",
            )
        )
        self.validate_button.clicked.connect(self.start_validation)
        self.cancel_button = QPushButton(translate("TorchValidationPanel", "Stop"))
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        # Shown only while a validation runs (idle, it looks like an empty field); its place
        # is kept, so the buttons do not stretch into it.
        policy = self.progress.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.progress.setSizePolicy(policy)
        self.progress.hide()
        self.step_label = QLabel("")
        self.summary_label = QLabel(translate("TorchValidationPanel", "No validation run yet."))
        self.summary_label.setWordWrap(True)

        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(
            [
                translate("TorchValidationPanel", "Check"),
                translate("TorchValidationPanel", "Status"),
                translate("TorchValidationPanel", "Figure"),
                translate("TorchValidationPanel", "Likely cause / fix"),
            ]
        )
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.table.setColumnWidth(2, 300)

        self.history = ValidationHistory(self.store, overrides, ctx.notify)
        self.history.run_selected.connect(self._on_history_run_selected)

        top = QHBoxLayout()
        top.addWidget(self.validate_button)
        top.addWidget(self.cancel_button)
        top.addWidget(self.progress, 1)
        top.addWidget(self.step_label)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(top)
        left_layout.addWidget(self.summary_label)
        left_layout.addWidget(self.table, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(self.history)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self.history.reload()
        if ctx.demo:  # a validation would run this machine's Python next to the demo's GPUs
            self.validate_button.setEnabled(False)
            self.validate_button.setToolTip(
                translate(
                    "TorchValidationPanel", "This is a demo: it runs no jobs on this machine."
                )
            )
            self.summary_label.setText(
                translate(
                    "TorchValidationPanel",
                    "This is a demo: validation runs on a real machine's workload Python.",
                )
            )

    # -- running -----------------------------------------------------------------------
    def _busy(self) -> bool:
        return self._starting or (self.job is not None and self.job.running)

    @Slot()
    def start_validation(self) -> None:
        """Find the active interpreter (and its environment's variables), then start."""
        if self._busy() or self.ctx.demo:
            return
        gfx, vram = self._target()
        self._starting = True
        self.validate_button.setEnabled(False)
        self.step_label.setText(translate("TorchValidationPanel", "Preparing…"))
        run_in_background(
            partial(prepare_validation, self.ctx.settings, gfx, vram),
            self._on_validation_prepared,
            owner=self,
            what="preparing a validation",
        )

    def _on_validation_prepared(
        self, prepared: tuple[ValidationTarget, JobSpec] | None, error: BaseException | None
    ) -> None:
        self._starting = False
        self.step_label.setText("")
        if error is not None or prepared is None:
            self.validate_button.setEnabled(True)
            if error is not None:
                report(
                    error,
                    translate("TorchValidationPanel", "Preparing the validation"),
                    dialog_parent=self,
                )
            return
        target, spec = prepared
        try:
            job = self.ctx.jobs.start(spec)
        except PanelError as exc:
            self.validate_button.setEnabled(True)
            report(
                exc,
                translate("TorchValidationPanel", "Starting the validation"),
                dialog_parent=self,
            )
            return
        self.job = job
        self._collector = CheckCollector()
        self._job_target = target
        self.table.setRowCount(0)
        where = (
            target.env_name
            or target.python
            or translate("TorchValidationPanel", "the panel’s Python")
        )
        self.summary_label.setText(
            translate("TorchValidationPanel", "Validating {where}…").format(where=where)
        )
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.setEnabled(True)
        job.progress_changed.connect(self._on_job_progress_changed)
        job.check_done.connect(self._on_job_check_done)
        job.finished.connect(self._on_job_finished)

    @Slot()
    def _on_cancel_clicked(self) -> None:
        if self.job is not None:
            self.job.cancel()

    @Slot(object)
    def _on_job_progress_changed(self, progress: Progress) -> None:
        if progress.fraction is not None:
            self.progress.setValue(int(progress.fraction * 1000))
        self.step_label.setText(progress.step)

    @Slot(object)
    def _on_job_check_done(self, event: CheckDone) -> None:
        check = self._collector.feed(event)
        if check is not None:
            self._add_row(check, None)

    @Slot(object)
    def _on_job_finished(self, outcome: JobOutcome) -> None:
        target = self._job_target
        job = self.job
        run = run_from_outcome(
            outcome,
            self._collector,
            python=target.python,
            env_name=target.env_name,
            gfx=target.gfx,
            preset=env_preset(job.spec.env) if job is not None else None,
        )
        self.validate_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.hide()  # the summary and the table say how it ended
        self.step_label.setText("")
        self.job = None
        self.show_run(run)
        self.ctx.notify(
            translate("TorchValidationPanel", "Validation: {counts}.").format(
                counts=counts_text(run)
            )
        )
        run_in_background(
            partial(self.store.save, run),
            self._on_run_saved,
            owner=self,
            what="saving the validation run",
        )

    def _on_run_saved(self, run: ValidationRun | None, error: BaseException | None) -> None:
        if error is not None or run is None:
            if error is not None:  # the run stays shown; only the history misses it
                report(error, translate("TorchValidationPanel", "Saving the validation run"))
            return
        self.history.reload(select=run.id)

    # -- showing -----------------------------------------------------------------------
    def _add_row(self, check: CheckResult, run: ValidationRun | None) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        status = QTableWidgetItem(status_mark(check.status))
        status.setForeground(QColor(STATUS_COLOURS[check.status]))
        font = status.font()
        font.setBold(True)
        status.setFont(font)
        figure = QTableWidgetItem(check.figure)
        figure.setToolTip(check.error or check.detail or check.figure)
        fix = fix_for(run, check, self._overrides()) if run is not None else None
        fix_text = (
            translate("TorchValidationPanel", "{cause}\nFix: {fix}").format(
                cause=fix.cause, fix=fix.fix
            )
            if fix
            else (check.error or "")
        )
        if check.status is not CheckStatus.FAIL:
            fix_text = ""
        fix_item = QTableWidgetItem(fix_text)
        fix_item.setToolTip(fix_text)
        for col, item in enumerate(
            (QTableWidgetItem(check_name(check.name)), status, figure, fix_item)
        ):
            self.table.setItem(row, col, item)

    def show_run(self, run: ValidationRun) -> None:
        self.shown_run = run
        self.table.setRowCount(0)
        for check in run.checks:
            self._add_row(check, run)
        self.table.resizeRowsToContents()
        if run.damaged is not None:
            self.summary_label.setText(damaged_text(run))
            return
        where = run.env_name or run.python
        device = run.device_name or translate("TorchValidationPanel", "no GPU visible")
        ended = ""
        if run.verdict is RunVerdict.INCOMPLETE:
            ended = translate("TorchValidationPanel", " — ended early ({outcome})").format(
                outcome=outcome_text(run.outcome)
            )
        na = translate("TorchValidationPanel", "n/a")
        self.summary_label.setText(
            f"<b>{counts_text(run)}</b>"
            + translate(
                "TorchValidationPanel",
                " — torch {torch} ({build} build) in {where}; {device}; preset: {preset}{ended}",
            ).format(
                torch=run.torch_version or na,
                build=run.build or na,
                where=where,
                device=device,
                preset=html.escape(run.preset),
                ended=ended,
            )
        )

    @Slot(object)
    def _on_history_run_selected(self, run: ValidationRun) -> None:
        if not self._busy():  # a running suite keeps its table
            self.show_run(run)

    def shutdown(self) -> None:
        if self.job is not None and self.job.running:
            self.job.cancel()
