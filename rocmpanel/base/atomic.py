"""Atomic file writes with numbered backups: the only way rocmpanel writes user files.

A write goes to a temp file in the same folder, is flushed and fsynced, then replaces the
target in one rename; a crash at any point leaves either the old file or the new one, never
a torn one. A symlink is written through: its target is replaced (in the target's folder)
and the link stays a link, as dotfiles setups expect.

Temp files are named ``.<name>.rocmpanel-<pid>.<random>.tmp``, so a leftover of a writer
that was killed can be told apart from anything else and removed once that process is gone
(:func:`remove_stale_temp_files`).

Backups are named ``<slug>.<sequence>.bak`` with a zero-padded counter (the next number
after the highest one there), never by the clock: a coarse clock cannot put them out of
order. Older clock-named backups (``<slug>.<YYYYmmdd-HHMMSS-ns>.bak``) count as older than
every numbered one.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Collection, Iterator
from pathlib import Path

from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import CONFIG_LIMIT, read_bytes

TEMP_TAG = "rocmpanel"
_TEMP_RE = re.compile(r"^\.(?P<name>.+)\.rocmpanel-(?P<pid>[0-9]+)\.[A-Za-z0-9_]+\.tmp$")
_SEQ_DIGITS = 8
_CLOCK_STAMP_RE = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9]{9}$")


def _slug(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(path).strip("/\\")) or "root"


def os_detail(exc: OSError) -> str:
    """The detail of a PanelError made from ``exc``: ``str(exc)``, or '' when that only
    repeats the errno text the message already says ("[Errno 28] No space left on device")."""
    text = str(exc)
    if exc.strerror and text in (exc.strerror, f"[Errno {exc.errno}] {exc.strerror}"):
        return ""
    return text


def resolved(path: Path) -> Path:
    """``path`` with symlinks followed (the file a write through the link replaces)."""
    if not path.is_symlink():
        return path
    return Path(os.path.realpath(path))


def temp_prefix(name: str) -> str:
    """The prefix of this process's temp files for the file ``name``."""
    return f".{name}.{TEMP_TAG}-{os.getpid()}."


def write_atomic(
    path: Path, data: bytes, *, mode: int | None = None, follow_symlinks: bool = True
) -> Path:
    """Replace ``path`` with ``data`` in one rename, keeping its permission bits.

    A symlink is written through (its target is replaced; the link stays) unless
    ``follow_symlinks`` is False. Returns the file that was replaced.
    """
    target = resolved(path) if follow_symlinks else path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode is None:
            try:
                mode = target.stat().st_mode & 0o7777
            except FileNotFoundError:
                mode = None
        fd, tmp_name = tempfile.mkstemp(
            prefix=temp_prefix(target.name), suffix=".tmp", dir=target.parent
        )
    except OSError as exc:
        raise PanelError(f"Could not write {path}: {exc.strerror or exc}.", os_detail(exc)) from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise PanelError(f"Could not write {path}: {exc.strerror or exc}.", os_detail(exc)) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return target


# ---- leftovers of killed writers -------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    import psutil  # never os.kill(pid, 0): on Windows that terminates the process

    try:
        return bool(psutil.pid_exists(pid))
    except (OSError, ValueError):
        return True  # cannot tell: keep the file


def stale_temp_files(folder: Path, name: str | None = None) -> list[Path]:
    """rocmpanel's temp files in ``folder`` (of the file ``name`` only, when given) whose
    writing process no longer runs."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    stale = []
    for entry in entries:
        match = _TEMP_RE.match(entry.name)
        if match is None or (name is not None and match.group("name") != name):
            continue
        if not _pid_alive(int(match.group("pid"))):
            stale.append(entry)
    return sorted(stale)


def remove_stale_temp_files(folder: Path, name: str | None = None) -> list[Path]:
    """Remove :func:`stale_temp_files`; returns the ones removed (regular files only)."""
    removed = []
    for path in stale_temp_files(folder, name):
        try:
            if path.is_symlink() or not path.is_file():
                continue
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


# ---- backups -------------------------------------------------------------------------------


def _backup_re(slug: str, suffix: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(slug)}\.(?P<stamp>[0-9-]+){re.escape(suffix)}$")


def _backups_of(
    backups: Path, slug: str, suffix: str
) -> Iterator[tuple[tuple[int, int, str], Path]]:
    """(order key, path) of every backup of ``slug``: clock-named ones first, then by number."""
    pattern = _backup_re(slug, suffix)
    try:
        entries = list(backups.iterdir())
    except FileNotFoundError:
        return
    except OSError as exc:
        raise PanelError(
            f"Could not read the backups folder {backups}: {exc.strerror or exc}.", os_detail(exc)
        ) from exc
    for entry in entries:
        match = pattern.match(entry.name)
        if match is None:
            continue
        stamp = match.group("stamp")
        if stamp.isdigit():
            yield (1, int(stamp), ""), entry
        elif _CLOCK_STAMP_RE.match(stamp):
            yield (0, 0, stamp), entry


def backup_bytes(
    path: Path,
    data: bytes,
    backups: Path,
    keep: int,
    *,
    protect: Collection[str | Path] = (),
    suffix: str = ".bak",
) -> Path:
    """Save ``data`` (what ``path`` holds) as the next numbered backup of ``path``.

    Keeps the newest ``keep`` backups of ``path`` and every one named in ``protect`` (the
    ones an undo record still needs); removes the other ones. Returns the backup's path.
    """
    slug = _slug(path)
    try:
        backups.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PanelError(
            f"Could not create the backups folder {backups}: {exc.strerror or exc}; "
            "nothing was changed.",
            os_detail(exc),
        ) from exc
    existing = list(_backups_of(backups, slug, suffix))
    number = max((key[1] for key, _ in existing if key[0] == 1), default=0) + 1
    while True:
        target = backups / f"{slug}.{number:0{_SEQ_DIGITS}d}{suffix}"
        try:  # reserve the name: two writers never share a number
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            break
        except FileExistsError:
            number += 1
        except OSError as exc:
            raise PanelError(
                f"Could not write a backup in {backups}: {exc.strerror or exc}; nothing was "
                "changed.",
                os_detail(exc),
            ) from exc
    try:
        write_atomic(target, data, mode=0o600, follow_symlinks=False)
    except PanelError:
        with contextlib.suppress(OSError):
            target.unlink()
        raise
    _prune(backups, slug, suffix, keep, {str(p) for p in protect} | {str(target)})
    return target


def _prune(backups: Path, slug: str, suffix: str, keep: int, protect: set[str]) -> None:
    ordered = [path for _, path in sorted(_backups_of(backups, slug, suffix))]
    for stale in ordered[:-keep] if keep > 0 else ordered:
        if str(stale) in protect:
            continue
        with contextlib.suppress(OSError):
            stale.unlink()


def backup_file(
    path: Path,
    backups: Path,
    keep: int,
    *,
    protect: Collection[str | Path] = (),
    limit: int = CONFIG_LIMIT,
) -> Path | None:
    """Copy ``path`` into ``backups`` as its next numbered backup; keep the newest ``keep``
    (and those in ``protect``).

    Returns the backup's path, or None when ``path`` does not exist (nothing to lose).
    A FIFO, a device or a file over ``limit`` bytes is refused with a PanelError.
    """
    try:
        data = read_bytes(path, limit)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PanelError(
            f"Could not read {path} to back it up: {exc.strerror or exc}.", os_detail(exc)
        ) from exc
    return backup_bytes(path, data, backups, keep, protect=protect)


def copy_aside(path: Path, target: Path) -> None:
    """Copy the file ``path`` to ``target`` (a free name beside it, from ``paths.aside``),
    complete before it gets that name. OSError when it cannot be made (nothing is left
    behind)."""
    import shutil

    tmp = target.with_name(f".{target.name}.tmp")
    try:
        shutil.copy2(path, tmp)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
