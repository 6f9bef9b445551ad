"""Every process the panel starts goes through here, so none flashes a console on Windows.

A GUI-subsystem parent (``pythonw.exe``, the ``rocmpanel-gui`` entry) has no console, so
each console program it starts (PowerShell, hipInfo, taskkill, a probe) would open a
visible window of its own; ``CREATE_NO_WINDOW`` stops that. It is a documented process
creation flag (0x08000000) that only Windows knows, so it is added there alone.
``tests/base/test_subproc.py`` fails when a module calls ``subprocess`` directly.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

# winbase.h: the process runs without a console window (Windows only).
CREATE_NO_WINDOW = 0x08000000


def creation_flags(flags: int = 0, platform: str = sys.platform) -> int:
    """``flags`` with ``CREATE_NO_WINDOW`` added on Windows; unchanged elsewhere."""
    return flags | CREATE_NO_WINDOW if platform == "win32" else flags


def hidden(kwargs: dict[str, Any], platform: str = sys.platform) -> dict[str, Any]:
    """Popen keyword arguments with ``CREATE_NO_WINDOW`` added to any ``creationflags``
    given (Windows only: elsewhere ``creationflags`` must not be passed at all)."""
    out = dict(kwargs)
    if platform == "win32":
        out["creationflags"] = creation_flags(int(out.get("creationflags", 0)), platform)
    return out


def run(argv: list[str], *, platform: str = sys.platform, **kwargs: Any) -> Any:
    """``subprocess.run(argv, **kwargs)``, without a console window on Windows."""
    return subprocess.run(argv, **hidden(kwargs, platform))


def popen(argv: list[str], *, platform: str = sys.platform, **kwargs: Any) -> Any:
    """``subprocess.Popen(argv, **kwargs)``, without a console window on Windows."""
    return subprocess.Popen(argv, **hidden(kwargs, platform))
