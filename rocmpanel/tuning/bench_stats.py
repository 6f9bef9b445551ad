"""The statistics of an A/B benchmark (pure, stdlib only).

For each case the two sides' figures are reduced to their medians and compared as a ratio
oriented so that > 1 means B is better: ``B / A`` for a figure where higher is better
(TFLOP/s, tok/s), ``A / B`` where lower is better (ms).

The spread of the ratio comes from the min-max range of each side: the worst B against the
best A gives its low end, the best B against the worst A its high end. With few runs a
range is the honest summary (an interquartile range of 2 to 5 values is barely defined).
The low end is at most 1 and the high end at least 1 exactly when the two sides' ranges
overlap; the verdict is then "no measurable difference" rather than a winner.

Why a winner needs :data:`WINNER_RUNS` (5) runs of each side: when the two presets make no
difference, the 2n figures of a case are exchangeable, so each of the C(2n, n) ways to
split their order between A and B is equally likely. The ranges do not overlap only when
all of one side lie above all of the other: 2 of those splits. The chance of naming a
winner between two identical presets is therefore 2 / C(2n, n): 1/3 with 2 runs a side,
10 % with 3, 2.9 % with 4 and 0.8 % with 5. Below 5 runs a case whose ranges do not overlap
says "too few runs to name a winner"; its medians and ratio are still shown.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

NO_DIFFERENCE = "no measurable difference"
#: Runs of each side before a verdict names a winner (a false winner 2/C(10,5) = 0.8 %).
WINNER_RUNS = 5
#: Units of a speed or a time: their verdicts say "faster"; other figures say "better".
SPEED_UNITS = frozenset({"TFLOP/s", "GFLOP/s", "tok/s", "ms", "s"})
#: Above this ratio (either way) a verdict says "3.2× as fast" instead of "faster by 220 %".
FACTOR_FROM = 2.0


def false_winner_chance(runs: int) -> float:
    """The chance that two identical presets get a winner with ``runs`` runs of each side:
    2 / C(2 runs, runs) (see the module's text)."""
    return 2 / math.comb(2 * runs, runs)


def too_few(runs: tuple[int, int]) -> str:
    """The verdict of a case whose ranges do not overlap but that has too few runs."""
    a, b = runs
    counted = f"{a} per side" if a == b else f"{a} of A, {b} of B"
    return f"too few runs to name a winner ({counted}; {WINNER_RUNS} needed)"


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


def times(ratio: float) -> str:
    """How many times better the better side is, written as the table's ratio column
    writes figures ("3.2", "2.04", "47393")."""
    return figure(ratio if ratio >= 1.0 else 1.0 / ratio)


@dataclass(frozen=True)
class Judgement:
    """A case's verdict as parts, for wording it in another language (the window words it
    from these; :func:`verdict` words it in English, the text results keep).

    ``kind``: "same" (ranges overlap), "too_few" (apart, but too few runs), "factor"
    ("B 3.2× as fast") or "percent" ("B faster by 25 %"); ``side``: the better side;
    ``amount``: the factor or the percentage as written; ``speed``: a speed or a time
    (says "faster") rather than another figure (says "better")."""

    kind: str
    side: str = ""
    amount: str = ""
    speed: bool = False
    runs: tuple[int, int] = (0, 0)


def judge(ratio: float, low: float, high: float, unit: str, runs: tuple[int, int]) -> Judgement:
    """The judgement of a case (``runs``: how many figures A and B have).

    Overlapping ranges say "no measurable difference" at any count; ranges apart name a
    winner only with :data:`WINNER_RUNS` runs of each side. Up to twice as good the gain
    reads as a percentage; beyond, a percentage grows unreadable ("faster by 4747891 %"),
    so it reads as a factor."""
    if low <= 1.0 <= high:
        return Judgement("same", runs=runs)
    if min(runs) < WINNER_RUNS:
        return Judgement("too_few", runs=runs)
    speed = unit in SPEED_UNITS
    side = "B" if ratio > 1.0 else "A"
    if max(ratio, 1.0 / ratio) > FACTOR_FROM:
        return Judgement("factor", side, times(ratio), speed, runs)
    return Judgement("percent", side, percent(ratio), speed, runs)


def verdict(ratio: float, low: float, high: float, unit: str, runs: tuple[int, int]) -> str:
    """The one-line judgement of a case in English, as results keep it (see :func:`judge`):
    "no measurable difference", "too few runs to name a winner (…)", "B faster by 25 %",
    "B 3.2× as fast", "A 4.7× better"."""
    found = judge(ratio, low, high, unit, runs)
    if found.kind == "same":
        return NO_DIFFERENCE
    if found.kind == "too_few":
        return too_few(runs)
    if found.kind == "factor":
        return f"{found.side} {found.amount}× {'as fast' if found.speed else 'better'}"
    return f"{found.side} {'faster' if found.speed else 'better'} by {found.amount} %"


def figure(value: float) -> str:
    """``value`` with 3 significant digits, as a plain decimal ("0.000274", "13.7", "254",
    "1230"); scientific notation only outside 1e-6 .. 1e7."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    magnitude = abs(value)
    if magnitude < 1e-6 or magnitude >= 1e7:
        return f"{value:.3g}"
    exponent = math.floor(math.log10(magnitude))
    decimals = max(0, 2 - exponent)
    text = f"{round(value, decimals):.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def ratio_text(ratio: float) -> str:
    """A ratio as the tables write it: "2.08×", "254×" (:func:`figure` digits)."""
    return f"{figure(ratio)}×"


def spread_text(low: float, high: float) -> str:
    """The ratio's spread as "0.055×–254×"."""
    return f"{ratio_text(low)}–{ratio_text(high)}"
