"""How presets read to people (CLI and views share it).

CONTRACT (filled in by f4; signatures fixed).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rocmpanel.base.i18n import translate
from rocmpanel.jobs.preset_schema import ALLOC_KEYS, Effect, Item, Preset


def source_text(source: str) -> str:
    """A preset item's ``source`` as a reader can follow it: a key of the env catalogue's
    ``sources`` (e.g. "pt_tune") becomes that source's text; anything else (a URL, a repo
    path) is returned as it is."""
    from rocmpanel.envvars.catalogue import load_catalogue

    known = load_catalogue().sources
    # A source may list several references separated by "; ": each part that is a key
    # is expanded, the rest stay as written.
    parts = [part.strip() for part in source.split(";")]
    return "; ".join(known.get(part, part) for part in parts if part) if source.strip() else ""


#: How an effect note says it was not checked (rules write it; the text is matched here).
NOT_CHECKED = "not checked: "


def effect_text(effect: Effect) -> str:
    """What an item does on this machine, for the CLI and the views alike: "applies" (with
    its caution in brackets), "no effect here: why", or "not checked: why" when what it
    depends on is not known here (``applies`` is then a guess, never shown as a fact)."""
    note = effect.note.removeprefix(NOT_CHECKED)
    if not effect.checked or effect.note.startswith(NOT_CHECKED):
        why = note or translate("PresetText", "what it depends on is not known here")
        return translate("PresetText", "not checked: {why}").format(why=why)
    if not effect.applies:
        why = effect.note or translate("PresetText", "it does not apply on this machine")
        return translate("PresetText", "no effect here: {why}").format(why=why)
    if effect.note:
        return translate("PresetText", "applies ({note})").format(note=effect.note)
    return translate("PresetText", "applies")


def _number(value: float | int) -> str:
    """0.9 -> "0.9", 1.0 -> "1", 512 -> "512" (no float noise, no trailing .0)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return translate("PresetText", "on") if value else translate("PresetText", "off")
    if isinstance(value, (int, float)):
        return _number(value)
    return str(value)


def value_text(item: Item) -> str:
    """The item's value in words: "highest"; "on"/"off" for booleans; "flash, math" for
    SDPA backends; "0.9"; TunableOp "off" / "on, tuning new shapes" / "on, saved results
    only"; allocator options "garbage_collection_threshold 0.8, max_split_size_mb 512";
    env values as they are."""
    value = item.value
    if item.kind == "env":
        return str(value)
    if item.key == "tunableop" and isinstance(value, dict):
        if not value.get("enabled"):
            return translate("PresetText", "off")
        if value.get("tuning", True):
            return translate("PresetText", "on, tuning new shapes")
        return translate("PresetText", "on, saved results only")
    if item.key == "alloc" and isinstance(value, dict):
        order = [key for key in ALLOC_KEYS if key in value]
        order += sorted(key for key in value if key not in ALLOC_KEYS)
        return ", ".join(f"{key} {_word(value[key])}" for key in order)
    if isinstance(value, (tuple, list)):
        return ", ".join(_word(entry) for entry in value)
    return _word(value)


def unknown_variables(preset: Preset) -> list[str]:
    """Names of the preset's env items that the env catalogue does not know (a typo, or a
    variable rocmpanel cannot check): shown as a note, never an error."""
    from rocmpanel.envvars.catalogue import load_catalogue

    catalogue = load_catalogue()
    return [item.key for item in preset.env if catalogue.lookup(item.key) is None]


def gfx_arch(gfx: str | None) -> str | None:
    """The preset architecture ("rdna3", "cdna3", ...) of a gfx target, or None when it
    is not one a preset can name (or ``gfx`` is not a target name): machine/gfx.py's
    family table, the one the knowledge base uses too."""
    from rocmpanel.machine.gfx import preset_arch

    return preset_arch(gfx)


def suits(preset: Preset, gfx: str | None) -> bool | None:
    """Whether ``preset``'s archs cover the GPU ``gfx`` ("any" always does); None when the
    GPU is not known."""
    if gfx is None:
        return None
    if "any" in preset.archs:
        return True
    arch = gfx_arch(gfx)
    return arch is not None and arch in preset.archs


def archs_text(archs: Iterable[str]) -> str:
    """A preset's archs for a reader: "any GPU" or "RDNA3, CDNA3"."""
    names = list(archs)
    if not names or "any" in names:
        return translate("PresetText", "any GPU")
    return ", ".join(name.upper() for name in names)
