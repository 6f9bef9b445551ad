"""Bounded reads: the one way rocmpanel reads a file it did not write itself.

A path where a file is expected may be a FIFO (reading it blocks until a writer comes), a
device (``/dev/zero`` never ends) or a huge file. :func:`read_bytes` opens without blocking,
refuses anything that is not a regular file, and reads at most ``limit`` bytes, so no read
of a settings file, a sysfs attribute, a model header or pasted output can hang or exhaust
memory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

KIB = 1024
MIB = 1024 * 1024

# Caps by kind of file (the figures): a sysfs or procfs attribute, a config or
# data file the panel keeps, pasted or captured tool output.
SYSFS_LIMIT = 64 * KIB
CONFIG_LIMIT = 4 * MIB
CAPTURE_LIMIT = 64 * MIB


class NotRegularFileError(OSError):
    """The path is a FIFO, a device, a socket or a folder, not a regular file."""


class TooLargeError(OSError):
    """The file is larger than the cap for its kind."""


def kind_of(mode: int) -> str:
    """What a file of ``mode`` (from ``stat`` or ``lstat``) is, for messages: "a folder"..."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def size_text(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB else f"{limit // KIB} KiB"


def read_bytes(path: Path | str, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``path``.

    Raises FileNotFoundError (and other OSError) as ``open`` does, NotRegularFileError for a
    FIFO, device, socket or folder (without blocking on it), and TooLargeError when the file
    holds more than ``limit`` bytes. Symlinks are followed.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(f"{path} is {kind_of(info.st_mode)}, not a regular file")
        if info.st_size > limit:  # procfs/sysfs files say 0 and are read to their end
            raise TooLargeError(f"{path} is larger than {size_text(limit)}")
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(limit + 1 - total, MIB))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    if total > limit:
        raise TooLargeError(f"{path} is larger than {size_text(limit)}")
    return b"".join(chunks)


def read_text(path: Path | str, limit: int, errors: str = "strict") -> str:
    """:func:`read_bytes` decoded as UTF-8 (``errors`` as for ``bytes.decode``)."""
    return read_bytes(path, limit).decode("utf-8", errors)


def is_regular(path: Path | str) -> bool:
    """True for an existing regular file (following symlinks); never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
