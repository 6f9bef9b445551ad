"""The chat worker's own memory: resident set now and at its peak (stdlib only).

A private sibling of ``chat.py``. On the CPU the figures of a load and a reply are the
process's memory; on a GPU they come from torch's allocator (see ``_chat_engine``).
"""

from __future__ import annotations

import sys


def rss_bytes() -> tuple[int | None, int | None]:
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
    if sys.platform != "win32":  # also tells type checkers that windll exists below
        return None, None
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
