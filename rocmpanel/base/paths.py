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


def settings_file() -> Path:
    return config_dir() / "settings.yaml"


def log_dir() -> Path:
    return data_dir() / "logs"


def backups_dir() -> Path:
    return data_dir() / "backups"


def database_file() -> Path:
    return data_dir() / "rocmpanel.sqlite3"


def validation_database_file() -> Path:
    return data_dir() / "validation.sqlite3"


def chat_database_file() -> Path:
    return data_dir() / "chat.sqlite3"
