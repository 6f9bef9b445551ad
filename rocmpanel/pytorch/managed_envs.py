"""Managed PyTorch environments under ``data_dir()/envs`` and user-registered interpreters.

An install always goes into a NEW directory; only when it succeeded is the environment's
record written and (optionally) made the active workload Python. A failed or cancelled
install removes its own directory and touches nothing else, so the previous environment
keeps working. A directory without a record is a partial install and never listed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rocmpanel.base import paths
from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.jobs.spec import JobSpec

RECORD = "rocmpanel-env.json"
INTERPRETERS_FILE = "interpreters.json"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")


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


@dataclass(frozen=True)
class InstallTicket:
    """One install in progress: where it goes and what it was asked to do."""

    name: str
    path: Path
    pip_args: tuple[str, ...]
    build_id: str | None = None
    torch_version: str | None = None
    index_url: str | None = None
    job_env: Mapping[str, str] = field(default_factory=dict)


def envs_dir() -> Path:
    return paths.data_dir() / "envs"


def venv_python(env_path: Path, windows: bool | None = None) -> Path:
    win = sys.platform == "win32" if windows is None else windows
    return env_path / ("Scripts/python.exe" if win else "bin/python")


def check_name(name: str) -> str:
    if not _NAME_RE.match(name):
        raise PanelError(
            f"{name!r} is not a usable environment name.",
            "Use letters, digits, '.', '_', '+' or '-' (at most 64, not starting with a dot).",
        )
    return name


def _read_record(path: Path) -> ManagedEnv | None:
    try:
        data = json.loads((path / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return ManagedEnv(
        name=str(data.get("name", path.name)),
        path=path,
        python=venv_python(path),
        created_at=float(data.get("created_at", 0.0)),
        build_id=data.get("build_id"),
        torch_version=data.get("torch_version"),
        index_url=data.get("index_url"),
        installed=dict(data.get("installed") or {}),
        job_env=dict(data.get("job_env") or {}),
    )


def list_envs() -> list[ManagedEnv]:
    """Finished managed environments, newest first."""
    root = envs_dir()
    if not root.is_dir():
        return []
    found = [env for child in root.iterdir() if (env := _read_record(child)) is not None]
    return sorted(found, key=lambda e: e.created_at, reverse=True)


def find_env(name: str) -> ManagedEnv | None:
    return next((e for e in list_envs() if e.name == name), None)


def unique_name(base: str) -> str:
    taken = {child.name for child in envs_dir().iterdir()} if envs_dir().is_dir() else set()
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def check_free_disk(path: Path, needed_bytes: int) -> None:
    """Raise PanelError when the disk holding ``path`` has less than ``needed_bytes`` free."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if free < needed_bytes:
        raise PanelError(
            f"Not enough free disk: the install needs about {needed_bytes / 1e9:.1f} GB, "
            f"{free / 1e9:.1f} GB is free on {probe}.",
            "Free some space, or set ROCMPANEL_HOME to a larger disk.",
        )


def begin_install(
    name: str,
    pip_args: tuple[str, ...] | list[str],
    *,
    needed_bytes: int = 0,
    build_id: str | None = None,
    torch_version: str | None = None,
    index_url: str | None = None,
    job_env: Mapping[str, str] | None = None,
) -> InstallTicket:
    """Check the name and the disk, and reserve a new directory for the install."""
    check_name(name)
    root = envs_dir()
    root.mkdir(parents=True, exist_ok=True)
    target = root / name
    if target.exists():
        raise PanelError(
            f"An environment named {name!r} already exists.",
            "Pick another name, or remove the old environment first.",
        )
    check_free_disk(root, needed_bytes)
    return InstallTicket(
        name, target, tuple(pip_args), build_id, torch_version, index_url, dict(job_env or {})
    )


def install_job_spec(
    ticket: InstallTicket, base_python: str = "", *, isolate_pip_config: bool = True
) -> JobSpec:
    """The pip_install worker job for ``ticket``; it runs in ``base_python`` (its venv's base)."""
    args = ["--env-dir", str(ticket.path)]
    if isolate_pip_config:
        args.append("--isolated-config")
    args += ["--", *ticket.pip_args]
    return JobSpec(f"install {ticket.name}", "pip_install", tuple(args), python=base_python)


def discard(ticket: InstallTicket) -> None:
    """Remove a failed or cancelled install's directory (nothing else)."""
    path = ticket.path
    if path.parent != envs_dir() or not path.exists():
        return
    if (path / RECORD).exists():  # never a finished environment
        return
    shutil.rmtree(path, ignore_errors=True)


def finish_install(ticket: InstallTicket, result: Mapping[str, Any] | None) -> ManagedEnv:
    """Record a successful install (``result`` from the worker) and return the environment."""
    python = venv_python(ticket.path)
    if not python.exists():
        discard(ticket)
        raise PanelError(f"The install left no interpreter at {python}.")
    installed = dict((result or {}).get("installed") or {})
    record = {
        "name": ticket.name,
        "created_at": time.time(),
        "build_id": ticket.build_id,
        "torch_version": installed.get("torch") or ticket.torch_version,
        "index_url": ticket.index_url,
        "installed": installed,
        "pip_args": list(ticket.pip_args),
        "job_env": dict(ticket.job_env),
        "python_version": (result or {}).get("python_version"),
    }
    write_atomic(ticket.path / RECORD, json.dumps(record, indent=2).encode("utf-8"))
    env = _read_record(ticket.path)
    assert env is not None
    return env


def remove_env(name: str) -> ManagedEnv:
    """Delete a managed environment's directory. The caller confirms with the user first."""
    env = find_env(name)
    if env is None:
        raise PanelError(f"No managed environment named {name!r}.")
    if env.path.parent != envs_dir():
        raise PanelError(f"Refusing to delete {env.path}: it is not under {envs_dir()}.")
    # The record goes first: a half-deleted directory is then a partial install, not an env.
    (env.path / RECORD).unlink(missing_ok=True)
    shutil.rmtree(env.path, ignore_errors=True)
    if env.path.exists():
        raise PanelError(f"Could not delete all of {env.path}.")
    return env


def remove_partial() -> list[Path]:
    """Delete directories of installs that never finished (e.g. the panel was killed)."""
    root = envs_dir()
    if not root.is_dir():
        return []
    gone = [c for c in root.iterdir() if c.is_dir() and not (c / RECORD).exists()]
    for child in gone:
        shutil.rmtree(child, ignore_errors=True)
    return gone


# -- registered interpreters ------------------------------------------------------------------
def _interpreters_file() -> Path:
    return paths.config_dir() / INTERPRETERS_FILE


def registered_interpreters() -> list[str]:
    try:
        data = json.loads(_interpreters_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(p) for p in data] if isinstance(data, list) else []


def register_interpreter(python: str) -> str:
    path = Path(python).expanduser()
    if not path.is_file() or not os.access(path, os.X_OK):
        raise PanelError(f"{python} is not an executable file.")
    value = str(path.absolute())
    current = registered_interpreters()
    if value not in current:
        current.append(value)
        write_atomic(_interpreters_file(), json.dumps(current, indent=2).encode("utf-8"))
    return value


def unregister_interpreter(python: str) -> None:
    current = [p for p in registered_interpreters() if p != python]
    write_atomic(_interpreters_file(), json.dumps(current, indent=2).encode("utf-8"))


def interpreters() -> list[Interpreter]:
    """Everything the user can pick: managed environments, then registered interpreters."""
    items = [
        Interpreter(f"{e.name} (torch {e.torch_version or '?'})", str(e.python), True, True)
        for e in list_envs()
    ]
    items += [Interpreter(p, p, False, Path(p).is_file()) for p in registered_interpreters()]
    return items


def env_for_python(python: str) -> ManagedEnv | None:
    return next((e for e in list_envs() if str(e.python) == python), None)


def record_dict(env: ManagedEnv) -> dict[str, Any]:
    data = asdict(env)
    data["path"], data["python"] = str(env.path), str(env.python)
    return data


def activate(settings: Settings, python: str) -> None:
    """Make ``python`` the workload Python (the setting every GPU job uses) and save."""
    settings.general.workload_python = python
    settings.save()
