"""A/B benchmark of two presets (Qt-free; the CLI and the Tuning tab drive it).

CONTRACT (filled in by the benchmark work; signatures are fixed):

An :class:`ABRun` is a state machine like ChatSession: the driver asks ``next_spec()`` for
the next worker to launch (A, B, A, B, … each in a fresh ``workers/bench.py`` process, the
preset set through ``JobSpec.preset``), feeds each finished run's result event to
``record()`` (or ``failed()``), and reads ``result()`` at the end. The CLI drives it with
jobs.process.JobProcess; the tab with ctx.jobs (so the jobs strip shows and cancels it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmpanel.jobs.spec import JobSpec

WORKLOADS: tuple[str, ...] = ("gemm", "sdpa", "alloc", "chat")


@dataclass(frozen=True)
class BenchPlan:
    a: str  # preset id or "none"
    b: str
    workload: str  # one of WORKLOADS
    reps: int = 5  # runs of each side
    python: str = ""  # workload Python ("" = the panel's own)
    device: str = "auto"  # "auto" | "cpu" | "cuda"
    model: str = ""  # chat workload: the model folder
    quick: bool = False  # small sizes (tests, CPU)


@dataclass(frozen=True)
class CaseResult:
    """One measured case (e.g. "gemm 1024 bf16") over all runs of both sides."""

    case: str
    unit: str  # e.g. "TFLOP/s", "ms", "tok/s"
    higher_is_better: bool
    a: tuple[float, ...]
    b: tuple[float, ...]
    a_median: float
    b_median: float
    ratio: float  # b_median / a_median, oriented so > 1 means B is better
    ratio_low: float  # spread of the ratio (see the module's method)
    ratio_high: float
    verdict: str  # "B faster by 12 %" | "A faster by …" | "no measurable difference"


@dataclass
class BenchResult:
    plan: BenchPlan
    a_name: str
    b_name: str
    device_label: str  # e.g. "CPU" or "AMD Radeon RX 7900 XTX (gfx1100)"
    torch_version: str
    started: float  # epoch seconds
    finished: float
    cases: list[CaseResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    id: str = ""  # set when saved

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError


class ABRun:
    def __init__(self, plan: BenchPlan, a_name: str, b_name: str) -> None:
        raise NotImplementedError

    def next_spec(self) -> JobSpec | None:
        """The next worker to run, or None when done (or cancelled)."""
        raise NotImplementedError

    def record(self, data: dict[str, Any]) -> None:
        """The result event's data of the run ``next_spec`` last handed out."""
        raise NotImplementedError

    def failed(self, message: str) -> None:
        """That run failed: stop, keeping what was measured, with ``message``."""
        raise NotImplementedError

    def cancel(self) -> None:
        raise NotImplementedError

    @property
    def progress(self) -> tuple[int, int]:
        """(runs finished, runs planned)."""
        raise NotImplementedError

    def result(self) -> BenchResult:
        raise NotImplementedError


def save_result(result: BenchResult, folder: Path | None = None) -> BenchResult:
    """Keep it (data_dir()/bench/<id>.json, atomic); returns it with ``id`` set."""
    raise NotImplementedError


def load_results(folder: Path | None = None) -> list[BenchResult]:
    """Saved results, newest first; unreadable files are skipped (and logged)."""
    raise NotImplementedError


def export_result(result: BenchResult, path: Path) -> None:
    """Write .json or .csv (by suffix), atomically."""
    raise NotImplementedError
