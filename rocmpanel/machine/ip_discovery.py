"""The GPU's graphics IP version from amdgpu's IP discovery table, and its gfx target.

Since Linux 5.x amdgpu publishes the discovery table it booted with under a PCI device
directory: ``ip_discovery/die/<die>/GC/<instance>/{major,minor,revision}`` (decimal; older
kernels name the block by its number, ``11``, instead of ``GC``). The GC (graphics and
compute) version names the gfx target even when KFD is not loaded or the card is too new
for the panel's PCI id table, the cases where no other sysfs source knows the target.

The mapping is the one amdkfd uses (kfd_device.c, ``kgd2kfd_probe``): it is not a formula
(GC 11.0.3 is gfx1101, GC 10.3.1 is gfx1033), so it is a table, generated with the PCI id
table from the kernel source (``gc_ip_targets`` in resources/pci_ids.yaml). Versions the
kernel decides by chip revision or APU flag are left out of that table, so they give None.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocmpanel.base.errors import PanelError
from rocmpanel.machine.pci_ids import PciTable, load_table
from rocmpanel.machine.sysfs import read_int

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
        """The LLVM target amdkfd reports for this IP ("gfx1100"), from the shipped table;
        None when unknown, ambiguous or the table cannot be read."""
        try:
            return self.gfx_in(load_table())
        except PanelError:
            return None

    def gfx_in(self, table: PciTable) -> str | None:
        """The target ``table``'s GC map gives this IP, or None."""
        return table.gc_targets.get((self.major, self.minor, self.revision))


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
