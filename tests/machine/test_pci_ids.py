"""The PCI id table in machine/: lookup by device id, the AMD vendor id, the file's shape,
and the facts of issue 11 checked against the shipped (generated) table."""

from __future__ import annotations

import re

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.machine import pci_ids
from rocmpanel.machine.pci_ids import (
    AMD_VENDOR_ID,
    is_amd_vendor,
    normalize_id,
    parse_table,
    products,
)


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
        assert entry.status in ("official", "derived", "community"), entry


def test_malformed_file_is_a_panel_error() -> None:
    with pytest.raises(PanelError):
        parse_table("- just\n- a list\n")
    with pytest.raises(PanelError):
        parse_table("devices:\n  '744c': {gfx: gfx1100}\n")  # no name


_GFX = re.compile(r"^gfx[0-9]{1,2}[0-9a-f]{2}$")


def test_every_shipped_gfx_is_well_formed() -> None:
    table = pci_ids.load_table()
    for entry in table.devices.values():
        assert entry.gfx is None or _GFX.match(entry.gfx), entry
        assert entry.name.startswith("AMD "), entry
    assert all(_GFX.match(gfx) for gfx in table.gc_targets.values())


# The facts of issue 11, each with the source that decides it. "kernel": amdgpu_drv.c's
# pciidlist + kfd_device.c (gregkh/linux @ 2519003dd5fb); "pci.ids": pciutils/pciids
# 2026.10.09 (@ 3452638d16a3); "gpus.yaml": ROCm/rocm-docs docs/data/gpus.yaml
# (@ 793e0c2edf9c); codenames: scripts/datagen/codenames.yaml.
@pytest.mark.parametrize(
    ("device", "gfx", "integrated", "status"),
    [
        pytest.param("687f", "gfx900", False, "official", id="Vega 56/64: kernel CHIP_VEGA10"),
        pytest.param("7499", "gfx1102", False, "derived", id="RX 7400/7300: pci.ids Navi 33"),
        pytest.param("7483", "gfx1102", False, "derived", id="RX 7600M: pci.ids Navi 33"),
        pytest.param("74a2", "gfx942", False, "derived", id="MI308X: pci.ids Aqua Vanjaram"),
        pytest.param("7424", "gfx1034", False, "official", id="RX 6300: kernel BEIGE_GOBY"),
        pytest.param("7590", "gfx1200", False, "derived", id="7590: pci.ids Navi 44"),
        pytest.param("1902", "gfx1153", True, "derived", id="Krackan2: GC 11.5.3, not gfx1152"),
        pytest.param("1114", "gfx1152", True, "derived", id="Krackan: gpus.yaml gfx1152"),
        pytest.param("75a3", "gfx950", False, "derived", id="MI355X: pci.ids + arch specs"),
        # pci.ids 2026.10.09: "75a8  Aqua Vanjaram [Instinct MI350P]" (absent from 2026.05.24);
        # gpus.yaml: "AMD Instinct MI350P: gfx: gfx950"
        pytest.param("75a8", "gfx950", False, "derived", id="MI350P: pci.ids + gpus.yaml"),
        # pci.ids 2026.10.09: "7481  Navi 33 [Steam Machine]"; Navi 33 is gfx1102 (codenames)
        pytest.param("7481", "gfx1102", False, "derived", id="Steam Machine: pci.ids Navi 33"),
        # pci.ids 2026.10.09: "13c0  Granite Ridge [Radeon 610M]"; codenames: ROCm issue 4390
        pytest.param("13c0", "gfx1036", True, "derived", id="Granite Ridge: gfx1036"),
    ],
)
def test_issue_11_devices(device: str, gfx: str, integrated: bool, status: str) -> None:
    entry = pci_ids.lookup(f"1002:{device}")
    assert entry is not None
    assert (entry.gfx, entry.integrated, entry.status) == (gfx, integrated, status)
    assert "pciids" in entry.sources or "amdgpu_drv_c" in entry.sources


@pytest.mark.parametrize(
    ("device", "name"),
    [
        # pci.ids 2026.10.09: "7590  Navi 44 [Radeon RX 9050 / 9060 XT]", as the issue quotes
        # it (2026.05.24 had "Navi 44 [Radeon RX 9060 XT]")
        ("7590", "AMD Radeon RX 9050 / 9060 XT (Navi 44)"),
        ("75a8", "AMD Instinct MI350P (Aqua Vanjaram)"),
        # pci.ids 2026.10.09 renamed 7481 from "Navi 33 [Radeon Graphics]"
        ("7481", "AMD Steam Machine (Navi 33)"),
        # pci.ids 2026.10.09 renamed 13c0 from "Granite Ridge [Radeon Graphics]"
        ("13c0", "AMD Radeon 610M (Granite Ridge)"),
    ],
)
def test_devices_are_named_as_pci_ids_names_them(device: str, name: str) -> None:
    entry = pci_ids.lookup(device)
    assert entry is not None and entry.name == name


def test_mi350p_cites_the_list_that_names_it() -> None:
    # AMD's arch-specs page names only the MI350X and MI355X; gpus.yaml names the MI350P
    entry = pci_ids.lookup("75a8")
    assert entry is not None and entry.sources == ("pciids", "gpus_yaml")


def test_shipped_pci_ids_is_at_least_2026_10_09() -> None:
    # the pin must not fall back behind the copy that first lists 75a8 (MI350P)
    table = pci_ids.load_table()
    pin = next(s for s in table.generated if s.key == "pciids")
    assert pin.date is not None and pin.date >= "2026-10-09"
    assert table.data_as_of is not None and table.data_as_of >= "2026-10-09"


# The 68 ids of the hand-written table this generated one replaced: none may disappear.
_BEFORE_ISSUE_11 = """
75a3 75a0 74a5 74b9 74a1 74a9 74bd 74b5 74a0 7408 740c 740f 738c 738e 66a0 66a1 6860
7551 7460 7461 7448 744a 744b 745e 7449 7470 7489 73a3 73a1 73ae 73e3 7422 7341 7550
7590 744c 747e 7480 73a5 73af 73bf 73df 73ef 73ff 743f 66af 731f 7340 67df 6fdf 1586
150e 1114 1902 15bf 15c8 1900 1901 1681 164e 13c0 1506 1636 1638 164c 15e7 163f 1435
"""


def test_no_id_of_the_earlier_table_is_lost() -> None:
    before = re.findall(r"[0-9a-f]{4}", _BEFORE_ISSUE_11)
    assert len(before) == 68
    table = pci_ids.load_table()
    assert [d for d in before if d not in table.devices] == []


def test_shipped_table_says_where_and_how_old() -> None:
    table = pci_ids.load_table()
    assert table.data_as_of is not None and re.match(r"^\d{4}-\d{2}-\d{2}$", table.data_as_of)
    keys = [s.key for s in table.generated]
    assert keys == ["amdgpu_drv_c", "kfd_device_c", "pciids"]
    assert all(s.commit and s.url for s in table.generated)
    assert table.generated_at is not None
    assert table.gc_targets[(11, 0, 0)] == "gfx1100"
    assert table.gc_targets[(11, 0, 3)] == "gfx1101"  # not a formula: the compiler's 11.0.1


def test_parse_reads_generated_block_and_gc_map() -> None:
    table = parse_table(
        "generated:\n  at: '2026-10-01'\n  sources:\n"
        "  - {key: k, what: w, date: '2026-09-30', commit: abc, url: 'https://x'}\n"
        "data_as_of: '2026-09-30'\n"
        "gc_ip_targets:\n  11.5.1: gfx1151\n"
        "devices:\n  '1586': {name: AMD X, gfx: gfx1151, integrated: true, src: [k],"
        " status: derived}\n"
    )
    assert table.generated_at == "2026-10-01" and table.data_as_of == "2026-09-30"
    assert table.generated[0].date == "2026-09-30" and table.generated[0].repo is None
    assert table.gc_targets == {(11, 5, 1): "gfx1151"}
    assert table.lookup("1586").status == "derived"  # type: ignore[union-attr]


def test_an_old_table_without_the_new_keys_still_parses() -> None:
    table = parse_table("devices:\n  '744c': {name: AMD X, gfx: gfx1100}\n")
    assert table.generated == () and table.data_as_of is None and table.gc_targets == {}


@pytest.mark.parametrize("gc_map", ["{11.0: gfx1100}", "{11.0.0: navi31}", "{x.y.z: gfx1100}"])
def test_malformed_gc_map_is_a_panel_error(gc_map: str) -> None:
    with pytest.raises(PanelError):
        parse_table(f"gc_ip_targets: {gc_map}\ndevices: {{}}\n")


def test_products_spell_each_name_in_full() -> None:
    name = "AMD Radeon RX 7600 / 7600 XT / 7600S / PRO W7600 (Navi 33)"
    assert products(name) == (
        "AMD Radeon RX 7600",
        "AMD Radeon RX 7600 XT",
        "AMD Radeon RX 7600S",
        "AMD Radeon PRO W7600",
    )
    assert products("AMD Radeon Pro VII / Radeon Instinct MI50 (Vega 20)") == (
        "AMD Radeon Pro VII",
        "AMD Radeon Instinct MI50",
    )
    assert products("AMD Instinct MI250X / MI250 (Aldebaran/MI200)") == (
        "AMD Instinct MI250X",
        "AMD Instinct MI250",
    )


@pytest.mark.parametrize(
    ("name", "gfx"),
    [
        ("AMD Radeon RX 6800", "gfx1030"),  # exact: not the RX 6800M (gfx1031) or 6800S
        ("AMD Radeon RX 7900 GRE", "gfx1100"),  # a later product of a shared id
        ("Radeon PRO W7600", "gfx1102"),
        ("AMD Radeon 890M Graphics", "gfx1150"),  # rocminfo's marketing-name spelling
        ("AMD Instinct MI250", "gfx90a"),
        ("AMD Instinct MI350P", "gfx950"),  # 75a8, pci.ids 2026.10.09
        ("AMD Radeon RX 9050", "gfx1200"),  # 7590, pci.ids 2026.10.09; gpus.yaml gfx1200
    ],
)
def test_entry_by_name_finds_every_product_of_an_id(name: str, gfx: str) -> None:
    entry = pci_ids.entry_by_name(name)
    assert entry is not None and entry.gfx == gfx


def test_radeon_610m_is_one_target_on_three_chips() -> None:
    # pci.ids 2026.10.09 names 1506 "Mendocino [Radeon 610M]", 13c0 "Granite Ridge [Radeon
    # 610M]" and 164e "Raphael [Radeon 610M]"; KFD gives GC 10.3.6 and 10.3.7 one target
    for device in ("1506", "13c0", "164e"):
        entry = pci_ids.lookup(device)
        assert entry is not None and entry.gfx == "gfx1036", device
    entry = pci_ids.entry_by_name("AMD Radeon 610M")
    assert entry is not None and entry.gfx == "gfx1036"
