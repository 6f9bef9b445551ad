"""The statistics of an A/B benchmark (pure, stdlib only).

For each case the two sides' figures are reduced to their medians and compared as a ratio
oriented so that > 1 means B is better: ``B / A`` for a figure where higher is better
(TFLOP/s, tok/s), ``A / B`` where lower is better (ms).

The spread of the ratio comes from the min-max range of each side: the worst B against the
best A gives its low end, the best B against the worst A its high end. With few runs a
range is the honest summary (an interquartile range of 2 to 5 values is barely defined).
The low end is at most 1 and the high end at least 1 exactly when the two sides' ranges
overlap; the verdict is then "no measurable difference" rather than a winner.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

NO_DIFFERENCE = "no measurable difference"
TOO_FEW = "too few runs to judge (2 of each side needed)"
#: Units of a speed or a time: their verdicts say "faster"; other figures say "better".
SPEED_UNITS = frozenset({"TFLOP/s", "GFLOP/s", "tok/s", "ms", "s"})


def valid(value: object) -> bool:
    """A figure the statistics can use: a finite number above zero (never a bool)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def ratio_and_spread(
    a: Sequence[float], b: Sequence[float], higher_is_better: bool
) -> tuple[float, float, float]:
    """(ratio of the medians, low end, high end), oriented so that > 1 means B is better.

    Both sides need at least one figure, each above zero."""
    if not a or not b:
        raise ValueError("both sides need at least one figure")
    if not all(valid(v) for v in (*a, *b)):
        raise ValueError("every figure must be a finite number above zero")
    a_med, b_med = statistics.median(a), statistics.median(b)
    if higher_is_better:
        return b_med / a_med, min(b) / max(a), max(b) / min(a)
    return a_med / b_med, min(a) / max(b), max(a) / min(b)


def percent(ratio: float) -> str:
    """How much better the better side is, as "12" or "4.5" (one decimal under 10 %)."""
    gain = (ratio - 1.0) * 100.0 if ratio >= 1.0 else (1.0 / ratio - 1.0) * 100.0
    return f"{gain:.1f}" if gain < 10 else f"{gain:.0f}"


def verdict(
    ratio: float, low: float, high: float, unit: str, runs: tuple[int, int] = (2, 2)
) -> str:
    """The one-line judgement of a case (``runs``: figures of A and of B)."""
    if min(runs) < 2:
        return TOO_FEW
    if low <= 1.0 <= high:
        return NO_DIFFERENCE
    word = "faster" if unit in SPEED_UNITS else "better"
    side = "B" if ratio > 1.0 else "A"
    return f"{side} {word} by {percent(ratio)} %"
