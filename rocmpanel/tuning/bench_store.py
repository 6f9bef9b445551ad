"""A/B benchmark results and where they are kept: the plan, the per-case figures and the
result, its JSON (read back strictly: every field type-checked, every figure finite and
above zero), ``data_dir()/bench/<id>.json`` (save, read, load), and the export as .json or
.csv (docs/tuning-json.md). :mod:`rocmpanel.tuning.bench` runs the benchmark and
re-exports these names."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import logging
import math
import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmpanel.base import paths
from rocmpanel.base.atomic import backup_file, write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import (
    CONFIG_LIMIT,
    NotRegularFileError,
    TooLargeError,
    read_bytes,
    size_text,
)
from rocmpanel.base.i18n import translate
from rocmpanel.base.locking import locked
from rocmpanel.tuning import bench_stats

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BenchPlan:
    a: str  # preset id or "none"
    b: str
    workload: str  # one of WORKLOADS
    reps: int = 5  # runs of each side
    python: str = ""  # workload Python ("" = the panel's own)
    device: str = "auto"  # one of DEVICES
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
    #: "B faster by 12 %" | "B 3.2× as fast" (above 2×) | "A faster by …" | "no measurable
    #: difference" | "too few runs to name a winner (N per side; 5 needed)" (bench_stats.verdict)
    verdict: str

    @classmethod
    def measured(
        cls, case: str, unit: str, higher: bool, a: tuple[float, ...], b: tuple[float, ...]
    ) -> CaseResult:
        """The case from both sides' figures: medians, ratio, its spread and the verdict."""
        ratio, low, high = bench_stats.ratio_and_spread(a, b, higher)
        return cls(
            case=case,
            unit=unit,
            higher_is_better=higher,
            a=a,
            b=b,
            a_median=statistics.median(a),
            b_median=statistics.median(b),
            ratio=ratio,
            ratio_low=low,
            ratio_high=high,
            verdict=bench_stats.verdict(ratio, low, high, unit, (len(a), len(b))),
        )


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

    #: One record per finished worker run: side ("A"/"B"), run number, the preset the
    #: worker reported (``{"id", "name"}`` or None), its preset settings and extras.
    runs: list[dict[str, Any]] = field(default_factory=list)
    cancelled: bool = False

    def to_json(self) -> dict[str, Any]:
        """The saved and ``--json`` shape (docs/tuning-json.md)."""
        return {
            "id": self.id,
            "plan": dataclasses.asdict(self.plan),
            "a_name": self.a_name,
            "b_name": self.b_name,
            "device_label": self.device_label,
            "torch_version": self.torch_version,
            "started": self.started,
            "finished": self.finished,
            "cancelled": self.cancelled,
            "cases": [
                {**dataclasses.asdict(c), "a": list(c.a), "b": list(c.b)} for c in self.cases
            ],
            "errors": list(self.errors),
            "runs": [dict(r) for r in self.runs],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BenchResult:
        """Read back :meth:`to_json`. ValueError naming the field on a bad shape: a field of
        the wrong type, or a figure (values, medians, ratio and its spread) that is not a
        finite number above zero, so the views never meet a None or a text as a figure."""
        read = _Fields(data, "")
        plan_data = read.mapping("plan")
        plan_read = _Fields(plan_data, "plan.")
        plan = BenchPlan(
            a=plan_read.text("a"),
            b=plan_read.text("b"),
            workload=plan_read.text("workload"),
            reps=plan_read.integer("reps"),
            python=plan_read.text("python", ""),
            device=plan_read.text("device", "auto"),
            model=plan_read.text("model", ""),
            quick=plan_read.flag("quick", False),
        )
        cases = [_case_from_json(item, f"cases[{n}]") for n, item in enumerate(read.items("cases"))]
        return cls(
            plan=plan,
            a_name=read.text("a_name"),
            b_name=read.text("b_name"),
            device_label=read.text("device_label"),
            torch_version=read.text("torch_version"),
            started=read.number("started"),
            finished=read.number("finished"),
            cases=cases,
            errors=[_text(e, f"errors[{n}]") for n, e in enumerate(read.items("errors", []))],
            id=read.text("id", ""),
            runs=[dict(_mapping(r, f"runs[{n}]")) for n, r in enumerate(read.items("runs", []))],
            cancelled=read.flag("cancelled", False),
        )


def _text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a text; got {_shown(value)}")
    return value


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be a JSON object; got {_shown(value)}")
    return value


def _figure(value: object, where: str) -> float:
    if not bench_stats.valid(value):
        raise ValueError(f"{where} must be a finite number above zero; got {_shown(value)}")
    return float(value)  # type: ignore[arg-type]


def _shown(value: object) -> str:
    """A bad value for a message: JSON's spelling (null, true), cut short."""
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_MISSING = object()


class _Fields:
    """Typed reads of one JSON object's fields; ``where`` prefixes the field names."""

    def __init__(self, data: Mapping[str, Any], where: str) -> None:
        self.data, self.where = data, where

    def _get(self, key: str, default: object) -> object:
        value = self.data.get(key, default)
        if value is _MISSING:
            raise ValueError(f"{self.where}{key} is missing")
        return value

    def text(self, key: str, default: object = _MISSING) -> str:
        return _text(self._get(key, default), self.where + key)

    def mapping(self, key: str) -> Mapping[str, Any]:
        return _mapping(self._get(key, _MISSING), self.where + key)

    def items(self, key: str, default: object = _MISSING) -> list[Any]:
        value = self._get(key, default)
        if not isinstance(value, list):
            raise ValueError(f"{self.where}{key} must be a list; got {_shown(value)}")
        return value

    def flag(self, key: str, default: object = _MISSING) -> bool:
        value = self._get(key, default)
        if not isinstance(value, bool):
            raise ValueError(f"{self.where}{key} must be true or false; got {_shown(value)}")
        return value

    def integer(self, key: str) -> int:
        value = self._get(key, _MISSING)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{self.where}{key} must be a whole number; got {_shown(value)}")
        return value

    def number(self, key: str) -> float:
        """A finite number (a time: zero is allowed)."""
        value = self._get(key, _MISSING)
        if (
            not isinstance(value, (int, float))
            or isinstance(value, bool)
            or not math.isfinite(value)
        ):
            raise ValueError(f"{self.where}{key} must be a finite number; got {_shown(value)}")
        return float(value)

    def figure(self, key: str) -> float:
        return _figure(self._get(key, _MISSING), self.where + key)

    def figures(self, key: str) -> tuple[float, ...]:
        values = self.items(key)
        if not values:
            raise ValueError(f"{self.where}{key} is empty; a case has figures of both sides")
        return tuple(_figure(v, f"{self.where}{key}[{n}]") for n, v in enumerate(values))


def _case_from_json(item: object, where: str) -> CaseResult:
    read = _Fields(_mapping(item, where), where + ".")
    return CaseResult(
        case=read.text("case"),
        unit=read.text("unit"),
        higher_is_better=read.flag("higher_is_better"),
        a=read.figures("a"),
        b=read.figures("b"),
        a_median=read.figure("a_median"),
        b_median=read.figure("b_median"),
        ratio=read.figure("ratio"),
        ratio_low=read.figure("ratio_low"),
        ratio_high=read.figure("ratio_high"),
        verdict=read.text("verdict"),
    )


# -- keeping and exporting results ---------------------------------------------------------
BACKUPS_KEEP = 5


def bench_dir() -> Path:
    return paths.data_dir() / "bench"


def _new_id(result: BenchResult, folder: Path) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(result.started))
    base = f"{stamp}-{result.plan.workload}"
    ident, n = base, 2
    while (folder / f"{ident}.json").exists():
        ident, n = f"{base}-{n}", n + 1
    return ident


def save_result(result: BenchResult, folder: Path | None = None) -> BenchResult:
    """Keep it (data_dir()/bench/<id>.json, atomic); returns it with ``id`` set. A new
    name each time: nothing saved before is overwritten. A result without a single case
    measured on both sides is refused (PanelError): it would only clutter the list."""
    if not result.cases:
        raise PanelError(
            translate(
                "bench_store",
                "The benchmark result was not saved: no case was measured on both sides, so "
                "there is nothing to compare. The run's errors say what stopped it.",
            )
        )
    folder = folder or bench_dir()
    refused = translate("bench_store", "The benchmark result was not saved")
    with locked(folder / "results", refused=refused):
        saved = dataclasses.replace(result, id=_new_id(result, folder))
        text = json.dumps(saved.to_json(), indent=2, ensure_ascii=False)
        write_atomic(folder / f"{saved.id}.json", text.encode("utf-8"))
    return saved


#: A saved result is a few KiB (50 runs a side with their preset records stay far below
#: 1 MiB); a bigger file is not one the panel wrote.
RESULT_LIMIT = CONFIG_LIMIT


def read_result(path: Path) -> BenchResult:
    """One saved result, read within :data:`RESULT_LIMIT` (regular files only, so a FIFO
    never blocks); ValueError saying why it cannot be read."""
    try:
        data = json.loads(read_bytes(path, RESULT_LIMIT).decode("utf-8"))
    except NotRegularFileError:
        raise ValueError("it is not a regular file") from None
    except TooLargeError:
        raise ValueError(f"it is larger than {size_text(RESULT_LIMIT)}") from None
    except OSError as exc:
        raise ValueError(f"it cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None
    except RecursionError:  # json.loads of a deeply nested [[[[…
        raise ValueError("it nests too deeply to be a benchmark result") from None
    except ValueError as exc:  # json.JSONDecodeError
        raise ValueError(f"it is not valid JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise ValueError("it is not a JSON object")
    try:
        return BenchResult.from_json(data)
    except ValueError as exc:
        raise ValueError(f"it does not have the shape of a benchmark result: {exc}") from None


def load_results(folder: Path | None = None) -> list[BenchResult]:
    """Saved results, newest first; unreadable files are skipped (and logged)."""
    folder = folder or bench_dir()
    try:
        files = sorted(folder.glob("*.json"))  # a FIFO or folder: read_result says so
    except OSError as exc:
        log.warning("benchmark results in %s cannot be listed: %s", folder, exc)
        return []
    results = []
    for path in files:
        try:
            loaded = read_result(path)
        except ValueError as exc:  # the file is left as it is
            log.warning("skipped the benchmark result %s: %s", path, exc)
            continue
        results.append(dataclasses.replace(loaded, id=path.stem))
    results.sort(key=lambda r: (r.started, r.id), reverse=True)
    return results


CSV_COLUMNS = (
    "case",
    "unit",
    "higher_is_better",
    "a_median",
    "b_median",
    "ratio",
    "ratio_low",
    "ratio_high",
    "verdict",
    "a_values",
    "b_values",
    "a_preset",
    "b_preset",
    "device",
    "torch_version",
)


def to_csv(result: BenchResult) -> str:
    """One row per case; each row also names both presets, the device and torch."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in result.cases:
        writer.writerow(
            (
                c.case,
                c.unit,
                "yes" if c.higher_is_better else "no",
                f"{c.a_median:.6g}",
                f"{c.b_median:.6g}",
                f"{c.ratio:.4f}",
                f"{c.ratio_low:.4f}",
                f"{c.ratio_high:.4f}",
                c.verdict,
                " ".join(f"{v:.6g}" for v in c.a),
                " ".join(f"{v:.6g}" for v in c.b),
                result.a_name,
                result.b_name,
                result.device_label,
                result.torch_version,
            )
        )
    return out.getvalue()


def export_result(result: BenchResult, path: Path) -> None:
    """Write .json or .csv (by suffix), atomically, into a folder that exists; a file
    already there is backed up."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        text = json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"
    elif suffix == ".csv":
        text = to_csv(result)
    else:
        raise PanelError(
            translate(
                "bench_store", "{name} cannot be written: a benchmark exports as .json or .csv."
            ).format(name=path.name),
            "Give the file one of those endings.",
        )
    check_out_folder(path)
    backup_file(path, paths.backups_dir(), BACKUPS_KEEP)
    write_atomic(path, text.encode("utf-8"))


def check_out_folder(path: Path) -> None:
    """PanelError when ``path`` cannot be a file to write: its folder is missing (a typo is
    more likely than a wish for new folders, so none is created) or it is a folder."""
    folder = path.parent
    if not folder.is_dir():
        raise PanelError(
            translate(
                "bench_store",
                "{path} cannot be written: the folder {folder} does not exist. Create it first, "
                "or choose a file in a folder that exists.",
            ).format(path=path, folder=folder)
        )
    if path.is_dir():
        raise PanelError(
            translate(
                "bench_store", "{path} cannot be written: it is a folder. Give a file name."
            ).format(path=path)
        )
