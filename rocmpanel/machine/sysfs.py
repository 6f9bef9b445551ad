"""Reading sysfs-like files safely: every failure is None, never an exception.

Real amdgpu files may be NUL-padded to a page, vanish between listing and reading, or
answer EBUSY/EPERM/ENODATA (a suspended GPU). Callers get a stripped string or None.
"""

from __future__ import annotations

from pathlib import Path


def read_text(path: Path | str) -> str | None:
    """The file's text without NUL padding and surrounding whitespace, or None."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(1 << 20)
    except (OSError, ValueError):
        return None
    return data.replace(b"\0", b"").decode("utf-8", errors="replace").strip()


def read_int(path: Path | str, base: int = 10) -> int | None:
    """The file's integer value, or None when unreadable or not an integer."""
    text = read_text(path)
    if not text:
        return None
    try:
        return int(text.split()[0], base)
    except ValueError:
        return None


def read_lines(path: Path | str) -> list[str]:
    text = read_text(path)
    return [line for line in text.splitlines() if line.strip()] if text else []
