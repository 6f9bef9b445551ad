"""The topology model on built KFD/PCI trees: matrix, hops, weights, NUMA, warnings."""

from __future__ import annotations

import json
from pathlib import Path

from rocmpanel.multigpu.topology import (
    NO_PATH,
    SAME,
    parse_cpulist,
    process_nodes,
    read_topology,
)
from rocmpanel.multigpu.topology_warnings import Severity


def codes(topo) -> list[str]:
    return [w.code for w in topo.warnings]


def test_four_mi300x_fully_xgmi(tmp_path: Path, topo_trees):
    topo = read_topology(topo_trees.mi300x_box(tmp_path, 4), check_process=False)
    assert [g.index for g in topo.gpus] == [0, 1, 2, 3]
    assert all("MI300X" in g.name and g.gfx == "gfx942" for g in topo.gpus)
    for a in range(4):
        for b in range(4):
            pair = topo.link(a, b)
            if a == b:
                assert pair.kind == SAME and pair.hops == 0
            else:
                assert (pair.kind, pair.hops, pair.weight) == ("XGMI", 1, 15)
                assert pair.max_bandwidth_mbs == 64000
    assert topo.warnings == ()  # nothing to act on
    assert topo.gpus[0].pcie_assessment is not None
    assert topo.gpus[0].pcie_assessment.now == "PCIe 5.0 x16"


def test_mi300x_without_xgmi_links_warns(tmp_path: Path, topo_trees):
    root = tmp_path
    topo_trees.cpu_node(root, 0)
    for i, bdf in enumerate(("0000:11:00.0", "0000:31:00.0")):
        topo_trees.gpu_node(root, i + 1, bdf, topo_trees.MI300X)
        topo_trees.link(root, i + 1, 0, topo_trees.PCIE, 20)
    topo = read_topology(root, check_process=False)
    pair = topo.link(0, 1)
    assert (pair.kind, pair.hops, pair.weight) == ("PCIe", 2, 40)
    warning = next(w for w in topo.warnings if w.code == "no-xgmi")
    assert warning.gpus == (0, 1) and "Infinity Fabric" in warning.message
    assert "bridge" in warning.what_to_do


def test_two_radeons_on_two_sockets(tmp_path: Path, topo_trees):
    root = topo_trees.two_socket_radeons(tmp_path)
    topo = read_topology(root, check_process=False)
    pair = topo.link(0, 1)
    # GPU -> CPU0 -> CPU1 -> GPU: 3 hops, weights 20 + 21 + 20, as rocm-smi sums them
    assert (pair.kind, pair.hops, pair.weight) == ("PCIe", 3, 61)
    assert [g.numa_node for g in topo.gpus] == [0, 1]
    assert codes(topo) == ["numa-pair"]
    assert "NUMA node 0" in topo.warnings[0].message and "NUMA node 1" in topo.warnings[0].message
    assert "no-xgmi" not in codes(topo)  # Radeons have no XGMI to miss


def test_xgmi_pair_on_two_sockets_is_not_a_numa_warning(tmp_path: Path, topo_trees):
    # Data between an XGMI pair never crosses the socket link, whatever their NUMA nodes.
    t = topo_trees
    t.cpu_node(tmp_path, 0)
    t.cpu_node(tmp_path, 1)
    t.link(tmp_path, 0, 1, t.QPI, 21)
    t.numa(tmp_path, {0: "0-7", 1: "8-15"})
    for node, cpu, bdf in ((2, 0, "0000:11:00.0"), (3, 1, "0000:91:00.0")):
        t.gpu_node(tmp_path, node, bdf, t.MI300X)
        t.link(tmp_path, node, cpu, t.PCIE, 20)
        t.pci_device(tmp_path, (bdf,), t.gpu_files(numa=cpu))
    t.link(tmp_path, 2, 3, t.XGMI, 15)
    topo = read_topology(tmp_path, check_process=False)
    assert [g.numa_node for g in topo.gpus] == [0, 1]
    assert (topo.link(0, 1).kind, topo.link(0, 1).hops) == ("XGMI", 1)
    assert codes(topo) == []


def test_process_pinned_to_the_other_node(tmp_path: Path, topo_trees):
    root = topo_trees.two_socket_radeons(tmp_path)
    topo = read_topology(root, check_process=False)
    assert topo.process_numa_nodes is None  # not checked for a captured tree
    from rocmpanel.machine.kfd_links import read_graph
    from rocmpanel.machine.pcie_link import read_pcie_link
    from rocmpanel.multigpu.topology import build, numa_cpus

    graph = read_graph(root)
    pcie = {g.bdf: read_pcie_link(g.bdf, root) for g in graph.gpus if g.bdf}
    pinned = build(graph, pcie, numa_node_cpus=numa_cpus(root), affinity={0, 1, 2, 3})  # type: ignore[arg-type]
    assert pinned.process_numa_nodes == (0,)
    numa = [w for w in pinned.warnings if w.code == "numa-process"]
    assert [w.gpus for w in numa] == [(1,)]
    assert "numactl --cpunodebind=1 --membind=1" in numa[0].what_to_do
    everywhere = build(graph, pcie, numa_node_cpus=numa_cpus(root), affinity=range(16))  # type: ignore[arg-type]
    assert "numa-process" not in codes(everywhere)


def test_card_at_x4_behind_its_switch(tmp_path: Path, topo_trees):
    topo = read_topology(topo_trees.navi_behind_switch(tmp_path), check_process=False)
    assert codes(topo) == ["pcie-degraded", "single-gpu"]
    warning = topo.warnings[0]
    assert warning.severity is Severity.WARNING
    assert "PCIe 4.0 x4" in warning.message and "PCIe 4.0 x16" in warning.message
    assert "0000:01:00.0" in warning.message  # says where the figure was read
    assert "Reseat" in warning.what_to_do


def test_idle_link_is_info_with_the_under_load_hint(tmp_path: Path, topo_trees):
    root = topo_trees.navi_behind_switch(
        tmp_path,
        upstream_now=("2.5 GT/s PCIe", 1),
        dpm="0: 2.5GT/s, x1 *\n1: 16.0GT/s, x16",
    )
    topo = read_topology(root, check_process=False)
    idle = next(w for w in topo.warnings if w.code == "pcie-idle")
    assert idle.severity is Severity.INFO
    assert "at idle the link may train down; check under load" in idle.message.lower()
    assert not any(w.code == "pcie-degraded" for w in topo.warnings)


def test_slot_and_driver_caps(tmp_path: Path, topo_trees):
    slot = read_topology(
        topo_trees.navi_behind_switch(
            tmp_path / "a", slot=("8.0 GT/s PCIe", 8), upstream_now=("8.0 GT/s PCIe", 8)
        ),
        check_process=False,
    )
    assert "pcie-slot" in codes(slot)
    capped = read_topology(
        topo_trees.navi_behind_switch(
            tmp_path / "b",
            upstream_now=("8.0 GT/s PCIe", 16),
            dpm="0: 2.5GT/s, x1\n1: 8.0GT/s, x16 *",
        ),
        check_process=False,
    )
    warning = next(w for w in capped.warnings if w.code == "pcie-driver-cap")
    assert "amdgpu.pcie_gen_cap" in warning.what_to_do


def test_igpu_next_to_dgpu(tmp_path: Path, topo_trees):
    topo = read_topology(topo_trees.apu_with_dgpu(tmp_path), check_process=False)
    assert [g.integrated for g in topo.gpus] == [True, False]
    assert "integrated-gpu" in codes(topo)
    igpu = next(w for w in topo.warnings if w.code == "integrated-gpu")
    assert igpu.gpus == (0,)
    assert topo.link(0, 1).hops == 2


def test_single_gpu_says_there_is_nothing_to_compare(tmp_path: Path, topo_trees):
    topo = read_topology(topo_trees.mi300x_box(tmp_path, 1), check_process=False)
    assert codes(topo) == ["single-gpu"]


def test_gpus_without_links_say_so(tmp_path: Path, topo_trees):
    topo_trees.cpu_node(tmp_path, 0)
    topo_trees.gpu_node(tmp_path, 1, "0000:03:00.0")
    topo_trees.gpu_node(tmp_path, 2, "0000:04:00.0")
    topo = read_topology(tmp_path, check_process=False)
    assert topo.link(0, 1).kind == NO_PATH
    assert "no-links" in codes(topo)


def test_p2p_entry_fills_a_missing_path(tmp_path: Path, topo_trees):
    topo_trees.cpu_node(tmp_path, 0)
    topo_trees.gpu_node(tmp_path, 1, "0000:03:00.0")
    topo_trees.gpu_node(tmp_path, 2, "0000:04:00.0")
    topo_trees.link(tmp_path, 1, 2, topo_trees.PCIE, 40, p2p=True)
    pair = read_topology(tmp_path, check_process=False).link(0, 1)
    assert (pair.kind, pair.weight, pair.hops, pair.via_p2p_entry) == ("PCIe", 40, None, True)


def test_no_kfd(tmp_path: Path):
    topo = read_topology(tmp_path, check_process=False)
    assert not topo.found and topo.warnings == () and topo.pairs == ()


def test_to_json_round_trips(tmp_path: Path, topo_trees):
    topo = read_topology(topo_trees.two_socket_radeons(tmp_path), check_process=False)
    data = json.loads(json.dumps(topo.to_json()))
    assert data["found"] is True
    assert [g["numa_node"] for g in data["gpus"]] == [0, 1]
    assert data["links"][0] == {
        "from": 0,
        "to": 1,
        "type": "PCIe",
        "hops": 3,
        "weight": 61,
        "max_bandwidth_mbs": None,
    }
    assert data["gpus"][0]["pcie"]["verdict"] == "full"
    assert data["warnings"][0]["code"] == "numa-pair"


def test_cpulists_and_process_nodes():
    assert parse_cpulist("0-3,8,10-11") == frozenset({0, 1, 2, 3, 8, 10, 11})
    assert parse_cpulist("") == frozenset()
    assert parse_cpulist("x-y") == frozenset()
    nodes = {0: frozenset(range(8)), 1: frozenset(range(8, 16))}
    assert process_nodes(nodes, {9}) == (1,)
    assert process_nodes(nodes, range(16)) == (0, 1)


def test_links_to_a_node_that_is_not_there_make_no_path(tmp_path: Path, topo_trees):
    # Damage: both GPUs list an XGMI link to node 99, which the topology does not have. A
    # path through it would be invented (XGMI, 2 hops) and hide the missing links.
    topo_trees.cpu_node(tmp_path, 0)
    for i, bdf in enumerate(("0000:11:00.0", "0000:31:00.0")):
        topo_trees.gpu_node(tmp_path, i + 1, bdf, topo_trees.MI300X)
        topo_trees.link(tmp_path, i + 1, 99, topo_trees.XGMI, 15, both=False)
    topo = read_topology(tmp_path, check_process=False)
    assert topo.link(0, 1).kind == NO_PATH
    assert "no-links" in codes(topo)


def test_no_known_link_is_not_called_pcie_only(tmp_path: Path, topo_trees):
    # MI300X without any io_links: "no links listed" (info), not "only over PCIe".
    topo_trees.cpu_node(tmp_path, 0)
    for i, bdf in enumerate(("0000:11:00.0", "0000:31:00.0")):
        topo_trees.gpu_node(tmp_path, i + 1, bdf, topo_trees.MI300X)
    topo = read_topology(tmp_path, check_process=False)
    assert "no-links" in codes(topo) and "no-xgmi" not in codes(topo)
