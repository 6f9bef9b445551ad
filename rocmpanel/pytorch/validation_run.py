"""Validation runs as typed records: each check's status, figure and fix id, and the run.

A run comes from the validate worker's result, or, when the worker died, from the checks it
had already reported plus one failed ``crash`` check carrying the error output.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from rocmpanel.base.enums import CheckStatus
from rocmpanel.jobs.job_env import result_preset
from rocmpanel.jobs.presets import NO_PRESET as NO_PRESET  # its users import it from here
from rocmpanel.jobs.protocol import CheckDone

COMPLETED = "completed"  # ValidationRun.outcome of a run that went through every check
# ValidationRun.preset of a run under no tuning preset (or from before them) is NO_PRESET.
DAMAGED = "damaged"  # the outcome of a stored run that cannot be read back


class RunVerdict(str, Enum):
    """A whole run: every check passed or was skipped, some failed, or it ended early."""

    PASS = "pass"
    FAIL = "fail"
    INCOMPLETE = "incomplete"


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class CheckResult:
    """One check of a run: its status, the measured figure, and a fix id on failure."""

    id: str
    name: str
    status: CheckStatus
    figure: str = ""
    value: float | None = None
    unit: str | None = None
    detail: str = ""
    fix_id: str | None = None
    error: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        """A check from the worker's record; an unknown status is a failure."""
        value = data.get("value")
        return cls(
            id=str(data.get("id", "?")),
            name=str(data.get("name", data.get("id", "?"))),
            status=CheckStatus.parse(data.get("status", CheckStatus.FAIL.value)),
            figure=str(data.get("figure") or ""),
            value=float(value) if isinstance(value, (int, float)) else None,
            unit=_text(data.get("unit")),
            detail=str(data.get("detail") or ""),
            fix_id=_text(data.get("fix_id")),
            error=_text(data.get("error")),
        )

    @classmethod
    def from_event(cls, event: CheckDone) -> CheckResult:
        """A check as the worker streamed it (the event's own id, name and status win)."""
        record = {**event.record, "id": event.id, "name": event.name}
        return replace(cls.from_dict(record), status=event.status)


@dataclass(frozen=True)
class ValidationRun:
    """A whole run of the suite in one Python."""

    created_at: float
    python: str
    checks: tuple[CheckResult, ...]
    env_name: str | None = None
    torch_version: str | None = None
    build: str | None = None  # "rocm", "cuda", "cpu", or None when torch did not import
    device_name: str | None = None
    gfx: str | None = None  # the detected gfx the suite checked against
    gcn_arch: str | None = None
    os: str = "linux"
    outcome: str = COMPLETED  # or why the run ended early ("cancelled", "crashed", ...)
    id: int | None = None
    info: Mapping[str, Any] = field(default_factory=dict)
    # What is wrong with a stored run that cannot be read back (None: a sound run).
    damaged: str | None = None
    # The name of the tuning preset the run ran under, so two runs can be compared.
    preset: str = NO_PRESET

    @classmethod
    def damaged_run(cls, run_id: int, problem: str) -> ValidationRun:
        """A stand-in for the stored run ``run_id`` that cannot be read (``problem``)."""
        return cls(0.0, "?", (), id=run_id, outcome=DAMAGED, damaged=problem)

    @property
    def counts(self) -> dict[CheckStatus, int]:
        """How many checks ended in each status (every status present, maybe 0)."""
        return {s: sum(1 for c in self.checks if c.status is s) for s in CheckStatus}

    @property
    def verdict(self) -> RunVerdict:
        if self.outcome != COMPLETED:
            return RunVerdict.INCOMPLETE
        return RunVerdict.FAIL if self.counts[CheckStatus.FAIL] else RunVerdict.PASS

    def check(self, check_id: str) -> CheckResult | None:
        return next((c for c in self.checks if c.id == check_id), None)

    @classmethod
    def from_result(
        cls,
        data: Mapping[str, Any],
        *,
        env_name: str | None = None,
        python: str | None = None,
        gfx: str | None = None,
        preset: str | None = None,
    ) -> ValidationRun:
        """A run from the worker's result payload (its preset wins over ``preset``, what
        the panel started the job under)."""
        checks = tuple(CheckResult.from_dict(c) for c in data.get("checks") or ())
        return cls(
            created_at=float(data.get("started_at") or time.time()),
            python=str(python or data.get("python") or "?"),
            checks=checks,
            env_name=env_name,
            torch_version=_text(data.get("torch_version")),
            build=_text(data.get("build")),
            device_name=_text(data.get("device_name")),
            gfx=gfx or _text(data.get("expected_gfx")),
            gcn_arch=_text(data.get("gcn_arch")),
            os=str(data.get("system") or "linux"),
            info={k: v for k, v in data.items() if k != "checks"},
            preset=result_preset(data) or preset or NO_PRESET,
        )

    @classmethod
    def from_partial(
        cls,
        checks: Sequence[CheckResult],
        outcome: str,
        error_text: str,
        *,
        python: str,
        env_name: str | None = None,
        gfx: str | None = None,
        preset: str | None = None,
    ) -> ValidationRun:
        """The checks a dead or cancelled worker got through, plus one for how it ended."""
        done = [
            *checks,
            CheckResult(
                "crash",
                "Suite finished",
                CheckStatus.FAIL,
                outcome,
                detail=error_text,
                error=error_text,
            ),
        ]
        return cls(
            time.time(),
            python,
            tuple(done),
            env_name=env_name,
            gfx=gfx,
            outcome=outcome,
            preset=preset or NO_PRESET,
        )
