"""API keys that guard the panel's local servers: made once, kept private.

Each server has its own key (``SERVE``: the OpenAI-compatible server; ``TELEMETRY``: the
Prometheus telemetry page). A key lives in ``<config>/<name>/api-key`` (one line), made
on first use from :mod:`secrets`, written atomically with mode 0600 in a folder with mode
0700, under the store lock, so two panels starting at once end with the same key.
Reading never blocks and never trusts the file: anything that is not a plain file holding
one printable key (a FIFO, a folder, a symbolic link, bytes that are not UTF-8, an empty
or overlong file) is moved aside (``api-key.bad-<time>``), never overwritten, and a new
key is made.
A key file that other users could read is set back to 0600, and the note says so (the
key may have been seen: :func:`regenerate` makes a new one, keeping a backup of the old).
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from rocmpanel.base import paths
from rocmpanel.base.atomic import backup_file, os_detail, write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import kind_of, read_bytes
from rocmpanel.base.locking import locked

KEY_PREFIX = "rp-"
KEY_BYTES = 32  # token_urlsafe(32): 43 characters, 256 random bits
MIN_KEY_LENGTH = 16  # a key given by hand (--api-key) is refused below this
MAX_KEY_LENGTH = 512
READ_LIMIT = 4096
FILE_MODE = 0o600
FOLDER_MODE = 0o700
BAD_TAG = "bad"
BACKUPS_KEEP = 5
REFUSED = "The API key could not be saved"
SERVE = "serve"
TELEMETRY = "telemetry"
# What a key may hold: printable ASCII without spaces (it goes in an HTTP header).
_KEY_RE = re.compile(r"^[\x21-\x7e]+$")


@dataclass(frozen=True)
class ApiKey:
    """The key, where it is stored, whether this call made it, and what was fixed or kept
    aside on the way ("" when nothing was)."""

    value: str
    path: Path
    created: bool
    note: str = ""

    @property
    def masked(self) -> str:
        """The key with all but its ends hidden, for a status line or a log."""
        return mask(self.value)


def mask(value: str) -> str:
    """``rp-AbCd…wxyz``: enough to tell two keys apart, not enough to use one."""
    if len(value) < MIN_KEY_LENGTH:
        return "…"
    head = len(KEY_PREFIX) + 4 if value.startswith(KEY_PREFIX) else 4
    return f"{value[:head]}…{value[-4:]}"


def key_file(name: str = SERVE) -> Path:
    """``<config>/<name>/api-key``."""
    return paths.config_dir() / name / "api-key"


def new_key() -> str:
    """A fresh key: ``rp-`` and 43 URL-safe characters from :func:`secrets.token_urlsafe`."""
    return KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)


def key_problem(value: str) -> str | None:
    """Why ``value`` cannot be an API key, or None (used for keys given by hand too)."""
    if not value:
        return "it is empty"
    if len(value) < MIN_KEY_LENGTH:
        return f"it has {len(value)} characters; a key needs at least {MIN_KEY_LENGTH}"
    if len(value) > MAX_KEY_LENGTH:
        return f"it has {len(value)} characters; a key has at most {MAX_KEY_LENGTH}"
    if not _KEY_RE.match(value):
        return "it holds spaces or characters other than printable ASCII"
    return None


def _posix_permissions() -> bool:
    """Whether file modes mean anything here (not on Windows, where chmod only sets the
    read-only flag and the user's profile folder is what keeps the file private)."""
    return os.name != "nt"


def _read(path: Path) -> tuple[str | None, str]:
    """(the key, "") or (None, why the file cannot be used); (None, "") when there is none.
    Only ``lstat`` looks at the entry before a non-blocking open of a regular file."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        raise PanelError(
            f"The API key file {path} cannot be read ({exc.strerror or exc}). "
            "Check the permissions of its folder.",
            os_detail(exc),
        ) from exc
    if not stat.S_ISREG(info.st_mode):
        return None, f"it is {kind_of(info.st_mode)}, not a plain file"
    try:
        data = read_bytes(path, READ_LIMIT)
    except PermissionError as exc:
        raise PanelError(
            f"The API key file {path} cannot be read ({exc.strerror}). Give your user read "
            "and write permission on it, or remove it to make a new key.",
            os_detail(exc),
        ) from exc
    except OSError as exc:  # larger than the limit, or it changed kind since the lstat
        return None, str(exc)
    try:
        text = data.decode("utf-8-sig")  # a BOM (Notepad) is no part of the key
    except UnicodeDecodeError:
        return None, "it is not UTF-8 text"
    value = text.strip()
    problem = key_problem(value)
    if problem is not None:
        return None, problem
    return value, ""


def _keep_aside(path: Path, why: str) -> str:
    """Move the unusable entry at ``path`` to a free ``api-key.bad-<time>`` (a rename: the
    entry itself, whatever it is, is kept as it was); the note saying so."""
    target = paths.aside(path, BAD_TAG)
    try:
        os.replace(path, target)
    except OSError as exc:
        raise PanelError(
            f"{REFUSED}: {path} cannot be used ({why}) and could not be moved aside "
            f"({exc.strerror or exc}). Move it away yourself, then try again.",
            os_detail(exc),
        ) from exc
    return f"The API key file {path} could not be used ({why}); it was kept as {target.name}."


def _private_folder(folder: Path) -> None:
    try:
        folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        if _posix_permissions() and stat.S_IMODE(folder.stat().st_mode) & 0o077:
            os.chmod(folder, FOLDER_MODE)
    except OSError as exc:
        raise PanelError(
            f"{REFUSED}: the folder {folder} could not be made private "
            f"({exc.strerror or exc}). Check its permissions.",
            os_detail(exc),
        ) from exc


def _fix_mode(path: Path) -> str:
    """Set a key file other users can read or write back to 0600; the note, or ""."""
    if not _posix_permissions():
        return ""
    try:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
        if not mode & 0o077:
            return ""
        os.chmod(path, FILE_MODE)
    except OSError as exc:
        raise PanelError(
            f"The API key file {path} is open to other users and its permissions could not "
            f"be set to 0600 ({exc.strerror or exc}). Run: chmod 600 {path}",
            os_detail(exc),
        ) from exc
    return (
        f"The API key file {path} had permissions {mode:04o} (other users could read it); "
        "they were set to 0600. If someone else may have read the key, make a new one."
    )


def _write(path: Path, value: str) -> None:
    write_atomic(path, (value + "\n").encode("ascii"), mode=FILE_MODE, follow_symlinks=False)


def _created_note(path: Path) -> str:
    if _posix_permissions():
        return ""
    return (
        f"The API key is stored in {path}, inside your user profile: Windows keeps it "
        "private to your account through the profile's permissions."
    )


def _join(*notes: str) -> str:
    return " ".join(n for n in notes if n)


def load_or_create(name: str = SERVE) -> ApiKey:
    """The stored key of server ``name``, or a new one saved first (PanelError, with the
    fix, when neither can be done)."""
    path = key_file(name)
    _private_folder(path.parent)
    with locked(path, refused=REFUSED):
        value, why = _read(path)
        if value is not None:
            return ApiKey(value, path, created=False, note=_fix_mode(path))
        kept = _keep_aside(path, why) if why else ""
        value = new_key()
        _write(path, value)
        return ApiKey(value, path, created=True, note=_join(kept, _created_note(path)))


def regenerate(name: str = SERVE) -> ApiKey:
    """Replace the key of server ``name`` with a new one; the old one is copied to the
    backups folder first (an unusable file is moved aside instead). Clients that use the
    old key get 401."""
    path = key_file(name)
    _private_folder(path.parent)
    with locked(path, refused=REFUSED):
        value, why = _read(path)
        kept = ""
        if value is not None:
            backup = backup_file(path, paths.backups_dir(), BACKUPS_KEEP)
            kept = f"The old key was backed up to {backup}." if backup else ""
        elif why:
            kept = _keep_aside(path, why)
        value = new_key()
        _write(path, value)
        return ApiKey(value, path, created=True, note=_join(kept, _created_note(path)))
