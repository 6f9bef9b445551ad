"""KFD io_links/p2p_links reading, on small trees in the kernel's format."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.machine.kfd_links import (
    IOLINK_PCIE,
    IOLINK_XGMI,
    link_type_name,
    parse_link,
    pci_numa_node,
    read_graph,
    read_links,
)


def test_link_type_numbers_are_the_kernels():
    # kfd_crat.h: CRAT_IOLINK_TYPE_PCIEXPRESS 2, CRAT_IOLINK_TYPE_XGMI 11 (16 is OTHER).
    assert (IOLINK_PCIE, IOLINK_XGMI) == (2, 11)
    assert link_type_name(11) == "XGMI"
    assert link_type_name(2) == "PCIe"
    assert link_type_name(16) == "other"
    assert link_type_name(77) == "type 77"


def test_parse_link_reads_every_field_and_drops_zero_bandwidth():
    text = (
        "type 11\nversion_major 0\nversion_minor 0\nnode_from 2\nnode_to 3\nweight 15\n"
        "min_latency 0\nmax_latency 0\nmin_bandwidth 0\nmax_bandwidth 64000\n"
        "recommended_transfer_size 0\nflags 3\n"
    )
    link = parse_link(text, node_from=9)
    assert link is not None
    assert (link.node_from, link.node_to, link.type, link.weight) == (2, 3, 11, 15)
    assert link.max_bandwidth_mbs == 64000
    assert link.min_bandwidth_mbs is None  # 0 means "not reported"
    assert link.flags == 3 and link.is_xgmi and not link.indirect


def test_parse_link_without_node_to_is_dropped_and_node_from_defaults_to_the_folder():
    assert parse_link("type 2\nweight 20\n", node_from=1) is None
    link = parse_link("type 2\nnode_to 0\n", node_from=4)
    assert link is not None and link.node_from == 4 and link.weight is None


def test_read_links_of_a_four_gpu_xgmi_box(tmp_path: Path, topo_trees):
    topo_trees.mi300x_box(tmp_path, gpus=4)
    links = read_links(tmp_path)
    xgmi = {(x.node_from, x.node_to) for x in links if x.is_xgmi}
    # every ordered pair of the four GPU nodes (1..4) has its XGMI link
    assert xgmi == {(a, b) for a in range(1, 5) for b in range(1, 5) if a != b}
    pcie = [x for x in links if x.type == IOLINK_PCIE]
    assert len(pcie) == 8  # each GPU to CPU node 0 and back
    assert all(x.weight == 20 for x in pcie)


def test_p2p_links_are_read_as_indirect(tmp_path: Path, topo_trees):
    topo_trees.cpu_node(tmp_path, 0)
    topo_trees.gpu_node(tmp_path, 1, "0000:03:00.0")
    topo_trees.gpu_node(tmp_path, 2, "0000:04:00.0")
    topo_trees.link(tmp_path, 1, 2, IOLINK_PCIE, 40, p2p=True)
    links = read_links(tmp_path)
    assert {(x.node_from, x.node_to) for x in links} == {(1, 2), (2, 1)}
    assert all(x.indirect for x in links)


def test_read_graph_numa_comes_from_the_pci_device(tmp_path: Path, topo_trees):
    topo_trees.two_socket_radeons(tmp_path)
    graph = read_graph(tmp_path)
    assert [g.node for g in graph.gpus] == [2, 3]
    assert graph.cpu_node_ids == (0, 1)
    assert graph.numa == {2: 0, 3: 1}
    assert {x.node_to for x in graph.links_from(2)} == {0}


def test_numa_minus_one_and_missing_are_none(tmp_path: Path, topo_trees):
    topo_trees.apu_with_dgpu(tmp_path)
    assert pci_numa_node("0000:03:00.0", tmp_path) is None  # -1
    assert pci_numa_node("0000:99:00.0", tmp_path) is None  # no such device
    assert pci_numa_node(None, tmp_path) is None


def test_no_kfd_is_an_empty_graph(tmp_path: Path):
    graph = read_graph(tmp_path)
    assert graph.gpus == () and graph.links == () and graph.node_ids == ()


@pytest.mark.parametrize("bad", ["", "garbage\n", "node_to x\n"])
def test_damaged_link_files_are_skipped(tmp_path: Path, bad: str, topo_trees):
    topo_trees.mi300x_box(tmp_path, gpus=2)
    damaged = tmp_path / topo_trees.NODES / "1" / "io_links" / "7" / "properties"
    damaged.parent.mkdir(parents=True)
    damaged.write_text(bad)
    assert len(read_links(tmp_path)) == 6  # 2 GPU<->CPU pairs, 1 XGMI pair, both ways
