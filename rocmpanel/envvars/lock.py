"""The one lock of the environment stores: held around read, check, write and journal.

Two locks in one: a thread lock (the GUI applies on a pool thread) and a file lock on
``env.lock`` in the data folder (another rocmpanel, a CLI next to the panel). Re-entrant
within a thread, so an apply may run recovery while it holds the lock. When the lock
cannot be had within :data:`LOCK_TIMEOUT` seconds the caller gets :class:`EnvBusyError` and
nothing is changed. While the others make progress (the undo journal changes: each apply
and undo rewrites it) the wait goes on, up to :data:`MAX_WAIT`: forty changes queued at
once all land, while a lock held by a stuck process is reported after the timeout.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate

LOCK_TIMEOUT = 10.0
MAX_WAIT = 120.0
LOCK_FILE = "env.lock"
JOURNAL_FILE = "env_undo.json"  # journal.journal_path(): what every holder rewrites
BUSY_MESSAGE = QT_TRANSLATE_NOOP(
    "lock",
    "another rocmpanel is changing the environment; try again in a moment. Nothing was changed.",
)

_THREAD_LOCK = threading.RLock()
_held = threading.local()


class EnvBusyError(PanelError):
    """The environment lock is held by someone else for longer than the timeout."""


def lock_path() -> Path:
    return paths.data_dir() / LOCK_FILE


def _progress() -> tuple[int, int, int] | None:
    """Changes whenever a holder of the lock finishes a step (the journal is replaced)."""
    try:
        info = os.stat(paths.data_dir() / JOURNAL_FILE)
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size


def _acquire(file_lock: FileLock, timeout: float) -> None:
    """Acquire ``file_lock``; Timeout once nobody made progress for ``timeout`` seconds (or
    after :data:`MAX_WAIT` in all)."""
    started = time.monotonic()
    deadline = started + timeout
    last = _progress()
    while True:
        now = time.monotonic()
        try:
            file_lock.acquire(timeout=max(0.0, min(0.5, deadline - now)))
            return
        except Timeout:
            now = time.monotonic()
            seen = _progress()
            if seen != last:
                last = seen
                deadline = min(now + timeout, started + max(timeout, MAX_WAIT))
            if now >= deadline:
                raise


def held() -> bool:
    """True when this thread holds the environment lock."""
    return getattr(_held, "depth", 0) > 0


@contextmanager
def env_lock(timeout: float | None = None) -> Iterator[None]:
    """Hold the environment lock (re-entrant in a thread); EnvBusyError after ``timeout``
    seconds (default :data:`LOCK_TIMEOUT`)."""
    if timeout is None:
        timeout = LOCK_TIMEOUT
    if not _THREAD_LOCK.acquire(timeout=timeout):
        raise EnvBusyError(
            translate("lock", BUSY_MESSAGE), "another thread of this process holds the lock"
        )
    try:
        depth = getattr(_held, "depth", 0)
        if depth:
            _held.depth = depth + 1
            try:
                yield
            finally:
                _held.depth -= 1
            return
        path = lock_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            file_lock = FileLock(str(path), timeout=timeout)
            _acquire(file_lock, timeout)
        except Timeout as exc:
            raise EnvBusyError(
                translate("lock", BUSY_MESSAGE), f"{path} held for more than {timeout:g} s"
            ) from exc
        except OSError as exc:
            raise PanelError(
                translate(
                    "lock",
                    "Could not take the lock file {path}: {reason}. Check that "
                    "{folder} is writable; nothing was changed.",
                ).format(path=path, reason=exc.strerror or exc, folder=path.parent),
                str(exc),
            ) from exc
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0
            file_lock.release()
    finally:
        _THREAD_LOCK.release()
