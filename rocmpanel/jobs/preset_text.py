"""How presets read to people (CLI and views share it).

CONTRACT (filled in by f4; signatures fixed).
"""

from __future__ import annotations

from rocmpanel.jobs.preset_schema import Item, Preset


def source_text(source: str) -> str:
    """A preset item's ``source`` as a reader can follow it: a key of the env catalogue's
    ``sources`` (e.g. "pt_tune") becomes that source's text; anything else (a URL, a repo
    path) is returned as it is."""
    raise NotImplementedError


def value_text(item: Item) -> str:
    """The item's value in words: "highest"; "on"/"off" for booleans; "flash, math" for
    SDPA backends; "0.9"; TunableOp "off" / "on, tuning new shapes" / "on, saved results
    only"; allocator options "garbage_collection_threshold 0.8, max_split_size_mb 512";
    env values as they are."""
    raise NotImplementedError


def unknown_variables(preset: Preset) -> list[str]:
    """Names of the preset's env items that the env catalogue does not know (a typo, or a
    variable rocmpanel cannot check): shown as a note, never an error."""
    raise NotImplementedError


def suits(preset: Preset, gfx: str | None) -> bool | None:
    """Whether ``preset``'s archs cover the GPU ``gfx`` ("any" always does); None when the
    GPU is not known."""
    raise NotImplementedError
