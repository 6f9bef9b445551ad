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
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rocmpanel.base import paths
from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.errors import PanelError
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


def envs_dir() -> Path:
    """The folder holding one folder per managed environment."""
    return paths.data_dir() / "envs"


def venv_python(env_path: Path, windows: bool | None = None) -> Path:
    """The interpreter of the virtual environment at ``env_path``."""
    win = sys.platform == "win32" if windows is None else windows
    return env_path / ("Scripts/python.exe" if win else "bin/python")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _strings(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def read_record(path: Path) -> ManagedEnv | None:
    """The environment in folder ``path``, or None when it has no readable record."""
    try:
        data = json.loads((path / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    created = data.get("created_at")
    return ManagedEnv(
        name=str(data.get("name", path.name)),
        path=path,
        python=venv_python(path),
        created_at=float(created) if isinstance(created, (int, float)) else 0.0,
        build_id=_text(data.get("build_id")),
        torch_version=_text(data.get("torch_version")),
        index_url=_text(data.get("index_url")),
        installed=_strings(data.get("installed")),
        job_env=_strings(data.get("job_env")),
    )


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
def _interpreters_file() -> Path:
    return paths.config_dir() / INTERPRETERS_FILE


def registered_interpreters() -> list[str]:
    """Interpreters the user added to the list, in the order added."""
    try:
        data = json.loads(_interpreters_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(p) for p in data] if isinstance(data, list) else []


def register_interpreter(python: str) -> str:
    """Add ``python`` to the list (once); returns its absolute path. PanelError if unusable."""
    path = Path(python).expanduser()
    if not path.is_file() or not os.access(path, os.X_OK):
        raise PanelError(f"{python} is not an executable file.")
    value = str(path.absolute())
    current = registered_interpreters()
    if value not in current:
        current.append(value)
        write_atomic(_interpreters_file(), json.dumps(current, indent=2).encode("utf-8"))
    return value


def interpreters() -> list[Interpreter]:
    """Everything the user can pick: managed environments, then registered interpreters."""
    items = [
        Interpreter(f"{e.name} (torch {e.torch_version or '?'})", str(e.python), True, True)
        for e in list_envs()
    ]
    items += [Interpreter(p, p, False, Path(p).is_file()) for p in registered_interpreters()]
    return items


# -- the active one ---------------------------------------------------------------------------
def activate(settings: Settings, python: str) -> None:
    """Make ``python`` the workload Python (the setting every GPU job uses) and save."""
    settings.general.workload_python = python
    settings.save()
