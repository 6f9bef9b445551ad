"""The session store: variables given only to the jobs rocmpanel launches.

Validation runs, benchmarks and chat get these on top of the panel's environment; nothing
else on the computer sees them. Tuning presets use this store. The values live in
``session_env.json`` in the config folder. As in the other stores, values are literal,
except that paths and PATH-like lists keep ``$NAME`` / ``${NAME}`` references (on Windows
``%NAME%`` as well), expanded against the panel's environment when a job starts.

On Windows variable names are case-insensitive: ``Path`` and ``PATH`` are one variable in
the file, in the references and in what jobs get (before Python 3.13 a second spelling in
a child's environment could be the one Windows takes: cpython issue 87868).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.registry import find_name
from rocmpanel.envvars.catalogue import current_platform, load_catalogue
from rocmpanel.envvars.plan import decode
from rocmpanel.envvars.store import KEEP_BACKUPS, FileEnvStore, read_limited

SESSION_FILE = "session_env.json"
_REF_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_WINDOWS_REF_RE = re.compile(
    r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)|%([^%;]+)%"
)


def session_file() -> Path:
    return paths.config_dir() / SESSION_FILE


def _parse(text: str) -> dict[str, str]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not valid JSON ({exc})") from exc
    variables = data.get("variables") if isinstance(data, dict) else None
    if not isinstance(variables, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in variables.items()
    ):
        raise ValueError('expected {"variables": {"NAME": "value", ...}}')
    return dict(variables)


class SessionStore(FileEnvStore):
    """Variables for panel jobs only."""

    key = "session"
    label = QT_TRANSLATE_NOOP("stores", "Panel jobs")
    help = QT_TRANSLATE_NOOP(
        "stores",
        "Only the jobs rocmpanel starts (validation, benchmarks, chat) get these; nothing "
        "else on the computer sees them. Takes effect at the next job.",
    )
    persistent = False

    def __init__(
        self, path: Path | None = None, keep: int = KEEP_BACKUPS, platform: str | None = None
    ) -> None:
        """``platform``: "windows" or "linux" (default: this computer's)."""
        super().__init__(path or session_file(), keep)
        self.platform = platform or current_platform()

    def parse(self, text: str) -> dict[str, str]:
        return _parse(text)

    def render(
        self,
        old: str | None,
        changes: Sequence[tuple[str, str | None]],
        references: Collection[str] = (),
    ) -> str | None:
        values = _parse(old) if old is not None else {}
        for name, value in changes:
            if self.platform == "windows":  # PATH edits the "Path" that is there
                name = _spelled(values, name)
            if value is None:
                values.pop(name, None)
            else:
                values[name] = value
        if old is None and not values:
            return None
        return json.dumps({"version": 1, "variables": values}, indent=2) + "\n"


def _spelled(values: Mapping[str, str], name: str) -> str:
    """The spelling ``values`` already has for ``name``, compared case-insensitively."""
    return find_name(values, name) or name


def expand_references(value: str, base: Mapping[str, str], platform: str = "linux") -> str:
    """``$NAME`` and ``${NAME}`` replaced from ``base`` (unset names become empty, as in
    environment.d). On Windows (``platform`` "win32") names are compared case-insensitively
    and ``%NAME%`` is replaced too; an unset ``%NAME%`` stays as it is, as Windows leaves it."""
    if platform != "win32":
        return _REF_RE.sub(lambda m: base.get(m.group(1) or m.group(2), ""), value)
    upper = {name.upper(): text for name, text in base.items()}

    def one(match: re.Match[str]) -> str:
        if match.group(3) is not None:
            return upper.get(match.group(3).upper(), match.group(0))
        return upper.get((match.group(1) or match.group(2)).upper(), "")

    return _WINDOWS_REF_RE.sub(one, value)


def job_env_overrides(
    base: Mapping[str, str] | None = None, platform: str = sys.platform
) -> dict[str, str]:
    """The variables jobs should get on top of ``base`` (default: this process's environment),
    references expanded. Feed it into ``JobSpec.env``. PanelError when the file is damaged.

    On Windows (``platform`` "win32") names are one variable whatever their case: a file
    holding both ``Path`` and ``PATH`` gives one of them (the later), and references find
    ``Path`` in ``base`` as ``%PATH%``."""
    path = session_file()
    raw = read_limited(path)
    if raw is None:
        return {}
    text = decode(raw) or ""
    try:
        values = _parse(text)
    except ValueError as exc:
        raise PanelError(
            translate(
                "stores",
                "The job variables in {path} are damaged: {error}. Fix or delete the file.",
            ).format(path=path, error=exc),
            str(exc),
        ) from exc
    environ = os.environ if base is None else base
    windows = platform == "win32"
    catalogue = load_catalogue()
    out: dict[str, str] = {}
    for name, value in values.items():
        info = catalogue.lookup(name.upper() if windows else name)
        expands = info is not None and info.takes_references
        if windows:
            out.pop(_spelled(out, name), None)
        out[name] = expand_references(value, environ, platform) if expands else value
    return out
