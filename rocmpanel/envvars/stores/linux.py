"""Linux stores: ``~/.config/environment.d/60-rocmpanel.conf`` and a block in ``~/.profile``.

environment.d reaches programs started from the desktop (the systemd user manager reads it
when the session starts); ``~/.profile`` reaches login shells (ssh, tty). rocmpanel writes
both by default. Only rocmpanel's own file and the marked block are edited.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rocmpanel.envvars import formats as env_formats
from rocmpanel.envvars.store import KEEP_BACKUPS, FileEnvStore

ENVD_FILE = "60-rocmpanel.conf"


class EnvironmentDStore(FileEnvStore):
    """rocmpanel's own file in ``~/.config/environment.d``."""

    key = "environment.d"
    label = "environment.d"
    help = (
        "~/.config/environment.d/60-rocmpanel.conf: read by the systemd user manager, so "
        "programs started from the desktop get it, from the next login."
    )

    def __init__(self, home: Path, keep: int = KEEP_BACKUPS) -> None:
        super().__init__(home / ".config" / "environment.d" / ENVD_FILE, keep)

    def parse(self, text: str) -> dict[str, str]:
        return env_formats.parse_environment_d(text)

    def render(self, old: str | None, changes: Sequence[tuple[str, str | None]]) -> str | None:
        return env_formats.render_environment_d(old, changes)

    def notes(self) -> list[str]:
        """Files that sort after ours and set the same variables win over ours."""
        ours = self.read().values
        later: list[str] = []
        try:
            others = sorted(p for p in self.path.parent.glob("*.conf") if p.name > ENVD_FILE)
        except OSError:
            return []
        for other in others:
            try:
                text = other.read_bytes().decode("utf-8", "surrogateescape")
            except OSError:
                continue
            clash = sorted(set(env_formats.parse_environment_d(text)) & set(ours))
            if clash:
                later.append(f"{other.name} is read after {ENVD_FILE} and sets {', '.join(clash)}.")
        return later


class ProfileStore(FileEnvStore):
    """The managed block in ``~/.profile`` (login shells)."""

    key = "profile"
    label = "~/.profile"
    help = (
        "A block between marker comments at the end of ~/.profile: read by login shells "
        "(ssh, text consoles); everything outside the block is left as it is."
    )

    def __init__(self, home: Path, keep: int = KEEP_BACKUPS) -> None:
        super().__init__(home / ".profile", keep)
        self.home = home

    def parse(self, text: str) -> dict[str, str]:
        return env_formats.parse_profile(text)

    def render(self, old: str | None, changes: Sequence[tuple[str, str | None]]) -> str | None:
        return env_formats.render_profile(old, changes)

    def notes(self) -> list[str]:
        for name in (".bash_profile", ".bash_login"):
            if (self.home / name).exists():
                return [
                    f"~/{name} exists, so bash login shells read it instead of ~/.profile "
                    f"(unless ~/{name} sources ~/.profile)."
                ]
        return []
