"""The project's compatibility data (resources/compat.yaml, resources/pci_ids.yaml), typed.

Loaded once per process from the installed ``rocmpanel.resources`` package. Every record
keeps its sources and whether it is official or community knowledge, so a verdict can say
where it comes from.
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


@dataclass(frozen=True)
class PciEntry:
    """One AMD PCI device id: product family, gfx target, integrated or not."""

    device_id: str
    name: str
    gfx: str | None
    integrated: bool | None
    sources: tuple[str, ...]
    status: str


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
    pci: Mapping[str, PciEntry]

    def describe_sources(self, keys: tuple[str, ...]) -> str:
        """The sources' descriptions joined, for a verdict's ``source``."""
        return "; ".join(self.source_text.get(k, k) for k in keys)

    def pci_entry(self, pci_id: str | None) -> PciEntry | None:
        """The table entry for "1002:744c" (or bare "744c"), or None."""
        if not pci_id:
            return None
        vendor, _, device = pci_id.lower().rpartition(":")
        if vendor and vendor != "1002":
            return None
        return self.pci.get(device.removeprefix("0x").zfill(4))

    def entry_by_name(self, name: str | None) -> PciEntry | None:
        """The table entry whose product name contains ``name`` (a truncated or marketing
        name such as "Radeon AI PRO R9700"), when all such entries agree on the gfx target."""
        text = (name or "").lstrip(".").strip().lower().removeprefix("amd ").strip()
        if len(text) < 6:
            return None
        hits = [e for e in self.pci.values() if text in e.name.lower()]
        if hits and len({e.gfx for e in hits}) == 1:
            return hits[0]
        return None

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
        data = yaml.safe_load(text)
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
    """The data files, parsed once."""
    compat = _load_yaml("compat.yaml")
    pci = _load_yaml("pci_ids.yaml")
    source_text = {str(k): str(v) for k, v in {**pci["sources"], **compat["sources"]}.items()}
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
    devices = {
        str(dev_id).lower(): PciEntry(
            device_id=str(dev_id).lower(),
            name=str(raw["name"]),
            gfx=str(raw["gfx"]) if raw.get("gfx") else None,
            integrated=bool(raw["integrated"]) if "integrated" in raw else None,
            sources=_strings(raw.get("src")),
            status=str(raw.get("status", "official")),
        )
        for dev_id, raw in pci["devices"].items()
    }
    return CompatData(
        source_text=source_text,
        latest_known={str(k): str(v) for k, v in compat["latest_known"].items()},
        releases=releases,
        unlisted=unlisted,
        overrides=overrides,
        per_node_since=str(compat["override_facts"]["per_node_since"]),
        pci=devices,
    )
