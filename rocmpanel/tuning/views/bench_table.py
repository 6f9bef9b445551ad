"""The A/B result as text: the table of cases and the sentence above it.

The verdicts come from :mod:`rocmpanel.tuning.bench` (which says "no measurable
difference" when the two sides' runs overlap); this module only words and lays them out,
and never names a winner the result does not name.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.tuning.bench import BenchResult, CaseResult
from rocmpanel.tuning.bench_stats import NO_DIFFERENCE, figure, ratio_text, spread_text

if TYPE_CHECKING:  # pyqtgraph is imported with the chart, when the first result shows
    from rocmpanel.tuning.views.bench_chart import BenchChart

COLUMNS = ("Case", "A median", "B median", "B vs A", "Spread", "Verdict")
MISSING = "—"  # a figure a saved result lacks


def _figure(value: float) -> str:
    """As the command line writes it (bench_stats.figure); "—" when there is none."""
    return figure(value) if math.isfinite(value) else MISSING


def case_cells(case: CaseResult) -> tuple[str, ...]:
    """The table row of one case, its figures written as ``rocmpanel bench`` writes them."""
    unit = f" {case.unit}" if case.unit else ""
    a, b = _figure(case.a_median), _figure(case.b_median)
    finite = all(math.isfinite(v) for v in (case.ratio, case.ratio_low, case.ratio_high))
    return (
        case.case,
        a + unit if a != MISSING else a,
        b + unit if b != MISSING else b,
        ratio_text(case.ratio) if finite else MISSING,  # as the CLI writes the ratio
        spread_text(case.ratio_low, case.ratio_high) if finite else MISSING,
        sentence_case(case.verdict),
    )


def sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


WORKLOAD_LABELS = {
    "gemm": "GEMM",
    "sdpa": "SDPA attention",
    "alloc": "Allocation churn",
    "chat": "Chat decode",
}


def runs_text(result: BenchResult) -> str:
    """How many runs of each side finished with figures."""
    a = sum(1 for run in result.runs if run.get("side") == "A")
    b = sum(1 for run in result.runs if run.get("side") == "B")
    return f"{a} run{'s' if a != 1 else ''} of A, {b} of B"


def workload_label(key: str) -> str:
    return WORKLOAD_LABELS.get(key, key)


def summary_text(result: BenchResult) -> str:
    """The lines over the table: what ran, then each case's verdict (or that no case
    differs)."""
    head = (
        f"A: {result.a_name} vs B: {result.b_name} — {workload_label(result.plan.workload)} on "
        f"{result.device_label or 'an unknown device'}, {runs_text(result)}."
    )
    if not result.cases:
        return f"{head}\nNothing was measured on both sides."
    if all(c.verdict.lower() == NO_DIFFERENCE for c in result.cases):
        return f"{head}\nNo measurable difference in any case: the runs of A and B overlap."
    return "\n".join([head, *(f"• {c.case}: {sentence_case(c.verdict)}" for c in result.cases)])


def errors_text(result: BenchResult) -> str:
    """What went wrong (a failed or cancelled run, a figure left out); "" when nothing."""
    return " ".join(result.errors)


def result_label(result: BenchResult) -> str:
    """One short line for the list of saved results (the device and date in full are in
    :func:`result_tooltip`)."""
    when = time.strftime("%m-%d %H:%M", time.localtime(result.started))
    return f"{when} {result.a_name} vs {result.b_name}, {workload_label(result.plan.workload)}"


def result_tooltip(result: BenchResult) -> str:
    """A saved result in full: when, what against what, the workload and the device."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(result.started))
    return (
        f"{when}: A {result.a_name} vs B {result.b_name}\n"
        f"{workload_label(result.plan.workload)} on {result.device_label or 'an unknown device'}"
    )


class BenchTable(QTableWidget):
    """Case, A median, B median, B vs A, spread, verdict: one row per case."""

    def __init__(self) -> None:
        super().__init__(0, len(COLUMNS))
        self.setHorizontalHeaderLabels(list(COLUMNS))
        tips = {
            3: "B's median against A's, oriented so that above 1× means B is better "
            "(for times: A's time / B's time).",
            4: "The range the ratio takes over the runs of both sides.",
        }
        for column, tip in tips.items():
            header_item = self.horizontalHeaderItem(column)
            if header_item is not None:
                header_item.setToolTip(tip)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.horizontalHeader()
        for column in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)

    def show_result(self, result: BenchResult) -> None:
        self.setRowCount(0)
        for case in result.cases:
            row = self.rowCount()
            self.insertRow(row)
            for column, text in enumerate(case_cells(case)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.setItem(row, column, item)

    def rows(self) -> list[tuple[str, ...]]:
        """The cells as shown (tests, copying)."""
        return [
            tuple(
                (cell.text() if (cell := self.item(row, column)) is not None else "")
                for column in range(self.columnCount())
            )
            for row in range(self.rowCount())
        ]


class ResultView(QWidget):
    """The result shown: its sentence, what went wrong, the chart (made with the first
    result: pyqtgraph loads then) over the table."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chart: BenchChart | None = None
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
        chart_box = QWidget()
        chart_box.setLayout(self.chart_slot)
        results = QSplitter(Qt.Orientation.Vertical)
        results.addWidget(chart_box)
        results.addWidget(self.table)
        results.setStretchFactor(0, 3)
        results.setStretchFactor(1, 2)
        results.setSizes([480, 220])  # the table's size hint would take most of the height
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.error_label)
        layout.addWidget(results, 1)

    def show_result(self, result: BenchResult) -> None:
        self.summary_label.setText(summary_text(result))
        errors = errors_text(result)
        self.error_label.setText(errors)
        self.error_label.setVisible(bool(errors))
        self.table.show_result(result)
        self._chart().show_result(result)

    def _chart(self) -> BenchChart:
        if self.chart is None:
            from rocmpanel.tuning.views.bench_chart import BenchChart

            self.chart = BenchChart()
            self.chart_slot.removeWidget(self.chart_placeholder)
            self.chart_placeholder.deleteLater()
            self.chart_slot.addWidget(self.chart)
        return self.chart
