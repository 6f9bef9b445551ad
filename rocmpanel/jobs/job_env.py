"""The environment a GPU job gets, on top of the panel's own.

In order, later winning: on Windows, the new values of the user variables the panel
changed in ``HKCU\\Environment`` during this run (the panel's own environment still holds
the old ones: Windows gives new values only to programs Explorer starts afterwards); the
managed environment's own variables (e.g. the HSA_OVERRIDE_GFX_VERSION its build needs on
this GPU); the tuning preset the job runs under (its environment variables and the
settings header workers read before importing torch, :func:`preset_env`); the session
store (what the user set for the panel's jobs: a variable the user set wins over a
preset's); then the job's own ``JobSpec.env``. On Windows names are compared
case-insensitively (``Path`` is ``PATH``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping

from rocmpanel.base import registry as base_registry
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.base.paths import data_dir
from rocmpanel.base.registry import find_name
from rocmpanel.base.settings import Settings
from rocmpanel.envvars.stores import windows as windows_store
from rocmpanel.envvars.stores.session import job_env_overrides
from rocmpanel.jobs import gpu_choice, presets, workload
from rocmpanel.jobs.spec import GPU_NOTES_VAR, GPUS_VAR, JobSpec

Env = dict[str, str | None]

log = logging.getLogger(__name__)

#: The panel's data folder, for workers (workers/_preset.py keeps TunableOp's results in
#: it, one file per GPU and torch version); set only for a preset with TunableOp.
DATA_DIR_VAR = "ROCMPANEL_DATA_DIR"


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


def _active_from_settings() -> str:
    """The saved active preset ("" = none; a settings file that cannot be read: none)."""
    try:
        return Settings.load(tell=False).general.active_preset
    except Exception as exc:  # a job never fails for the settings file; it says why there
        log.warning("Could not read the active tuning preset (%s); running without one.", exc)
        return ""


def preset_env(spec: JobSpec, platform: str, active: str | None = None) -> Env:
    """The variables the tuning preset of ``spec`` adds: its env items for ``platform``,
    the settings header, and the data dir for TunableOp's results. ``active``: the active
    preset's id (None: read from the saved settings). An explicit unknown ``spec.preset``
    raises PanelError; a preset store that cannot be read, or an active id that no longer
    exists, only logs it: the job runs without a preset. The settings file is read only for
    a job under the active preset (``spec.preset`` None) when ``active`` is not given."""
    if spec.preset == presets.NO_PRESET:
        return {}
    current = ""
    if spec.preset is None:  # only the active preset needs the settings file
        current = active if active is not None else _active_from_settings()
        if not current:
            return {}
    try:
        preset = presets.resolve(spec.preset, current)
    except PanelError:
        if spec.preset is not None:
            raise  # the job asked for this preset by name: say so, do not run without
        log.warning("The active tuning preset %r could not be read; running without.", current)
        return {}
    except Exception as exc:  # a broken store never stops a job
        if spec.preset is not None:
            raise PanelError(
                translate("job_env", "Could not read the tuning preset {preset}: {reason}").format(
                    preset=repr(spec.preset), reason=exc
                )
            ) from exc
        log.warning("The tuning presets could not be read (%s); running without one.", exc)
        return {}
    if preset is None:
        return {}
    env = presets.preset_job_env(preset, "windows" if platform == "win32" else "linux")
    if any(item.key == "tunableop" for item in preset.torch):
        env[DATA_DIR_VAR] = str(data_dir())
    return env


def job_env_for(
    spec: JobSpec,
    *,
    platform: str = sys.platform,
    registry: windows_store.EnvRegistry | None = None,
    expand: Callable[[str], str] | None = None,
    active: str | None = None,
    gpus: gpu_choice.GpuChoice | None = None,
) -> Env:
    """The env overrides ``spec`` should run with. PanelError if the session file is bad
    or ``spec.preset`` names a preset that does not exist. ``active``: the active preset's
    id as the caller knows it ("" = none; None: read from the saved settings). ``gpus``:
    the GPU choice as the caller knows it (None: :func:`gpu_choice.resolve` of
    ``spec.gpus``); it is applied after the session's variables (see :func:`_apply_gpus`)."""
    windows = platform == "win32"
    env: Env = {}
    fresh = registry_env(platform, registry, expand)
    _update(env, fresh, windows)
    managed = workload.env_for_python(spec.python) if spec.python else None
    if managed is not None:
        _update(env, managed.job_env, windows)
    _update(env, preset_env(spec, platform, active), windows)
    base: Env = {**os.environ}
    _update(base, fresh, windows)  # session references see the new registry values
    current = {name: value for name, value in base.items() if value is not None}
    _update(env, job_env_overrides(current, platform), windows)
    choice = gpus if gpus is not None else gpu_choice.resolve(spec.gpus, platform=platform)
    _apply_gpus(env, current, choice, windows)
    _update(env, spec.env, windows)
    return env


def _apply_gpus(
    env: Env, current: Mapping[str, str], choice: gpu_choice.GpuChoice, windows: bool
) -> None:
    """Give the job the chosen GPUs and their label (:data:`GPUS_VAR`). A choice the user
    made wins over visibility variables set in the panel's environment or the session; the
    default choice yields to them (the label then says so)."""
    if not choice.available:
        return  # no AMD GPU the runtime sees: nothing to choose, nothing to say
    label = choice.label
    if choice.env and not choice.explicit:
        merged: Env = {**current}
        _update(merged, env, windows)
        set_by_user = [
            f"{name}={merged[name]}"
            for name in (find_name(merged, n) for n in gpu_choice.VISIBILITY_VARS)
            if name is not None and merged[name] is not None
        ]
        if set_by_user:
            label = f"the GPUs {', '.join(set_by_user)} leaves visible"
            choice = dataclasses.replace(choice, env={})
    notes = " ".join(choice.notes) or None
    _update(env, {**choice.env, GPUS_VAR: label, GPU_NOTES_VAR: notes}, windows)


def env_preset(env: Mapping[str, str | None]) -> str | None:
    """The name of the preset a job's environment carries (its settings header), or None:
    what a job that ended before its result ran under."""
    try:
        header = json.loads(env.get(presets.HEADER_VAR) or "")
    except ValueError:
        return None
    name = header.get("name") if isinstance(header, dict) else None
    return name if isinstance(name, str) and name else None


def result_preset(data: Mapping[str, object]) -> str | None:
    """The name of the preset a worker's result says it ran under (``preset``: {"id",
    "name"}, workers/_preset.py summary()); None without one or when garbled."""
    preset = data.get("preset")
    if not isinstance(preset, Mapping):
        return None
    name = preset.get("name") or preset.get("id")
    return name if isinstance(name, str) and name else None


def with_job_env(spec: JobSpec) -> JobSpec:
    """``spec`` with :func:`job_env_for` applied (for launchers outside the JobManager)."""
    return dataclasses.replace(spec, env=job_env_for(spec))
