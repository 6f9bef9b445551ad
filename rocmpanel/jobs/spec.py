"""What to run for a job, and the pure ``prepare()`` that turns it into an argv.

``prepare`` checks the preconditions (the interpreter exists and is executable, the worker
script exists) and fails with a :class:`PanelError` that says which, before any process
is started.

Two Windows rules live here (``platform`` is a parameter so tests run them anywhere):

- Workers run with ``python.exe``, never ``pythonw.exe``: the ``rocmpanel-gui`` entry runs
  under pythonw.exe, a GUI program, and the console programs a worker under it starts
  (venv, pip, compilers) each get a visible console window, which ``CREATE_NO_WINDOW``
  does not prevent, and closing one kills the install.
- Environment names are case-insensitive. Setting ``Path`` must replace ``PATH``, not add a
  second key: the child would see both and take the first, on Pythons that pass the
  block unsorted and with duplicates (https://github.com/python/cpython/issues/87868;
  later fixed by https://github.com/python/cpython/pull/102731). A name keeps the spelling
  it already has in the environment (``PATH`` stays ``PATH``, so code that reads
  ``env["PATH"]`` finds it); a new name keeps the override's spelling.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rocmpanel.base.errors import PanelError
from rocmpanel.base.frozen import own_python
from rocmpanel.base.i18n import translate
from rocmpanel.workers import worker_script

log = logging.getLogger(__name__)

PYTHONW = "pythonw.exe"
#: The GPUs a job runs on, in words (set by :mod:`rocmpanel.jobs.job_env` from the GPU
#: choice): the jobs strip and the commands show it.
GPUS_VAR = "ROCMPANEL_JOB_GPUS"
#: What the user should know about that choice (a chosen GPU that is gone), or unset.
GPU_NOTES_VAR = "ROCMPANEL_JOB_GPU_NOTES"


@dataclass(frozen=True)
class JobSpec:
    """A job to run: a worker script in a workload interpreter.

    ``env`` adds to (or, with a None value, removes from) the panel's environment; this is
    how session variables and tuning presets reach a job.
    """

    name: str
    worker: str | Path
    args: tuple[str, ...] = ()
    python: str = ""
    env: Mapping[str, str | None] = field(default_factory=dict)
    interactive: bool = False
    cwd: str | None = None
    #: The tuning preset the job runs under: None = the active one (Settings
    #: ``general.active_preset``), ``NO_PRESET`` ("none") = no preset, else a preset id.
    preset: str | None = None
    #: Arguments between the interpreter and the script, e.g. ``("-m",
    #: "torch.distributed.run", "--nproc-per-node=2")`` to start one worker per GPU.
    launcher: tuple[str, ...] = ()
    #: The GPUs the job runs on, by PCI address: None = the saved choice
    #: (:mod:`rocmpanel.jobs.gpu_choice`), () = every GPU the runtime sees.
    gpus: tuple[str, ...] | None = None


@dataclass(frozen=True)
class PreparedJob:
    """The argv and full environment ``prepare`` produced."""

    spec: JobSpec
    argv: tuple[str, ...]
    env: Mapping[str, str]


def resolve_python(python: str, platform: str = sys.platform) -> str:
    """The interpreter to use: ``python`` (a path or a command on PATH) or our own; on
    Windows the console ``python.exe`` next to a ``pythonw.exe``."""
    if not python:
        resolved = own_python(platform)
    elif os.sep in python or (os.altsep and os.altsep in python):
        resolved = python
    else:
        resolved = shutil.which(python) or python
    return console_python(resolved, platform)


def console_python(python: str, platform: str = sys.platform, *, must_exist: bool = True) -> str:
    """``python``, or on Windows the ``python.exe`` in the same folder when ``python`` is
    ``pythonw.exe`` (any case). Without one there, pythonw.exe is kept and the log says why
    console windows may appear (``must_exist`` False: python.exe all the same, for a command
    shown to the user)."""
    lowered = python.lower()
    if platform != "win32" or not (
        lowered == PYTHONW or lowered.endswith(("\\" + PYTHONW, "/" + PYTHONW))
    ):
        return python
    console = python[: -len(PYTHONW)] + "python.exe"
    if not must_exist or Path(console).is_file():
        return console
    log.warning(
        "%s has no python.exe next to it; workers run with pythonw.exe, so the programs they "
        "start (pip, compilers) may open console windows",
        python,
    )
    return python


def set_env(
    env: dict[str, str], name: str, value: str | None, platform: str = sys.platform
) -> None:
    """Set ``name`` in ``env`` to ``value``, or remove it when ``value`` is None. On Windows
    every key equal to ``name`` in any case is replaced or removed, and the name keeps the
    spelling the first such key had; elsewhere names are case-sensitive."""
    if platform != "win32":
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
        return
    # Windows compares names upper-cased (as cpython's fix does), not case-folded.
    upper = name.upper()
    same = [key for key in env if key.upper() == upper]
    for key in same:
        del env[key]
    if value is not None:
        env[same[0] if same else name] = value


def script_path(worker: str | Path) -> Path:
    if isinstance(worker, Path):
        return worker
    return worker_script(worker)


def prepare(
    spec: JobSpec, base_env: Mapping[str, str] | None = None, platform: str = sys.platform
) -> PreparedJob:
    """Build the argv and environment for ``spec``; raise PanelError if it cannot run."""
    python = resolve_python(spec.python, platform)
    path = Path(python)
    if not path.exists():
        raise PanelError(
            translate("spec", "The workload Python {python} does not exist.").format(
                python=repr(python)
            ),
            "Pick another interpreter in Settings or install a managed environment.",
        )
    if path.is_dir() or not os.access(path, os.X_OK):
        raise PanelError(
            translate("spec", "The workload Python {python} is not an executable file.").format(
                python=repr(python)
            )
        )
    script = script_path(spec.worker)
    if not script.is_file():
        raise PanelError(
            translate("spec", "The worker script {script} is missing; reinstall rocmpanel.").format(
                script=script
            )
        )
    env = dict(os.environ if base_env is None else base_env)
    for key, value in spec.env.items():
        set_env(env, key, value, platform)
    # Workers speak UTF-8 JSON lines and must not buffer them.
    set_env(env, "PYTHONUNBUFFERED", "1", platform)
    set_env(env, "PYTHONIOENCODING", "utf-8", platform)
    # A workload venv must not see the panel's own packages through PYTHONPATH.
    set_env(env, "PYTHONPATH", None, platform)
    argv = (python, "-u", *spec.launcher, str(script), *spec.args)
    return PreparedJob(spec, argv, env)
