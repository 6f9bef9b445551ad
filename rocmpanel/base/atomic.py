"""Atomic file writes with timestamped backups: the only way rocmpanel writes user files.

A write goes to a temp file in the same folder, is flushed and fsynced, then replaces the
target in one rename; the old bytes are copied to the backups folder first. A crash at any
point leaves either the old file or the new one, never a torn one.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from pathlib import Path

from rocmpanel.base.errors import PanelError


def _slug(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(path).strip("/\\")) or "root"


def backup_file(path: Path, backups: Path, keep: int) -> Path | None:
    """Copy ``path`` into ``backups`` with a timestamp; keep the newest ``keep``.

    Returns the backup's path, or None when ``path`` does not exist (nothing to lose).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PanelError(f"Could not read {path} to back it up.", str(exc)) from exc
    slug = _slug(path)
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{time.time_ns() % 1_000_000_000:09d}"
    target = backups / f"{slug}.{stamp}.bak"
    write_atomic(target, data)
    old = sorted(backups.glob(f"{slug}.*.bak"))
    for stale in old[:-keep] if keep > 0 else []:
        with contextlib.suppress(OSError):
            stale.unlink()
    return target


def write_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping its permission bits."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if mode is None:
            try:
                mode = path.stat().st_mode & 0o7777
            except FileNotFoundError:
                mode = None
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise PanelError(f"Could not write {path}: {exc.strerror or exc}.", str(exc)) from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise PanelError(f"Could not write {path}: {exc.strerror or exc}.", str(exc)) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
