"""AMD PCI device ids (resources/pci_ids.yaml), typed, and the one AMD vendor id.

A GPU seen only through sysfs, lspci or CIM gets its product family and gfx target from this
table. Every entry keeps its sources and whether it is official (the kernel's own lists),
derived (mapped from its pci.ids codename) or community knowledge, so a verdict built on it
can say where the fact comes from. The file is generated (scripts/datagen/pci.py) and says
which upstream files it was built from and how old they are (``generated``, ``data_as_of``);
it also carries KFD's GC IP version -> gfx table that ip_discovery uses. The file is parsed
once per process.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import yaml

from rocmpanel.base import datasets
from rocmpanel.base.coerce import strings
from rocmpanel.base.errors import PanelError

AMD_VENDOR_ID = "1002"
"""AMD/ATI's PCI vendor id, lower-case hex without "0x": the one spelling used in pci_id
strings ("1002:744c") across the package."""

_FILE = "pci_ids.yaml"
# libyaml's parser when PyYAML has it: about ten times faster than the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def normalize_id(text: str | None) -> str | None:
    """A 16-bit PCI id as four lower-case hex digits: "0x1002", "1002", " 0X744C\\n" ->
    "1002", "744c"; None for empty or non-hex text."""
    value = (text or "").strip().lower().removeprefix("0x")
    if not value or len(value) > 4 or any(c not in "0123456789abcdef" for c in value):
        return None
    return value.zfill(4)


def is_amd_vendor(vendor: str | None) -> bool:
    """Whether a vendor id, in any of the spellings sysfs, lspci or CIM use, is AMD's."""
    return normalize_id(vendor) == AMD_VENDOR_ID


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
class DataSource:
    """One upstream file the table was generated from, and how old it is."""

    key: str
    what: str
    date: str | None = None  # YYYY-MM-DD, the commit's or the data's own date
    repo: str | None = None
    path: str | None = None
    commit: str | None = None
    url: str | None = None


GcVersion = tuple[int, int, int]


@dataclass(frozen=True)
class PciTable:
    """The whole table: entries by 4-digit device id, the sources' descriptions, the upstream
    files it was generated from (with dates), and KFD's GC IP version -> gfx map."""

    devices: Mapping[str, PciEntry]
    source_text: Mapping[str, str]
    generated: tuple[DataSource, ...] = ()
    generated_at: str | None = None  # the day the generator ran
    data_as_of: str | None = None  # the newest source date (YYYY-MM-DD)
    gc_targets: Mapping[GcVersion, str] = field(default_factory=dict)

    def lookup(self, pci_id: str | None) -> PciEntry | None:
        """The entry for "1002:744c", "0x1002:0x744C" or a bare "744c"; None for another
        vendor's id or one the table lacks."""
        if not pci_id:
            return None
        vendor, _, device = pci_id.strip().rpartition(":")
        if vendor and not is_amd_vendor(vendor):
            return None
        key = normalize_id(device)
        return self.devices.get(key) if key else None

    def entry_by_name(self, name: str | None) -> PciEntry | None:
        """The entry for a product name ("AMD Radeon RX 7900 XTX", a truncated "...AI PRO
        R9700"): one whose products include exactly that name, else one whose name contains
        it; None unless all the entries found agree on the gfx target."""
        text = _plain(name)
        if len(text) < 6:
            return None
        exact = [e for e in self.devices.values() if text in {_plain(p) for p in products(e.name)}]
        hits = exact or [
            e
            for e in self.devices.values()
            if text in e.name.lower() or any(text in _plain(p) for p in products(e.name))
        ]
        if hits and len({e.gfx for e in hits}) == 1:
            return hits[0]
        return None


_CODENAME_SUFFIX = re.compile(r"\s*\([^()]*\)\s*$")


def _plain(name: str | None) -> str:
    """A product name compared loosely: lower case, no "AMD " or trailing " Graphics"."""
    text = (name or "").lstrip(".").strip().lower().removeprefix("amd ").strip()
    return text.removesuffix(" graphics").strip()


def products(name: str) -> tuple[str, ...]:
    """The products a table name lists, each in full: "AMD Radeon RX 7900 XT / 7900 XTX /
    PRO W7900 (Navi 31)" -> ("AMD Radeon RX 7900 XT", "AMD Radeon RX 7900 XTX",
    "AMD Radeon PRO W7900"). A part that starts with a model number takes the first part's
    words before its number; one that starts with a word takes its brand ("AMD Radeon")."""
    parts = [p.strip() for p in _CODENAME_SUFFIX.sub("", name).split(" / ") if p.strip()]
    if not parts:
        return ()
    words = parts[0].split()
    stem = next((i for i, w in enumerate(words) if any(c.isdigit() for c in w)), len(words))
    family = " ".join(words[:stem])
    brand = " ".join(words[: min(stem, 2)])  # "AMD Radeon", "AMD Instinct"
    full = [parts[0]]
    for part in parts[1:]:
        if part.startswith("AMD ") or not family:
            full.append(part)
        elif any(c.isdigit() for c in part.split()[0]):
            full.append(f"{family} {part}")
        elif part.split()[0] in ("Radeon", "Instinct", "FirePro"):
            full.append(f"AMD {part}")
        else:
            full.append(f"{brand} {part}")
    return tuple(full)


def _entry(dev_id: str, raw: Mapping[str, Any]) -> PciEntry:
    return PciEntry(
        device_id=dev_id,
        name=str(raw["name"]),
        gfx=str(raw["gfx"]) if raw.get("gfx") else None,
        integrated=bool(raw["integrated"]) if "integrated" in raw else None,
        sources=strings(raw.get("src")),
        status=str(raw.get("status", "official")),
    )


def _optional(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _data_source(raw: Mapping[str, Any]) -> DataSource:
    return DataSource(
        key=str(raw["key"]),
        what=str(raw.get("what") or ""),
        date=_optional(raw.get("date")),
        repo=_optional(raw.get("repo")),
        path=_optional(raw.get("path")),
        commit=_optional(raw.get("commit")),
        url=_optional(raw.get("url")),
    )


_GC_KEY = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_GFX_VALUE = re.compile(r"^gfx[0-9]{1,2}[0-9a-f]{2}$")


def _gc_targets(raw: Mapping[Any, Any]) -> dict[GcVersion, str]:
    targets: dict[GcVersion, str] = {}
    for key, gfx in raw.items():
        match = _GC_KEY.match(str(key))
        if match is None or not _GFX_VALUE.match(str(gfx)):
            raise ValueError(f"gc_ip_targets: {key!r}: {gfx!r} is not MAJOR.MINOR.REV: gfxNNNN")
        major, minor, rev = (int(g) for g in match.groups())
        targets[(major, minor, rev)] = str(gfx)
    return targets


def parse_table(text: str) -> PciTable:
    """The table from the YAML text of a pci_ids file; PanelError when it is malformed."""
    try:
        data = yaml.load(text, Loader=_LOADER)
        if not isinstance(data, dict):
            raise TypeError(f"top level is {type(data).__name__}, not a mapping")
        raw = cast(dict[str, Any], data)
        devices = {
            str(dev_id).lower(): _entry(str(dev_id).lower(), entry)
            for dev_id, entry in (raw.get("devices") or {}).items()
        }
        sources = {str(k): str(v) for k, v in (raw.get("sources") or {}).items()}
        generated = raw.get("generated") or {}
        table = PciTable(
            devices=devices,
            source_text=sources,
            generated=tuple(_data_source(s) for s in generated.get("sources") or ()),
            generated_at=_optional(generated.get("at")),
            data_as_of=_optional(raw.get("data_as_of")),
            gc_targets=_gc_targets(raw.get("gc_ip_targets") or {}),
        )
    except (yaml.YAMLError, TypeError, KeyError, AttributeError, ValueError) as exc:
        raise PanelError(f"The data file {_FILE} is malformed.", repr(exc)) from exc
    return table


@lru_cache(maxsize=1)
def load_table() -> PciTable:
    """The table of the data set in force (shipped, or an installed data update), parsed
    once; PanelError when the file cannot be read."""
    try:
        return datasets.parse_data(_FILE, parse_table)
    except OSError as exc:
        raise PanelError(f"The data file {_FILE} could not be read.", str(exc)) from exc


datasets.on_reset(load_table.cache_clear)


def lookup(pci_id: str | None) -> PciEntry | None:
    """The shipped table's entry for ``pci_id`` ("1002:744c" or "744c"), or None."""
    return load_table().lookup(pci_id)


def entry_by_name(name: str | None) -> PciEntry | None:
    """The shipped table's entry matching a product name, or None (see PciTable)."""
    return load_table().entry_by_name(name)
