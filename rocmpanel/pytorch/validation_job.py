"""The validate job, shared by the PyTorch tab and ``rocmpanel torch validate``: which
interpreter it runs in, its spec, the checks it streams, and the run it ends as. No Qt.
"""

from __future__ import annotations

from collections.abc import Mapping

from rocmpanel.base.errors import PanelError
from rocmpanel.base.frozen import own_python
from rocmpanel.base.settings import Settings
from rocmpanel.jobs import workload
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.protocol import CheckDone
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.pytorch.validation_run import CheckResult, ValidationRun


def validate_spec(
    python: str,
    *,
    gfx: str | None = None,
    sysfs_vram_bytes: int | None = None,
    job_env: Mapping[str, str] | None = None,
    quick: bool = False,
) -> JobSpec:
    """The validate worker in ``python``, checking against the detected gfx and VRAM."""
    args: list[str] = []
    if gfx:
        args += ["--gfx", gfx]
    if sysfs_vram_bytes:
        args += ["--sysfs-vram-bytes", str(sysfs_vram_bytes)]
    if quick:
        args.append("--quick")
    return JobSpec("validate", "validate", tuple(args), python=python, env=dict(job_env or {}))


def resolve_target(
    python: str | None, env_name: str | None, settings: Settings
) -> tuple[str, str | None, dict[str, str]]:
    """(interpreter, managed env name, job env) for ``--python``/``--env``/the setting.

    Reads the environment records: off the GUI thread.
    """
    if env_name:
        env = workload.find_env(env_name)
        if env is None:
            raise PanelError(
                f"No managed environment named {env_name!r}.", "`rocmpanel torch envs` lists them."
            )
        return str(env.python), env.name, dict(env.job_env)
    chosen = python if python is not None else settings.general.workload_python
    found = workload.env_for_python(chosen) if chosen else None
    if found is not None:
        return chosen, found.name, dict(found.job_env)
    return chosen, None, {}


class CheckCollector:
    """Keeps the checks a validate worker reports as it goes (its ``check`` events), so a
    run that dies half-way still shows what it got through."""

    def __init__(self) -> None:
        self.checks: list[CheckResult] = []

    def feed(self, event: object) -> CheckResult | None:
        """The check ``event`` carried (kept), or None when it was another event."""
        if not isinstance(event, CheckDone):
            return None
        check = CheckResult.from_event(event)
        self.checks.append(check)
        return check


_ENDED_EARLY = {
    JobState.CANCELLED: "cancelled",
    JobState.CRASHED: "crashed",
    JobState.FAILED: "failed",
}


def run_from_outcome(
    outcome: JobOutcome,
    collector: CheckCollector,
    *,
    python: str,
    env_name: str | None,
    gfx: str | None,
    preset: str | None = None,
) -> ValidationRun:
    """The run to show and store, whether the worker finished, failed, crashed or was stopped.
    ``preset``: the name of the preset the job was started under (``env_preset``); a
    finished worker's own report of it wins."""
    if outcome.state is JobState.SUCCEEDED and outcome.result is not None:
        return ValidationRun.from_result(
            outcome.result, env_name=env_name, python=python, gfx=gfx, preset=preset
        )
    label = _ENDED_EARLY.get(outcome.state, outcome.state.value)
    text = str(outcome)
    if outcome.error is not None and outcome.error.detail:
        text += "\n" + outcome.error.detail
    if outcome.stderr_tail and outcome.state is not JobState.CRASHED:
        text += "\n" + "\n".join(outcome.stderr_tail)
    return ValidationRun.from_partial(
        collector.checks,
        label,
        text.strip(),
        python=python or own_python(),
        env_name=env_name,
        gfx=gfx,
        preset=preset,
    )
