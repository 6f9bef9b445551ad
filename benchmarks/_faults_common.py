"""Shared pieces of benchmarks/faults.py: private homes, running the CLI, reading the stores.

Every command runs as ``python -m rocmpanel ...`` in a process group of its own, with HOME
and ROCMPANEL_HOME in a private temp folder (never the real user's files), offscreen Qt and
no XDG overrides. A command that runs past its timeout has its whole group killed and is
reported as a hang, never waited for.

The store checks here are the benchmark's own, written from the file formats rather than
taken from rocmpanel, so that a bug in rocmpanel's parsers cannot hide a torn file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PY = sys.executable
INTERNAL_ERROR = 70  # the CLI's exit code for an unexpected exception (shell/cli.py)

# What a user's ~/.profile holds before rocmpanel ever touches it (its bytes must survive).
USER_PROFILE = (
    b"# ~/.profile of the benchmark's user\n"
    b'if [ -d "$HOME/bin" ]; then PATH="$HOME/bin:$PATH"; fi\n'
    b"export EDITOR=vi\n"
)

BLOCK_BEGIN = "# >>> rocmpanel environment >>>"
BLOCK_END = "# <<< rocmpanel environment <<<"
ENVD_NAME = "60-rocmpanel.conf"
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Home:
    """A private user: ``user`` is HOME, ``panel`` is ROCMPANEL_HOME."""

    root: Path

    @classmethod
    def make(cls, parent: Path, name: str) -> Home:
        root = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=parent))
        home = cls(root)
        home.user.mkdir()
        home.panel.mkdir()
        return home

    @property
    def user(self) -> Path:
        return self.root / "user"

    @property
    def panel(self) -> Path:
        return self.root / "panel"

    @property
    def profile(self) -> Path:
        return self.user / ".profile"

    @property
    def envd(self) -> Path:
        return self.user / ".config" / "environment.d" / ENVD_NAME

    @property
    def config(self) -> Path:
        return self.panel / "config"

    @property
    def data(self) -> Path:
        return self.panel / "data"

    @property
    def journal(self) -> Path:
        return self.data / "env_undo.json"

    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("XDG_", "ROCMPANEL_")) and k not in ("HOME", "PYTHONPATH")
        }
        env.update(HOME=str(self.user), ROCMPANEL_HOME=str(self.panel))
        env["QT_QPA_PLATFORM"] = "offscreen"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        return env

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class Ran:
    """One finished (or killed) command."""

    argv: tuple[str, ...]
    rc: int | None  # None: it ran past its timeout and was killed (a hang)
    out: str
    err: str
    wall: float

    @property
    def hung(self) -> bool:
        return self.rc is None

    @property
    def text(self) -> str:
        return self.out + self.err

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.text

    @property
    def internal_error(self) -> bool:
        return self.rc == INTERNAL_ERROR

    def last_line(self) -> str:
        """The most telling line of its output, for a one-line failure cause."""
        for stream in (self.err, self.out):
            lines = [line.strip() for line in stream.splitlines() if line.strip()]
            if lines:
                return lines[-1][:300]
        return "(no output)"

    def command(self) -> str:
        return "rocmpanel " + " ".join(_shown(a) for a in self.argv)


def _shown(arg: str) -> str:
    return arg if arg and re.fullmatch(r"[A-Za-z0-9_./:=,@%+-]+", arg) else repr(arg)


def cli(args: Sequence[str] = ()) -> list[str]:
    return [PY, "-m", "rocmpanel", *args]


def start(home: Home, args: Sequence[str], cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start ``rocmpanel ARGS`` in its own process group (so a hang can be killed whole)."""
    return subprocess.Popen(
        cli(args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=home.env(),
        cwd=str(cwd or home.root),
        start_new_session=True,
    )


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def finish(
    proc: subprocess.Popen[bytes], args: Sequence[str], started: float, timeout: float
) -> Ran:
    try:
        out, err = proc.communicate(timeout=max(0.0, timeout - (time.perf_counter() - started)))
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        rc = None
    wall = time.perf_counter() - started
    return Ran(
        tuple(args),
        rc,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        wall,
    )


def run(home: Home, args: Sequence[str], timeout: float = 20.0, cwd: Path | None = None) -> Ran:
    """Run ``rocmpanel ARGS`` to the end, or kill it (and its children) at ``timeout``."""
    started = time.perf_counter()
    proc = start(home, args, cwd)
    try:
        return finish(proc, args, started, timeout)
    finally:
        kill_group(proc)  # children a killed or finished command left behind


def make_fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)


def link_to(path: Path, target: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


def write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))


# ---- the stores, read the benchmark's own way ---------------------------------------------


@dataclass
class StoreState:
    """What the two Linux stores and the undo journal hold, and what is wrong with them."""

    profile: dict[str, str] = field(default_factory=dict)
    envd: dict[str, str] = field(default_factory=dict)
    journal: list[Any] = field(default_factory=list)
    torn: list[str] = field(default_factory=list)  # files that do not parse, and why
    raw: dict[str, bytes | None] = field(default_factory=dict)

    def out_of_step(self) -> list[str]:
        """Variables whose value differs between ~/.profile and environment.d."""
        names = sorted(set(self.profile) | set(self.envd))
        return [
            f"{n}: profile={self.profile.get(n)!r} environment.d={self.envd.get(n)!r}"
            for n in names
            if self.profile.get(n) != self.envd.get(n)
        ]


def _read(path: Path) -> bytes | None:
    try:
        if not path.is_file():
            return None if not path.exists() and not path.is_symlink() else b"\0not-a-file"
        return path.read_bytes()
    except OSError:
        return b"\0unreadable"


def _unquote_word(text: str, where: str) -> str:
    """The value of a shell word made of '...', "..." and bare parts; ValueError if torn."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ValueError(f"{where}: unterminated single quote")
            out.append(text[i + 1 : end])
            i = end + 1
        elif char == '"':
            i += 1
            while True:
                if i >= len(text):
                    raise ValueError(f"{where}: unterminated double quote")
                if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in '\\"$`':
                    out.append(text[i + 1])
                    i += 2
                elif text[i] == '"':
                    i += 1
                    break
                else:
                    out.append(text[i])
                    i += 1
        elif char == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        elif char in " \t;&|<>()`":
            raise ValueError(f"{where}: unquoted {char!r} in a value")
        else:
            out.append(char)
            i += 1
    return "".join(out)


def parse_profile_block(data: bytes, user_prefix: bytes | None) -> dict[str, str]:
    """Variables of the managed block; ValueError when the file is torn."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"~/.profile is not UTF-8 ({exc})") from exc
    if user_prefix is not None and not data.startswith(user_prefix):
        raise ValueError("~/.profile lost the user's own lines before the block")
    lines = text.split("\n")
    begins = [i for i, line in enumerate(lines) if line == BLOCK_BEGIN]
    ends = [i for i, line in enumerate(lines) if line == BLOCK_END]
    if not begins and not ends:
        return {}
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise ValueError(f"~/.profile block markers broken ({len(begins)} begin, {len(ends)} end)")
    if not text.endswith("\n"):
        raise ValueError("~/.profile does not end with a newline")
    values: dict[str, str] = {}
    for number, line in enumerate(lines[begins[0] + 1 : ends[0]], start=begins[0] + 2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = re.fullmatch(r"export ([A-Za-z_][A-Za-z0-9_]*)=(.*)", line)
        if match is None:
            raise ValueError(f"~/.profile line {number} in the block is not an export: {line!r}")
        values[match.group(1)] = _unquote_word(match.group(2), f"~/.profile line {number}")
    return values


def parse_envd(data: bytes) -> dict[str, str]:
    """Variables of rocmpanel's environment.d file; ValueError when it is torn."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{ENVD_NAME} is not UTF-8 ({exc})") from exc
    if text and not text.endswith("\n"):
        raise ValueError(f"{ENVD_NAME} does not end with a newline")
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", line)
        if match is None:
            raise ValueError(f"{ENVD_NAME} line {number} is not NAME=VALUE: {line!r}")
        values[match.group(1)] = _unquote_word(match.group(2), f"{ENVD_NAME} line {number}")
    return values


def envd_value(raw: str, environ: dict[str, str] | None = None) -> str:
    """What systemd makes of an unquoted environment.d value: ``$$`` is a literal ``$``,
    ``$NAME`` and ``${NAME}`` (and ``${NAME:-x}``-like forms) expand against ``environ``."""
    environ = environ or {}
    out: list[str] = []
    i = 0
    while i < len(raw):
        if raw[i] != "$" or i + 1 >= len(raw):
            out.append(raw[i])
            i += 1
        elif raw[i + 1] == "$":
            out.append("$")
            i += 2
        elif raw[i + 1] == "{":
            end = raw.find("}", i + 2)
            if end < 0:
                out.append(raw[i:])
                break
            name = re.match(r"[A-Za-z_][A-Za-z0-9_]*", raw[i + 2 : end])
            out.append(environ.get(name.group(0), "") if name else "")
            i = end + 1
        else:
            name = NAME_RE.match(raw, i + 1)
            if name is None:
                out.append("$")
                i += 1
            else:
                out.append(environ.get(name.group(0), ""))
                i = name.end()
    return "".join(out)


def sh_syntax_ok(path: Path) -> str:
    """'' when ``sh -n`` accepts the file, else its complaint."""
    sh = shutil.which("sh")
    if sh is None or not path.is_file():
        return ""
    done = subprocess.run(
        [sh, "-n", str(path)], capture_output=True, text=True, timeout=10, check=False
    )
    return "" if done.returncode == 0 else (done.stderr.strip() or "sh -n failed")[:200]


def read_state(home: Home, user_prefix: bytes | None = USER_PROFILE) -> StoreState:
    """The stores as they are on disk now, each checked for tearing."""
    state = StoreState()
    profile = _read(home.profile)
    envd = _read(home.envd)
    journal = _read(home.journal)
    state.raw = {"profile": profile, "envd": envd, "journal": journal}
    if profile is not None:
        try:
            state.profile = parse_profile_block(profile, user_prefix)
        except ValueError as exc:
            state.torn.append(str(exc))
        else:
            complaint = sh_syntax_ok(home.profile)
            if complaint:
                state.torn.append(f"~/.profile fails sh -n: {complaint}")
    if envd is not None:
        try:
            state.envd = parse_envd(envd)
        except ValueError as exc:
            state.torn.append(str(exc))
    if journal is not None:
        try:
            data = json.loads(journal.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            state.torn.append(f"env_undo.json is not valid JSON ({exc})")
        else:
            entries = data.get("entries") if isinstance(data, dict) else None
            if not isinstance(entries, list):
                state.torn.append("env_undo.json has no list of entries")
            else:
                state.journal = entries
    return state


def temp_leftovers(home: Home) -> list[str]:
    """rocmpanel's temp files (``.<name>.*.tmp``) left in HOME, environment.d or its data."""
    found: list[Path] = []
    for folder in (home.user, home.envd.parent):
        if folder.is_dir():
            found += [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    if home.panel.is_dir():
        found += [p for p in home.panel.rglob("*") if p.name.endswith(".tmp")]
    return sorted(str(p.relative_to(home.root)) for p in found)


def entry_mentions(entry: Any, name: str) -> bool:
    """Whether a journal entry is about variable ``name`` (its summary or its changes)."""
    return re.search(rf"\b{re.escape(name)}\b", json.dumps(entry)) is not None
