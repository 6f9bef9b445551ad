"""Reading sysfs-like files fast and safely: every failure is None, never an exception.

The one sysfs reader of the package: machine detection, the Monitor's sampler (about 25
files per GPU per tick) and Chat read through it. Real amdgpu files may be NUL-padded to
a page, vanish between listing and reading, or answer EBUSY/EPERM/ENODATA (a suspended
GPU); callers get a stripped string or None. Firmware writes 0xFFFF-style sentinels for
"no reading", raw or after the file's unit scaling; ``read_int`` turns them into None.

Bounded, and never blocking: a file is opened with ``O_NONBLOCK`` and read only when
``fstat`` says it is a regular file (sysfs attributes and procfs files are; a FIFO, a
device or a socket planted in a captured tree is not), and at most ``limit`` bytes
(:data:`~rocmpanel.base.files.SYSFS_LIMIT`, 64 KiB, by default). A refused file is None,
with the reason logged once per path. The refusals and their sentences are
:func:`rocmpanel.base.files.read_bytes`'s; small regular files take a fast path of one
``os.read`` (about 40 % less time per file than ``open``, which the sampler's budget, one
sample of one GPU in at most 1 ms of CPU, needs).
"""

from __future__ import annotations

import logging
import os
import stat

from rocmpanel.base import files

log = logging.getLogger(__name__)

# Values firmware uses for "no reading", before and after sysfs scaling.
_SENTINELS = frozenset({0xFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF})
_CHUNK = 8192  # a sysfs attribute is at most a page: one read takes it whole
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once and is then refused
    | getattr(os, "O_NOCTTY", 0)  # a terminal device never becomes ours
    | getattr(os, "O_CLOEXEC", 0)
)
_LOGGED_MAX = 256  # refused paths remembered, so a bad file is logged once, not every tick
_logged: set[str] = set()

FilePath = str | os.PathLike[str]


def _refused(path: FilePath, exc: OSError) -> None:
    key = os.fspath(path)
    if key in _logged:
        return
    if len(_logged) < _LOGGED_MAX:
        _logged.add(key)
    log.warning("%s: not read, so its figure is left out", exc)


def _slow_read(path: FilePath, limit: int) -> bytes | None:
    """A file the fast path does not take (not regular, or larger than one chunk):
    base/files decides and says why."""
    try:
        return files.read_bytes(os.fspath(path), limit)
    except (files.NotRegularFileError, files.TooLargeError) as exc:
        _refused(path, exc)
    except (OSError, ValueError):
        pass
    return None


def _read_bytes(path: FilePath, limit: int = files.SYSFS_LIMIT) -> bytes | None:
    try:
        fd = os.open(path, _FLAGS)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            data = None
        else:
            data = os.read(fd, _CHUNK)
            if len(data) < _CHUNK:
                return data
    except OSError:
        return None
    finally:
        os.close(fd)
    return _slow_read(path, limit)


def read_text(path: FilePath | None, limit: int = files.SYSFS_LIMIT) -> str | None:
    """The file's stripped text up to its first NUL, or None when unreadable, empty, not a
    regular file or larger than ``limit`` bytes."""
    if path is None:
        return None
    data = _read_bytes(path, limit)
    if data is None:
        return None
    # Padding NULs run to the end of the page: cut there (bytes.replace is 50x slower).
    end = data.find(b"\0")
    text = (data if end < 0 else data[:end]).decode("utf-8", errors="replace").strip()
    return text or None


def read_int(path: FilePath | None, scale: int = 1, *, base: int = 10) -> int | None:
    """The integer a file starts with, or None when unreadable, not a number, or a
    0xFFFF-style sentinel (as written, or once divided by the file's ``scale``)."""
    text = read_text(path)
    if text is None:
        return None
    try:
        value = int(text.split()[0], base)
    except ValueError:
        return None
    if value in _SENTINELS or (scale > 1 and value % scale == 0 and value // scale in _SENTINELS):
        return None
    return value


def printable(text: str | None) -> str | None:
    """``text`` with control characters (raw bytes such as ESC, NUL, DEL and the C1 range)
    taken out and whitespace runs made one space; None when nothing printable is left.

    For one-line figures and names read from sysfs, procfs or a tool (link speed, perf
    level, product and process names), so no terminal escape or stray byte reaches the
    CLI's output or a widget."""
    if text is None:
        return None
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else " " if ch.isspace() else "" for ch in text)
    text = " ".join(text.split())
    return text or None
