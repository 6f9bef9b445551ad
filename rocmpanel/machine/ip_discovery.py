"""The GPU's graphics IP version from amdgpu's IP discovery table, and its gfx target.

Since Linux 5.x amdgpu publishes the discovery table it booted with under a PCI device
directory: ``ip_discovery/die/<die>/GC/<instance>/{major,minor,revision}`` (decimal; older
kernels name the block by its number, ``11``, instead of ``GC``). The GC (graphics and
compute) version names the gfx target even when KFD is not loaded or the card is too new
for the panel's PCI id table, the cases where no other sysfs source knows the target.

The mapping is the one amdkfd uses (drivers/gpu/drm/amd/amdkfd/kfd_device.c,
``kgd2kfd_probe``): it is not a formula (GC 11.0.3 is gfx1101, GC 10.3.1 is gfx1033), so it
is a table. GC 9.4.3 is left out on purpose: the kernel picks gfx940, gfx941 or gfx942 by
chip revision, which this directory does not show.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocmpanel.machine.gfx import gfx_from_kfd
from rocmpanel.machine.sysfs import read_int

# GC IP version -> KFD gfx_target_version (MMmmss), from kfd_device.c.
_KFD_TARGET_OF_GC: dict[tuple[int, int, int], int] = {
    (9, 0, 1): 90000,  # Vega 10
    (9, 1, 0): 90002,  # Raven
    (9, 2, 2): 90002,  # Raven 2 / Picasso
    (9, 2, 1): 90004,  # Vega 12
    (9, 3, 0): 90012,  # Renoir
    (9, 4, 0): 90006,  # Vega 20
    (9, 4, 1): 90008,  # Arcturus (MI100)
    (9, 4, 2): 90010,  # Aldebaran (MI200)
    (9, 4, 4): 90402,  # MI300 family, later revision
    (10, 1, 10): 100100,  # Navi 10
    (10, 1, 2): 100101,  # Navi 12
    (10, 1, 1): 100102,  # Navi 14
    (10, 1, 3): 100103,  # Cyan Skillfish
    (10, 1, 4): 100103,
    (10, 3, 0): 100300,  # Navi 21
    (10, 3, 2): 100301,  # Navi 22
    (10, 3, 4): 100302,  # Navi 23
    (10, 3, 1): 100303,  # Van Gogh
    (10, 3, 5): 100304,  # Navi 24
    (10, 3, 3): 100305,  # Rembrandt
    (10, 3, 6): 100306,  # Raphael / Mendocino
    (10, 3, 7): 100306,
    (11, 0, 0): 110000,  # Navi 31
    (11, 0, 3): 110001,  # Navi 32 (the compiler's 11.0.1)
    (11, 0, 2): 110002,  # Navi 33
    (11, 0, 1): 110003,  # Phoenix
    (11, 0, 4): 110003,
    (11, 5, 0): 110500,  # Strix Point
    (11, 5, 1): 110501,  # Strix Halo
    (11, 5, 2): 110502,
    (12, 0, 0): 120000,  # Navi 44
    (12, 0, 1): 120001,  # Navi 48
}

_GC_BLOCK_NAMES = ("GC", "11")  # by name on current kernels, by hardware id on older ones


@dataclass(frozen=True)
class GcVersion:
    """A graphics/compute IP version, e.g. GC 11.0.0."""

    major: int
    minor: int
    revision: int

    @property
    def text(self) -> str:
        return f"{self.major}.{self.minor}.{self.revision}"

    @property
    def gfx(self) -> str | None:
        """The LLVM target amdkfd reports for this IP ("gfx1100"), or None when unknown
        or ambiguous."""
        target = _KFD_TARGET_OF_GC.get((self.major, self.minor, self.revision))
        return gfx_from_kfd(target) if target else None


def read_gc_version(device_dir: Path | str) -> GcVersion | None:
    """The GC version of die 0, instance 0 under a PCI device directory; None when the
    kernel publishes no discovery table (older kernels, pre-Vega cards, other drivers)."""
    die = Path(device_dir) / "ip_discovery" / "die" / "0"
    for name in _GC_BLOCK_NAMES:
        block = die / name / "0"
        major = read_int(block / "major")
        minor = read_int(block / "minor")
        revision = read_int(block / "revision")
        if major is not None and minor is not None and revision is not None:
            return GcVersion(major, minor, revision)
    return None
