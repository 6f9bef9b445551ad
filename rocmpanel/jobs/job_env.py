"""The environment a GPU job gets, on top of the panel's own.

In order, later winning: on Windows, the new values of the user variables the panel
changed in ``HKCU\\Environment`` during this run (the panel's own environment still holds
the old ones: Windows gives new values only to programs Explorer starts afterwards); the
managed environment's own variables (e.g. the HSA_OVERRIDE_GFX_VERSION its build needs on
this GPU); the session store (what the user set for the panel's jobs); then the job's own
``JobSpec.env``. On Windows names are compared case-insensitively (``Path`` is ``PATH``).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Mapping

from rocmpanel.base import registry as base_registry
from rocmpanel.base.registry import find_name
from rocmpanel.envvars.stores import windows as windows_store
from rocmpanel.envvars.stores.session import job_env_overrides
from rocmpanel.jobs import workload
from rocmpanel.jobs.spec import JobSpec

Env = dict[str, str | None]


def _update(env: Env, more: Mapping[str, str | None], windows: bool) -> None:
    """``env.update(more)``; on Windows a name replaces any spelling of it already there."""
    for name, value in more.items():
        while windows and (existing := find_name(env, name)) is not None:
            del env[existing]
        env[name] = value


def registry_env(
    platform: str = sys.platform,
    registry: windows_store.EnvRegistry | None = None,
    expand: Callable[[str], str] | None = None,
) -> Env:
    """On Windows, what a program started now would get for each variable the panel
    changed in HKCU\\Environment during this run (None: it would not have it); empty
    elsewhere, or when nothing was changed. ``registry`` and ``expand``: test seams
    (:func:`rocmpanel.envvars.stores.windows.fresh_values`)."""
    if platform != "win32":
        return {}
    names = windows_store.changed_names()
    if not names:
        return {}
    reg = registry if registry is not None else base_registry.open_registry(platform)
    if reg is None:
        return {}
    return windows_store.fresh_values(names, reg, expand)  # type: ignore[arg-type]


def job_env_for(
    spec: JobSpec,
    *,
    platform: str = sys.platform,
    registry: windows_store.EnvRegistry | None = None,
    expand: Callable[[str], str] | None = None,
) -> Env:
    """The env overrides ``spec`` should run with. PanelError if the session file is bad."""
    windows = platform == "win32"
    env: Env = {}
    fresh = registry_env(platform, registry, expand)
    _update(env, fresh, windows)
    managed = workload.env_for_python(spec.python) if spec.python else None
    if managed is not None:
        _update(env, managed.job_env, windows)
    base: Env = {**os.environ}
    _update(base, fresh, windows)  # session references see the new registry values
    current = {name: value for name, value in base.items() if value is not None}
    _update(env, job_env_overrides(current, platform), windows)
    _update(env, spec.env, windows)
    return env


def with_job_env(spec: JobSpec) -> JobSpec:
    """``spec`` with :func:`job_env_for` applied (for launchers outside the JobManager)."""
    return dataclasses.replace(spec, env=job_env_for(spec))
