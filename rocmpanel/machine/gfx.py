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
