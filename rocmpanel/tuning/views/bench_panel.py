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
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QShowEvent, QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report, user_message
from rocmpanel.jobs.presets import NO_PRESET, Preset, PresetStore
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.runner import Job
from rocmpanel.tuning.bench import MAX_REPS, MIN_REPS, ABRun, BenchPlan, BenchResult
from rocmpanel.tuning.views.bench_saved import SavedResults
from rocmpanel.tuning.views.bench_table import (
    NO_PRESET_LABEL,
    WORKLOAD_LABELS,
    ResultView,
    workload_label,
)

if TYPE_CHECKING:  # pyqtgraph is imported with the chart, when the first result shows
    from rocmpanel.tuning.views.bench_chart import BenchChart

log = logging.getLogger(__name__)

DEVICES = (
    ("auto", QT_TRANSLATE_NOOP("BenchPanel", "Auto (the GPU if torch sees one)")),
    ("cpu", "CPU"),
)
DEMO_REASON = QT_TRANSLATE_NOOP(
    "BenchPanel", "This is a demo: benchmarks run on a real machine's workload Python."
)
NO_CHAT_MODEL = QT_TRANSLATE_NOOP(
    "BenchPanel", "Chat decode needs a chat model: choose one in the Chat tab first."
)
NO_GPU_NOTE = QT_TRANSLATE_NOOP(
    "BenchPanel", "No AMD GPU was found: the benchmark runs on the CPU and its figures say CPU."
)
REPS_DEFAULT = 5
REPS_RANGE = (MIN_REPS, MAX_REPS)


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
        self._cancelled = False
        self._presets_loaded = False
        self._shown_once = False
        self._presets_error = ""  # why the presets could not be listed

        self.a_combo = QComboBox()
        self.b_combo = QComboBox()
        for combo in (self.a_combo, self.b_combo):
            combo.addItem(translate("BenchPanel", NO_PRESET_LABEL), NO_PRESET)
            combo.setMinimumContentsLength(14)
        self.workload_combo = QComboBox()
        for key in WORKLOAD_LABELS:
            self.workload_combo.addItem(workload_label(key), key)
        self.reps_spin = QSpinBox()
        self.reps_spin.setRange(*REPS_RANGE)
        self.reps_spin.setValue(REPS_DEFAULT)
        self.reps_spin.setToolTip(
            translate("BenchPanel", "Runs of each side; the spread needs at least two.")
        )
        self.device_combo = QComboBox()
        for key, label in DEVICES:
            self.device_combo.addItem(translate("BenchPanel", label), key)
        self.quick_check = QCheckBox(translate("BenchPanel", "&Quick"))
        self.quick_check.setToolTip(
            translate(
                "BenchPanel",
                "Small sizes: a fast check that it works, not a measurement (on by default when "
                "no AMD GPU is found: the CPU is slow at full sizes).",
            )
        )
        self._quick_chosen = False  # the user ticked or unticked Quick: it stays as chosen
        self.quick_check.clicked.connect(self._on_quick_check_clicked)
        self.run_button = QPushButton(translate("BenchPanel", "&Run A/B"))
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton(translate("BenchPanel", "Cancel"))
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)

        self.note_label = QLabel("")
        self.note_label.setWordWrap(True)
        self.note_label.setStyleSheet("color: gray")
        self.note_label.hide()
        self.progress = QProgressBar()
        self.progress.setFormat(translate("BenchPanel", "%v of %m"))
        policy = self.progress.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.progress.setSizePolicy(policy)
        self.progress.hide()
        self.result_view = ResultView()
        self.summary_label = self.result_view.summary_label
        self.error_label = self.result_view.error_label
        self.table = self.result_view.table

        self.saved = SavedResults(ctx, self.error_label)
        self.saved.chosen.connect(self._on_saved_chosen)

        controls = QHBoxLayout()
        for caption, widget in (
            ("&A:", self.a_combo),
            ("&B:", self.b_combo),
            (translate("BenchPanel", "&Workload:"), self.workload_combo),
            (translate("BenchPanel", "Repe&titions:"), self.reps_spin),
            (translate("BenchPanel", "&Device:"), self.device_combo),
        ):
            buddy = QLabel(caption)
            buddy.setBuddy(widget)
            controls.addWidget(buddy)
            controls.addWidget(widget)
        controls.addWidget(self.quick_check)
        controls.addStretch(1)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.result_view)
        splitter.addWidget(self.saved)
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
        self.saved.reload()

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
                self._presets_error = report(
                    error, translate("BenchPanel", "Listing the presets"), label=self.note_label
                )
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
            combo.addItem(translate("BenchPanel", NO_PRESET_LABEL), NO_PRESET)
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
            active = self.ctx.active_preset.ident  # what jobs run under
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
            translate("BenchPanel", "Decode tok/s of {model}").format(model=Path(model).name)
            if model
            else translate("BenchPanel", NO_CHAT_MODEL),
            Qt.ItemDataRole.ToolTipRole,
        )
        if not model and self.workload_combo.currentData() == "chat":
            self.workload_combo.setCurrentIndex(0)
        # Without a model the chat workload cannot be chosen; its item's tooltip says why
        # (a note about chat under a GEMM run would only confuse).
        notes: list[str] = [self._presets_error] if self._presets_error else []
        if self._no_gpu():
            self.device_combo.setCurrentIndex(self.device_combo.findData("cpu"))
            notes.append(translate("BenchPanel", NO_GPU_NOTE))
        if not self._quick_chosen:
            self.quick_check.setChecked(self._no_gpu())
        running = self.run is not None
        self.run_button.setEnabled(not running and not self.ctx.demo)
        if self.ctx.demo:
            demo_reason = translate("BenchPanel", DEMO_REASON)
            self.run_button.setToolTip(demo_reason)
            notes.insert(0, demo_reason)
        else:
            self.run_button.setToolTip(
                translate("BenchPanel", "Run A, B, A, B, … each in a fresh worker process")
            )
        for widget in (
            self.a_combo,
            self.b_combo,
            self.workload_combo,
            self.reps_spin,
            self.device_combo,
            self.quick_check,
        ):
            widget.setEnabled(not running)
        self.note_label.setText(" ".join(notes))
        self.note_label.setVisible(bool(notes))

    @Slot()
    def _on_quick_check_clicked(self) -> None:
        self._quick_chosen = True

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
    @staticmethod
    def _saved_name(combo: QComboBox) -> str:
        return NO_PRESET if combo.currentData() == NO_PRESET else combo.currentText()

    @Slot()
    def start(self) -> None:
        """Start an A/B run with the chosen presets and workload."""
        if self.run is not None or self.ctx.demo:
            return
        plan = self.plan()
        try:
            # Saved with the result: "none" (as the CLI saves it), not the translated label.
            run = ABRun(plan, self._saved_name(self.a_combo), self._saved_name(self.b_combo))
        except (PanelError, ValueError) as exc:
            report(exc, translate("BenchPanel", "Starting the benchmark"), label=self.error_label)
            self.error_label.show()
            return
        self.run = run
        self._cancelled = False
        self.error_label.hide()
        self.summary_label.setText(
            translate("BenchPanel", "Running A: {a} vs B: {b}…").format(
                a=self.a_combo.currentText(), b=self.b_combo.currentText()
            )
        )
        _, planned = run.progress
        self.progress.setRange(0, planned)
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.setEnabled(True)
        self._update_controls()
        self._start_next()

    def _start_next(self) -> None:
        run = self.run
        assert run is not None
        spec = None if self._cancelled else run.next_spec()
        if spec is None:
            self._finish()
            return
        finished, planned = run.progress
        self.progress.setFormat(
            translate("BenchPanel", "run {number} of {planned} ({side})").format(
                number=finished + 1, planned=planned, side=run.pending_side
            )
        )
        self.progress.setValue(finished)
        try:
            job = self.ctx.jobs.start(spec)
        except PanelError as exc:
            run.failed(user_message(exc))  # shown under the result with the run's place
            # logged with its detail, status bar
            report(exc, translate("BenchPanel", "Starting a benchmark run"))
            self._finish()
            return
        self.job = job
        job.finished.connect(self._on_job_finished)

    @Slot(object)
    def _on_job_finished(self, outcome: JobOutcome) -> None:
        job, self.job = self.job, None
        run = self.run
        if run is None:
            return
        if outcome.state is JobState.CANCELLED and not self._cancelled:
            self._cancelled = True  # the jobs strip's Cancel ends it as the panel's does
            run.cancel()
        if self._cancelled:
            self._finish()
            return
        if outcome.was_successful() and outcome.result is not None:
            try:
                # The launched environment too: a preset edited mid-run stops the run.
                run.record(dict(outcome.result), env=job.spec.env if job is not None else None)
            except (PanelError, ValueError, KeyError, TypeError) as exc:
                log.warning("benchmark result not readable: %r", exc)
                run.failed(
                    translate(
                        "BenchPanel", "it sent a result the panel cannot read ({problem})."
                    ).format(problem=user_message(exc))
                )
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
            self.ctx.notify(
                translate(
                    "BenchPanel", "A/B benchmark cancelled; the runs measured so far are kept."
                )
            )
        self.saved.save(result)

    # -- showing -----------------------------------------------------------------------
    def show_result(self, result: BenchResult) -> None:
        """Show ``result``: the sentence, the chart, the table; Export writes it."""
        self.result_view.show_result(result)
        self.saved.set_shown(result)

    @property
    def shown(self) -> BenchResult | None:
        """The result shown (the saved one once it is saved): what Export writes."""
        return self.saved.shown

    @property
    def chart(self) -> BenchChart | None:
        """The chart, once a result was shown (pyqtgraph loads with the first)."""
        return self.result_view.chart

    @Slot(object)
    def _on_saved_chosen(self, result: BenchResult) -> None:
        if self.run is None:  # a running benchmark keeps its view
            self.show_result(result)

    def shutdown(self) -> None:
        """Stop a running benchmark (the tab or the window is closing)."""
        if self.run is not None:
            self.cancel()
