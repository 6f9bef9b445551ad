"""The workload Python: the interpreter GPU jobs run in, and the interpreters to choose from.

What several features share about it lives here: reading the records of the managed
environments under ``data_dir()/envs`` (a job run in one gets that environment's variables,
e.g. the HSA override its build needs on this GPU), the interpreters the user registered,
and the setting that says which one is active. Creating and deleting managed environments
is the PyTorch feature's business (``rocmpanel.pytorch.environments``).

Every function here reads or writes small files: call them off the GUI thread.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmpanel.base import paths
from rocmpanel.base.atomic import copy_aside, write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import CONFIG_LIMIT, NotRegularFileError, is_regular, read_bytes
from rocmpanel.base.i18n import translate
from rocmpanel.base.locking import locked
from rocmpanel.base.settings import Settings

RECORD = "rocmpanel-env.json"  # written last by an install: a folder without it is partial
INTERPRETERS_FILE = "interpreters.json"


@dataclass(frozen=True)
class ManagedEnv:
    """A finished managed environment (its record file exists)."""

    name: str
    path: Path
    python: Path
    created_at: float
    build_id: str | None = None
    torch_version: str | None = None
    index_url: str | None = None
    installed: Mapping[str, str] = field(default_factory=dict)
    job_env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Interpreter:
    """Something the user can pick as the workload Python."""

    label: str
    python: str
    managed: bool
    exists: bool


# What a headless command says after reporting a workload Python without torch (``probe``
# and ``torch validate``): the commands that install it.
NEXT_STEP_NO_TORCH = (
    "Next: `rocmpanel torch plan` shows the PyTorch build for this GPU, and "
    "`rocmpanel torch install` installs it into a new environment."
)


def envs_dir() -> Path:
    """The folder holding one folder per managed environment."""
    return paths.envs_dir()


def venv_python(env_path: Path, windows: bool | None = None) -> Path:
    """The interpreter of the virtual environment at ``env_path``."""
    win = sys.platform == "win32" if windows is None else windows
    return env_path / ("Scripts/python.exe" if win else "bin/python")


def read_record(path: Path) -> ManagedEnv | None:
    """The environment in folder ``path``, or None when it has no record or a damaged one
    (:func:`check_record` says what is wrong; a damaged environment is never used)."""
    data, problem = _load_record(path)
    if data is None or problem is not None:
        return None
    return ManagedEnv(
        name=data["name"],
        path=path,
        python=venv_python(path),
        created_at=float(data["created_at"]),
        build_id=data.get("build_id"),
        torch_version=data.get("torch_version"),
        index_url=data.get("index_url"),
        installed=dict(data.get("installed") or {}),
        job_env=dict(data.get("job_env") or {}),
    )


_TEXT_FIELDS = ("build_id", "torch_version", "index_url", "python_version")
_TABLE_FIELDS = {"installed": "package versions", "job_env": "variables"}


def _quoted(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def record_problem(data: object) -> str | None:
    """What is wrong with a parsed environment record (as :func:`finish_install` writes
    them), or None when nothing is."""
    if not isinstance(data, dict):
        return f"it holds {type(data).__name__ if data is not None else 'null'}, not a record"
    missing = [key for key in ("name", "created_at") if key not in data]
    if missing:
        return f"it lacks {' and '.join(missing)}"
    if not isinstance(data["name"], str) or not data["name"]:
        return f"name is {_quoted(data['name'])}, not a name"
    created = data["created_at"]
    if (
        isinstance(created, bool)
        or not isinstance(created, (int, float))
        or not math.isfinite(created)
    ):
        return f"created_at is {_quoted(created)}, not a time"
    for key in _TEXT_FIELDS:
        if data.get(key) is not None and not isinstance(data[key], str):
            return f"{key} is {_quoted(data[key])}, not text"
    for key, holds in _TABLE_FIELDS.items():
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            return f"{key} is {_quoted(value)}, not a table of {holds}"
    pip_args = data.get("pip_args")
    if pip_args is not None and (
        not isinstance(pip_args, list) or not all(isinstance(a, str) for a in pip_args)
    ):
        return f"pip_args is {_quoted(pip_args)}, not a list of arguments"
    return None


def _load_record(path: Path) -> tuple[Any, str | None]:
    """The parsed record of the environment folder ``path`` (read without blocking, at most
    a few MiB) and what is wrong with it: (None, None) when there is no record."""
    try:
        raw = read_bytes(path / RECORD, CONFIG_LIMIT)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"it could not be read ({exc.strerror or exc})"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"it is not JSON ({exc})"
    problem = record_problem(data)
    if problem is None and data["name"] != path.name:
        # The folder is the environment's identity (what --remove NAME deletes): a record
        # copied or moved into another folder must not pass for the one it names.
        problem = (
            f"the record names {_quoted(data['name'])} but lives in folder {_quoted(path.name)}"
        )
    return data, problem


def check_record(path: Path) -> str | None:
    """What is wrong with the record of the environment folder ``path``, or None when it is
    sound or absent."""
    return _load_record(path)[1]


def list_envs() -> list[ManagedEnv]:
    """Finished managed environments, newest first."""
    root = envs_dir()
    if not root.is_dir():
        return []
    found = [env for child in root.iterdir() if (env := read_record(child)) is not None]
    return sorted(found, key=lambda e: e.created_at, reverse=True)


def find_env(name: str) -> ManagedEnv | None:
    """The managed environment called ``name``, or None."""
    return next((e for e in list_envs() if e.name == name), None)


def env_for_python(python: str) -> ManagedEnv | None:
    """The managed environment whose interpreter is ``python``, or None."""
    return next((e for e in list_envs() if str(e.python) == python), None)


# -- registered interpreters ------------------------------------------------------------------
INTERPRETERS_BAD_TAG = "bad"  # a damaged list replaced by a register: interpreters.json.bad-<time>
NOT_REGULAR = "it is not a regular file"


def interpreters_file() -> Path:
    """The list of interpreters the user registered (``config/interpreters.json``)."""
    return paths.config_dir() / INTERPRETERS_FILE


_interpreters_file = interpreters_file  # the old private name


def _read_interpreters(path: Path) -> tuple[list[str], str | None]:
    """The registered interpreters in ``path`` and what is wrong with the file (None when
    it is sound or absent; the list is then empty)."""
    try:
        raw = read_bytes(path, CONFIG_LIMIT)
    except FileNotFoundError:
        return [], None
    except NotRegularFileError:
        return [], NOT_REGULAR
    except OSError as exc:
        return [], f"it could not be read ({exc.strerror or exc})"
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return [], "it is not UTF-8 text"
    except ValueError as exc:
        return [], f"it is not JSON ({exc})"
    except RecursionError:
        return [], "it is not JSON (nested too deeply)"
    if not isinstance(data, list) or not all(isinstance(p, str) and p for p in data):
        return [], f"it holds {_quoted(data)}, not a list of interpreter paths"
    return list(data), None


def interpreters_damage() -> str | None:
    """One line for the user when the list of registered interpreters cannot be read (what
    is wrong, that it is ignored, what to do), or None when it is sound or absent."""
    path = interpreters_file()
    problem = _read_interpreters(path)[1]
    if problem is None:
        return None
    if problem == NOT_REGULAR:
        return translate(
            "workload",
            "The list of registered interpreters {path} is not a regular file, so it is "
            "ignored. Move it away to register interpreters again.",
        ).format(path=path)
    return translate(
        "workload",
        "The list of registered interpreters {path} is damaged ({problem}), so it is "
        "ignored. Fix it by hand, or register an interpreter: the damaged file is then kept "
        "as {kept}-<time> and a new list started.",
    ).format(path=path, problem=problem, kept=f"{INTERPRETERS_FILE}.{INTERPRETERS_BAD_TAG}")


def registered_interpreters() -> list[str]:
    """Interpreters the user added to the list, in the order added (none when the file is
    damaged: :func:`interpreters_damage` says so)."""
    return _read_interpreters(interpreters_file())[0]


def _keep_aside(path: Path) -> Path:
    """Copy the damaged list ``path`` to a free ``interpreters.json.bad-<time>`` beside it."""
    target = paths.aside(path, INTERPRETERS_BAD_TAG)
    try:
        copy_aside(path, target)
    except OSError as exc:
        raise PanelError(
            translate(
                "workload",
                "Nothing registered: the damaged {path} could not be kept aside as {target} "
                "({reason}), so it was left as it is. Move it away or fix it, then try again.",
            ).format(path=path, target=target.name, reason=exc.strerror or exc),
            str(exc),
        ) from exc
    return target


def add_interpreter(python: str) -> tuple[str, Path | None]:
    """Add ``python`` to the list (once), under a lock; returns its absolute path and where
    a damaged list was kept before a new one replaced it (None when none was). PanelError
    if ``python`` is unusable or the list cannot be written."""
    path = Path(python).expanduser()
    if not python or not path.is_file() or not os.access(path, os.X_OK):
        raise PanelError(
            translate("workload", "{python} is not an executable file.").format(python=python)
        )
    value = str(path.absolute())
    file = interpreters_file()
    kept: Path | None = None
    with locked(file, refused="Nothing registered"):
        current, problem = _read_interpreters(file)
        if problem is not None:
            if problem == NOT_REGULAR or not is_regular(file):
                raise PanelError(
                    translate(
                        "workload",
                        "Nothing registered: {file} is not a regular file. Move it away, then "
                        "try again.",
                    ).format(file=file)
                )
            kept = _keep_aside(file)
        if value not in current or kept is not None:
            if value not in current:
                current.append(value)
            write_atomic(file, json.dumps(current, indent=2).encode("utf-8"))
    return value, kept


def register_interpreter(python: str) -> str:
    """Add ``python`` to the list (once); returns its absolute path. PanelError if unusable."""
    return add_interpreter(python)[0]


def interpreters() -> list[Interpreter]:
    """Everything the user can pick: managed environments, then registered interpreters."""
    items = [
        Interpreter(
            f"{e.name} (torch {e.torch_version or '?'})", str(e.python), True, e.python.exists()
        )
        for e in list_envs()
    ]
    items += [Interpreter(p, p, False, Path(p).is_file()) for p in registered_interpreters()]
    return items


# -- the active one ---------------------------------------------------------------------------
def activate(settings: Settings, python: str) -> None:
    """Make ``python`` the workload Python (the setting every GPU job uses) and save."""
    settings.general.workload_python = python
    settings.save()
