"""What every part of the chat worker shares: its failure type, OOM recognition, memory.

A private sibling of ``chat.py`` (workers run by path, so ``import _chat_common`` finds it);
stdlib only.
"""

from __future__ import annotations

import sys


class WorkerFailure(Exception):
    """A failure to report as an error event of a given kind (the worker keeps running)."""

    def __init__(self, message: str, kind: str, detail: str = "") -> None:
        super().__init__(message)
        self.message, self.kind, self.detail = message, kind, detail


def _is_oom(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    return name == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def _rss_bytes() -> tuple[int | None, int | None]:
    """(current, peak) resident memory of this process."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            fields = dict(line.split(":", 1) for line in handle if ":" in line)
        return (
            int(fields["VmRSS"].split()[0]) * 1024,
            int(fields["VmHWM"].split()[0]) * 1024,
        )
    except (OSError, KeyError, ValueError):
        pass
    if sys.platform == "win32":
        return _windows_memory()
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return None, peak if sys.platform == "darwin" else peak * 1024
    except (ImportError, OSError):
        return None, None


def _windows_memory() -> tuple[int | None, int | None]:
    """Working set and its peak through psapi (stdlib ctypes; no psutil in workers)."""
    import ctypes
    from ctypes import wintypes

    class Counters(ctypes.Structure):
        _fields_ = [
            ("cb", wintypes.DWORD),
            ("PageFaultCount", wintypes.DWORD),
            ("PeakWorkingSetSize", ctypes.c_size_t),
            ("WorkingSetSize", ctypes.c_size_t),
            ("QuotaPeakPagedPoolUsage", ctypes.c_size_t),
            ("QuotaPagedPoolUsage", ctypes.c_size_t),
            ("QuotaPeakNonPagedPoolUsage", ctypes.c_size_t),
            ("QuotaNonPagedPoolUsage", ctypes.c_size_t),
            ("PagefileUsage", ctypes.c_size_t),
            ("PeakPagefileUsage", ctypes.c_size_t),
        ]

    try:
        counters = Counters()
        counters.cb = ctypes.sizeof(Counters)
        process = ctypes.windll.kernel32.GetCurrentProcess()
        if not ctypes.windll.psapi.GetProcessMemoryInfo(
            process, ctypes.byref(counters), counters.cb
        ):
            return None, None
        return int(counters.WorkingSetSize), int(counters.PeakWorkingSetSize)
    except (AttributeError, OSError):
        return None, None
