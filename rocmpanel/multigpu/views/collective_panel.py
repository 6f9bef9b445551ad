"""The Multi-GPU tab's collective test: an all-reduce over a range of sizes on the chosen
GPUs (RCCL) or on CPU processes (gloo: without a GPU, or when the user ticks "Run on the
CPU"); a table and a chart of the bus and algorithm bandwidth per size, the cause of a
failure, and the saved runs.

Mnemonics avoid T, A and L (the tab's pages: Topology, All-reduce test, Launch scripts)
and F, V, H (the main window's menus).

The run is a job of ``ctx.jobs`` (the jobs strip shows it and can cancel it); its
``check`` events bring each finished size as it ends. Reading the GPU choice, saving and
listing runs go through ``run_in_background``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.report import report
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.protocol import CheckDone, Progress
from rocmpanel.multigpu.collective import (
    DEFAULT_PROCS,
    MAX_PROCS,
    CollectivePlan,
    CollectiveRun,
    SizeCollector,
    SizeResult,
    backend_name,
    bandwidth_text,
    cause_shown,
    collective_spec,
    format_size,
    make_plan,
    run_from_outcome,
)
from rocmpanel.multigpu.collective_store import CollectiveStore

if TYPE_CHECKING:
    from rocmpanel.gui.context import AppContext
    from rocmpanel.jobs.gpu_choice import GpuChoice
    from rocmpanel.jobs.runner import Job

SIZE_CHOICES = tuple(1024 * 4**k for k in range(11))  # 1 KiB .. 1 GiB, x4
COLUMNS = (
    QT_TRANSLATE_NOOP("CollectivePanel", "Size"),
    QT_TRANSLATE_NOOP("CollectivePanel", "Count"),
    QT_TRANSLATE_NOOP("CollectivePanel", "Time (µs)"),
    QT_TRANSLATE_NOOP("CollectivePanel", "algbw (GB/s)"),
    QT_TRANSLATE_NOOP("CollectivePanel", "busbw (GB/s)"),
)


class CollectivePanel(QWidget):
    """Controls, progress, the result (table, chart, cause) and the saved runs."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.store = CollectiveStore()
        self.choice: GpuChoice | None = None
        self.plan: CollectivePlan | None = None
        self.job: Job | None = None
        self.collector = SizeCollector()
        self.shown: CollectiveRun | None = None
        self.chart: BandwidthChart | None = None
        self.cpu_wanted = False  # the user's tick; without a GPU the box is ticked anyway

        self.where_label = QLabel(translate("CollectivePanel", "Looking for GPUs…"))
        self.where_label.setWordWrap(True)
        self.where_label.setAccessibleName(translate("CollectivePanel", "Where the test runs"))
        self.min_combo, self.max_combo = QComboBox(), QComboBox()
        for combo, name in (
            (self.min_combo, translate("CollectivePanel", "Smallest size")),
            (self.max_combo, translate("CollectivePanel", "Largest size")),
        ):
            for size in SIZE_CHOICES:
                combo.addItem(format_size(size), size)
            combo.setAccessibleName(name)
        self.max_combo.setCurrentIndex(len(SIZE_CHOICES) - 1)
        self.procs_spin = QSpinBox()
        self.procs_spin.setRange(2, MAX_PROCS)
        self.procs_spin.setValue(DEFAULT_PROCS)
        self.procs_spin.setAccessibleName(translate("CollectivePanel", "Processes on the CPU"))
        self.procs_spin.setToolTip(
            translate("CollectivePanel", "How many processes run the all-reduce on the CPU.")
        )
        self.procs_spin.valueChanged.connect(self._on_procs_changed)
        self.cpu_check = QCheckBox(translate("CollectivePanel", "Run on the &CPU (gloo)"))
        self.cpu_check.setAccessibleName(translate("CollectivePanel", "Run on the CPU with gloo"))
        self.cpu_check.setToolTip(
            translate(
                "CollectivePanel",
                "Test the all-reduce between CPU processes (gloo) instead of the chosen GPUs: "
                "checks torch.distributed itself when the GPUs fail.",
            )
        )
        self.cpu_check.setEnabled(False)  # until the GPU choice is read
        self.cpu_check.clicked.connect(self._on_cpu_clicked)
        self.run_button = QPushButton(translate("CollectivePanel", "&Run"))
        self.run_button.setAccessibleName(translate("CollectivePanel", "Run the collective test"))
        self.run_button.setEnabled(False)
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton(translate("CollectivePanel", "Cancel"))
        self.cancel_button.setAccessibleName(
            translate("CollectivePanel", "Cancel the collective test")
        )
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setAccessibleName(translate("CollectivePanel", "Sizes done"))
        self.progress.setFormat(translate("CollectivePanel", "%v of %m sizes"))
        self.progress.hide()
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setAccessibleName(translate("CollectivePanel", "Why the test failed"))
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([translate("CollectivePanel", c) for c in COLUMNS])
        self.table.setAccessibleName(translate("CollectivePanel", "Bandwidth per size"))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.hide()  # shown with the first size: no empty grid above a failure
        self.chart_box = QVBoxLayout()
        self.saved_list = QListWidget()
        self.saved_list.setAccessibleName(translate("CollectivePanel", "Saved collective runs"))
        self.saved_list.currentItemChanged.connect(self._on_saved_list_changed)

        controls = QHBoxLayout()
        for caption, widget in (
            (translate("CollectivePanel", "Fro&m:"), self.min_combo),
            (translate("CollectivePanel", "T&o:"), self.max_combo),
        ):
            buddy = QLabel(caption)
            buddy.setBuddy(widget)
            controls.addWidget(buddy)
            controls.addWidget(widget)
        controls.addWidget(self.cpu_check)
        procs_caption = QLabel(translate("CollectivePanel", "&Processes:"))
        procs_caption.setBuddy(self.procs_spin)
        controls.addWidget(procs_caption)
        controls.addWidget(self.procs_spin)
        controls.addStretch(1)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        result = QWidget()
        result_layout = QVBoxLayout(result)
        result_layout.setContentsMargins(0, 0, 0, 0)
        result_layout.addWidget(self.status_label)
        result_layout.addWidget(self.error_label)
        result_layout.addLayout(self.chart_box, 1)
        result_layout.addWidget(self.table, 1)
        saved = QWidget()
        saved_layout = QVBoxLayout(saved)
        saved_layout.setContentsMargins(0, 0, 0, 0)
        saved_caption = QLabel(translate("CollectivePanel", "&Saved runs:"))
        saved_caption.setBuddy(self.saved_list)
        saved_layout.addWidget(saved_caption)
        saved_layout.addWidget(self.saved_list)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(result)
        splitter.addWidget(saved)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.where_label)
        layout.addLayout(controls)
        layout.addWidget(self.progress)
        layout.addWidget(splitter, 1)
        self.refresh()

    # -- choice and history --------------------------------------------------------------
    def refresh(self) -> None:
        """Re-read the GPU choice and the saved runs."""
        from rocmpanel.gui.gpu_picker import known_gpus
        from rocmpanel.jobs import gpu_choice

        # The choice as the window holds it (the setting in memory, the window's GPUs).
        saved, known = self.ctx.settings.general.job_gpus, known_gpus(self.ctx)
        run_in_background(
            lambda: gpu_choice.resolve(None, known=known, saved=saved),
            self._on_choice_loaded,
            owner=self,
            what="GPU choice",
        )
        self.reload_saved()

    def reload_saved(self) -> None:
        run_in_background(
            self.store.list_runs, self._on_saved_loaded, owner=self, what="collective runs"
        )

    def _on_choice_loaded(self, choice: GpuChoice | None, error: BaseException | None) -> None:
        if error is not None or choice is None:
            if error is not None:
                report(
                    error,
                    translate("CollectivePanel", "Reading the GPU choice"),
                    label=self.where_label,
                )
            self.choice = None
        else:
            self.choice = choice
        self._update_where()
        self.run_button.setEnabled(self.job is None)

    @Slot(int)
    def _on_procs_changed(self, _value: int) -> None:
        self._update_where()  # the sentence names the number of processes

    @Slot(bool)
    def _on_cpu_clicked(self, checked: bool) -> None:
        self.cpu_wanted = checked
        self._update_where()

    def _gpu_count(self) -> int:
        return self.choice.count if self.choice is not None else 0

    def on_cpu(self) -> bool:
        """Whether Run tests the CPU: no GPU is chosen, or the user ticked the box."""
        return self._gpu_count() == 0 or self.cpu_wanted

    def _update_where(self) -> None:
        count = self._gpu_count()
        idle = self.job is None
        self.cpu_check.setChecked(self.on_cpu())
        self.cpu_check.setEnabled(count > 0 and idle)
        self.procs_spin.setEnabled(self.on_cpu() and idle)
        if self.choice is None:
            return
        procs = self.procs_spin.value()
        if count == 0:
            text = translate(
                "CollectivePanel",
                "No AMD GPU: the test runs on the CPU with gloo and {procs} processes (figures "
                "are the CPU's, not a GPU's).",
            )
        elif self.cpu_wanted:
            text = translate(
                "CollectivePanel",
                "The test runs on the CPU with gloo and {procs} processes, as chosen (figures "
                "are the CPU's, not those of {gpus}).",
            )
        elif count == 1:
            text = translate(
                "CollectivePanel",
                "Only one GPU is chosen ({gpus}): an all-reduce needs two or more. Choose more "
                "GPUs for the jobs, or run it on the CPU.",
            )
        else:
            text = translate("CollectivePanel", "Runs on {gpus}: RCCL, one process per GPU.")
        self.where_label.setText(text.format(procs=procs, gpus=self.choice.label))

    def _on_saved_loaded(
        self, runs: list[CollectiveRun] | None, error: BaseException | None
    ) -> None:
        if error is not None:
            report(
                error,
                translate("CollectivePanel", "Listing the collective runs"),
                label=self.error_label,
            )
            self.error_label.show()
            return
        notice = self.store.notice
        if notice:
            self.status_label.setText(notice)
        self.saved_list.blockSignals(True)
        self.saved_list.clear()
        for run in runs or []:
            item = QListWidgetItem(saved_title(run))
            item.setData(Qt.ItemDataRole.UserRole, run)
            item.setToolTip(run.where)
            self.saved_list.addItem(item)
        self.saved_list.blockSignals(False)

    @Slot(object, object)
    def _on_saved_list_changed(self, item: QListWidgetItem | None, _old: object) -> None:
        if item is not None and self.job is None:
            self.show_run(item.data(Qt.ItemDataRole.UserRole), saved=True)

    # -- running -------------------------------------------------------------------------
    def start(self) -> None:
        count = self._gpu_count()
        on_cpu = self.on_cpu()
        try:
            gpus = tuple(g.bdf for g in self.choice.gpus if g.bdf) if self.choice else None
            self.plan = make_plan(
                count,
                gpus=gpus or None,
                cpu=on_cpu and count > 0,  # asked for; without a GPU it is the fallback
                procs=self.procs_spin.value() if on_cpu else None,
                min_bytes=int(self.min_combo.currentData()),
                max_bytes=int(self.max_combo.currentData()),
                python=self.ctx.workload_python(),
                label=self.choice.label if self.choice else "",
            )
            self.job = self.ctx.jobs.start(collective_spec(self.plan))
        except PanelError as exc:
            doing = translate("CollectivePanel", "Starting the collective test")
            self._show_error(report(exc, doing, label=self.error_label))
            return
        self.collector = SizeCollector()
        self.shown = None
        self.table.setRowCount(0)
        self._clear_chart()
        self._show_results(False)
        self.error_label.hide()
        # Where it runs is said above the controls; this line follows the job's steps.
        self.status_label.setText(translate("CollectivePanel", "Starting the processes…"))
        self.progress.setRange(0, _planned(self.plan))
        self.progress.setValue(0)
        self.progress.show()
        self.job.check_done.connect(self._on_job_check_done)
        self.job.progress_changed.connect(self._on_job_progress_changed)
        self.job.finished.connect(self._on_job_finished)
        self._set_running(True)

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def _set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        for widget in (self.min_combo, self.max_combo):
            widget.setEnabled(not running)
        self._update_where()

    @Slot(object)
    def _on_job_check_done(self, event: CheckDone) -> None:
        found = self.collector.feed(event)
        self.progress.setValue(len(self.collector.sizes) + len(self.collector.skipped))
        if found is not None:
            self._add_row(found)
            self._draw(tuple(self.collector.sizes))
            self._show_results(True)

    @Slot(object)
    def _on_job_progress_changed(self, progress: Progress) -> None:
        if progress.step:
            self.status_label.setText(progress.step)

    @Slot(object)
    def _on_job_finished(self, outcome: JobOutcome) -> None:
        plan, self.job = self.plan, None
        self._set_running(False)
        self.progress.hide()
        if plan is None:
            return
        run = run_from_outcome(plan, outcome, self.collector.sizes)
        self.show_run(run)
        if run.sizes or run.error:
            run_in_background(
                lambda: self.store.save(run), self._on_saved, owner=self, what="saving the run"
            )

    def _on_saved(self, run: CollectiveRun | None, error: BaseException | None) -> None:
        if error is not None:
            report(
                error,
                translate("CollectivePanel", "Saving the collective run"),
                label=self.status_label,
            )
            return
        self.reload_saved()

    # -- showing -------------------------------------------------------------------------
    def show_run(self, run: CollectiveRun, *, saved: bool = False) -> None:
        """Show ``run``: its summary, its cause if it failed, the table and the chart (hidden
        when no size finished). ``saved``: picked from the list, so the summary says where
        it ran (the line above the controls says where the next run goes)."""
        self.shown = run
        self.table.setRowCount(0)
        for size in run.sizes:
            self._add_row(size)
        if run.sizes:
            self._draw(run.sizes)
        else:
            self._clear_chart()
        self._show_results(bool(run.sizes))
        self.status_label.setText(summary_text(run, with_where=saved))
        if run.outcome == "failed":
            if run.cause:
                self._show_error(cause_shown(run.cause))
            else:
                self._show_error(run.error or translate("CollectivePanel", "The test failed."))
            if run.cause and run.error:
                self.error_label.setToolTip(run.error)
        else:
            self.error_label.hide()

    def _show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.show()

    def _add_row(self, size: SizeResult) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        cells = (
            format_size(size.bytes),
            str(size.count),
            f"{size.time_us:.1f}",
            bandwidth_text(size.algbw_gbs),
            bandwidth_text(size.busbw_gbs),
        )
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if column:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, column, item)

    def _show_results(self, visible: bool) -> None:
        self.table.setVisible(visible)
        if self.chart is not None:
            self.chart.setVisible(visible)

    def _clear_chart(self) -> None:
        if self.chart is not None:
            self.chart.clear()

    def _draw(self, sizes: tuple[SizeResult, ...]) -> None:
        if self.chart is None:
            if not sizes:
                return
            self.chart = BandwidthChart(self)  # pyqtgraph is imported with the first result
            self.chart_box.addWidget(self.chart)
        self.chart.show_sizes(sizes)


class BandwidthChart(QWidget):
    """Bus and algorithm bandwidth against the size, on a log2 axis. Plotted in B/s so
    pyqtgraph's SI prefix labels the axis kB/s, MB/s or GB/s (10**9, as the table)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        import pyqtgraph as pg

        super().__init__(parent)
        self.plot = pg.PlotWidget()
        self.plot.setAccessibleName(translate("BandwidthChart", "Bandwidth per size chart"))
        item = self.plot.getPlotItem()
        item.setLabel("left", translate("BandwidthChart", "bandwidth"), units="B/s")
        item.setLabel("bottom", translate("BandwidthChart", "size"))
        item.getAxis("bottom").enableAutoSIPrefix(False)  # ticks are sizes, not log2 values
        item.showGrid(x=True, y=True, alpha=0.3)
        item.addLegend()
        self.busbw = item.plot([], [], name="busbw", pen=pg.mkPen("#d9534f", width=2), symbol="o")
        self.algbw = item.plot([], [], name="algbw", pen=pg.mkPen("#0275d8", width=2), symbol="t")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self.setMinimumHeight(180)

    def clear(self) -> None:
        self.busbw.setData([], [])
        self.algbw.setData([], [])

    def show_sizes(self, sizes: tuple[SizeResult, ...]) -> None:
        x = [math.log2(s.bytes) for s in sizes]
        self.busbw.setData(x, [s.busbw_gbs * 1e9 for s in sizes])
        self.algbw.setData(x, [s.algbw_gbs * 1e9 for s in sizes])
        axis = self.plot.getPlotItem().getAxis("bottom")
        axis.setTicks([log2_ticks(tuple(s.bytes for s in sizes))])


# A run's outcome (a stored key) as the summary starts and as a saved run without a figure ends.
OUTCOMES = {
    "done": QT_TRANSLATE_NOOP("summary_text", "Done"),
    "failed": QT_TRANSLATE_NOOP("summary_text", "Failed"),
    "cancelled": QT_TRANSLATE_NOOP("summary_text", "Cancelled"),
}
OUTCOMES_LOWER = {
    "done": QT_TRANSLATE_NOOP("saved_title", "done"),
    "failed": QT_TRANSLATE_NOOP("saved_title", "failed"),
    "cancelled": QT_TRANSLATE_NOOP("saved_title", "cancelled"),
}


def _planned(plan: CollectivePlan) -> int:
    count, size = 0, plan.min_bytes
    while size <= plan.max_bytes:
        count, size = count + 1, size * 2
    return count


def summary_text(run: CollectiveRun, *, with_where: bool = False) -> str:
    """One sentence: how it ended, the peak bus bandwidth; where it ran on request."""
    peak = run.peak()
    state = translate("summary_text", OUTCOMES[run.outcome]) if run.outcome in OUTCOMES else ""
    text = translate("summary_text", "{state}: {count} processes, {backend}").format(
        state=state, count=run.world_size, backend=backend_name(run.backend)
    )
    if peak:
        text += translate("summary_text", "; peak bus bandwidth {figure} GB/s at {size}").format(
            figure=bandwidth_text(peak.busbw_gbs), size=format_size(peak.bytes)
        )
    if run.skipped:
        text += translate("summary_text", "; {count} sizes skipped: {reason}").format(
            count=len(run.skipped), reason=run.skipped[0][1]
        )
    where = f" {run.where}." if with_where and run.where else ""
    return f"{text}.{where}"


def saved_title(run: CollectiveRun) -> str:
    import time

    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.created_at))
    peak = run.peak()
    if peak:
        figure = f"{peak.busbw_gbs:.2f} GB/s"
    elif run.outcome in OUTCOMES_LOWER:
        figure = translate("saved_title", OUTCOMES_LOWER[run.outcome])
    else:
        figure = run.outcome
    return f"{when}  {run.world_size}× {backend_name(run.backend)}  {figure}"


def log2_ticks(sizes: tuple[int, ...]) -> list[tuple[float, str]]:
    """Axis ticks at each size, placed at log2(bytes)."""
    return [(math.log2(s), format_size(s)) for s in sizes]
