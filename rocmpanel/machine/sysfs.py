"""Reading sysfs-like files fast and safely: every failure is None, never an exception.

The one sysfs reader of the package: machine detection, the Monitor's sampler (about 25
files per GPU per tick) and Chat read through it. Real amdgpu files may be NUL-padded to
a page, vanish between listing and reading, or answer EBUSY/EPERM/ENODATA (a suspended
GPU); callers get a stripped string or None. Firmware writes 0xFFFF-style sentinels for
"no reading", raw or after the file's unit scaling; ``read_int`` turns them into None.

``os.open``/``os.read`` instead of ``open``: about 40 % less time per file, which the
sampler's budget (one sample of one GPU in at most 1 ms of CPU) needs.
"""

from __future__ import annotations

import os

# Values firmware uses for "no reading", before and after sysfs scaling.
_SENTINELS = frozenset({0xFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF})
_CHUNK = 8192  # a sysfs attribute is at most a page: one read takes it whole
_LIMIT = 1 << 20  # captured or /etc files are read up to 1 MiB

FilePath = str | os.PathLike[str]


def _read_bytes(path: FilePath) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except (OSError, ValueError):
        return None
    try:
        data = os.read(fd, _CHUNK)
        if len(data) == _CHUNK:  # a larger regular file (rocm_version.h, os-release)
            parts = [data]
            size = len(data)
            while size < _LIMIT:
                more = os.read(fd, _CHUNK)
                if not more:
                    break
                parts.append(more)
                size += len(more)
            data = b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data


def read_text(path: FilePath | None) -> str | None:
    """The file's stripped text up to its first NUL, or None when unreadable or empty."""
    if path is None:
        return None
    data = _read_bytes(path)
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
