"""This machine's inputs to the install plan: the GPU to plan for, the base Python, the
mirrors; and :func:`make_plan`, which feeds them to the pure planner. No Qt.

The tab takes the GPU from the app's machine inventory (:func:`machine_from_inventory`);
``rocmpanel torch`` detects it itself (:func:`detect_machine`, blocking).
"""

from __future__ import annotations

import logging
import platform
import subprocess
import sys
from dataclasses import dataclass

from rocmpanel.base import subproc
from rocmpanel.base.frozen import own_python
from rocmpanel.base.i18n import translate
from rocmpanel.base.settings import Settings
from rocmpanel.jobs.spec import resolve_python
from rocmpanel.knowledge.torch_builds import Manifest
from rocmpanel.machine.gpu_model import GpuInfo, SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.pytorch.plan import InstallPlan, Mirrors, plan

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
    return (discrete or with_gfx)[0] if with_gfx else None


def this_os() -> str:
    return "windows" if sys.platform == "win32" else "linux"


def machine_from_system(system: SystemInfo) -> Machine:
    """The plan's view of a detected machine (its GPU to plan for, or why there is none)."""
    gpu = pick_gpu(system)
    os_name = system.os or this_os()
    if gpu is None:
        names = ", ".join(g.name for g in system.gpus) or translate("plan_inputs", "none")
        return Machine(
            os_name,
            None,
            system.rocm_version,
            note=translate(
                "plan_inputs", "No GPU with a known gfx target was found (GPUs seen: {names})."
            ).format(names=names),
        )
    return Machine(os_name, gpu.gfx, system.rocm_version, gpu.name, gpu.vram_bytes)


def machine_from_inventory(inventory: Inventory) -> Machine:
    """The plan's view of the app's machine inventory."""
    return machine_from_system(inventory.system)


def detection_failed(message: str) -> Machine:
    """The machine when detection itself failed: no GPU, and the reason as the note."""
    return Machine(
        this_os(),
        None,
        None,
        note=translate("plan_inputs", "GPU detection failed: {message}").format(message=message),
    )


def detect_machine() -> Machine:
    """Detect the GPU (blocking: rocminfo may take a second; the CLI's way); never raises."""
    try:
        from rocmpanel.machine.detect import detect_system

        system = detect_system()
    except Exception as exc:  # detection is best effort; the plan then says "no GPU"
        log.warning("GPU detection failed", exc_info=True)
        return detection_failed(str(exc))
    return machine_from_system(system)


def mirrors_from(settings: Settings) -> Mirrors:
    return Mirrors(
        pytorch_index=settings.pytorch.index_mirror,
        amd_repo=settings.pytorch.amd_repo_mirror,
        pypi_index=settings.pytorch.pypi_index_url,
    )


def base_python(settings: Settings) -> str:
    """The interpreter new environments are made from."""
    return resolve_python(str(settings.pytorch.base_python))


def base_python_and_version(settings: Settings) -> tuple[str, str | None]:
    """The base Python (a PATH search) and its version (a subprocess): not on the GUI thread."""
    python = base_python(settings)
    return python, python_version_of(python)


def python_version_of(python: str) -> str | None:
    """``X.Y.Z`` of an interpreter (ours without starting a process; others: a subprocess)."""
    if python in ("", own_python()):
        return platform.python_version()
    try:
        out = subproc.run(
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
    python_version: str | None,
    manifest: Manifest,
    gfx: str | None = None,
    rocm: str | None = None,
    os_name: str | None = None,
    index_url: str | None = None,
    profile: str = "pytorch",
) -> InstallPlan:
    """The plan for this machine, with any of its inputs overridden (as the CLI allows),
    for install ``profile`` ("pytorch" or "llm", knowledge.install_profiles).

    Pure: the caller supplies the base Python's version and the manifest (both cost a
    subprocess or a file read, see :func:`python_version_of` and ``load_manifest``).
    """
    return plan(
        gfx or machine.gfx,
        rocm or machine.rocm_version,
        os_name or machine.os,
        python_version,
        manifest,
        mirrors=mirrors_from(settings),
        index_url=index_url or None,
        profile=profile,
    )
