"""The life of a managed PyTorch environment: install it, record it, remove it.

An install always goes into a NEW directory under ``envs_dir()``; only when it succeeded is
the environment's record written (and the caller may make it the active workload Python).
A failed or cancelled install removes its own directory and touches nothing else, so the
previous environment keeps working. A directory without a record is a partial install and
never listed. Reading the records is shared with every job (``rocmpanel.jobs.workload``).

While an install runs, ``envs/.installing/<name>`` names the process doing it (the panel or
the CLI). :func:`remove_partial` (the PyTorch tab runs it when it is built, and
``rocmpanel torch envs --clean``) deletes the folders of installs whose process is gone (the
panel was closed or killed during one) and leaves alone an install still running elsewhere.

Everything here touches the disk (``rmtree`` of gigabytes on removal): not on the GUI thread.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.base.registry import RegistryLike, open_registry
from rocmpanel.base.settings import Settings
from rocmpanel.base.units import format_download
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.jobs.workload import (
    RECORD,
    ManagedEnv,
    check_record,
    envs_dir,
    find_env,
    read_record,
    venv_python,
)
from rocmpanel.machine.long_paths import ENABLE_LONG_PATHS, read_long_paths
from rocmpanel.pytorch.plan import InstallPlan
from rocmpanel.pytorch.plan_inputs import base_python

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
INSTALLING = ".installing"  # envs/.installing/<name>: the process installing <name>


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


def check_name(name: str) -> str:
    """``name`` if it can name an environment folder, else PanelError."""
    if not _NAME_RE.match(name):
        raise PanelError(
            translate("environments", "{name} is not a usable environment name.").format(
                name=repr(name)
            ),
            "Use letters, digits, '.', '_', '+' or '-' (at most 64, not starting with a dot).",
        )
    return name


def _taken() -> set[str]:
    root = envs_dir()
    return {child.name for child in root.iterdir()} if root.is_dir() else set()


def unique_name(base: str) -> str:
    """``base``, or ``base-2``, ``base-3``... whichever no folder under envs/ uses yet."""
    taken = _taken()
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


# -- Windows' path limit ------------------------------------------------------------------
# With long paths off, Windows refuses paths of 260 characters or more (MAX_PATH counts the
# terminating NUL) and directories whose path leaves no room for an 8.3 name (MAX_PATH - 12):
# https://learn.microsoft.com/en-us/windows/win32/fileio/maximum-file-path-limitation
# python.exe is long-path aware (its manifest), so with LongPathsEnabled = 1 pip is not
# limited: https://docs.python.org/3/using/windows.html#removing-the-max-path-limitation
WINDOWS_MAX_FILE = 259  # characters of a file's path
WINDOWS_MAX_DIR = 247  # characters of a directory's path
SITE_PACKAGES = len("\\Lib\\site-packages\\")  # 19: from the environment folder down
# The deepest paths in a torch wheel below site-packages lie in torch-<version>.dist-info/
# licenses/third_party/kineto/... Measured on torch 2.13.0+cpu: 171 characters for a file,
# 160 for a directory; less its 10-character version that leaves these:
TORCH_DEEPEST_FILE = 161
TORCH_DEEPEST_DIR = 150
TORCH_VERSION_ROOM = 24  # the longest version in the data, 2.9.1+rocmsdk20260116, has 21
# The longest environment folder path whose torch install stays within both limits: 54.
ENV_PATH_LIMIT = min(
    WINDOWS_MAX_FILE - SITE_PACKAGES - TORCH_DEEPEST_FILE - TORCH_VERSION_ROOM,
    WINDOWS_MAX_DIR - SITE_PACKAGES - TORCH_DEEPEST_DIR - TORCH_VERSION_ROOM,
)
TORCH_DEPTH = SITE_PACKAGES + TORCH_DEEPEST_FILE + TORCH_VERSION_ROOM  # below the env folder
SHORT_HOME = "C:\\rp"  # suggested for ROCMPANEL_HOME when even a short name does not fit
SHORT_NAME_MIN = 2  # "t1"


def env_path_limit(platform: str = sys.platform, reg: RegistryLike | None = None) -> int | None:
    """The longest environment folder path a PyTorch install fits in, or None when there is
    no such limit: not Windows, or Windows with long paths on (``LongPathsEnabled`` = 1 under
    HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem). A value that cannot be read
    counts as off. ``reg``: the registry (winreg on Windows when not given)."""
    if platform != "win32":
        return None
    if reg is None:
        reg = open_registry(platform)
    return None if read_long_paths(reg).enabled else ENV_PATH_LIMIT


def _too_long(path: Path, limit: int) -> PanelError:
    """The refusal of an environment folder ``path`` longer than ``limit``, with the fix."""
    room = limit - len(str(path.parent)) - 1
    if room >= SHORT_NAME_MIN:
        fix = translate(
            "environments",
            "Use a name of at most {room} characters, or turn on Windows long paths (in an "
            "elevated PowerShell: {command}).",
        ).format(room=room, command=ENABLE_LONG_PATHS)
    else:
        fix = translate(
            "environments",
            "The folder of environments, {folder}, is {length} characters long, which leaves "
            "no room for a name. Turn on Windows long paths (in an elevated PowerShell: "
            "{command}), then restart rocmpanel; or set ROCMPANEL_HOME to a short folder such "
            "as {short}.",
        ).format(
            folder=path.parent,
            length=len(str(path.parent)),
            command=ENABLE_LONG_PATHS,
            short=SHORT_HOME,
        )
    # The fix is part of the message: the panel shows the message only (the detail is logged).
    return PanelError(
        translate(
            "environments",
            "The environment folder {path} is {length} characters long, but with long paths "
            "off Windows refuses paths over {max_file} characters and PyTorch's files lie up "
            "to {depth} characters below that folder: pip would fail (Errno 2 or WinError "
            "206). The folder may be at most {limit} characters long. {fix}",
        ).format(
            path=path,
            length=len(str(path)),
            max_file=WINDOWS_MAX_FILE,
            depth=TORCH_DEPTH,
            limit=limit,
            fix=fix,
        )
    )


def check_env_path(
    path: Path, *, platform: str = sys.platform, reg: RegistryLike | None = None
) -> None:
    """Raise PanelError when a PyTorch install into ``path`` would exceed Windows' path limit
    (long paths off); nothing elsewhere."""
    limit = env_path_limit(platform, reg)
    if limit is not None and len(str(path)) > limit:
        raise _too_long(path, limit)


def default_env_name(
    install_plan: InstallPlan, *, platform: str = sys.platform, reg: RegistryLike | None = None
) -> str:
    """A free name for a new environment of ``install_plan``'s build: its build id (with
    ``-2``... when taken). On Windows with long paths off, when that makes the folder's path
    too long for PyTorch, the first free short name ``t1``, ``t2``... (the record keeps the
    build id); PanelError when even that does not fit."""
    name = unique_name(install_plan.build_id or "torch")
    limit = env_path_limit(platform, reg)
    if limit is None:
        return name
    root = envs_dir()
    room = limit - len(str(root)) - 1
    if len(name) <= room:
        return name
    taken, n = _taken(), 1
    while f"t{n}" in taken:
        n += 1
    short = f"t{n}"
    if len(short) > room:
        raise _too_long(root / short, limit)
    return short


def check_free_disk(path: Path, needed_bytes: int) -> None:
    """Raise PanelError when the disk holding ``path`` has less than ``needed_bytes`` free."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if free < needed_bytes:
        raise PanelError(
            translate(
                "environments",
                "Not enough free disk: the install needs about {needed}, {free} is free on {path}.",
            ).format(needed=format_download(needed_bytes), free=format_download(free), path=probe),
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
    platform: str = sys.platform,
    reg: RegistryLike | None = None,
) -> InstallTicket:
    """Check the name, the path's length (Windows) and the disk, and reserve a new directory
    for the install."""
    check_name(name)
    root = envs_dir()
    target = root / name
    check_env_path(target, platform=platform, reg=reg)  # before anything is created
    root.mkdir(parents=True, exist_ok=True)
    if target.exists():
        raise PanelError(
            translate("environments", "An environment named {name} already exists.").format(
                name=repr(name)
            ),
            "Pick another name, or remove the old environment first.",
        )
    check_free_disk(root, needed_bytes)
    _mark_installing(name)
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


def prepare_install(
    install_plan: InstallPlan,
    name: str,
    settings: Settings,
    *,
    platform: str = sys.platform,
    reg: RegistryLike | None = None,
) -> tuple[InstallTicket, JobSpec]:
    """Reserve a new environment folder for ``install_plan`` and the job that fills it."""
    ticket = begin_install(
        name,
        install_plan.worker_pip_args(),
        needed_bytes=install_plan.free_disk_bytes,
        build_id=install_plan.build_id,
        torch_version=install_plan.torch_version,
        index_url=install_plan.index_url,
        job_env=install_plan.job_env,
        platform=platform,
        reg=reg,
    )
    spec = install_job_spec(
        ticket, base_python(settings), isolate_pip_config=not settings.pytorch.use_pip_config
    )
    return ticket, spec


# -- installs in progress ---------------------------------------------------------------
def _marker(name: str) -> Path:
    return envs_dir() / INSTALLING / name


def _this_process() -> dict[str, Any]:
    import psutil

    return {"pid": os.getpid(), "created": psutil.Process().create_time()}


def _mark_installing(name: str) -> None:
    """Note that this process installs ``name`` (until :func:`discard` or a finish)."""
    write_atomic(_marker(name), json.dumps(_this_process()).encode("utf-8"))


def _unmark(name: str) -> None:
    with contextlib.suppress(OSError):
        _marker(name).unlink(missing_ok=True)


def install_running(name: str) -> bool:
    """Whether a live process (this one included) is installing ``name``."""
    import psutil

    try:
        owner = json.loads(_marker(name).read_text(encoding="utf-8"))
        process = psutil.Process(int(owner["pid"]))
        # the same pid and start time: not another process that got the pid later
        return abs(process.create_time() - float(owner["created"])) < 0.01
    except (OSError, ValueError, TypeError, KeyError, psutil.NoSuchProcess):
        return False
    except psutil.Error:  # it exists but cannot be inspected: assume it is the installer
        return True


def discard(ticket: InstallTicket) -> None:
    """Remove a failed or cancelled install's directory (nothing else)."""
    path = ticket.path
    if path.parent == envs_dir() and path.exists() and not (path / RECORD).exists():
        shutil.rmtree(path, ignore_errors=True)  # never a finished environment
    _unmark(ticket.name)


def settle_install(ticket: InstallTicket, outcome: JobOutcome | None) -> ManagedEnv | None:
    """After an install that nobody watched to its end (the window closed during it):
    record it when it succeeded, else remove its folder (also when ``outcome`` is None, the
    job not having ended in time). Returns the recorded environment, if any."""
    if outcome is not None and outcome.was_successful():
        return finish_install(ticket, outcome.result)
    discard(ticket)
    return None


def finish_install(ticket: InstallTicket, result: Mapping[str, Any] | None) -> ManagedEnv:
    """Record a successful install (``result`` from the worker) and return the environment."""
    python = venv_python(ticket.path)
    if not python.exists():
        discard(ticket)
        raise PanelError(
            translate("environments", "The install left no interpreter at {path}.").format(
                path=python
            )
        )
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
    _unmark(ticket.name)
    env = read_record(ticket.path)
    if env is None:
        raise PanelError(
            translate("environments", "The record of {name} could not be read back.").format(
                name=ticket.name
            ),
            str(ticket.path),
        )
    return env


# -- damaged records ----------------------------------------------------------------------
@dataclass(frozen=True)
class DamagedEnv:
    """A managed environment whose record cannot be trusted (not JSON, a field of the wrong
    type, a field missing): listed as damaged, never used, removable."""

    name: str  # its folder's name
    path: Path
    problem: str  # what is wrong with the record, a sentence without its path

    @property
    def record(self) -> Path:
        return self.path / RECORD

    @property
    def python(self) -> Path:
        return venv_python(self.path)

    @property
    def advice(self) -> str:
        """The fix as the PyTorch tab's Environments list words it (its row's tooltip)."""
        return translate(
            "environments",
            "Repair {record}, or select it and press Remove… to delete the environment.",
        ).format(record=self.record)

    @property
    def cli_advice(self) -> str:
        """The fix as the command line words it."""
        return (
            f"Repair {self.record}, or delete the environment: "
            f"rocmpanel torch envs --remove {self.name}"
        )


def damaged_envs() -> list[DamagedEnv]:
    """Environment folders whose record exists but is damaged, by name."""
    root = envs_dir()
    if not root.is_dir():
        return []
    found = []
    for child in sorted(root.iterdir()):
        if not child.is_dir() or not _NAME_RE.match(child.name):
            continue
        if not os.path.lexists(child / RECORD):
            continue  # a partial install, not an environment
        problem = check_record(child)
        if problem is not None:
            found.append(DamagedEnv(child.name, child, problem))
    return found


def damaged_env(name: str) -> DamagedEnv | None:
    """The damaged environment in folder ``name``, or None."""
    return next((d for d in damaged_envs() if d.name == name), None)


def find_removable(name: str) -> ManagedEnv | DamagedEnv | None:
    """The environment in folder ``name`` (sound or damaged) that :func:`remove_env` would
    delete, or None."""
    return find_env(name) or damaged_env(name)


def remove_env(name: str) -> ManagedEnv | DamagedEnv:
    """Delete a managed environment's directory (also one whose record is damaged). The
    caller confirms with the user first."""
    env = find_removable(name)
    if env is None:
        raise PanelError(
            translate("environments", "No managed environment named {name}.").format(
                name=repr(name)
            )
        )
    if env.path.parent != envs_dir() or env.path.name != name:
        raise PanelError(
            translate("environments", "Refusing to delete {path}: it is not {expected}.").format(
                path=env.path, expected=envs_dir() / name
            )
        )
    # The record goes first: a half-deleted directory is then a partial install, not an env.
    with contextlib.suppress(OSError):  # a record that is a folder goes with the rmtree
        (env.path / RECORD).unlink(missing_ok=True)
    shutil.rmtree(env.path, ignore_errors=True)
    if env.path.exists():
        raise PanelError(
            translate("environments", "Could not delete all of {path}.").format(path=env.path)
        )
    return env


def remove_partial() -> list[Path]:
    """Delete directories of installs that never finished (the panel was closed or killed
    during one); an install a live process is still running is left alone."""
    root = envs_dir()
    if not root.is_dir():
        return []
    gone = [
        child
        for child in root.iterdir()
        if child.is_dir()
        and _NAME_RE.match(child.name)  # not .installing, nor any other hidden folder
        and not (child / RECORD).exists()
        and not install_running(child.name)
    ]
    for child in gone:
        shutil.rmtree(child, ignore_errors=True)
        _unmark(child.name)
    markers = root / INSTALLING
    if markers.is_dir():  # e.g. an install whose process ended before making its folder
        for marker in markers.iterdir():
            if not install_running(marker.name):
                _unmark(marker.name)
    return gone
