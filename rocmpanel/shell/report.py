"""The health report: one typed snapshot of the machine, for a forum post or an issue.

:func:`gather_report` collects what the panel already knows, through each feature's own
logic: the doctor's system, GPUs, verdicts and checklist (``setup.report``), the ROCm and
PyTorch variables the catalogue knows plus the PATH-like ones, the last validation run
(``pytorch.validation_store``), the managed environments (``jobs.workload``) and the
telemetry peaks the caller hands in (``shell.report_peaks``: the Monitor keeps its history
in memory only). It lives in ``shell`` because it reads several features, which never
read each other.

Gathering never raises for a section that cannot be read: the section says "could not
read: ..." and the rest of the report stands. Lists are capped so a report stays a
reasonable paste; what was left out is counted. Nothing is redacted here (the dialog
re-renders with and without user names): ``shell.report_redact`` does that before
rendering. The report's text is English on purpose: it is read by maintainers and forums.
Blocking (detection may run rocminfo, stores are opened): not on the GUI thread.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from rocmpanel import __version__
from rocmpanel.base.enums import CheckStatus
from rocmpanel.base.i18n import english
from rocmpanel.base.units import format_gib
from rocmpanel.machine.inventory import Inventory
from rocmpanel.setup.probe_report import ProbeReport
from rocmpanel.shell.report_env import (  # noqa: F401 (part of this module's interface)
    MAX_PATH_ENTRIES,
    SECRET_LEFT_OUT,
    SECRET_RE,
    EnvLine,
    catalogue_matcher,
    env_lines,
)

MAX_GPUS = 16
MAX_CHECKS = 40
MAX_ENV_VARS = 40
MAX_VALIDATION_CHECKS = 30
MAX_ENVIRONMENTS = 10
MAX_TEXT = 400  # characters of one value or message


@dataclass(frozen=True)
class GpuLine:
    """One GPU with its compatibility verdict."""

    name: str
    gfx: str
    vram: str
    pci_id: str
    slot: str
    kind: str
    verdict: str
    reason: str
    advice: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckLine:
    """One item of the stack checklist, with its fix when it fails or warns."""

    title: str
    status: str
    message: str
    fix: str = ""


@dataclass(frozen=True)
class ValidationSummary:
    """The last validation run: a few facts and its checks (name, status, figure)."""

    title: str
    facts: tuple[str, ...]
    checks: tuple[tuple[str, str, str], ...]
    left_out: int = 0


@dataclass(frozen=True)
class GpuPeaks:
    """The highest figures of one GPU over the telemetry window ("n/a": not reported)."""

    name: str
    samples: int
    busy: str
    vram: str
    temp_edge: str
    temp_junction: str
    temp_mem: str
    power: str


@dataclass(frozen=True)
class TelemetryPeaks:
    """Recent telemetry: ``window`` says over what span; ``host`` the CPU/RAM peaks line."""

    window: str
    gpus: tuple[GpuPeaks, ...]
    host: str = ""


@dataclass(frozen=True)
class EnvironmentLine:
    """One managed PyTorch environment (``problem``: a damaged record)."""

    name: str
    torch: str
    build: str
    created: str
    python: str
    active: bool = False
    problem: str = ""


@dataclass(frozen=True)
class HealthReport:
    """Everything the health report shows. ``problems``: sections that could not be read;
    ``left_out``: what the caps dropped, counted."""

    generated: str
    mode: str  # "live", "demo" or "recorded"
    system: tuple[tuple[str, str], ...]
    gpus: tuple[GpuLine, ...]
    gpu_notes: tuple[str, ...]
    checks: tuple[CheckLine, ...]
    env: tuple[EnvLine, ...]
    validation: ValidationSummary | None
    telemetry: TelemetryPeaks | None
    telemetry_note: str
    environments: tuple[EnvironmentLine, ...]
    workload_python: str
    problems: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()

    @property
    def demo(self) -> bool:
        return self.mode == "demo"


def short(text: object, limit: int = MAX_TEXT) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


T = TypeVar("T")


class _Problems:
    """Collects what could not be read, one sentence per section."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.left_out: list[str] = []

    def attempt(self, what: str, fn: Callable[[], T], default: T) -> T:
        try:
            return fn()
        except Exception as exc:  # a damaged store or file must not sink the whole report
            self.items.append(f"{what}: could not read: {short(exc, 200)}")
            return default

    def cap(self, items: list[T], limit: int, what: str) -> list[T]:
        if len(items) > limit:
            self.left_out.append(f"{len(items) - limit} more {what} left out")
        return items[:limit]


@dataclass(frozen=True)
class _DoctorPart:
    system: tuple[tuple[str, str], ...]
    gpus: tuple[GpuLine, ...]
    notes: tuple[str, ...]
    checks: tuple[CheckLine, ...]


def _doctor_part(
    inventory: Inventory, probe: ProbeReport | None, problems: _Problems
) -> _DoctorPart:
    """What ``rocmpanel doctor`` says about the machine, as report lines."""
    from rocmpanel.setup.report import build_report

    doctor = build_report(inventory.system, inventory.host, probe)
    gpus = [
        GpuLine(
            name=short(gpu.name, 120),
            gfx=gpu.gfx or "n/a",
            vram=format_gib(gpu.vram_bytes),
            pci_id=gpu.pci_id or "n/a",
            slot=gpu.bdf or "n/a",
            kind={True: "integrated", False: "discrete"}.get(bool(gpu.integrated), ""),
            verdict=verdict.status.value + (f" ({verdict.override})" if verdict.override else ""),
            reason=short(verdict.reason),
            advice=tuple(short(a.text) for a in verdict.advice),
        )
        for gpu, verdict in doctor.gpu_rows()
    ]
    checks = [
        CheckLine(
            title=short(c.title, 120),
            status=c.status.value,
            message=short(c.message),
            fix=short(c.fix.text)
            if c.fix and c.status in (CheckStatus.FAIL, CheckStatus.WARN)
            else "",
        )
        for c in doctor.checks
    ]
    system = [
        (
            "OS",
            doctor.system.os
            + (f" ({doctor.system.os_version})" if doctor.system.os_version else ""),
        ),
        ("ROCm", doctor.system.rocm_version or "not found"),
        ("Driver", doctor.system.driver or "n/a"),
    ]
    if doctor.data is not None:
        system.append(("Compatibility data", short(doctor.data.describe(), 200)))
    if probe is not None:
        system.append(("Workload Python probe", short("; ".join(probe.summary_lines()[:2]))))
    return _DoctorPart(
        tuple(system),
        tuple(problems.cap(gpus, MAX_GPUS, "GPUs")),
        tuple(short(n) for n in doctor.system.notes),
        tuple(problems.cap(checks, MAX_CHECKS, "checks")),
    )


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def validation_summary() -> ValidationSummary | None:
    """The newest saved validation run, or None when there is none."""
    from rocmpanel.pytorch.validation_report import STATUS_MARK, counts_text, damaged_text
    from rocmpanel.pytorch.validation_run import COMPLETED
    from rocmpanel.pytorch.validation_store import ValidationStore

    store = ValidationStore()
    runs = store.list_runs(limit=1)
    notice = store.notice
    if not runs:
        return ValidationSummary("none saved", (short(notice),), ()) if notice else None
    run = runs[0]
    if run.damaged is not None:
        return ValidationSummary(f"Run #{run.id}", (damaged_text(run),), ())
    facts = (
        f"Python: {run.python}" + (f" (environment {run.env_name})" if run.env_name else ""),
        f"torch: {run.torch_version or 'n/a'} ({run.build or 'n/a'} build)",
        f"GPU: {run.device_name or 'n/a'}; gfx {run.gfx or 'n/a'}",
        f"Tuning preset: {run.preset}",
        f"Result: {counts_text(run)}" + ("" if run.outcome == COMPLETED else f" ({run.outcome})"),
    )
    checks = [(short(c.name, 120), STATUS_MARK[c.status], short(c.figure, 200)) for c in run.checks]
    left = max(0, len(checks) - MAX_VALIDATION_CHECKS)
    return ValidationSummary(
        f"Run #{run.id}, {_when(run.created_at)}",
        tuple(short(f) for f in facts),
        tuple(checks[:MAX_VALIDATION_CHECKS]),
        left,
    )


def environment_lines(workload_python: str) -> list[EnvironmentLine]:
    """The managed environments (newest first), damaged ones after them."""
    from rocmpanel.jobs.workload import list_envs
    from rocmpanel.pytorch.environments import damaged_envs

    lines = [
        EnvironmentLine(
            name=env.name,
            torch=env.torch_version or "n/a",
            build=env.build_id or "n/a",
            created=_when(env.created_at),
            python=str(env.python),
            active=bool(workload_python) and str(env.python) == workload_python,
        )
        for env in list_envs()
    ]
    lines += [
        EnvironmentLine(d.name, "n/a", "n/a", "", str(d.python), problem=short(d.problem))
        for d in damaged_envs()
    ]
    return lines


def _workload_python() -> str:
    from rocmpanel.base.settings import Settings

    return Settings.load(tell=False).general.workload_python


def _host_lines() -> list[tuple[str, str]]:
    return [
        ("rocmpanel", __version__),
        ("Python (panel)", f"{platform.python_version()} ({sys.platform})"),
        ("Kernel / platform", short(platform.platform(), 120)),
        ("CPU cores", str(os.cpu_count() or "n/a")),
    ]


def detect_machine(environ: Mapping[str, str]) -> Inventory:
    """This machine, or the recorded tree ``ROCMPANEL_SYSFS_ROOT`` names, as the window
    detects it (without importing Qt: the CLI calls this)."""
    from rocmpanel.machine.inventory import detect_inventory

    root = environ.get("ROCMPANEL_SYSFS_ROOT")
    return detect_inventory(environ, sysfs_root=root) if root else detect_inventory(environ)


NO_TELEMETRY = (
    "No telemetry recorded: the panel keeps telemetry in memory while its window runs. "
    "Export the report from the window (File menu) after some minutes of work to include it."
)


@english()  # in a translated window too: the features' messages it reads are English
def gather_report(
    *,
    inventory: Inventory | None = None,
    detect: Callable[[], Inventory] | None = None,
    probe: ProbeReport | None = None,
    demo: bool = False,
    telemetry: TelemetryPeaks | None = None,
    environ: Mapping[str, str] | None = None,
    read_stores: bool = True,
    workload_python: str | None = None,
    now: float | None = None,
) -> HealthReport:
    """Gather the report. ``inventory``: the machine as already detected (the window's);
    else ``detect()`` (default: this machine, or ``ROCMPANEL_SYSFS_ROOT``'s tree).
    ``read_stores``: False reads no validation run nor environment (the CLI's demo, which
    is not this machine). ``workload_python``: None reads it from the settings."""
    problems = _Problems()
    environ = os.environ if environ is None else environ
    if inventory is None:
        inventory = problems.attempt("GPUs", detect or (lambda: detect_machine(environ)), None)
    mode = "demo" if demo else ("live" if inventory is None or inventory.live else "recorded")
    part = _DoctorPart((), (), (), ())
    if inventory is not None:
        machine = inventory
        part = problems.attempt("Checklist", lambda: _doctor_part(machine, probe, problems), part)
    system = [*part.system]
    system += _host_lines()
    known = problems.attempt("Variable catalogue", catalogue_matcher, lambda _name: False)
    env = tuple(problems.cap(env_lines(environ, known), MAX_ENV_VARS, "variables"))
    validation: ValidationSummary | None = None
    environments: list[EnvironmentLine] = []
    if read_stores:
        if workload_python is None:
            workload_python = problems.attempt("Settings", _workload_python, "")
        validation = problems.attempt("Validation history", validation_summary, None)
        environments = problems.attempt(
            "Environments", lambda: environment_lines(workload_python or ""), []
        )
    return HealthReport(
        generated=time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(now)),
        mode=mode,
        system=tuple(system),
        gpus=part.gpus,
        gpu_notes=part.notes,
        checks=part.checks,
        env=env,
        validation=validation,
        telemetry=telemetry,
        telemetry_note="" if telemetry is not None else NO_TELEMETRY,
        environments=tuple(problems.cap(environments, MAX_ENVIRONMENTS, "environments")),
        workload_python=workload_python or "",
        problems=tuple(problems.items),
        left_out=tuple(problems.left_out),
    )
