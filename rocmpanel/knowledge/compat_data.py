"""The ROCm compatibility matrix (resources/compat.yaml, generated from AMD's data), typed.

Loaded once per process from the data set in force (:mod:`rocmpanel.base.datasets`). Every
record keeps its sources and whether it is official, transcribed or community knowledge, so
a verdict can say where it comes from. Community knowledge (overrides, harmful combinations,
unlisted cards) comes from :mod:`rocmpanel.knowledge.community`; the PCI id table from
:mod:`rocmpanel.machine.pci_ids`. Their source descriptions are merged here so one
``describe_sources`` covers all three files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import yaml
from packaging.version import InvalidVersion, Version

from rocmpanel.base import datasets
from rocmpanel.base.coerce import strings
from rocmpanel.base.errors import PanelError
from rocmpanel.knowledge import community as community_data
from rocmpanel.knowledge.community import Community, OverrideRule, UnlistedProducts
from rocmpanel.machine import pci_ids

# libyaml's parser when PyYAML has it: about ten times faster than the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SCHEMA = 2


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
    products: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    status: str = "official"

    def covers(self, gfx: str) -> bool:
        """Whether the release supports ``gfx`` at all (fully, limited, deprecated or
        runtime only)."""
        return gfx in self.supported or gfx in self.deprecated or gfx in self.runtime_only


@dataclass(frozen=True)
class Judged:
    """The release entry a version is judged by, and why that one when it is not its own."""

    release: Release
    note: str = ""  # "ROCm 10.4 is newer than the panel's data: judged as 10.1 (2026-10-05)."


@dataclass(frozen=True)
class CompatData:
    """Everything the verdicts need."""

    source_text: Mapping[str, str]
    latest_known: Mapping[str, str]
    releases: tuple[Release, ...]
    community: Community
    release_dates: Mapping[str, str] = field(default_factory=dict)  # "10.1.0" -> ISO date
    data_as_of: str = ""
    generated: Mapping[str, Any] = field(default_factory=dict)

    @property
    def unlisted(self) -> tuple[UnlistedProducts, ...]:
        return self.community.unlisted

    @property
    def overrides(self) -> tuple[OverrideRule, ...]:
        return self.community.overrides

    def date_of(self, version: str) -> str:
        """The release date of ``version`` ("10.1" or "10.1.0"), or ""."""
        return self.release_dates.get(version) or self.release_dates.get(f"{version}.0", "")

    def newest(self, os_name: str) -> Release | None:
        """The entry of the newest release the data has for ``os_name``."""
        rows = self.series_releases(os_name)
        return max(rows, key=lambda r: Version(r.start)) if rows else None

    def judge_release(self, os_name: str, version: str) -> Judged | None:
        """The entry ``version`` is judged by: its own, or the newest known one when the
        version is newer than the data (with a note saying so); None otherwise."""
        own = self.release_for(os_name, version)
        if own is not None:
            return Judged(own)
        wanted, newest = version_key(version), self.newest(os_name)
        if wanted is None or newest is None or wanted <= Version(newest.start):
            return None
        latest = self.latest_known.get(os_name, newest.start)
        date = self.date_of(latest)
        when = f" of {date}" if date else ""
        return Judged(
            newest,
            f"ROCm {version} is newer than the panel's data (newest known: {latest}{when}); "
            f"it is judged as {newest.series}. Run `rocmpanel data update` for newer data.",
        )

    def describe_sources(self, keys: tuple[str, ...]) -> str:
        """The sources' descriptions joined, for a verdict's ``source``."""
        return "; ".join(self.source_text.get(k, k) for k in keys)

    def series_releases(self, os_name: str) -> list[Release]:
        return [r for r in self.releases if r.os == os_name]

    def release_for(self, os_name: str, version: str) -> Release | None:
        """The entry covering ``version`` ("6.2.2"; a pre-release such as "10.1rc1" counts as
        its release) on ``os_name``, or None."""
        wanted = version_key(version)
        if wanted is None:
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
    """A ROCm version as its release ("10.1rc1" -> 10.1, "7.2.4" -> 7.2.4); None for text
    that is not a version (or absurdly long)."""
    if len(version) > 64:
        return None
    try:
        return Version(Version(version).base_version)
    except (InvalidVersion, ValueError):
        return None


def parse(
    text: str, community: Community | None = None, pci_table: pci_ids.PciTable | None = None
) -> CompatData:
    """The compatibility matrix from the text of a compat.yaml; PanelError when malformed."""
    try:
        raw = yaml.load(text, Loader=_LOADER)
        if not isinstance(raw, dict):
            raise ValueError("the top level is not a mapping")
        compat = cast(dict[str, Any], raw)
        if int(compat.get("schema", 1)) != SCHEMA:
            raise ValueError(f"schema {compat.get('schema')} is not {SCHEMA}")
        releases = tuple(_release("linux", r) for r in compat["linux"]) + tuple(
            _release("windows", r) for r in compat["windows"]
        )
        for release in releases:
            Version(release.start)
        dates = {str(r["version"]): str(r["date"]) for r in compat.get("releases") or ()}
        latest = {str(k): str(v) for k, v in compat["latest_known"].items()}
        sources = {str(k): str(v) for k, v in (compat.get("sources") or {}).items()}
    except (yaml.YAMLError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise PanelError("The data file compat.yaml is malformed.", repr(exc)) from exc
    if not {"linux", "windows"} <= set(latest):
        raise PanelError("The data file compat.yaml lacks latest_known for linux and windows.")
    community = community or community_data.load()
    pci_sources = (pci_table or pci_ids.load_table()).source_text
    return CompatData(
        source_text={**pci_sources, **community.source_text, **sources},
        latest_known=latest,
        releases=releases,
        community=community,
        release_dates=dates,
        data_as_of=str(compat.get("data_as_of") or ""),
        generated=compat.get("generated") or {},
    )


def _release(os_name: str, raw: Mapping[str, Any]) -> Release:
    series = str(raw["series"])
    return Release(
        os=os_name,
        series=series,
        start=str(raw.get("from") or f"{series}.0"),
        supported=frozenset(strings(raw.get("supported"))),
        deprecated=frozenset(strings(raw.get("deprecated"))),
        runtime_only=frozenset(strings(raw.get("runtime_only"))),
        limited={str(k): str(v) for k, v in (raw.get("limited") or {}).items()},
        products={str(k): strings(v) for k, v in (raw.get("products") or {}).items()},
        sources=strings(raw.get("src")),
        status=str(raw.get("status", "official")),
    )


@lru_cache(maxsize=1)
def load() -> CompatData:
    """The compatibility matrix of the data set in force, parsed once."""
    try:
        return datasets.parse_data("compat.yaml", parse)
    except OSError as exc:
        raise PanelError("The data file compat.yaml could not be read.", str(exc)) from exc


datasets.on_reset(load.cache_clear)
