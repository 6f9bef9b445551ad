"""Validation: run the suite in the active Python, show each check with cause and fix, keep
a history of runs, compare two of them side by side and export one as Markdown.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.protocol import LogLine, Progress
from rocmpanel.jobs.runner import Job
from rocmpanel.pytorch import operations as torch_jobs
from rocmpanel.pytorch.manifest import Override
from rocmpanel.pytorch.validation_report import (
    compare_markdown,
    fix_for,
    run_title,
    to_markdown,
)
from rocmpanel.pytorch.validation_store import CheckResult, ValidationRun, ValidationStore

log = logging.getLogger(__name__)

STATUS_COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "skip": "#757575"}
STATUS_TEXT = {"pass": "PASS", "fail": "FAIL", "skip": "skip"}


def short_title(run: ValidationRun) -> str:
    """A history line: number, time, where, counts (the full title is the tooltip)."""
    counts = run.counts
    when = time.strftime("%m-%d %H:%M", time.localtime(run.created_at))
    if run.env_name:
        where = run.env_name
    elif not run.python or run.python == sys.executable:
        where = "panel's Python"
    else:
        where = Path(run.python).parent.parent.name or run.python
    return f"#{run.id} {when} {where}: {counts['pass']}✓ {counts['fail']}✗ {counts['skip']} skip"


class MarkdownDialog(QDialog):
    """Shows Markdown (a comparison or a report) with Copy and Close."""

    def __init__(self, title: str, markdown: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(900, 600)
        self.markdown = markdown
        view = QTextBrowser()
        view.setMarkdown(markdown)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = buttons.addButton("&Copy Markdown", QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.markdown))
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(view)
        layout.addWidget(buttons)


class TorchValidationPanel(QWidget):
    """Validate button, progress, results table, run history."""

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
        self._collector = torch_jobs.CheckCollector()
        self._job_meta: tuple[str, str | None, str | None] = ("", None, None)
        self.shown_run: ValidationRun | None = None

        self.validate_button = QPushButton("&Validate active Python")
        self.validate_button.setToolTip(
            "Run the checks (build, GPU, GEMM vs CPU, SDPA, memory, bandwidth, TFLOPS) "
            "in the active workload Python"
        )
        self.validate_button.clicked.connect(self.start_validation)
        self.cancel_button = QPushButton("Stop")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.step_label = QLabel("")
        self.summary_label = QLabel("No validation run yet.")
        self.summary_label.setWordWrap(True)

        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Check", "Status", "Figure", "Likely cause / fix"])
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

        self.history = QListWidget()
        self.history.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.history.itemSelectionChanged.connect(self._on_history_selection_changed)
        self.compare_button = QPushButton("C&ompare two")
        self.compare_button.setToolTip("Select two runs to compare them side by side")
        self.compare_button.clicked.connect(self._on_compare_clicked)
        self.export_button = QPushButton("E&xport Markdown…")
        self.export_button.clicked.connect(self._on_export_clicked)
        self.delete_button = QPushButton("Delete")
        self.delete_button.clicked.connect(self._on_delete_clicked)

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
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(QLabel("Run history"))
        right_layout.addWidget(self.history, 1)
        history_buttons = QHBoxLayout()
        for button in (self.compare_button, self.export_button, self.delete_button):
            history_buttons.addWidget(button)
        right_layout.addLayout(history_buttons)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self.reload_history()

    # -- running -----------------------------------------------------------------------
    @Slot()
    def start_validation(self) -> None:
        if self.job is not None and self.job.running:
            return
        gfx, vram = self._target()
        try:
            python, env_name, job_env = torch_jobs.resolve_target(None, None, self.ctx.settings)
            spec = torch_jobs.validate_spec(python, gfx=gfx, sysfs_vram_bytes=vram, job_env=job_env)
            self._collector = torch_jobs.CheckCollector()
            self.job = self.ctx.jobs.start(spec)
        except PanelError as exc:
            QMessageBox.warning(self, "Cannot validate", str(exc))
            return
        self._job_meta = (python, env_name, gfx)
        self.table.setRowCount(0)
        self.summary_label.setText(f"Validating {env_name or python or 'the panel’s Python'}…")
        self.progress.setValue(0)
        self.validate_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.job.progress_changed.connect(self._on_job_progress_changed)
        self.job.log_added.connect(self._on_job_log_added)
        self.job.finished.connect(self._on_job_finished)

    @Slot()
    def _on_cancel_clicked(self) -> None:
        if self.job is not None:
            self.job.cancel()

    @Slot(object)
    def _on_job_progress_changed(self, progress: Progress) -> None:
        if progress.fraction is not None:
            self.progress.setValue(int(progress.fraction * 1000))
        self.step_label.setText(progress.step)

    @Slot(list)
    def _on_job_log_added(self, lines: list[LogLine]) -> None:
        for line in lines:
            if self._collector.feed(line):
                self._append_check_row(self._collector.checks[-1])

    def _append_check_row(self, data: dict[str, object]) -> None:
        check = CheckResult.from_dict(data)
        self._add_row(check, None)

    @Slot(object)
    def _on_job_finished(self, outcome: JobOutcome) -> None:
        python, env_name, gfx = self._job_meta
        run = torch_jobs.run_from_outcome(
            outcome, self._collector, python=python, env_name=env_name, gfx=gfx
        )
        try:
            run = self.store.save(run)
        except Exception as exc:  # sqlite errors: show the run anyway
            log.exception("saving the validation run failed")
            self.ctx.notify(f"Could not save the validation run: {exc}")
        self.validate_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.setValue(1000 if outcome.was_successful() else self.progress.value())
        self.step_label.setText("")
        self.job = None
        self.reload_history(select=run.id)
        self.show_run(run)
        counts = run.counts
        self.ctx.notify(
            f"Validation: {counts['pass']} pass, {counts['fail']} fail, {counts['skip']} skip."
        )

    # -- showing -----------------------------------------------------------------------
    def _add_row(self, check: CheckResult, run: ValidationRun | None) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        status = QTableWidgetItem(STATUS_TEXT.get(check.status, check.status))
        status.setForeground(QColor(STATUS_COLOURS.get(check.status, "#000000")))
        font = status.font()
        font.setBold(True)
        status.setFont(font)
        figure = QTableWidgetItem(check.figure)
        figure.setToolTip(check.error or check.detail or check.figure)
        fix = fix_for(run, check, self._overrides()) if run is not None else None
        fix_text = f"{fix.cause}\nFix: {fix.fix}" if fix else (check.error or "")
        if check.status != "fail":
            fix_text = ""
        fix_item = QTableWidgetItem(fix_text)
        fix_item.setToolTip(fix_text)
        for col, item in enumerate((QTableWidgetItem(check.name), status, figure, fix_item)):
            self.table.setItem(row, col, item)

    def show_run(self, run: ValidationRun) -> None:
        self.shown_run = run
        self.table.setRowCount(0)
        for check in run.checks:
            self._add_row(check, run)
        self.table.resizeRowsToContents()
        counts = run.counts
        where = run.env_name or run.python
        device = run.device_name or "no GPU visible"
        ended = "" if run.outcome == "completed" else f" — ended early ({run.outcome})"
        self.summary_label.setText(
            f"<b>{counts['pass']} pass, {counts['fail']} fail, {counts['skip']} skip</b>"
            f" — torch {run.torch_version or 'n/a'} ({run.build or 'n/a'} build) in {where}; "
            f"{device}{ended}"
        )

    def reload_history(self, select: int | None = None) -> None:
        self.history.blockSignals(True)
        self.history.clear()
        try:
            runs = self.store.list_runs()
        except Exception as exc:
            log.exception("reading validation runs failed")
            runs = []
            self.summary_label.setText(f"Could not read the run history: {exc}")
        for run in runs:
            item = QListWidgetItem(short_title(run))
            item.setToolTip(run_title(run))
            item.setData(Qt.ItemDataRole.UserRole, run.id)
            colour = {"pass": "#2e7d32", "fail": "#c62828"}.get(run.verdict, "#ef6c00")
            item.setForeground(QColor(colour))
            self.history.addItem(item)
            if run.id == select:
                item.setSelected(True)
        self.history.blockSignals(False)
        self._update_history_buttons()

    def _selected_ids(self) -> list[int]:
        return [int(i.data(Qt.ItemDataRole.UserRole)) for i in self.history.selectedItems()]

    def _update_history_buttons(self) -> None:
        count = len(self._selected_ids())
        self.compare_button.setEnabled(count == 2)
        self.export_button.setEnabled(count == 1)
        self.delete_button.setEnabled(count >= 1)

    @Slot()
    def _on_history_selection_changed(self) -> None:
        self._update_history_buttons()
        ids = self._selected_ids()
        if len(ids) == 1 and (self.job is None or not self.job.running):
            run = self.store.get(ids[0])
            if run is not None:
                self.show_run(run)

    def compare_text(self) -> str | None:
        ids = self._selected_ids()
        if len(ids) != 2:
            return None
        older, newer = sorted(ids)
        a, b = self.store.get(older), self.store.get(newer)
        return compare_markdown(a, b) if a and b else None

    @Slot()
    def _on_compare_clicked(self) -> None:
        text = self.compare_text()
        if text:
            MarkdownDialog("Compare validation runs", text, self).exec()

    @Slot()
    def _on_export_clicked(self) -> None:
        ids = self._selected_ids()
        run = self.store.get(ids[0]) if len(ids) == 1 else None
        if run is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Export validation run", f"validation-{run.id}.md", "Markdown (*.md)"
        )
        if not path:
            return
        try:
            write_atomic(
                __import__("pathlib").Path(path),
                to_markdown(run, self._overrides()).encode("utf-8"),
            )
        except PanelError as exc:
            QMessageBox.warning(self, "Export failed", str(exc))
            return
        self.ctx.notify(f"Saved {path}")

    @Slot()
    def _on_delete_clicked(self) -> None:
        ids = self._selected_ids()
        if not ids:
            return
        answer = QMessageBox.question(
            self, "Delete runs", f"Delete {len(ids)} validation run(s) from the history?"
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        for run_id in ids:
            self.store.delete(run_id)
        self.reload_history()

    def shutdown(self) -> None:
        if self.job is not None and self.job.running:
            self.job.cancel()
