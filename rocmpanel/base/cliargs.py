"""argparse ``type=`` converters that refuse bad input with a clear sentence.

argparse turns the ``ArgumentTypeError`` these raise into ``rocmpanel X: error: argument
--interval: ...`` on stderr and exit status 2, never a traceback. Each converter says what
was given and what is accepted.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable

_GFX_RE = re.compile(r"gfx[0-9a-f]{3,4}(?:-generic)?")
_VERSION_RE = re.compile(r"\d+(?:\.\d+){0,3}")


def number(
    minimum: float | None = None, maximum: float | None = None, *, what: str = "a number"
) -> Callable[[str], float]:
    """A finite float within ``[minimum, maximum]`` (NaN and infinities are refused)."""

    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"{text} is below the minimum {minimum:g}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{text} is above the maximum {maximum:g}")
        return value

    return convert


def integer(minimum: int | None = None, maximum: int | None = None) -> Callable[[str], int]:
    """A whole number within ``[minimum, maximum]``."""

    def convert(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below the minimum {minimum}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{value} is above the maximum {maximum}")
        return value

    return convert


def version(text: str) -> str:
    """A dotted release number such as ``7.2`` or ``10.1.0`` (1 to 4 parts)."""
    value = text.strip()
    if not _VERSION_RE.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a version number (expected digits and dots, such as 7.2 or 10.1.0)"
        )
    return value


def gfx_name(text: str) -> str:
    """An LLVM AMDGPU target such as ``gfx1100`` or ``gfx90a`` (lower-cased)."""
    value = text.strip().lower()
    if not _GFX_RE.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a gfx target name (expected gfx followed by 3 or 4 hex digits, "
            "such as gfx1100 or gfx90a)"
        )
    return value


def folder(hint: str) -> Callable[[str], str]:
    """A folder that exists; ``hint`` says what it should hold ("a /sys-like tree")."""

    def convert(text: str) -> str:
        if not text.strip():  # '' would be the current folder
            raise argparse.ArgumentTypeError(f"is empty (give {hint})")
        if os.path.isdir(text):
            return text
        if os.path.lexists(text):
            raise argparse.ArgumentTypeError(f"{text} is not a folder (give {hint})")
        raise argparse.ArgumentTypeError(f"{text} does not exist (give {hint})")

    return convert


def nonempty(what: str, has_default: bool = True) -> Callable[[str], str]:
    """A name or path that must not be empty: an empty one is an error, never "the
    default" in disguise (``has_default``: the option may be left out for one)."""

    def convert(text: str) -> str:
        if not text.strip():
            hint = " (leave the option out for the default)" if has_default else ""
            raise argparse.ArgumentTypeError(f"{what} is empty{hint}")
        return text

    convert.__name__ = what  # argparse names the type in some of its messages
    return convert
