"""Edge cases of the GPU choice, the topology, the chat spread, the all-reduce sizes and
the launch scripts that a one-line change would break without another test noticing."""

from __future__ import annotations

from pathlib import Path

from rocmpanel.jobs.gpu_choice import choose, runtime_gpus
from rocmpanel.multigpu.topology import build, numa_cpus, read_topology


def test_a_single_gpu_is_named_not_called_all(tmp_path, kfd) -> None:
    gpus = runtime_gpus(kfd.kfd_tree(tmp_path, kfd.RX7900XTX))
    for wanted in (None, ()):
        label = choose(gpus, wanted, "linux").label
        assert label.startswith("GPU 0 ") and "0000:03:00.0" in label, label


def _two_sockets_both_gpus_on_node0(root: Path, t) -> Path:
    t.cpu_node(root, 0)
    t.cpu_node(root, 1)
    t.link(root, 0, 1, t.QPI, 21)
    t.numa(root, {0: "0-7", 1: "8-15"})
    for node, bdf in ((2, "0000:03:00.0"), (3, "0000:23:00.0")):
        t.gpu_node(root, node, bdf)
        t.link(root, node, 0, t.PCIE, 20)
        t.pci_device(root, (bdf,), t.gpu_files(numa=0))
    return root


def test_gpus_on_one_socket_of_two_are_not_a_numa_warning(tmp_path: Path, topo_trees) -> None:
    topo = read_topology(_two_sockets_both_gpus_on_node0(tmp_path, topo_trees), check_process=False)
    assert topo.link(0, 1).hops == 2  # GPU -> CPU0 -> GPU
    assert "numa-pair" not in [w.code for w in topo.warnings]


def test_one_gpu_on_the_socket_the_process_may_not_use(tmp_path: Path, topo_trees) -> None:
    from rocmpanel.machine.kfd_links import read_graph
    from rocmpanel.machine.pcie_link import read_pcie_link

    t, root = topo_trees, tmp_path
    t.cpu_node(root, 0)
    t.cpu_node(root, 1)
    t.link(root, 0, 1, t.QPI, 21)
    t.numa(root, {0: "0-7", 1: "8-15"})
    t.gpu_node(root, 2, "0000:83:00.0")
    t.link(root, 2, 1, t.PCIE, 20)
    t.pci_device(root, ("0000:83:00.0",), t.gpu_files(numa=1))
    graph = read_graph(root)
    pcie = {g.bdf: read_pcie_link(g.bdf, root) for g in graph.gpus if g.bdf}
    pinned = build(graph, pcie, numa_node_cpus=numa_cpus(root), affinity={0, 1, 2, 3})  # type: ignore[arg-type]
    assert [w.gpus for w in pinned.warnings if w.code == "numa-process"] == [(0,)]


def test_an_integrated_gpu_gets_no_pcie_warning(tmp_path: Path, topo_trees) -> None:
    root = topo_trees.apu_with_dgpu(tmp_path)
    igpu = root / "bus" / "pci" / "devices" / "0000:0e:00.0"
    (igpu / "current_link_width").write_text("4")  # an APU's internal link says nothing
    topo = read_topology(root, check_process=False)
    assert [w.code for w in topo.warnings if w.gpus == (0,)] == ["integrated-gpu"]


def test_sizes_are_whole_float32_elements() -> None:
    import importlib
    import sys

    workers = str(Path(__file__).resolve().parents[2] / "rocmpanel" / "workers")
    sys.path.insert(0, workers)
    try:
        allreduce = importlib.import_module("allreduce")
    finally:
        sys.path.remove(workers)
    assert allreduce.sizes(6, 48) == [4, 12, 24, 48]


def test_the_largest_layer_is_kept_on_the_first_gpu_of_a_spread() -> None:
    import importlib
    import sys

    workers = str(Path(__file__).resolve().parents[2] / "rocmpanel" / "workers")
    sys.path.insert(0, workers)
    try:
        d = importlib.import_module("_chat_devices")
    finally:
        sys.path.remove(workers)
    gib = 1024**3
    rooms = [d.GpuRoom(0, int(15.2 * gib), 24 * gib), d.GpuRoom(1, int(17.5 * gib), 24 * gib)]
    need = d.Need(20 * gib, 1 * gib, largest_layer=2 * gib)
    plan = d.plan_placement(need, rooms)
    # GPU 0 keeps room for the largest layer: it cannot take an even half, so "sequential".
    assert plan.gpus == (0, 1) and plan.device_map == "sequential"


def test_slurm_passes_each_rendezvous_option_once() -> None:
    from rocmpanel.multigpu import launch
    from rocmpanel.multigpu.launch import LaunchPlan

    text = launch.render(LaunchPlan("/x/t.py", nnodes=2), "slurm", must_exist=False)
    for option in ("--nnodes=", "--rdzv-endpoint=", "--rdzv-id="):
        assert text.count(option) == 1, option
    assert '--rdzv-id="$SLURM_JOB_ID"' in text
