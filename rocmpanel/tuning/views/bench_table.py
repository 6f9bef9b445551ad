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

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.jobs.presets import NO_PRESET
from rocmpanel.tuning import bench_stats
from rocmpanel.tuning.bench import BenchResult, CaseResult
from rocmpanel.tuning.bench_stats import Judgement, figure, ratio_text, spread_text

if TYPE_CHECKING:  # pyqtgraph is imported with the chart, when the first result shows
    from rocmpanel.tuning.views.bench_chart import BenchChart

COLUMNS = (
    QT_TRANSLATE_NOOP("BenchTable", "Case"),
    QT_TRANSLATE_NOOP("BenchTable", "A median"),
    QT_TRANSLATE_NOOP("BenchTable", "B median"),
    QT_TRANSLATE_NOOP("BenchTable", "B vs A"),
    QT_TRANSLATE_NOOP("BenchTable", "Spread"),
    QT_TRANSLATE_NOOP("BenchTable", "Verdict"),
)
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
        verdict_shown(case),
    )


def sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def _judgement(case: CaseResult) -> Judgement | None:
    """The parts of ``case``'s verdict, when its figures give the verdict it keeps (None for
    a result whose verdict they do not give, e.g. one saved under other rules: its own words
    are shown then, never a verdict it does not hold)."""
    figures = (case.ratio, case.ratio_low, case.ratio_high)
    if not all(math.isfinite(v) for v in figures):
        return None
    runs = (len(case.a), len(case.b))
    if bench_stats.verdict(*figures, case.unit, runs) != case.verdict:
        return None
    return bench_stats.judge(*figures, case.unit, runs)


def verdict_words(found: Judgement) -> str:
    """A verdict in the window's language (bench_stats.verdict words it in English for the
    results kept and the command line)."""
    if found.kind == "same":
        return translate("bench_table", "No measurable difference")
    if found.kind == "too_few":
        a, b = found.runs
        if a == b:
            return translate(
                "bench_table", "Too few runs to name a winner ({runs} per side; {needed} needed)"
            ).format(runs=a, needed=bench_stats.WINNER_RUNS)
        return translate(
            "bench_table", "Too few runs to name a winner ({a} of A, {b} of B; {needed} needed)"
        ).format(a=a, b=b, needed=bench_stats.WINNER_RUNS)
    if found.kind == "factor":
        text = (
            translate("bench_table", "{side} {times}× as fast")
            if found.speed
            else translate("bench_table", "{side} {times}× better")
        )
        return text.format(side=found.side, times=found.amount)
    text = (
        translate("bench_table", "{side} faster by {percent} %")
        if found.speed
        else translate("bench_table", "{side} better by {percent} %")
    )
    return text.format(side=found.side, percent=found.amount)


def verdict_shown(case: CaseResult) -> str:
    """The verdict of ``case`` as the window shows it (a sentence's start)."""
    found = _judgement(case)
    return verdict_words(found) if found is not None else sentence_case(case.verdict)


WORKLOAD_LABELS = {
    "gemm": "GEMM",
    "sdpa": QT_TRANSLATE_NOOP("bench_table", "SDPA attention"),
    "alloc": QT_TRANSLATE_NOOP("bench_table", "Allocation churn"),
    "chat": QT_TRANSLATE_NOOP("bench_table", "Chat decode"),
}


def runs_text(result: BenchResult) -> str:
    """How many runs of each side finished with figures."""
    a = sum(1 for run in result.runs if run.get("side") == "A")
    b = sum(1 for run in result.runs if run.get("side") == "B")
    text = (
        translate("bench_table", "{a} run of A, {b} of B")
        if a == 1
        else translate("bench_table", "{a} runs of A, {b} of B")
    )
    return text.format(a=a, b=b)


def workload_label(key: str) -> str:
    """A workload's name as shown (an unknown key, from a newer result, as written)."""
    label = WORKLOAD_LABELS.get(key)
    return translate("bench_table", label) if label is not None else key


#: How "none" (no preset) reads on an A/B side: the combo's item and saved results alike.
NO_PRESET_LABEL = QT_TRANSLATE_NOOP("BenchPanel", "No preset")


def side_name(name: str) -> str:
    """A side's preset as saved with the result, for the reader: "none" (no preset, as the
    CLI and the panel save it) in the window's language."""
    if name == NO_PRESET:
        return translate("BenchPanel", NO_PRESET_LABEL)
    return name


def _device(result: BenchResult) -> str:
    return result.device_label or translate("bench_table", "an unknown device")


def summary_text(result: BenchResult) -> str:
    """The lines over the table: what ran, then each case's verdict (or that no case
    differs)."""
    head = translate("bench_table", "A: {a} vs B: {b} — {workload} on {device}, {runs}.").format(
        a=side_name(result.a_name),
        b=side_name(result.b_name),
        workload=workload_label(result.plan.workload),
        device=_device(result),
        runs=runs_text(result),
    )
    if not result.cases:
        return head + "\n" + translate("bench_table", "Nothing was measured on both sides.")
    if all(c.verdict.lower() == bench_stats.NO_DIFFERENCE for c in result.cases):  # the data
        return (
            head
            + "\n"
            + translate(
                "bench_table", "No measurable difference in any case: the runs of A and B overlap."
            )
        )
    return "\n".join([head, *(f"• {c.case}: {verdict_shown(c)}" for c in result.cases)])


def errors_text(result: BenchResult) -> str:
    """What went wrong (a failed or cancelled run, a figure left out); "" when nothing."""
    return " ".join(result.errors)


def result_label(result: BenchResult) -> str:
    """One short line for the list of saved results (the device and date in full are in
    :func:`result_tooltip`)."""
    when = time.strftime("%m-%d %H:%M", time.localtime(result.started))
    return translate("bench_table", "{when} {a} vs {b}, {workload}").format(
        when=when,
        a=side_name(result.a_name),
        b=side_name(result.b_name),
        workload=workload_label(result.plan.workload),
    )


def result_tooltip(result: BenchResult) -> str:
    """A saved result in full: when, what against what, the workload and the device."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(result.started))
    return translate("bench_table", "{when}: A {a} vs B {b}\n{workload} on {device}").format(
        when=when,
        a=side_name(result.a_name),
        b=side_name(result.b_name),
        workload=workload_label(result.plan.workload),
        device=_device(result),
    )


class BenchTable(QTableWidget):
    """Case, A median, B median, B vs A, spread, verdict: one row per case."""

    def __init__(self) -> None:
        super().__init__(0, len(COLUMNS))
        self.setHorizontalHeaderLabels([translate("BenchTable", text) for text in COLUMNS])
        tips = {
            3: translate(
                "BenchTable",
                "B's median against A's, oriented so that above 1× means B is better "
                "(for times: A's time / B's time).",
            ),
            4: translate("BenchTable", "The range the ratio takes over the runs of both sides."),
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
        self.summary_label = QLabel(
            translate("ResultView", "Pick two presets and a workload, then Run A/B.")
        )
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
        self.chart_placeholder = QLabel(
            translate("ResultView", "The chart appears here after a run.")
        )
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
