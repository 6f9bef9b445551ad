"""Where rocmpanel keeps things (platformdirs), overridable for tests and portable use.

``ROCMPANEL_HOME`` puts config and data under one folder (tests set it to a temp dir).
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "rocmpanel"


def _home_override() -> Path | None:
    value = os.environ.get("ROCMPANEL_HOME")
    return Path(value) if value else None


def config_dir() -> Path:
    """Folder of settings.yaml and the user's overlay data files."""
    home = _home_override()
    if home is not None:
        return home / "config"
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    """Folder of managed environments, backups, the sqlite database and logs."""
    home = _home_override()
    if home is not None:
        return home / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Folder of things the panel can make again (a translation compiled at first use)."""
    home = _home_override()
    if home is not None:
        return home / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def settings_file() -> Path:
    return config_dir() / "settings.yaml"


def log_dir() -> Path:
    return data_dir() / "logs"


def envs_dir() -> Path:
    """The folder holding one folder per managed environment."""
    return data_dir() / "envs"


def backups_dir() -> Path:
    return data_dir() / "backups"


def database_file() -> Path:
    return data_dir() / "rocmpanel.sqlite3"


def validation_database_file() -> Path:
    return data_dir() / "validation.sqlite3"


def chat_database_file() -> Path:
    return data_dir() / "chat.sqlite3"


def aside(path: Path, tag: str, when: float | None = None) -> Path:
    """A free name beside ``path`` for keeping a damaged file: ``<name>.<tag>-<YYYYmmdd-HHMMSS>``
    (``settings.yaml.bad-20250101-120000``, ``chat.sqlite3.corrupt-…``), with ``-2``, ``-3``…
    added when that name is taken. Nothing is created."""
    import time

    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(when))
    base = f"{path.name}.{tag}-{stamp}"
    candidate = path.with_name(base)
    n = 2
    while os.path.lexists(candidate) or any(
        os.path.lexists(f"{candidate}{suffix}") for suffix in ("-journal", "-wal", "-shm")
    ):
        candidate = path.with_name(f"{base}-{n}")
        n += 1
    return candidate
