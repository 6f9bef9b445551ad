"""Formatting of sizes and counts, one convention each, every figure labelled.

Memory (VRAM, RAM, model weights, KV cache) is shown in binary units (KiB, MiB, GiB), as
the kernel and the tools report it; downloads and disk space in decimal units (kB, MB, GB),
as package indexes and file managers report them.
"""

from __future__ import annotations

KIB = 1024
MIB = 1024**2
GIB = 1024**3


def format_memory(count: float | None, *, digits: int = 2) -> str:
    """Bytes of memory in binary units: ``512 B``, ``3.00 MiB``, ``11.98 GiB``; None: n/a."""
    if count is None:
        return "n/a"
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.{digits}f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def format_gib(count: float | None, *, digits: int = 1) -> str:
    """Bytes of memory always in GiB (cards and tables that line figures up)."""
    if count is None:
        return "n/a"
    return f"{float(count) / GIB:.{digits}f} GiB"


def format_download(count: float | None) -> str:
    """Bytes to download or store on disk, in decimal units: ``950 kB``, ``2.8 GB``."""
    if count is None:
        return "n/a"
    size = float(count)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(size) < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit in ("B", "kB") else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")  # pragma: no cover


def format_count(count: int) -> str:
    """A large count (parameters, tokens) with a decimal suffix: ``2.50M``, ``7.24B``."""
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if count >= size:
            return f"{count / size:.2f}{unit}"
    return str(count)


def format_mib(count: float | None, *, digits: int = 0) -> str:
    """Bytes of memory always in MiB, thousands grouped (tables of per-process use):
    ``1,536 MiB``; None: n/a."""
    if count is None:
        return "n/a"
    return f"{float(count) / MIB:,.{digits}f} MiB"
