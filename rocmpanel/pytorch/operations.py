"""What the PyTorch tab and ``rocmpanel torch`` share: this machine's plan inputs, the
validate job, and turning its events and outcome into a :class:`ValidationRun`. No Qt.
"""

from __future__ import annotations

import json
import logging
import platform
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.protocol import LogLine
from rocmpanel.jobs.spec import JobSpec, resolve_python
from rocmpanel.machine.gpu_model import GpuInfo, SystemInfo
from rocmpanel.pytorch import managed_envs
from rocmpanel.pytorch.manifest import Manifest, load_manifest
from rocmpanel.pytorch.plan import InstallPlan, Mirrors, plan
from rocmpanel.pytorch.validation_store import ValidationRun

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Machine:
    """What the plan needs to know about this machine; ``note`` says what could not be found."""

    os: str
    gfx: str | None
    rocm_version: str | None
    gpu_name: str | None = None
    vram_bytes: int | None = None
    note: str = ""


def pick_gpu(system: SystemInfo) -> GpuInfo | None:
    """The GPU to plan for: the first discrete one with a gfx target, else any with one."""
    with_gfx = [g for g in system.gpus if g.gfx]
    discrete = [g for g in with_gfx if g.integrated is not True]
    return (discrete or with_gfx or [None])[0]


def this_os() -> str:
    return "windows" if sys.platform == "win32" else "linux"


def detect_machine() -> Machine:
    """Detect the GPU (blocking: rocminfo may take a second); never raises."""
    os_name = this_os()
    try:
        from rocmpanel.machine.detect import detect_system

        system = detect_system()
    except Exception as exc:  # detection is best effort; the plan then says "no GPU"
        log.warning("GPU detection failed", exc_info=True)
        return Machine(os_name, None, None, note=f"GPU detection failed: {exc}")
    gpu = pick_gpu(system)
    if gpu is None:
        names = ", ".join(g.name for g in system.gpus) or "none"
        return Machine(
            system.os or os_name,
            None,
            system.rocm_version,
            note=f"No GPU with a known gfx target was found (GPUs seen: {names}).",
        )
    return Machine(system.os or os_name, gpu.gfx, system.rocm_version, gpu.name, gpu.vram_bytes)


def mirrors_from(settings: Settings) -> Mirrors:
    return Mirrors(
        pytorch_index=settings.pytorch.index_mirror,
        amd_repo=settings.pytorch.amd_repo_mirror,
        pypi_index=settings.pytorch.pypi_index_url,
    )


def base_python(settings: Settings) -> str:
    """The interpreter new environments are made from."""
    return resolve_python(str(settings.pytorch.base_python))


def python_version_of(python: str) -> str | None:
    """``X.Y.Z`` of an interpreter (ours without starting a process)."""
    if python in ("", sys.executable):
        return platform.python_version()
    try:
        out = subprocess.run(
            [python, "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def make_plan(
    settings: Settings,
    machine: Machine,
    *,
    gfx: str | None = None,
    rocm: str | None = None,
    os_name: str | None = None,
    python_version: str | None = None,
    index_url: str | None = None,
    manifest: Manifest | None = None,
) -> InstallPlan:
    """The plan for this machine, with any of its inputs overridden (as the CLI allows)."""
    return plan(
        gfx or machine.gfx,
        rocm or machine.rocm_version,
        os_name or machine.os,
        python_version or python_version_of(base_python(settings)),
        manifest or load_manifest(),
        mirrors=mirrors_from(settings),
        index_url=index_url or None,
    )


def default_env_name(install_plan: InstallPlan) -> str:
    base = install_plan.build_id or "torch"
    return managed_envs.unique_name(base)


# -- validation --------------------------------------------------------------------------------
def prepare_install(
    install_plan: InstallPlan, name: str, settings: Settings
) -> tuple[managed_envs.InstallTicket, JobSpec]:
    """Reserve a new environment folder for ``install_plan`` and the job that fills it."""
    ticket = managed_envs.begin_install(
        name,
        install_plan.pip_args,
        needed_bytes=install_plan.free_disk_bytes,
        build_id=install_plan.build_id,
        torch_version=install_plan.torch_version,
        index_url=install_plan.index_url,
        job_env=install_plan.job_env,
    )
    spec = managed_envs.install_job_spec(
        ticket, base_python(settings), isolate_pip_config=not settings.pytorch.use_pip_config
    )
    return ticket, spec


def validate_spec(
    python: str,
    *,
    gfx: str | None = None,
    sysfs_vram_bytes: int | None = None,
    job_env: Mapping[str, str] | None = None,
    quick: bool = False,
) -> JobSpec:
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
    """(interpreter, managed env name, job env) for ``--python``/``--env``/the setting."""
    if env_name:
        env = managed_envs.find_env(env_name)
        if env is None:
            raise PanelError(
                f"No managed environment named {env_name!r}.", "`rocmpanel torch envs` lists them."
            )
        return str(env.python), env.name, dict(env.job_env)
    chosen = python if python is not None else settings.general.workload_python
    env = managed_envs.env_for_python(chosen) if chosen else None
    if env is not None:
        return chosen, env.name, dict(env.job_env)
    return chosen, None, {}


class CheckCollector:
    """Keeps the checks a validate worker reports as it goes (its ``check`` log lines)."""

    def __init__(self) -> None:
        self.checks: list[dict[str, Any]] = []

    def feed(self, event: object) -> bool:
        """True when ``event`` was a check (it should not go to the plain log)."""
        if isinstance(event, LogLine) and event.level == "check":
            try:
                data = json.loads(event.message)
            except ValueError:
                return False
            if isinstance(data, dict):
                self.checks.append(data)
                return True
        return False


def run_from_outcome(
    outcome: JobOutcome,
    collector: CheckCollector,
    *,
    python: str,
    env_name: str | None,
    gfx: str | None,
) -> ValidationRun:
    """The run to show and store, whether the worker finished, failed, crashed or was stopped."""
    if outcome.state is JobState.SUCCEEDED and outcome.result is not None:
        return ValidationRun.from_result(outcome.result, env_name=env_name, python=python, gfx=gfx)
    label = {
        JobState.CANCELLED: "cancelled",
        JobState.CRASHED: "crashed",
        JobState.FAILED: "failed",
    }.get(outcome.state, outcome.state.value)
    text = str(outcome)
    if outcome.error is not None and outcome.error.detail:
        text += "\n" + outcome.error.detail
    if outcome.stderr_tail and outcome.state is not JobState.CRASHED:
        text += "\n" + "\n".join(outcome.stderr_tail)
    return ValidationRun.from_partial(
        collector.checks,
        label,
        text.strip(),
        python=python or sys.executable,
        env_name=env_name,
        gfx=gfx,
    )
