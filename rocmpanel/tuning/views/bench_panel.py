"""The Tuning tab's A/B benchmark: two presets, one workload, runs alternating A B A B in
fresh worker processes, then a chart, a table and a verdict per case.

The panel drives :class:`~rocmpanel.tuning.bench.ABRun` with ``ctx.jobs`` (so the jobs
strip shows each run and can cancel it): it starts the spec ``next_spec()`` hands out,
feeds the job's result to ``record()`` (or its failure to ``failed()``), and starts the
next one when a job has finished, so the GUI thread never waits. Presets, saved results,
saving and exporting go through ``run_in_background`` (disk reads and locks).
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QShowEvent, QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report, user_message
from rocmpanel.jobs.presets import NO_PRESET, Preset, PresetStore
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.runner import Job
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.tuning.bench import (
    ABRun,
    BenchPlan,
    BenchResult,
    export_result,
    load_results,
    save_result,
)
from rocmpanel.tuning.views.bench_table import (
    WORKLOAD_LABELS,
    BenchTable,
    errors_text,
    result_label,
    result_tooltip,
    summary_text,
)

if TYPE_CHECKING:  # pyqtgraph is imported with the chart, when the first result shows
    from rocmpanel.tuning.views.bench_chart import BenchChart

log = logging.getLogger(__name__)

DEVICES: tuple[tuple[str, str], ...] = (
    ("auto", "Auto (the GPU if torch sees one)"),
    ("cpu", "CPU"),
)
NO_PRESET_LABEL = "No preset"
DEMO_REASON = "This is a demo: benchmarks run on a real machine's workload Python."
NO_CHAT_MODEL = "Chat decode needs a chat model: choose one in the Chat tab first."
NO_GPU_NOTE = "No AMD GPU was found: the benchmark runs on the CPU and its figures say CPU."
REPS_DEFAULT = 5
REPS_RANGE = (2, 50)


def load_presets() -> list[Preset]:
    """Every preset, built-ins first (reads the user's preset folder: background only)."""
    return PresetStore().all()


class BenchPanel(QWidget):
    """Controls, progress, the result (sentence, chart, table) and the saved results."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.run: ABRun | None = None
        self.job: Job | None = None
        self.shown: BenchResult | None = None
        self.chart: BenchChart | None = None
        self._cancelled = False
        self._presets_loaded = False
        self._shown_once = False
        self._presets_error = ""  # why the presets could not be listed
        self._side = ""
        self._plan = BenchPlan(NO_PRESET, NO_PRESET, "gemm")  # the running plan

        self.a_combo = QComboBox()
        self.b_combo = QComboBox()
        for combo in (self.a_combo, self.b_combo):
            combo.addItem(NO_PRESET_LABEL, NO_PRESET)
            combo.setMinimumContentsLength(14)
        self.workload_combo = QComboBox()
        for key, label in WORKLOAD_LABELS.items():
            self.workload_combo.addItem(label, key)
        self.reps_spin = QSpinBox()
        self.reps_spin.setRange(*REPS_RANGE)
        self.reps_spin.setValue(REPS_DEFAULT)
        self.reps_spin.setToolTip("Runs of each side; the spread needs at least two.")
        self.device_combo = QComboBox()
        for key, label in DEVICES:
            self.device_combo.addItem(label, key)
        self.quick_check = QCheckBox("&Quick")
        self.quick_check.setToolTip(
            "Small sizes: a fast check that it works, not a measurement (on by default when "
            "no AMD GPU is found: the CPU is slow at full sizes)."
        )
        self._quick_chosen = False  # the user ticked or unticked Quick: it stays as chosen
        self.quick_check.clicked.connect(self._on_quick_check_clicked)
        self.run_button = QPushButton("&Run A/B")
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)

        self.note_label = QLabel("")
        self.note_label.setWordWrap(True)
        self.note_label.setStyleSheet("color: gray")
        self.note_label.hide()
        self.progress = QProgressBar()
        self.progress.setFormat("%v of %m")
        policy = self.progress.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.progress.setSizePolicy(policy)
        self.progress.hide()
        self.summary_label = QLabel("Pick two presets and a workload, then Run A/B.")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextFormat(Qt.TextFormat.PlainText)  # preset names are user text
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setStyleSheet("color: #c62828")
        self.error_label.hide()
        self.table = BenchTable()
        self.chart_slot = QVBoxLayout()
        self.chart_slot.setContentsMargins(0, 0, 0, 0)
        self.chart_placeholder = QLabel("The chart appears here after a run.")
        self.chart_placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.chart_slot.addWidget(self.chart_placeholder)

        self.saved_list = QListWidget()
        self.saved_list.setWordWrap(True)  # a long pair of names wraps, never scrolls off
        self.saved_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.saved_list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.saved_list.currentItemChanged.connect(self._on_saved_list_current_item_changed)
        self.export_button = QPushButton("&Export…")
        self.export_button.setToolTip("Save the result shown as .json or .csv")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.export_shown)

        controls = QHBoxLayout()
        for caption, widget in (
            ("&A:", self.a_combo),
            ("&B:", self.b_combo),
            ("&Workload:", self.workload_combo),
            ("Repe&titions:", self.reps_spin),
            ("&Device:", self.device_combo),
        ):
            buddy = QLabel(caption)
            buddy.setBuddy(widget)
            controls.addWidget(buddy)
            controls.addWidget(widget)
        controls.addWidget(self.quick_check)
        controls.addStretch(1)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)

        chart_box = QWidget()
        chart_box.setLayout(self.chart_slot)
        results = QSplitter(Qt.Orientation.Vertical)
        results.addWidget(chart_box)
        results.addWidget(self.table)
        results.setStretchFactor(0, 3)
        results.setStretchFactor(1, 2)
        results.setSizes([480, 220])  # the table's size hint would take most of the height
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.summary_label)
        left_layout.addWidget(self.error_label)
        left_layout.addWidget(results, 1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(QLabel("Saved results"))
        right_layout.addWidget(self.saved_list, 1)
        right_layout.addWidget(self.export_button)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(controls)
        layout.addWidget(self.note_label)
        layout.addWidget(self.progress)
        layout.addWidget(splitter, 1)

        self.workload_combo.currentIndexChanged.connect(self._update_controls)
        ctx.inventory.changed.connect(self._update_controls)
        self._update_controls()
        self.refresh()

    # -- choices -----------------------------------------------------------------------
    def refresh(self) -> None:
        """Reload the presets and the saved results, and re-check what can run (the tab
        calls this when it is shown: presets or the chat model may have changed)."""
        self._update_controls()
        run_in_background(load_presets, self._on_presets_loaded, owner=self, what="listing presets")
        self.reload_results()

    def showEvent(self, event: QShowEvent) -> None:
        """Shown again (the tab or its page): the presets or the chat model may have
        changed meanwhile (the first show follows the constructor's own read)."""
        super().showEvent(event)
        if self._shown_once and not event.spontaneous():
            self.refresh()
        self._shown_once = True

    def _on_presets_loaded(self, presets: list[Preset] | None, error: BaseException | None) -> None:
        if error is not None or presets is None:
            if error is not None:  # "No preset" stays offered; the note says why alone
                self._presets_error = report(error, "Listing the presets", label=self.note_label)
                self._update_controls()
            return
        if self._presets_error:
            self._presets_error = ""
            self._update_controls()
        first = not self._presets_loaded
        self._presets_loaded = True
        for combo in (self.a_combo, self.b_combo):
            keep = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(NO_PRESET_LABEL, NO_PRESET)
            for preset in presets:
                combo.addItem(preset.name, preset.id)
                combo.setItemData(
                    combo.count() - 1, preset.description, Qt.ItemDataRole.ToolTipRole
                )
            index = combo.findData(keep)
            combo.setCurrentIndex(max(0, index))
            combo.blockSignals(False)
        if first:  # A: no preset; B: the active one, else the first listed
            self.a_combo.setCurrentIndex(0)
            active = self.ctx.settings.general.active_preset
            index = self.b_combo.findData(active) if active else -1
            if index < 0 and self.b_combo.count() > 1:
                index = 1
            self.b_combo.setCurrentIndex(max(0, index))

    def chat_model(self) -> str:
        """The chat model folder the chat workload decodes with ("" = none configured)."""
        return self.ctx.settings.chat.last_model

    def _no_gpu(self) -> bool:
        inventory = self.ctx.inventory.current
        return inventory is not None and not inventory.has_amd_gpu

    @Slot()
    def _update_controls(self, *_args: object) -> None:
        """Enable what can run here, and say why the rest cannot."""
        chat_index = self.workload_combo.findData("chat")
        model = self.chat_model()
        combo_model = self.workload_combo.model()
        if isinstance(combo_model, QStandardItemModel):  # a QComboBox's own model
            chat_item = combo_model.item(chat_index)
            if chat_item is not None:
                chat_item.setEnabled(bool(model))
        self.workload_combo.setItemData(
            chat_index,
            f"Decode tok/s of {Path(model).name}" if model else NO_CHAT_MODEL,
            Qt.ItemDataRole.ToolTipRole,
        )
        if not model and self.workload_combo.currentData() == "chat":
            self.workload_combo.setCurrentIndex(0)
        # Without a model the chat workload cannot be chosen; its item's tooltip says why
        # (a note about chat under a GEMM run would only confuse).
        notes: list[str] = [self._presets_error] if self._presets_error else []
        if self._no_gpu():
            self.device_combo.setCurrentIndex(self.device_combo.findData("cpu"))
            notes.append(NO_GPU_NOTE)
        if not self._quick_chosen:
            self.quick_check.setChecked(self._no_gpu())
        running = self._busy()
        self.run_button.setEnabled(not running and not self.ctx.demo)
        if self.ctx.demo:
            self.run_button.setToolTip(DEMO_REASON)
            notes.insert(0, DEMO_REASON)
        else:
            self.run_button.setToolTip("Run A, B, A, B, … each in a fresh worker process")
        for widget in (
            self.a_combo,
            self.b_combo,
            self.workload_combo,
            self.reps_spin,
            self.device_combo,
            self.quick_check,
        ):
            widget.setEnabled(not running)
        self._show_note(" ".join(notes))

    @Slot()
    def _on_quick_check_clicked(self) -> None:
        self._quick_chosen = True

    def _show_note(self, text: str) -> None:
        self.note_label.setText(text)
        self.note_label.setVisible(bool(text))

    def plan(self) -> BenchPlan:
        """What the controls ask for."""
        workload = str(self.workload_combo.currentData())
        return BenchPlan(
            a=str(self.a_combo.currentData()),
            b=str(self.b_combo.currentData()),
            workload=workload,
            reps=self.reps_spin.value(),
            python=self.ctx.workload_python(),
            device=str(self.device_combo.currentData()),
            model=self.chat_model() if workload == "chat" else "",
            quick=self.quick_check.isChecked(),
        )

    # -- running -----------------------------------------------------------------------
    def _busy(self) -> bool:
        return self.run is not None

    @Slot()
    def start(self) -> None:
        """Start an A/B run with the chosen presets and workload."""
        if self._busy() or self.ctx.demo:
            return
        plan = self.plan()
        try:
            run = ABRun(plan, self.a_combo.currentText(), self.b_combo.currentText())
        except (PanelError, ValueError) as exc:
            report(exc, "Starting the benchmark", label=self.error_label)
            self.error_label.show()
            return
        self.run = run
        self._plan = plan
        self._cancelled = False
        self.error_label.hide()
        self.summary_label.setText(
            f"Running A: {self.a_combo.currentText()} vs B: {self.b_combo.currentText()}…"
        )
        _, planned = run.progress
        self.progress.setRange(0, planned)
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.setEnabled(True)
        self._update_controls()
        self._start_next()

    def _side_of(self, spec: JobSpec, finished: int) -> str:
        """ "A" or "B": by the spec's preset, or by the A B A B order when both are equal."""
        plan = self._plan
        if plan.a != plan.b:
            if spec.preset == plan.a:
                return "A"
            if spec.preset == plan.b:
                return "B"
        return "A" if finished % 2 == 0 else "B"

    def _start_next(self) -> None:
        run = self.run
        assert run is not None
        spec = None if self._cancelled else run.next_spec()
        if spec is None:
            self._finish()
            return
        finished, planned = run.progress
        self._side = self._side_of(spec, finished)
        self.progress.setFormat(f"run {finished + 1} of {planned} ({self._side})")
        self.progress.setValue(finished)
        try:
            job = self.ctx.jobs.start(spec)
        except PanelError as exc:
            run.failed(user_message(exc))  # shown under the result with the run's place
            report(exc, "Starting a benchmark run")  # logged with its detail, status bar
            self._finish()
            return
        self.job = job
        job.finished.connect(self._on_job_finished)

    @Slot(object)
    def _on_job_finished(self, outcome: JobOutcome) -> None:
        self.job = None
        run = self.run
        if run is None:
            return
        if self._cancelled or outcome.state is JobState.CANCELLED:
            self._finish()
            return
        if outcome.was_successful() and outcome.result is not None:
            try:
                run.record(dict(outcome.result))
            except (PanelError, ValueError, KeyError, TypeError) as exc:
                log.warning("benchmark result not readable: %r", exc)
                run.failed(f"it sent a result the panel cannot read ({user_message(exc)}).")
                self._finish()
                return
            self._start_next()
            return
        message = outcome.error.message if outcome.error is not None else str(outcome)
        run.failed(message)
        self._finish()

    @Slot()
    def cancel(self) -> None:
        """Stop after what was measured: the running worker is cancelled, its run dropped."""
        if self.run is None:
            return
        self._cancelled = True
        self.run.cancel()
        if self.job is not None:
            self.job.cancel()  # its finished signal ends the run
        else:
            self._finish()

    def _finish(self) -> None:
        run = self.run
        if run is None:
            return
        self.run = None
        self.job = None
        self.progress.hide()
        self.cancel_button.setEnabled(False)
        self._update_controls()
        result = run.result()
        self.show_result(result)
        if self._cancelled:
            self.ctx.notify("A/B benchmark cancelled; the runs measured so far are kept.")
        if not result.cases:
            return
        run_in_background(
            partial(save_result, result),
            self._on_result_saved,
            owner=self,
            what="saving the benchmark result",
        )

    def _on_result_saved(self, saved: BenchResult | None, error: BaseException | None) -> None:
        if error is not None or saved is None:
            if error is not None:  # the result stays shown; only the list misses it
                report(error, "Saving the benchmark result")
            return
        if self.shown is not None and self.shown.started == saved.started:
            self.shown = saved
        self.reload_results(select=saved.id)

    # -- showing -----------------------------------------------------------------------
    def show_result(self, result: BenchResult) -> None:
        """Show ``result``: the sentence, the chart, the table."""
        self.shown = result
        self.summary_label.setText(summary_text(result))
        errors = errors_text(result)
        self.error_label.setText(errors)
        self.error_label.setVisible(bool(errors))
        self.table.show_result(result)
        self._chart().show_result(result)
        self.export_button.setEnabled(bool(result.cases))

    def _chart(self) -> BenchChart:
        if self.chart is None:
            from rocmpanel.tuning.views.bench_chart import BenchChart

            self.chart = BenchChart()
            self.chart_slot.removeWidget(self.chart_placeholder)
            self.chart_placeholder.deleteLater()
            self.chart_slot.addWidget(self.chart)
        return self.chart

    def reload_results(self, select: str | None = None) -> None:
        """List the saved results (read in the background)."""
        run_in_background(
            load_results,
            partial(self._on_results_loaded, select),
            owner=self,
            what="listing saved benchmark results",
        )

    def _on_results_loaded(
        self, select: str | None, results: list[BenchResult] | None, error: BaseException | None
    ) -> None:
        if error is not None or results is None:
            if error is not None:
                report(error, "Listing the saved benchmark results")
            return
        self.saved_list.blockSignals(True)
        self.saved_list.clear()
        for result in results:
            item = QListWidgetItem(result_label(result))
            item.setToolTip(result_tooltip(result))
            item.setData(Qt.ItemDataRole.UserRole, result)
            self.saved_list.addItem(item)
            if select is not None and result.id == select:
                self.saved_list.setCurrentItem(item)
        self.saved_list.blockSignals(False)

    @Slot(object, object)
    def _on_saved_list_current_item_changed(
        self, item: QListWidgetItem | None, _previous: object
    ) -> None:
        if item is None or self._busy():  # a running benchmark keeps its view
            return
        self.show_result(item.data(Qt.ItemDataRole.UserRole))

    # -- exporting ---------------------------------------------------------------------
    @Slot()
    def export_shown(self) -> None:
        """Ask where, then write the shown result as .json or .csv (in the background)."""
        result = self.shown
        if result is None:
            return
        name = f"bench-{result.id or 'result'}.json"
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export the benchmark result", name, "JSON (*.json);;CSV (*.csv)"
        )
        if not path:
            return
        target = Path(path)
        if target.suffix.lower() not in (".json", ".csv"):
            target = target.with_suffix(".csv" if "csv" in chosen.lower() else ".json")
        run_in_background(
            partial(export_result, result, target),
            partial(self._on_exported, target),
            owner=self,
            what="exporting the benchmark result",
        )

    def _on_exported(self, target: Path, _none: object, error: BaseException | None) -> None:
        if error is not None:
            report(error, "Exporting the benchmark result", label=self.error_label)
            self.error_label.show()
            return
        self.ctx.notify(f"Benchmark result exported to {target}.")

    def shutdown(self) -> None:
        """Stop a running benchmark (the tab or the window is closing)."""
        if self.run is not None:
            self.cancel()
