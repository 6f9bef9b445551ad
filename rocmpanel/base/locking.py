"""One writer of a file at a time, across processes: a ``filelock`` lock file beside it.

``locked(path, refused="Settings not saved")`` holds ``.<name>.lock`` in the file's folder
for a read-modify-write of ``path``; when another process holds it longer than the timeout,
or the lock file cannot be made, the caller gets a PanelError that starts with ``refused``
(what did not happen) and says what to do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from rocmpanel.base.errors import PanelError

LOCK_TIMEOUT_S = 10.0


def lock_file(path: Path) -> Path:
    """The lock file that guards ``path``."""
    return path.with_name(f".{path.name}.lock")


@contextlib.contextmanager
def locked(path: Path, *, refused: str, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the lock of ``path`` for the ``with`` block (re-entrant within one thread's use
    of the same path is not supported: take it once per read-modify-write)."""
    from filelock import FileLock, Timeout

    guard = lock_file(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(guard), timeout=timeout)
        lock.acquire()
    except Timeout as exc:
        raise PanelError(
            f"{refused}: another rocmpanel has been writing {path} for {timeout:g} s. "
            "Try again in a moment.",
            str(guard),
        ) from exc
    except OSError as exc:
        raise PanelError(
            f"{refused}: {path} could not be locked ({exc.strerror or exc}).", str(exc)
        ) from exc
    try:
        yield
    finally:
        lock.release()
