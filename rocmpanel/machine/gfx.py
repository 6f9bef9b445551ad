"""LLVM gfx target names and the numbers that encode them.

Three spellings of the same thing meet in a ROCm system: the target name ``gfx90a`` (rocminfo,
torch's ``gcnArchName``), KFD's decimal ``gfx_target_version`` ``90010`` (MMmmss) and the
``HSA_OVERRIDE_GFX_VERSION`` value ``9.0.10`` (MAJOR.MINOR.STEP, decimal). The name is
``gfx`` + major (decimal) + minor (hex) + step (hex).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GFX_RE = re.compile(r"\bgfx([0-9]{1,2})([0-9a-f])([0-9a-f])\b", re.IGNORECASE)
_OVERRIDE_RE = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)")


@dataclass(frozen=True)
class GfxVersion:
    """A gfx target as three numbers, e.g. gfx1031 = (10, 3, 1)."""

    major: int
    minor: int
    step: int

    @property
    def name(self) -> str:
        return f"gfx{self.major}{self.minor:x}{self.step:x}"

    @property
    def override_value(self) -> str:
        return f"{self.major}.{self.minor}.{self.step}"


def gfx_from_kfd(value: int) -> str | None:
    """KFD ``gfx_target_version`` (e.g. 110000) as a target name ("gfx1100"); None for 0."""
    if value <= 0:
        return None
    major, rest = divmod(value, 10000)
    minor, step = divmod(rest, 100)
    if minor > 15 or step > 15:
        return None
    return GfxVersion(major, minor, step).name


def parse_gfx(text: str | None) -> GfxVersion | None:
    """The first gfx target named in ``text`` ("gfx90a:sramecc+:xnack-" -> gfx90a)."""
    if not text:
        return None
    match = _GFX_RE.search(text.lower())
    if match is None:
        return None
    return GfxVersion(int(match.group(1)), int(match.group(2), 16), int(match.group(3), 16))


def normalise_gfx(text: str | None) -> str | None:
    """The bare target name ("gfx1100") found in ``text``, or None."""
    version = parse_gfx(text)
    return version.name if version else None


def parse_override(value: str) -> GfxVersion | None:
    """An HSA_OVERRIDE_GFX_VERSION value as the thunk reads it, or None when it is invalid.

    The thunk wants exactly three decimal numbers, major <= 63, minor and step <= 255; a
    value it cannot parse makes topology initialisation fail.
    """
    match = _OVERRIDE_RE.fullmatch(value.strip())
    if match is None:
        return None
    major, minor, step = (int(g) for g in match.groups())
    if major > 63 or minor > 255 or step > 255:
        return None
    return GfxVersion(major, minor, step)


def same_family(a: str, b: str) -> bool:
    """Whether two targets share major and minor (gfx1031 and gfx1030 do)."""
    va, vb = parse_gfx(a), parse_gfx(b)
    return va is not None and vb is not None and (va.major, va.minor) == (vb.major, vb.minor)


@dataclass(frozen=True)
class Family:
    """The architecture family of a gfx target: ``label`` for messages ("RDNA3.5"), and
    ``arch`` the preset architecture naming it ("rdna3"), None where no preset can."""

    label: str
    arch: str | None


#: (major, minor, steps or None for every step, label, preset arch); the first match wins.
#: From the LLVM AMDGPU processor table (llvm.org/docs/AMDGPUUsage.html, "Processors"):
#: gfx908 is CDNA (MI100), gfx90a CDNA2, gfx940/gfx941/gfx942 CDNA3 (the MI300 targets;
#: LLVM later folded gfx940/941 into gfx942), gfx950 CDNA4; the other gfx90x are GCN5
#: (Vega); RDNA2 is gfx1030-1036, RDNA3 gfx110x, RDNA3.5 gfx115x (presets count it as
#: rdna3), RDNA4 gfx120x.
_FAMILIES: tuple[tuple[int, int, range | None, str, str | None], ...] = (
    (8, 0, None, "GCN 3/4", None),
    (9, 0, range(8, 9), "CDNA", None),
    (9, 0, range(10, 11), "CDNA2", "cdna2"),
    (9, 0, None, "GCN5", None),
    (9, 4, range(0, 3), "CDNA3", "cdna3"),
    (9, 5, range(0, 1), "CDNA4", "cdna4"),
    (10, 1, None, "RDNA1", None),
    (10, 3, range(0, 7), "RDNA2", "rdna2"),
    (11, 0, None, "RDNA3", "rdna3"),
    (11, 5, None, "RDNA3.5", "rdna3"),
    (12, 0, None, "RDNA4", "rdna4"),
)


def family(gfx: str | None) -> Family | None:
    """The family of the first gfx target named in ``gfx`` ("gfx90a:xnack-" -> CDNA2), or
    None when it is not a target name or not in the table (gfx1250, gfx1037)."""
    version = parse_gfx(gfx)
    if version is None:
        return None
    for major, minor, steps, label, arch in _FAMILIES:
        if (version.major, version.minor) == (major, minor) and (
            steps is None or version.step in steps
        ):
            return Family(label, arch)
    return None


def preset_arch(gfx: str | None) -> str | None:
    """The preset architecture ("rdna3", "cdna3", ...) of a gfx target, or None when no
    preset architecture covers it (or ``gfx`` is not a target name)."""
    found = family(gfx)
    return found.arch if found is not None else None


def arch_targets(arch: str) -> tuple[str, ...]:
    """Every target name of a preset architecture whose steps the table lists
    ("cdna3" -> gfx940, gfx941, gfx942); a family open to every step lists none."""
    return tuple(
        GfxVersion(major, minor, step).name
        for major, minor, steps, _label, fam_arch in _FAMILIES
        if fam_arch == arch and steps is not None
        for step in steps
    )
