"""The ROCm compatibility matrix (resources/compat.yaml), typed.

Loaded once per process from the installed ``rocmpanel.resources`` package. Every record
keeps its sources and whether it is official or community knowledge, so a verdict can say
where it comes from. The PCI id table the verdicts also cite lives in
``rocmpanel.machine.pci_ids`` (the machine's facts); its source descriptions are merged in
here so one ``describe_sources`` covers both files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import yaml
from packaging.version import InvalidVersion, Version

from rocmpanel.base.errors import PanelError
from rocmpanel.base.resources import read_resource
from rocmpanel.machine import pci_ids

# libyaml's parser when PyYAML has it: about ten times faster than the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Release:
    """What one ROCm release (or point-release range) supports on one OS."""

    os: str
    series: str
    start: str  # first point release this entry covers ("6.4.1"), or the series + ".0"
    supported: frozenset[str]
    deprecated: frozenset[str] = frozenset()
    runtime_only: frozenset[str] = frozenset()
    limited: Mapping[str, str] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    status: str = "official"


@dataclass(frozen=True)
class OverrideRule:
    """A known HSA_OVERRIDE_GFX_VERSION substitute (community knowledge)."""

    gfx: str
    value: str
    target: str
    until: str | None
    sources: tuple[str, ...]
    status: str


@dataclass(frozen=True)
class UnlistedProducts:
    """Cards whose target is supported but which AMD's Linux product list leaves out."""

    pci_ids: frozenset[str]
    products: str
    reason: str
    sources: tuple[str, ...]
    status: str


@dataclass(frozen=True)
class CompatData:
    """Everything the verdicts need."""

    source_text: Mapping[str, str]
    latest_known: Mapping[str, str]
    releases: tuple[Release, ...]
    unlisted: tuple[UnlistedProducts, ...]
    overrides: tuple[OverrideRule, ...]
    per_node_since: str

    def describe_sources(self, keys: tuple[str, ...]) -> str:
        """The sources' descriptions joined, for a verdict's ``source``."""
        return "; ".join(self.source_text.get(k, k) for k in keys)

    def series_releases(self, os_name: str) -> list[Release]:
        return [r for r in self.releases if r.os == os_name]

    def release_for(self, os_name: str, version: str) -> Release | None:
        """The entry covering ``version`` ("6.2.2") on ``os_name``, or None."""
        try:
            wanted = Version(version)
        except InvalidVersion:
            return None
        series = f"{wanted.major}.{wanted.minor}"
        best: Release | None = None
        for release in self.series_releases(os_name):
            if release.series != series:
                continue
            if Version(release.start) <= wanted and (
                best is None or Version(release.start) > Version(best.start)
            ):
                best = release
        return best


def version_key(version: str) -> Version | None:
    try:
        return Version(version)
    except InvalidVersion:
        return None


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _load_yaml(name: str) -> dict[str, Any]:
    try:
        text = read_resource(name)
        data = yaml.load(text, Loader=_LOADER)
    except (OSError, yaml.YAMLError) as exc:
        raise PanelError(f"The data file {name} could not be read.", str(exc)) from exc
    if not isinstance(data, dict):
        raise PanelError(f"The data file {name} is not a mapping.", repr(type(data)))
    return cast(dict[str, Any], data)


def _release(os_name: str, raw: Mapping[str, Any]) -> Release:
    series = str(raw["series"])
    return Release(
        os=os_name,
        series=series,
        start=str(raw.get("from") or f"{series}.0"),
        supported=frozenset(_strings(raw.get("supported"))),
        deprecated=frozenset(_strings(raw.get("deprecated"))),
        runtime_only=frozenset(_strings(raw.get("runtime_only"))),
        limited={str(k): str(v) for k, v in (raw.get("limited") or {}).items()},
        sources=_strings(raw.get("src")),
        status=str(raw.get("status", "official")),
    )


@lru_cache(maxsize=1)
def load() -> CompatData:
    """The compatibility matrix, parsed once."""
    compat = _load_yaml("compat.yaml")
    pci_sources = pci_ids.load_table().source_text
    source_text = {**pci_sources, **{str(k): str(v) for k, v in compat["sources"].items()}}
    releases = tuple(_release("linux", r) for r in compat["linux"]) + tuple(
        _release("windows", r) for r in compat["windows"]
    )
    unlisted = tuple(
        UnlistedProducts(
            pci_ids=frozenset(_strings(u["pci_ids"])),
            products=str(u["products"]),
            reason=str(u["reason"]),
            sources=_strings(u.get("src")),
            status=str(u.get("status", "official")),
        )
        for u in compat.get("linux_unlisted_products") or ()
    )
    overrides = tuple(
        OverrideRule(
            gfx=str(o["gfx"]),
            value=str(o["value"]),
            target=str(o["target"]),
            until=str(o["until"]) if o.get("until") else None,
            sources=_strings(o.get("src")),
            status=str(o.get("status", "community")),
        )
        for o in compat["overrides"]
    )
    return CompatData(
        source_text=source_text,
        latest_known={str(k): str(v) for k, v in compat["latest_known"].items()},
        releases=releases,
        unlisted=unlisted,
        overrides=overrides,
        per_node_since=str(compat["override_facts"]["per_node_since"]),
    )
