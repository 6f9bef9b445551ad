"""Community knowledge (resources/community.yaml), typed: what AMD does not promise.

HSA_OVERRIDE_GFX_VERSION substitutes, combinations known to harm (with the reports that say
so), and cards AMD leaves out of its Linux list although their target is supported. Kept by
hand, every row sourced, apart from the generated official data, so a verdict can always
tell an AMD statement from forum knowledge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import yaml

from rocmpanel.base import datasets
from rocmpanel.base.coerce import strings
from rocmpanel.base.errors import PanelError
from rocmpanel.machine.gfx import normalise_gfx, parse_override

FILE = "community.yaml"
SEVERITIES = ("warning", "danger")
# libyaml's parser when PyYAML has it: about ten times faster than the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class OverrideRule:
    """An HSA_OVERRIDE_GFX_VERSION value that makes the runtime load ``target``'s code for
    ``gfx`` (Linux only). ``until``: the ROCm release from which ``gfx`` is supported itself."""

    gfx: str
    value: str
    target: str
    sources: tuple[str, ...]
    until: str | None = None
    status: str = "community"
    note: str = ""


@dataclass(frozen=True)
class Harm:
    """A combination reported to break things: an override value (or any, when ``override``
    is None) on these targets."""

    id: str
    gfx: frozenset[str]
    override: str | None
    severity: str
    text: str
    sources: tuple[str, ...]

    def applies(self, gfx: str | None, override: str | None) -> bool:
        if gfx is None or gfx not in self.gfx or override is None:
            return False
        return self.override is None or self.override == override.strip()


@dataclass(frozen=True)
class UnlistedProducts:
    """Cards whose target is supported but which AMD's Linux product list leaves out."""

    pci_ids: frozenset[str]
    products: str
    reason: str
    sources: tuple[str, ...]
    status: str


@dataclass(frozen=True)
class Community:
    source_text: Mapping[str, str]
    overrides: tuple[OverrideRule, ...]
    harms: tuple[Harm, ...]
    unlisted: tuple[UnlistedProducts, ...]

    def override_for(self, gfx: str) -> OverrideRule | None:
        return next((o for o in self.overrides if o.gfx == gfx), None)

    def harms_for(self, gfx: str | None, override: str | None) -> tuple[Harm, ...]:
        return tuple(h for h in self.harms if h.applies(gfx, override))

    def describe_sources(self, keys: tuple[str, ...]) -> str:
        return "; ".join(self.source_text.get(k, k) for k in keys)


def _gfx(value: Any, where: str) -> str:
    name = normalise_gfx(str(value))
    if name is None or name != str(value).strip().lower():
        raise ValueError(f"{where}: {value!r} is not a gfx target name")
    return name


def _override(raw: Mapping[str, Any], index: int) -> OverrideRule:
    where = f"overrides row {index + 1}"
    value = str(raw["value"])
    if parse_override(value) is None:
        raise ValueError(f"{where}: {value!r} is not a valid HSA_OVERRIDE_GFX_VERSION")
    return OverrideRule(
        gfx=_gfx(raw["gfx"], where),
        value=value,
        target=_gfx(raw["target"], where),
        sources=strings(raw.get("src")),
        until=str(raw["until"]) if raw.get("until") else None,
        status=str(raw.get("status", "community")),
        note=str(raw.get("note", "")),
    )


def _harm(raw: Mapping[str, Any], index: int) -> Harm:
    where = f"harmful row {index + 1}"
    severity = str(raw.get("severity", "warning"))
    if severity not in SEVERITIES:
        raise ValueError(f"{where}: severity must be one of {', '.join(SEVERITIES)}")
    override = raw.get("override")
    return Harm(
        id=str(raw.get("id") or where),
        gfx=frozenset(_gfx(g, where) for g in strings(raw.get("gfx"))),
        override=None if override in (None, "any") else str(override),
        severity=severity,
        text=str(raw["text"]).strip(),
        sources=strings(raw.get("src")),
    )


def parse(text: str) -> Community:
    """The community file from its text; PanelError naming what is wrong."""
    try:
        data = yaml.load(text, Loader=_LOADER)
        if not isinstance(data, dict):
            raise ValueError("the top level is not a mapping")
        raw = cast(dict[str, Any], data)
        sources = {str(k): str(v) for k, v in (raw.get("sources") or {}).items()}
        overrides = tuple(_override(o, i) for i, o in enumerate(raw.get("overrides") or ()))
        harms = tuple(_harm(h, i) for i, h in enumerate(raw.get("harmful") or ()))
        unlisted = tuple(
            UnlistedProducts(
                pci_ids=frozenset(p.lower() for p in strings(u["pci_ids"])),
                products=str(u["products"]),
                reason=str(u["reason"]),
                sources=strings(u.get("src")),
                status=str(u.get("status", "official")),
            )
            for u in raw.get("unlisted_products") or ()
        )
    except (yaml.YAMLError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise PanelError(f"The data file {FILE} is malformed.", repr(exc)) from exc
    used = {k for o in overrides for k in o.sources} | {k for h in harms for k in h.sources}
    missing = sorted(used - set(sources))
    if missing:
        raise PanelError(f"The data file {FILE} cites undefined sources: {', '.join(missing)}.")
    return Community(sources, overrides, harms, unlisted)


@lru_cache(maxsize=1)
def load() -> Community:
    """The community knowledge of the data set in force, parsed once."""
    try:
        return datasets.parse_data(FILE, parse)
    except OSError as exc:
        raise PanelError(f"The data file {FILE} could not be read.", str(exc)) from exc


datasets.on_reset(load.cache_clear)
