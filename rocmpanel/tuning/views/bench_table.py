"""The A/B result as text: the table of cases and the sentence above it.

The verdicts come from :mod:`rocmpanel.tuning.bench` (which says "no measurable
difference" when the two sides' runs overlap); this module only words and lays them out,
and never names a winner the result does not name.
"""

from __future__ import annotations

import math
import time

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from rocmpanel.tuning.bench import BenchResult, CaseResult
from rocmpanel.tuning.bench_stats import spread_text

COLUMNS = ("Case", "A median", "B median", "B vs A", "Spread", "Verdict")
NO_DIFFERENCE = "no measurable difference"


def format_value(value: float) -> str:
    """A figure with about three significant digits ("—" when there is none)."""
    if not isinstance(value, float | int) or not math.isfinite(value):
        return "—"
    size = abs(value)
    if size >= 100:
        return f"{value:.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def format_ratio(value: float) -> str:
    return "—" if not math.isfinite(value) else f"{value:.2f}×"


def case_cells(case: CaseResult) -> tuple[str, ...]:
    """The table row of one case."""
    unit = f" {case.unit}" if case.unit else ""
    a = format_value(case.a_median)
    b = format_value(case.b_median)
    spread = (
        spread_text(case.ratio_low, case.ratio_high)
        if math.isfinite(case.ratio_low) and math.isfinite(case.ratio_high)
        else "—"
    )
    return (
        case.case,
        a + unit if a != "—" else a,
        b + unit if b != "—" else b,
        format_ratio(case.ratio),
        spread,
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
