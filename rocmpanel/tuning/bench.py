"""A/B benchmark of two presets (Qt-free; the CLI and the Tuning tab drive it).

An :class:`ABRun` is a state machine like ChatSession: the driver asks ``next_spec()`` for
the next worker to launch (A, B, A, B, … each in a fresh ``workers/bench.py`` process, the
preset set through ``JobSpec.preset``), feeds each finished run's result event to
``record()`` (or ``failed()``), and reads ``result()`` at the end. The CLI drives it with
jobs.process.JobProcess; the tab with ctx.jobs (so the jobs strip shows and cancels it).

The statistics (medians, the ratio oriented so > 1 means B is better, its spread from each
side's min-max range, the verdict) are in :mod:`rocmpanel.tuning.bench_stats`; the JSON
shapes are described in docs/tuning-json.md. Results are kept one file each in
``data_dir()/bench/<id>.json``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.jobs.presets import NO_PRESET
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.tuning import bench_stats
from rocmpanel.tuning.bench_store import (  # the contract's names, kept importable from here
    BenchPlan,
    BenchResult,
    CaseResult,
    check_out_folder,
    export_result,
    load_results,
    read_result,
    save_result,
)

__all__ = [
    "CHAT_NEEDS_MODEL",
    "DEVICES",
    "MAX_REPS",
    "MIN_REPS",
    "WORKLOADS",
    "ABRun",
    "BenchPlan",
    "BenchResult",
    "CaseResult",
    "check_out_folder",
    "check_plan",
    "env_hash",
    "export_result",
    "load_results",
    "read_result",
    "save_result",
    "worker_args",
]

WORKLOADS: tuple[str, ...] = ("gemm", "sdpa", "alloc", "chat")
#: Where a run may go: the GPU when torch sees one, the CPU, or the GPU ("cuda" is torch's
#: device type for it on ROCm too: docs.pytorch.org notes/hip.html, "HIP Interfaces Reuse
#: the CUDA Interfaces"). The CLI also takes "gpu" for "cuda", as ``chat --device`` does.
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")
MIN_REPS, MAX_REPS = 2, 50
#: The one text for a chat benchmark without a model (the CLI and the tab show it; the
#: worker's copy in workers/bench.py says the same, tested).
CHAT_NEEDS_MODEL = QT_TRANSLATE_NOOP(
    "bench",
    "The chat workload needs a model folder: choose a model in the Chat tab, or pass "
    "--model DIR to `rocmpanel bench`.",
)


def check_plan(plan: BenchPlan) -> None:
    """PanelError saying what is wrong with ``plan`` before anything runs."""
    if plan.workload not in WORKLOADS:
        raise PanelError(
            translate(
                "bench", "Unknown benchmark workload {workload}; choose one of {known}."
            ).format(workload=repr(plan.workload), known=", ".join(WORKLOADS))
        )
    if not MIN_REPS <= plan.reps <= MAX_REPS:
        raise PanelError(
            translate(
                "bench",
                "{reps} repetitions cannot be run: choose {low} to {high} (the spread needs at "
                "least 2 runs of each side).",
            ).format(reps=plan.reps, low=MIN_REPS, high=MAX_REPS)
        )
    if not plan.a or not plan.b:
        raise PanelError(
            translate("bench", 'Both sides of an A/B benchmark need a preset (or "none").')
        )
    if plan.device not in DEVICES:
        raise PanelError(
            translate("bench", "Unknown device {device}; choose auto, cpu or cuda.").format(
                device=repr(plan.device)
            )
        )
    if plan.workload == "chat" and not plan.model:
        raise PanelError(translate("bench", CHAT_NEEDS_MODEL))


def worker_args(plan: BenchPlan) -> tuple[str, ...]:
    """The command-line arguments of ``workers/bench.py`` for ``plan``."""
    args: tuple[str, ...] = ("--workload", plan.workload, "--device", plan.device)
    if plan.quick:
        args += ("--quick",)
    if plan.workload == "chat":
        args += ("--model", plan.model)
    return args


def _expected_id(ident: str) -> str | None:
    return None if ident == NO_PRESET else ident


def _reported_id(summary: object) -> str | None:
    if isinstance(summary, Mapping):
        ident = summary.get("id")
        return str(ident) if ident is not None else None
    return None


def _settings_of(data: Mapping[str, Any]) -> dict[str, str]:
    """The preset's torch settings a worker reported, key -> value as JSON (its notes left
    out: they say what was done, which may differ without the preset differing)."""
    records = data.get("preset_settings")
    found = {}
    for record in records if isinstance(records, list) else []:
        if isinstance(record, Mapping):
            found[str(record.get("key"))] = json.dumps(record.get("value"), sort_keys=True)
    return found


def _differing(first: Mapping[str, object], later: Mapping[str, object]) -> list[str]:
    """The names whose values differ between two mappings (one missing counts)."""
    return sorted(k for k in {*first, *later} if first.get(k, _ABSENT) != later.get(k, _ABSENT))


_ABSENT = object()


def env_hash(env: Mapping[str, str | None]) -> str:
    """First 12 hex digits of the SHA-256 of ``env`` (sorted JSON): kept with each run."""
    text = json.dumps(dict(env), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class _Setup:
    """What the first accepted run of a side ran under; later runs of it must match."""

    number: int
    settings: dict[str, str]
    header_hash: object
    env: dict[str, str | None] | None


class ABRun:
    """Runs A, B, A, B, … ``plan.reps`` times each, one fresh worker per run, and collects
    each case's figures per side. A failed run stops the run; what was measured is kept.

    Each run resolves its preset when its job starts (jobs/job_env.py), so a preset edited
    during the run would be measured half old, half new. ``record`` therefore compares each
    run of a side with that side's first run: the torch settings and header hash the worker
    reports, and, when the driver passes it, the environment the run was launched with on
    top of the panel's own (the preset's variables and header, the user's job variables).
    A difference stops the run, naming what changed."""

    def __init__(self, plan: BenchPlan, a_name: str, b_name: str) -> None:
        check_plan(plan)
        self.plan = plan
        self.a_name, self.b_name = a_name, b_name
        self._order = [side for _ in range(plan.reps) for side in ("A", "B")]
        self._next = 0
        self._pending: str | None = None
        self._done = 0
        self._stopped = False
        self._cancelled = False
        self._figures: dict[str, dict[str, list[float]]] = {}
        self._meta: dict[str, tuple[str, bool]] = {}  # case -> (unit, higher_is_better)
        self._errors: list[str] = []
        self._runs: list[dict[str, Any]] = []
        self._device_label = ""
        self._torch_version = ""
        self._started = time.time()
        self._finished: float | None = None
        self._setups: dict[str, _Setup] = {}

    def _preset_of(self, side: str) -> str:
        return self.plan.a if side == "A" else self.plan.b

    def _name_of(self, side: str) -> str:
        return self.a_name if side == "A" else self.b_name

    def next_spec(self) -> JobSpec | None:
        """The next worker to run, or None when done (or cancelled)."""
        if self._stopped or self._cancelled or self._next >= len(self._order):
            self._finish()
            return None
        side = self._order[self._next]
        self._next += 1
        self._pending = side
        number = (self._next + 1) // 2
        return JobSpec(
            translate("ABRun", "A/B benchmark ({workload}): {side} {name} {number}/{reps}").format(
                workload=self.plan.workload,
                side=side,
                name=self._name_of(side),
                number=number,
                reps=self.plan.reps,
            ),
            "bench",
            worker_args(self.plan),
            python=self.plan.python,
            preset=self._preset_of(side),
        )

    def _finish(self) -> None:
        if self._finished is None:
            self._finished = time.time()

    def _take_pending(self) -> tuple[str, int]:
        if self._pending is None:
            raise RuntimeError("no run was handed out")
        side, self._pending = self._pending, None
        self._done += 1
        return side, (self._next + 1) // 2

    def record(self, data: Mapping[str, Any], env: Mapping[str, str | None] | None = None) -> None:
        """The result event's data of the run ``next_spec`` last handed out. ``env``: the
        launched JobSpec's env (what the jobs layer added: the preset's variables and
        header, the user's job variables); None when the driver does not know it."""
        side, number = self._take_pending()
        where = self._where(side, number)
        expected, reported = _expected_id(self._preset_of(side)), _reported_id(data.get("preset"))
        if reported != expected:
            none = translate("ABRun", "no preset")
            self._stop(
                translate(
                    "ABRun",
                    "{where} did not run under its preset: the worker reported {reported}, not "
                    "{expected}; its figures were not used.",
                ).format(where=where, reported=reported or none, expected=expected or none)
            )
            return
        label, version = str(data.get("device_label", "")), str(data.get("torch_version", ""))
        if self._device_label and (label, version) != (self._device_label, self._torch_version):
            self._stop(
                translate(
                    "ABRun",
                    "{where} ran on {device} with torch {version}, the earlier runs on "
                    "{earlier_device} with torch {earlier_version}; its figures were not used.",
                ).format(
                    where=where,
                    device=label,
                    version=version,
                    earlier_device=self._device_label,
                    earlier_version=self._torch_version,
                )
            )
            return
        changed = self._changed_setup(side, number, data, env)
        if changed:
            self._stop(
                translate(
                    "ABRun",
                    "{where} did not run under the same settings as run {first} of {side}: "
                    "{changed} changed in between (the preset or the panel's job variables were "
                    "edited during the benchmark); its figures were not used. Run the benchmark "
                    "again to compare.",
                ).format(where=where, first=self._setups[side].number, side=side, changed=changed)
            )
            return
        self._device_label, self._torch_version = label, version
        cases = data.get("cases")
        for item in cases if isinstance(cases, list) else []:
            self._add_case(where, side, item)
        self._runs.append(
            {
                "side": side,
                "run": number,
                "preset": data.get("preset"),
                "preset_settings": data.get("preset_settings", []),
                "device": data.get("device"),
                "threads": data.get("threads"),
                "extra": data.get("extra", {}),
                "preset_hash": data.get("preset_hash"),
                "env_hash": env_hash(env) if env is not None else None,
            }
        )

    def _changed_setup(
        self, side: str, number: int, data: Mapping[str, Any], env: Mapping[str, str | None] | None
    ) -> str:
        """ "" when this run of ``side`` ran under what its first run did (the first run
        sets it), else what changed in words ("the torch setting tunableop, MIOPEN_X")."""
        settings = _settings_of(data)
        header_hash = data.get("preset_hash")
        setup = self._setups.get(side)
        if setup is None:
            self._setups[side] = _Setup(
                number, settings, header_hash, dict(env) if env is not None else None
            )
            return ""
        parts = [
            translate("ABRun", "the torch setting {key}").format(key=key)
            for key in _differing(setup.settings, settings)
        ]
        if not parts and header_hash != setup.header_hash:
            parts.append(translate("ABRun", "its preset header"))
        if env is not None and setup.env is not None:
            names = _differing(setup.env, env)
            parts += names[:5]
            if len(names) > 5:
                more = translate("ABRun", "{count} more variables").format(count=len(names) - 5)
                parts.append(more)
        return ", ".join(parts)

    def _add_case(self, where: str, side: str, item: object) -> None:
        if not isinstance(item, Mapping) or not isinstance(item.get("case"), str):
            self._errors.append(
                translate("ABRun", "{where} sent a case the panel cannot read: {case}.").format(
                    where=where, case=repr(item)[:80]
                )
            )
            return
        name, value = item["case"], item.get("value")
        meta = (str(item.get("unit", "")), bool(item.get("higher_is_better", True)))
        if not bench_stats.valid(value):
            self._errors.append(
                translate(
                    "ABRun", "{where}: {case}: {value} is not a figure above zero; left out."
                ).format(where=where, case=name, value=repr(value))
            )
            return
        known = self._meta.setdefault(name, meta)
        if known != meta:
            self._errors.append(
                translate(
                    "ABRun", "{where}: {case}: the unit changed between runs; left out."
                ).format(where=where, case=name)
            )
            return
        self._figures.setdefault(name, {"A": [], "B": []})[side].append(float(value))  # type: ignore[arg-type]

    def _where(self, side: str, number: int) -> str:
        """ "Run 2 of A (Safe defaults)": a run named in a message."""
        return translate("ABRun", "Run {number} of {side} ({name})").format(
            number=number, side=side, name=self._name_of(side)
        )

    def _stop(self, message: str) -> None:
        self._errors.append(message)
        self._stopped = True
        self._finish()

    def failed(self, message: str) -> None:
        """That run failed: stop, keeping what was measured, with ``message``."""
        side, number = self._take_pending()
        self._stop(
            translate("ABRun", "{where} failed: {message}").format(
                where=self._where(side, number), message=message
            )
        )

    def cancel(self) -> None:
        """Stop after (or instead of) the current run; what was measured is kept."""
        if self._cancelled or self._finished is not None:
            return
        self._cancelled = True
        if self._pending is not None:
            self._pending = None
        total = len(self._order)
        self._errors.append(
            translate(
                "ABRun",
                "Cancelled after {done} of {total} runs; the figures are from the runs that "
                "finished.",
            ).format(done=self._done, total=total)
        )
        self._finish()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def stopped(self) -> bool:
        """Whether a failed or refused run stopped the benchmark before its end."""
        return self._stopped

    @property
    def pending_side(self) -> str | None:
        """ "A" or "B": the side of the run ``next_spec`` last handed out and not yet
        recorded (or failed); None when no run is out."""
        return self._pending

    @property
    def progress(self) -> tuple[int, int]:
        """(runs finished, runs planned)."""
        return self._done, len(self._order)

    def result(self) -> BenchResult:
        """What was measured so far, summarised case by case."""
        cases = []
        errors = list(self._errors)
        for name, sides in self._figures.items():
            unit, higher = self._meta[name]
            a, b = tuple(sides["A"]), tuple(sides["B"])
            if not a or not b:
                errors.append(
                    translate("ABRun", "{case}: measured under {side} only; not compared.").format(
                        case=name, side="A" if a else "B"
                    )
                )
                continue
            cases.append(CaseResult.measured(name, unit, higher, a, b))
        return BenchResult(
            plan=self.plan,
            a_name=self.a_name,
            b_name=self.b_name,
            device_label=self._device_label,
            torch_version=self._torch_version,
            started=self._started,
            finished=self._finished if self._finished is not None else time.time(),
            cases=cases,
            errors=errors,
            runs=list(self._runs),
            cancelled=self._cancelled,
        )
