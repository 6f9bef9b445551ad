"""Linux stores: ``~/.config/environment.d/60-rocmpanel.conf`` and a block in ``~/.profile``.

environment.d reaches programs started from the desktop (the systemd user manager reads it
when the session starts); ``~/.profile`` reaches login shells (ssh, tty). rocmpanel writes
both by default. Only rocmpanel's own file and the marked block are edited.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from pathlib import Path

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.envvars import formats as env_formats
from rocmpanel.envvars.plan import FilePlan, decode, encode
from rocmpanel.envvars.store import (
    KEEP_BACKUPS,
    FileEnvStore,
    read_limited,
    shell_syntax_problem,
)

ENVD_FILE = "60-rocmpanel.conf"

log = logging.getLogger(__name__)


class EnvironmentDStore(FileEnvStore):
    """rocmpanel's own file in ``~/.config/environment.d``."""

    key = "environment.d"
    label = "environment.d"
    help = QT_TRANSLATE_NOOP(
        "stores",
        "~/.config/environment.d/60-rocmpanel.conf: read by the systemd user manager, so "
        "programs started from the desktop get it, from the next login.",
    )

    def __init__(self, home: Path, keep: int = KEEP_BACKUPS) -> None:
        super().__init__(home / ".config" / "environment.d" / ENVD_FILE, keep)

    def parse(self, text: str) -> dict[str, str]:
        return env_formats.parse_environment_d(text)

    def render(
        self,
        old: str | None,
        changes: Sequence[tuple[str, str | None]],
        references: Collection[str] = (),
    ) -> str | None:
        return env_formats.render_environment_d(old, changes, references)

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
                raw = read_limited(other)
            except PanelError:
                continue
            text = decode(raw) or ""
            clash = sorted(set(env_formats.parse_environment_d(text)) & set(ours))
            if clash:
                later.append(
                    translate("stores", "{file} is read after {ours} and sets {names}.").format(
                        file=other.name, ours=ENVD_FILE, names=", ".join(clash)
                    )
                )
        return later


class ProfileStore(FileEnvStore):
    """The managed block in ``~/.profile`` (login shells)."""

    key = "profile"
    label = "~/.profile"
    help = QT_TRANSLATE_NOOP(
        "stores",
        "A block between marker comments at the end of ~/.profile: read by login shells "
        "(ssh, text consoles); everything outside the block is left as it is.",
    )

    def __init__(self, home: Path, keep: int = KEEP_BACKUPS) -> None:
        super().__init__(home / ".profile", keep)
        self.home = home

    def parse(self, text: str) -> dict[str, str]:
        return env_formats.parse_profile(text)

    def render(
        self,
        old: str | None,
        changes: Sequence[tuple[str, str | None]],
        references: Collection[str] = (),
    ) -> str | None:
        return env_formats.render_profile(old, changes, references)

    def check_content(self, plan: FilePlan) -> None:
        """The new ~/.profile must pass ``sh -n``: the block on its own, and the whole file
        unless the user's own lines (the file without the block) already fail on their own."""
        problem = self.syntax_problem(plan.after or b"")
        if problem is not None:
            raise PanelError(
                translate(
                    "stores",
                    "The new {path} would not pass `sh -n` ({problem}), so nothing was "
                    "written. Check the lines between the rocmpanel markers in {path}, or "
                    "choose another value.",
                ).format(path=self.path, problem=problem),
                problem,
            )

    def check_restored_content(self, data: bytes) -> str | None:
        """A backup put back into ~/.profile passes the same ``sh -n`` check as a write."""
        problem = self.syntax_problem(data)
        if problem is None:
            return None
        return translate("stores", "would not pass `sh -n` ({problem})").format(problem=problem)

    def syntax_problem(self, data: bytes) -> str | None:
        """What ``sh -n`` finds wrong with ``data`` as ~/.profile: in rocmpanel's block on
        its own, or in the whole file unless the user's own lines fail without the block."""
        text = decode(data) or ""
        lines = env_formats.split_lines(text)
        try:
            span = env_formats.find_block(lines)
        except env_formats.BlockError:
            span = None
        problem = None
        if span is not None:
            block = "".join(lines[span[0] : span[1] + 1])
            label = f"{self.path} (rocmpanel block)"
            problem = shell_syntax_problem(encode(block) or b"", label)
        if problem is None:
            problem = shell_syntax_problem(data, str(self.path))
            if problem is not None:
                own = text if span is None else "".join(lines[: span[0]] + lines[span[1] + 1 :])
                if shell_syntax_problem(encode(own) or b"", str(self.path)) is not None:
                    log.info("%s does not pass sh -n without rocmpanel's block either.", self.path)
                    return None  # the user's lines fail on their own: not ours to refuse
        return problem

    def notes(self) -> list[str]:
        for name in (".bash_profile", ".bash_login"):
            if (self.home / name).exists():
                return [
                    translate(
                        "stores",
                        "~/{name} exists, so bash login shells read it instead of ~/.profile "
                        "(unless ~/{name} sources ~/.profile).",
                    ).format(name=name)
                ]
        return []
