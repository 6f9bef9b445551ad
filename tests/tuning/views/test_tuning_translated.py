"""The Tuning tab in another language: what it shows is translated, what it does is not.

A translator that rewrites every string stands in for a real language: the torch form must
still write the preset values it wrote in English (it reads indexes, never its texts), and
a benchmark verdict is worded from its parts, never guessing a winner a result does not
name."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QCoreApplication, QTranslator

from rocmpanel.tuning import bench_stats
from rocmpanel.tuning.bench import CaseResult
from rocmpanel.tuning.views.bench_table import case_cells, verdict_shown
from rocmpanel.tuning.views.torch_form import TorchForm


class Shouting(QTranslator):
    """Every text upper-cased (its {placeholders} kept) and marked: no English word is left
    as it was."""

    def translate(  # type: ignore[override]
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        del context, disambiguation, n
        parts = re.split(r"(\{\w*\})", source)
        return "»" + "".join(p if p.startswith("{") else p.upper() for p in parts)


@pytest.fixture
def shouting() -> Iterator[None]:
    translator = Shouting()
    QCoreApplication.installTranslator(translator)
    yield
    QCoreApplication.removeTranslator(translator)


@pytest.mark.usefixtures("shouting")
def test_the_torch_form_writes_the_same_values_in_any_language(qtbot) -> None:  # type: ignore[no-untyped-def]
    form = TorchForm()
    qtbot.addWidget(form)
    assert form.benchmark_combo.itemText(1) == "»ON"  # the translation is shown
    assert form.precision_combo.itemText(1) == "highest"  # torch's own value, as written
    form.precision_combo.setCurrentIndex(2)
    form.benchmark_combo.setCurrentIndex(1)
    form.expandable_combo.setCurrentIndex(2)
    form.tunableop_combo.setCurrentIndex(2)
    assert form.values() == {
        "float32_matmul_precision": "high",
        "cudnn_benchmark": True,
        "alloc": {"expandable_segments": False},
        "tunableop": {"enabled": True, "tuning": False},
    }
    form.fill({"tunableop": {"enabled": False}, "cudnn_benchmark": False})
    assert form.tunableop_combo.currentText() == "»DISABLED"
    assert form.values() == {"tunableop": {"enabled": False}, "cudnn_benchmark": False}


def _case(a: tuple[float, ...], b: tuple[float, ...], unit: str = "ms") -> CaseResult:
    return CaseResult.measured("alloc churn", unit, unit not in ("ms", "s"), a, b)


CASES = [
    _case((10, 11, 12), (10.5, 11.5, 12.5)),  # overlap: no measurable difference
    _case((20, 21, 22), (10, 11, 12)),  # apart, 3 runs a side: too few
    _case((20, 21, 22, 23), (10, 11, 12)),  # too few, uneven
    _case((20, 21, 22, 23, 24), (15, 16, 17, 18, 19)),  # B faster by a percentage
    _case((50, 51, 52, 53, 54), (10, 11, 12, 13, 14)),  # B as fast by a factor
    _case((5, 6, 7, 8, 9), (1, 1.1, 1.2, 1.3, 1.4), "TFLOP/s"),  # A better by a factor
    _case((10, 10.5, 11, 11.5, 12), (13, 13.5, 14, 14.5, 15), "TFLOP/s"),  # B better, %
]


@pytest.mark.parametrize("case", CASES, ids=[c.verdict for c in CASES])
def test_a_verdict_is_worded_from_its_parts(case: CaseResult) -> None:
    """In English the window shows the verdict the result keeps (as a sentence's start)."""
    expected = case.verdict[:1].upper() + case.verdict[1:]
    assert verdict_shown(case) == expected
    assert case_cells(case)[-1] == expected


def test_the_verdicts_cover_every_kind() -> None:
    kinds = {
        bench_stats.judge(c.ratio, c.ratio_low, c.ratio_high, c.unit, (len(c.a), len(c.b))).kind
        for c in CASES
    }
    assert kinds == {"same", "too_few", "factor", "percent"}


@pytest.mark.usefixtures("shouting")
def test_a_verdict_is_translated_and_keeps_its_winner() -> None:
    faster = CASES[3]
    assert faster.verdict.startswith("B faster by ")
    shown = verdict_shown(faster)
    assert shown.startswith("»B FASTER BY ")  # the translated template, filled in
    assert bench_stats.percent(faster.ratio) in shown
    assert verdict_shown(CASES[0]) == "»NO MEASURABLE DIFFERENCE"


@pytest.mark.usefixtures("shouting")
def test_a_verdict_its_figures_do_not_give_is_shown_as_kept() -> None:
    """A result saved under other rules keeps its own words: the window never names a
    winner the result does not name."""
    kept = CaseResult(**{**CASES[1].__dict__, "verdict": "A faster by 3 %"})
    assert verdict_shown(kept) == "A faster by 3 %"
