"""The environment a launch script carries, each variable explained.

What a panel job would get (:func:`rocmpanel.jobs.job_env.job_env_for`: managed
environment, active tuning preset, the "Panel jobs" variables, the GPU choice) plus the
user's own ``NCCL_*``/``RCCL_*``/``HSA_*``/``GLOO_*`` variables, with a one-line comment
from the variable catalogue. The panel's internal variables (``ROCMPANEL_*``) and anything
that looks like a secret are left out; the preset's torch runtime settings are listed
instead, since only the panel's own workers apply them. Qt-free; used by
:mod:`rocmpanel.multigpu.launch`.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate

#: The user's own variables carried from the process environment: read by RCCL (NCCL_*,
#: RCCL_*), ROCm's runtime (HSA_*) and PyTorch's gloo backend (GLOO_*).
USER_PREFIXES: tuple[str, ...] = ("NCCL_", "RCCL_", "HSA_", "GLOO_")
_SECRET_RE = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class EnvEntry:
    """One variable of a launch script: ``value`` None means the script unsets it."""

    name: str
    value: str | None
    explanation: str
    origin: str = ""


@dataclass(frozen=True)
class LaunchEnv:
    """What :func:`gather_env` found: the variables, the preset's torch runtime settings
    (which a user's script must apply itself), and what was left out and why."""

    entries: tuple[EnvEntry, ...] = ()
    torch_settings: tuple[tuple[str, str], ...] = ()
    preset_name: str = ""
    gpu_label: str = ""
    gpu_count: int = 0
    left_out: tuple[str, ...] = ()


def one_line(text: str) -> str:
    """``text`` as one comment line: control characters and line breaks become spaces."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(?:\s|$)", text)
    return match.group(1) if match else text


def explain(name: str, why: str = "") -> str:
    """One line saying what ``name`` does: the GPU-choice meaning, the catalogue's, the
    preset's ``why``, or what its prefix tells."""
    from rocmpanel.envvars.catalogue import load_catalogue
    from rocmpanel.jobs.gpu_choice import MEANINGS

    if name in MEANINGS:
        return _first_sentence(one_line(MEANINGS[name]))
    try:
        info = load_catalogue().lookup(name)
    except PanelError:
        info = None
    if info is not None and info.meaning:
        return _first_sentence(one_line(info.meaning))
    if why.strip():
        return _first_sentence(one_line(why))
    fallback = {
        "NCCL_": "An NCCL setting; RCCL (ROCm's NCCL) reads NCCL_* names.",
        "RCCL_": "An RCCL setting (ROCm's communication library).",
        "HSA_": "Read by ROCm's runtime (Linux only) when the process starts.",
        "GLOO_": "Read by PyTorch's gloo backend (CPU collectives).",
    }
    for prefix, text in fallback.items():
        if name.startswith(prefix):
            return text + " Not in rocmpanel's catalogue: passed on as you set it."
    return "Set for rocmpanel's jobs; not in rocmpanel's catalogue: passed on as set."


def _internal(name: str) -> bool:
    """The panel's own variables (the preset header, the data folder, the lifeline) and
    Python's, which prepare() sets for workers only."""
    return name.upper().startswith(("ROCMPANEL_", "PYTHON"))


def gather_env(
    *,
    gpus: tuple[str, ...] | None = None,
    python: str = "",
    platform: str = sys.platform,
    environ: Mapping[str, str] | None = None,
    active: str | None = None,
    choice: Any = None,
) -> LaunchEnv:
    """The variables a launch script carries: :func:`job_env_for` of a job on ``gpus``
    (None: the saved choice) in ``python``, then the user's ``USER_PREFIXES`` variables
    from ``environ`` (default: this process's). ``active`` and ``choice``: the active
    preset and GPU choice as the caller knows them (None: read them). PanelError as
    job_env_for (a damaged session file, an unknown preset). Reads files: not on the GUI
    thread."""
    from rocmpanel.jobs import gpu_choice, presets
    from rocmpanel.jobs.job_env import job_env_for, preset_env
    from rocmpanel.jobs.spec import JobSpec

    environ = os.environ if environ is None else environ
    spec = JobSpec(name="launch", worker=Path("launch.py"), python=python, gpus=gpus)
    if choice is None:
        choice = gpu_choice.resolve(gpus, platform=platform)
    env = job_env_for(spec, platform=platform, active=active, gpus=choice)
    from_preset = preset_env(spec, platform, active)
    header = from_preset.get(presets.HEADER_VAR) or env.get(presets.HEADER_VAR) or ""
    preset_name, settings = _header(header)
    whys = _preset_whys(header)
    for user_name, user_value in sorted(environ.items()):
        if user_name.upper().startswith(USER_PREFIXES) and user_name not in env:
            env[user_name] = user_value
    entries: list[EnvEntry] = []
    left_out: list[str] = []
    for name, value in env.items():
        if _internal(name):
            continue
        if _SECRET_RE.search(name) or _NAME_RE.fullmatch(name) is None:
            left_out.append(
                translate("launch_env", "{name}: looks like a secret or is no shell name").format(
                    name=one_line(name)
                )
            )
            continue
        if name in choice.env:
            origin = "GPU choice"
        elif name in from_preset:
            origin = f"preset {preset_name}" if preset_name else "preset"
        elif name in environ and name.upper().startswith(USER_PREFIXES):
            origin = "your environment"
        else:
            origin = "panel jobs"
        entries.append(EnvEntry(name, value, explain(name, whys.get(name, "")), origin))
    return LaunchEnv(
        entries=tuple(entries),
        torch_settings=settings,
        preset_name=preset_name,
        gpu_label=choice.label,
        gpu_count=choice.count,
        left_out=tuple(left_out),
    )


def _header(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The preset's name and its torch settings as (key, JSON value) from the header."""
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return "", ()
    if not isinstance(data, dict):
        return "", ()
    torch = data.get("torch")
    if not isinstance(torch, dict):
        torch = {}
    settings = tuple((str(k), json.dumps(v, sort_keys=True)) for k, v in sorted(torch.items()))
    return one_line(str(data.get("name") or "")), settings


def _preset_whys(header: str) -> dict[str, str]:
    """The active preset's ``why`` of each env item (a fallback explanation)."""
    from rocmpanel.jobs import presets

    name, _ = _header(header)
    if not name:
        return {}
    try:
        for preset in presets.PresetStore().all():
            if preset.name == name:
                return {item.key: item.why for item in preset.env}
    except Exception:  # only explanations: a store that cannot be read costs nothing else
        return {}
    return {}
