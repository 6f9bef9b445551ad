"""The PCI id table in machine/: lookup by device id, the AMD vendor id, the file's shape."""

from __future__ import annotations

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.machine import pci_ids
from rocmpanel.machine.pci_ids import AMD_VENDOR_ID, is_amd_vendor, normalize_id, parse_table


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0x1002", "1002"),
        ("1002", "1002"),
        (" 0X1002\n", "1002"),
        ("0x744C", "744c"),
        ("73f", "073f"),
        ("", None),
        (None, None),
        ("0x10de2", None),
        ("amd", None),
    ],
)
def test_normalize_id(text: str | None, expected: str | None) -> None:
    assert normalize_id(text) == expected


def test_amd_vendor_in_every_spelling() -> None:
    assert AMD_VENDOR_ID == "1002"
    assert is_amd_vendor("0x1002") and is_amd_vendor("1002")
    assert not is_amd_vendor("0x10de") and not is_amd_vendor(None)


def test_lookup_by_full_id_bare_id_and_hex_prefix() -> None:
    entry = pci_ids.lookup("1002:744c")
    assert entry is not None and entry.gfx == "gfx1100" and entry.integrated is False
    assert pci_ids.lookup("744c") == entry
    assert pci_ids.lookup("0x1002:0x744C") == entry


def test_lookup_refuses_other_vendors_and_unknown_ids() -> None:
    assert pci_ids.lookup("10de:744c") is None
    assert pci_ids.lookup("1002:ffff") is None
    assert pci_ids.lookup(None) is None
    assert pci_ids.lookup("") is None


def test_entry_by_name_needs_an_unambiguous_target() -> None:
    entry = pci_ids.entry_by_name("AMD Radeon RX 7900 XTX")
    assert entry is not None and entry.gfx == "gfx1100"
    assert pci_ids.entry_by_name("Radeon") is None  # too short / matches many targets


def test_every_entry_names_known_sources() -> None:
    table = pci_ids.load_table()
    assert table.devices
    for entry in table.devices.values():
        assert entry.sources, entry
        assert all(key in table.source_text for key in entry.sources), entry
        assert entry.status in ("official", "community"), entry


def test_malformed_file_is_a_panel_error() -> None:
    with pytest.raises(PanelError):
        parse_table("- just\n- a list\n")
    with pytest.raises(PanelError):
        parse_table("devices:\n  '744c': {gfx: gfx1100}\n")  # no name
