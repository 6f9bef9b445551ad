"""The panel as an installed, frozen program (PyInstaller) or as a Python package.

A frozen panel has no Python of its own to run scripts with: ``sys.executable`` is the
``rocmpanel`` program. Where the package would use its own interpreter (the default
workload Python, the base of a managed environment), the frozen one uses the system's
Python from PATH, and starts itself with its own arguments, not ``-m rocmpanel``.
"""

from __future__ import annotations

import shutil
import sys


def is_frozen() -> bool:
    """True in a PyInstaller build."""
    return bool(getattr(sys, "frozen", False))


def own_python(platform: str = sys.platform) -> str:
    """The Python GPU jobs default to: the panel's own interpreter, or, frozen, the first
    of python3/python (python/py on Windows) on PATH (``python3`` when none is: starting a
    job then says it is not found)."""
    if not is_frozen():
        return sys.executable
    names = ("python", "py") if platform == "win32" else ("python3", "python")
    for name in names:
        found = shutil.which(name)
        # Windows' "App execution alias" python.exe in WindowsApps only opens the Store.
        if found and "\\windowsapps\\" not in found.lower():
            return found
    return names[0]


def panel_command(*args: str) -> list[str]:
    """The argv that starts this panel again with ``args``."""
    if is_frozen():
        return [sys.executable, *args]
    return [sys.executable, "-m", "rocmpanel", *args]
