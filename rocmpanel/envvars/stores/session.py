"""The session store: variables given only to the jobs rocmpanel launches.

Validation runs, benchmarks and chat get these on top of the panel's environment; nothing
else on the computer sees them. Tuning presets use this store. The values live in
``session_env.json`` in the config folder. As in the other stores, values are literal,
except that paths and PATH-like lists keep ``$NAME`` / ``${NAME}`` references, expanded
against the panel's environment when a job starts.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.envvars.catalogue import current_platform, load_catalogue
from rocmpanel.envvars.plan import decode
from rocmpanel.envvars.store import KEEP_BACKUPS, FileEnvStore, read_limited

SESSION_FILE = "session_env.json"
_REF_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


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
    label = "Panel jobs"
    help = (
        "Only the jobs rocmpanel starts (validation, benchmarks, chat) get these; nothing "
        "else on the computer sees them. Takes effect at the next job."
    )
    persistent = False

    def __init__(self, path: Path | None = None, keep: int = KEEP_BACKUPS) -> None:
        super().__init__(path or session_file(), keep)
        self.platform = current_platform()

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
            if value is None:
                values.pop(name, None)
            else:
                values[name] = value
        if old is None and not values:
            return None
        return json.dumps({"version": 1, "variables": values}, indent=2) + "\n"


def expand_references(value: str, base: Mapping[str, str]) -> str:
    """``$NAME`` and ``${NAME}`` replaced from ``base`` (unset names become empty, as in
    environment.d)."""
    return _REF_RE.sub(lambda m: base.get(m.group(1) or m.group(2), ""), value)


def job_env_overrides(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables jobs should get on top of ``base`` (default: this process's environment),
    references expanded. Feed it into ``JobSpec.env``. PanelError when the file is damaged."""
    path = session_file()
    raw = read_limited(path)
    if raw is None:
        return {}
    text = decode(raw) or ""
    try:
        values = _parse(text)
    except ValueError as exc:
        raise PanelError(
            f"The job variables in {path} are damaged: {exc}. Fix or delete the file.", str(exc)
        ) from exc
    environ = os.environ if base is None else base
    catalogue = load_catalogue()
    out = {}
    for name, value in values.items():
        info = catalogue.lookup(name)
        expands = info is not None and info.takes_references
        out[name] = expand_references(value, environ) if expands else value
    return out
