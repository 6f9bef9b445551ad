"""AMD PCI device ids (resources/pci_ids.yaml), typed, and the one AMD vendor id.

A GPU seen only through sysfs, lspci or CIM gets its product family and gfx target from this
table. Every entry keeps its sources and whether it is official or community knowledge, so a
verdict built on it can say where the fact comes from. The file is parsed once per process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import yaml

from rocmpanel.base.errors import PanelError
from rocmpanel.base.resources import read_resource

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
class PciTable:
    """The whole table: entries by 4-digit device id, and the sources' descriptions."""

    devices: Mapping[str, PciEntry]
    source_text: Mapping[str, str]

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
        """The entry whose product name contains ``name`` (a truncated or marketing name
        such as "Radeon AI PRO R9700"), when all such entries agree on the gfx target."""
        text = (name or "").lstrip(".").strip().lower().removeprefix("amd ").strip()
        if len(text) < 6:
            return None
        hits = [e for e in self.devices.values() if text in e.name.lower()]
        if hits and len({e.gfx for e in hits}) == 1:
            return hits[0]
        return None


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _entry(dev_id: str, raw: Mapping[str, Any]) -> PciEntry:
    return PciEntry(
        device_id=dev_id,
        name=str(raw["name"]),
        gfx=str(raw["gfx"]) if raw.get("gfx") else None,
        integrated=bool(raw["integrated"]) if "integrated" in raw else None,
        sources=_strings(raw.get("src")),
        status=str(raw.get("status", "official")),
    )


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
    except (yaml.YAMLError, TypeError, KeyError, AttributeError) as exc:
        raise PanelError(f"The data file {_FILE} is malformed.", repr(exc)) from exc
    return PciTable(devices=devices, source_text=sources)


@lru_cache(maxsize=1)
def load_table() -> PciTable:
    """The shipped table, parsed once; PanelError when the file cannot be read."""
    try:
        text = read_resource(_FILE)
    except OSError as exc:
        raise PanelError(f"The data file {_FILE} could not be read.", str(exc)) from exc
    return parse_table(text)


def lookup(pci_id: str | None) -> PciEntry | None:
    """The shipped table's entry for ``pci_id`` ("1002:744c" or "744c"), or None."""
    return load_table().lookup(pci_id)


def entry_by_name(name: str | None) -> PciEntry | None:
    """The shipped table's entry matching a product name, or None (see PciTable)."""
    return load_table().entry_by_name(name)
