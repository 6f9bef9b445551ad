"""Whether this Windows allows paths of 260 characters or more (``LongPathsEnabled``).

https://learn.microsoft.com/en-us/windows/win32/fileio/maximum-file-path-limitation: paths
of MAX_PATH (260, the NUL included) or more fail unless LongPathsEnabled (REG_DWORD 1) is set
and the program is long-path aware, as python.exe is
(https://docs.python.org/3/using/windows.html#removing-the-max-path-limitation). The value
is read once per process, so programs started before the change keep the old limit. The
doctor's "Windows long paths" item and the PyTorch tab's environment names both use this.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocmpanel.base.registry import RegistryLike, find_name, read_values

LONG_PATHS_KEY = "SYSTEM\\CurrentControlSet\\Control\\FileSystem"
LONG_PATHS_VALUE = "LongPathsEnabled"
REG_DWORD = 4
# What the user runs, in an elevated PowerShell, to turn long paths on.
ENABLE_LONG_PATHS = (
    f'New-ItemProperty -Path "HKLM:\\{LONG_PATHS_KEY}" '
    f"-Name {LONG_PATHS_VALUE} -Value 1 -PropertyType DWORD -Force"
)


@dataclass(frozen=True)
class LongPaths:
    """What the registry says about long paths on this Windows, and where rocmpanel puts its
    environments. ``readable`` False: the key could not be read; ``data``/``kind`` None: the
    value is not set."""

    readable: bool
    data: Any = None
    kind: int | None = None
    envs_path: str = ""

    @property
    def enabled(self) -> bool:
        return self.kind == REG_DWORD and self.data == 1


def read_long_paths(reg: RegistryLike | None, envs_path: str = "") -> LongPaths:
    """``LongPathsEnabled`` from HKLM through ``reg`` (winreg, or a fake in tests). The
    FileSystem key always holds values, so an empty read means it could not be opened."""
    values = read_values(reg, "HKLM", LONG_PATHS_KEY) if reg is not None else {}
    if not values:
        return LongPaths(readable=False, envs_path=envs_path)
    found = find_name(values, LONG_PATHS_VALUE)
    if found is None:
        return LongPaths(readable=True, envs_path=envs_path)
    data, kind = values[found]
    return LongPaths(readable=True, data=data, kind=kind, envs_path=envs_path)
