"""PCIe link figures: parsing, the card's own switch, idle/driver/slot/degraded verdicts,
and the recorded sysfs files of real cards (../shared/fixtures, skipped when absent)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rocmpanel.machine.pcie_link import (
    LinkState,
    PcieLink,
    PcieVerdict,
    assess,
    describe,
    generation,
    parse_link_speed,
    parse_link_width,
    parse_pp_dpm_pcie,
    pci_parents,
    read_link_state,
    read_pcie_link,
)


@pytest.mark.parametrize(
    ("text", "gts", "gen"),
    [
        ("2.5 GT/s PCIe", 2.5, 1),
        ("5.0 GT/s PCIe", 5.0, 2),
        ("8.0 GT/s PCIe", 8.0, 3),
        ("16.0 GT/s PCIe", 16.0, 4),
        ("32.0 GT/s PCIe", 32.0, 5),
        ("64.0 GT/s PCIe", 64.0, 6),
        ("8 GT/s", 8.0, 3),  # older kernels print no decimals and no "PCIe"
    ],
)
def test_speed_and_generation(text: str, gts: float, gen: int):
    assert parse_link_speed(text) == gts
    assert generation(gts) == gen


def test_unknown_speed_width_and_odd_rates():
    assert parse_link_speed("Unknown") is None
    assert parse_link_speed(None) is None
    assert generation(20.0) is None
    assert parse_link_width("0") is None  # link down
    assert parse_link_width("x") is None
    assert parse_link_width("8") == 8
    assert describe(16.0, 8) == "PCIe 4.0 x8"
    assert describe(None, None) == "n/a"
    assert describe(16.0, None) == "PCIe 4.0" and describe(None, 16) == "x16"
    assert describe(20.0, 4) == "PCIe 20 GT/s x4"


def test_pp_dpm_pcie_levels_and_current_marks():
    levels = parse_pp_dpm_pcie("0: 2.5GT/s, x1 310Mhz \n1: 16.0GT/s, x16 619Mhz *\n")
    assert [(lv.index, lv.speed_gts, lv.width, lv.active) for lv in levels] == [
        (0, 2.5, 1, False),
        (1, 16.0, 16, True),
    ]
    assert parse_pp_dpm_pcie("nonsense") == ()


def _link(now=(16.0, 16), card=(16.0, 16), slot=None, dpm=()):
    slot_state = LinkState(None, None, *slot) if slot else None
    return PcieLink(
        "0000:03:00.0", "0000:03:00.0", False, LinkState(*now, *card), "x", slot_state, dpm
    )


def _dpm(text: str):
    return parse_pp_dpm_pcie(text)


def test_full_link_is_full():
    assert assess(_link()).verdict is PcieVerdict.FULL


def test_x4_with_driver_at_top_level_is_degraded():
    a = assess(
        _link(now=(16.0, 4), slot=(16.0, 16), dpm=_dpm("0: 2.5GT/s, x1\n1: 16.0GT/s, x16 *"))
    )
    assert a.verdict is PcieVerdict.DEGRADED
    assert (a.now, a.possible) == ("PCIe 4.0 x4", "PCIe 4.0 x16")


def test_idle_level_is_not_crying_wolf():
    a = assess(_link(now=(2.5, 1), slot=(16.0, 16), dpm=_dpm("0: 2.5GT/s, x1 *\n1: 16.0GT/s, x16")))
    assert a.verdict is PcieVerdict.IDLE


def test_slot_slower_than_card():
    a = assess(_link(now=(8.0, 16), slot=(8.0, 16), dpm=_dpm("0: 2.5GT/s, x1\n1: 16.0GT/s, x16 *")))
    assert a.verdict is PcieVerdict.SLOT_LIMITED
    assert a.possible == "PCIe 3.0 x16" and a.card == "PCIe 4.0 x16"


def test_driver_cap_below_card_and_slot():
    a = assess(_link(now=(8.0, 16), slot=(16.0, 16), dpm=_dpm("0: 2.5GT/s, x1\n1: 8.0GT/s, x16 *")))
    assert a.verdict is PcieVerdict.DRIVER_CAPPED
    assert a.possible == "PCIe 3.0 x16"


def test_below_max_without_driver_levels_says_only_that():
    assert assess(_link(now=(2.5, 16), slot=(16.0, 16))).verdict is PcieVerdict.BELOW_MAX


def test_missing_maximum_is_unknown():
    link = PcieLink("b", "b", False, LinkState(16.0, 8, None, None), None, None)
    assert assess(link).verdict is PcieVerdict.UNKNOWN


def test_navi_internal_switch_reads_the_upstream_port(tmp_path: Path, topo_trees):
    topo_trees.navi_behind_switch(tmp_path)
    link = read_pcie_link("0000:03:00.0", tmp_path)
    assert link is not None
    assert link.behind_amd_switch and link.source_bdf == "0000:01:00.0"
    assert link.slot_bdf == "0000:00:01.1"
    assert (link.link.speed_gts, link.link.width) == (16.0, 4)  # not the GPU's own x16
    assert "upstream port" in link.source_note
    assert assess(link).verdict is PcieVerdict.DEGRADED


def test_parents_stop_at_the_host_bridge(tmp_path: Path, topo_trees):
    topo_trees.navi_behind_switch(tmp_path)
    gpu = (tmp_path / "bus/pci/devices/0000:03:00.0").resolve()
    assert [p.name for p in pci_parents(gpu)] == ["0000:02:00.0", "0000:01:00.0", "0000:00:01.1"]


def test_gpu_without_amd_bridge_reads_itself_and_its_port(tmp_path: Path, topo_trees):
    topo_trees.two_socket_radeons(tmp_path)
    link = read_pcie_link("0000:83:00.0", tmp_path)
    assert link is not None and not link.behind_amd_switch
    assert link.source_bdf == "0000:83:00.0" and link.slot_bdf == "0000:80:01.1"
    assert assess(link).verdict is PcieVerdict.FULL


def test_no_such_device(tmp_path: Path):
    assert read_pcie_link("0000:42:00.0", tmp_path) is None


# -- recorded files of real cards ----------------------------------------------------------
def test_recorded_rx580_and_rx6900xt_run_at_their_maximum(shared_fixtures: Path):
    for name, expect in (("rx580", (8.0, 16)), ("rx6900xt", (16.0, 16))):
        folder = shared_fixtures / "sysfs" / name
        state = read_link_state(folder)  # rx6900xt's files are NUL-padded to a page
        assert (state.speed_gts, state.width) == expect
        assert (state.max_speed_gts, state.max_width) == expect


def test_recorded_pp_dpm_pcie_of_four_cards(shared_fixtures: Path):
    from rocmpanel.machine.sysfs import read_text

    def levels(name: str):
        return parse_pp_dpm_pcie(read_text(shared_fixtures / "sysfs" / name / "pp_dpm_pcie"))

    rx580 = levels("rx580")
    assert [(lv.speed_gts, lv.width, lv.active) for lv in rx580] == [
        (2.5, 8, False),
        (8.0, 16, True),
    ]
    rx7600s = levels("rx7600s")  # a laptop part: x8 is its top level; two lines marked *
    assert max(lv.width for lv in rx7600s) == 8
    assert [lv.active for lv in rx7600s] == [False, True, True]
    assert all(lv.active for lv in levels("rx7900xt"))


def _recorded_tree(topo_trees, tmp_path: Path, fixture: Path, bdf: str) -> Path:
    """The recorded device folder placed at ``bdf`` under a root port in a /sys tree."""
    port = topo_trees.pci_device(
        tmp_path,
        ("0000:00:03.1",),
        topo_trees.port("0x1022", "8.0 GT/s PCIe", 16, "8.0 GT/s PCIe", 16),
    )
    device = port / bdf
    shutil.copytree(fixture, device, symlinks=False, ignore=shutil.ignore_patterns("hwmon"))
    link = tmp_path / "bus" / "pci" / "devices" / bdf
    link.symlink_to(device)
    return tmp_path


def test_recorded_rx580_in_a_tree_is_full(tmp_path: Path, shared_fixtures: Path, topo_trees):
    root = _recorded_tree(topo_trees, tmp_path, shared_fixtures / "sysfs" / "rx580", "0000:09:00.0")
    link = read_pcie_link("0000:09:00.0", root)
    assert link is not None and link.source_bdf == "0000:09:00.0"
    assert link.driver_top is not None and link.driver_top.speed_gts == 8.0
    assert assess(link).verdict is PcieVerdict.FULL


def test_recorded_rx7600s_without_maximum_files_is_unknown_not_a_warning(
    tmp_path: Path, shared_fixtures: Path, topo_trees
):
    root = _recorded_tree(
        topo_trees, tmp_path, shared_fixtures / "sysfs" / "rx7600s", "0000:03:00.0"
    )
    link = read_pcie_link("0000:03:00.0", root)
    assert link is not None and (link.link.speed_gts, link.link.width) == (16.0, 8)
    assert assess(link).verdict is PcieVerdict.UNKNOWN


def test_a_tree_with_only_drm_cards_is_read_there(tmp_path: Path):
    # The demo's tree (and many captured ones) holds GPUs under class/drm/cardN/device only.
    from rocmpanel.machine import demo

    demo.build_tree(tmp_path, demo.load_recording())
    link = read_pcie_link("0000:03:00.0", tmp_path)
    assert link is not None
    assert link.source_bdf == "0000:03:00.0" and not link.behind_amd_switch
    assert (link.link.speed_gts, link.link.max_speed_gts) == (16.0, None)
    assert assess(link).verdict is PcieVerdict.UNKNOWN  # no maximum recorded: no warning
