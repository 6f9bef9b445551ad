"""What to run for a job, and the pure ``prepare()`` that turns it into an argv.

``prepare`` checks the preconditions (the interpreter exists and is executable, the worker
script exists) and fails with a :class:`PanelError` that says which, before any process
is started.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rocmpanel.base.errors import PanelError
from rocmpanel.workers import worker_script


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


@dataclass(frozen=True)
class PreparedJob:
    """The argv and full environment ``prepare`` produced."""

    spec: JobSpec
    argv: tuple[str, ...]
    env: Mapping[str, str]


def resolve_python(python: str) -> str:
    """The interpreter to use: ``python`` (a path or a command on PATH) or our own."""
    if not python:
        return sys.executable
    if os.sep in python or (os.altsep and os.altsep in python):
        return python
    found = shutil.which(python)
    return found if found else python


def script_path(worker: str | Path) -> Path:
    if isinstance(worker, Path):
        return worker
    return worker_script(worker)


def prepare(spec: JobSpec, base_env: Mapping[str, str] | None = None) -> PreparedJob:
    """Build the argv and environment for ``spec``; raise PanelError if it cannot run."""
    python = resolve_python(spec.python)
    path = Path(python)
    if not path.exists():
        raise PanelError(
            f"The workload Python {python!r} does not exist.",
            "Pick another interpreter in Settings or install a managed environment.",
        )
    if path.is_dir() or not os.access(path, os.X_OK):
        raise PanelError(f"The workload Python {python!r} is not an executable file.")
    script = script_path(spec.worker)
    if not script.is_file():
        raise PanelError(f"The worker script {script} is missing; reinstall rocmpanel.")
    env = dict(os.environ if base_env is None else base_env)
    for key, value in spec.env.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    # Workers speak UTF-8 JSON lines and must not buffer them.
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    # A workload venv must not see the panel's own packages through PYTHONPATH.
    env.pop("PYTHONPATH", None)
    argv = (python, "-u", str(script), *spec.args)
    return PreparedJob(spec, argv, env)
