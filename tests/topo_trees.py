"""Small /sys-like trees for the topology tests, in the kernel's formats.

KFD: ``class/kfd/kfd/topology/nodes/N/properties`` and ``io_links/M/properties`` of
``key value`` lines, the fields amdkfd's ``kfd_topology.c`` prints (``node_props`` and
``iolink_show``). PCI: ``devices/pci0000:00/<port>/<device>/...`` folders with
``bus/pci/devices/<bdf>`` symlinks into them, as the kernel lays them out. NUMA:
``devices/system/node/nodeN/cpulist``. Loaded by path (tests/ is not a package).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

NODES = Path("class/kfd/kfd/topology/nodes")
PCIE, XGMI, QPI = 2, 11, 5

# gfx_target_version, PCI device id, SIMD count of the GPUs the trees use
MI300X = (90402, 0x74A1, 1216)
RX7900XTX = (110000, 0x744C, 192)
RAPHAEL_IGPU = (100306, 0x164E, 4)
MI210 = (90010, 0x740F, 416)


def location_id(bdf: str) -> tuple[int, int]:
    """(location_id, domain) of a PCI address, as KFD writes them."""
    domain, bus, devfn = bdf.split(":")
    dev, fn = devfn.split(".")
    return (int(bus, 16) << 8) | (int(dev, 16) << 3) | int(fn), int(domain, 16)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def cpu_node(root: Path, node: int, cores: int = 16) -> None:
    """A CPU node (``simd_count 0``, vendor 0, as the kernel writes a CPU's properties)."""
    _write(
        root / NODES / str(node) / "properties",
        f"cpu_cores_count {cores}\nsimd_count 0\nvendor_id 0\nmem_banks_count 1\nio_links_count 0",
    )


def gpu_node(
    root: Path,
    node: int,
    bdf: str,
    kind: tuple[int, int, int] = RX7900XTX,
    *,
    vram: int | None = None,
) -> None:
    """A GPU node at PCI address ``bdf``: its properties, ``gpu_id`` and, with ``vram``
    (bytes), a public frame-buffer memory bank. The one writer of KFD node files in tests/
    (kfd_tree.py builds on it)."""
    gfx, device, simd = kind
    loc, domain = location_id(bdf)
    _write(
        root / NODES / str(node) / "properties",
        "\n".join(
            (
                "cpu_cores_count 0",
                f"simd_count {simd}",
                f"gfx_target_version {gfx}",
                "vendor_id 4098",
                f"device_id {device}",
                f"location_id {loc}",
                f"domain {domain}",
                f"drm_render_minor {127 + node}",
            )
        ),
    )
    _write(root / NODES / str(node) / "gpu_id", str(1000 + node))
    if vram is not None:  # heap_type 1: frame buffer, public
        _write(
            root / NODES / str(node) / "mem_banks" / "0" / "properties",
            f"heap_type 1\nsize_in_bytes {vram}",
        )


def link(
    root: Path,
    node_from: int,
    node_to: int,
    kind: int,
    weight: int,
    *,
    max_bandwidth: int = 0,
    p2p: bool = False,
    both: bool = True,
) -> None:
    """An io_links (or p2p_links) entry from ``node_from``, and back when ``both``."""
    for a, b in ((node_from, node_to), (node_to, node_from)) if both else ((node_from, node_to),):
        folder = root / NODES / str(a) / ("p2p_links" if p2p else "io_links")
        index = len(list(folder.iterdir())) if folder.is_dir() else 0
        _write(
            folder / str(index) / "properties",
            "\n".join(
                (
                    f"type {kind}",
                    "version_major 0",
                    "version_minor 0",
                    f"node_from {a}",
                    f"node_to {b}",
                    f"weight {weight}",
                    "min_latency 0",
                    "max_latency 0",
                    "min_bandwidth 0" if not max_bandwidth else f"min_bandwidth {max_bandwidth}",
                    f"max_bandwidth {max_bandwidth}",
                    "recommended_transfer_size 0",
                    "flags 1",
                )
            ),
        )


def pci_device(
    root: Path,
    chain: Sequence[str],
    files: Mapping[str, str],
    *,
    domain: str = "pci0000:00",
) -> Path:
    """The device at the end of ``chain`` (its parents before it), with ``files``; every
    device of the chain gets its bus/pci/devices symlink. Returns the device folder."""
    folder = root / "devices" / domain
    for bdf in chain:
        folder = folder / bdf
        folder.mkdir(parents=True, exist_ok=True)
        link_path = root / "bus" / "pci" / "devices" / bdf
        if not link_path.is_symlink():
            link_path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.path.relpath(folder, link_path.parent), link_path)
    for name, text in files.items():
        _write(folder / name, text)
    return folder


def port(vendor: str, speed: str, width: int, max_speed: str, max_width: int) -> dict[str, str]:
    """The files of a bridge port (class 0x060400)."""
    return {
        "vendor": vendor,
        "class": "0x060400",
        "current_link_speed": speed,
        "current_link_width": str(width),
        "max_link_speed": max_speed,
        "max_link_width": str(max_width),
    }


def gpu_files(
    speed: str = "16.0 GT/s PCIe",
    width: int = 16,
    max_speed: str = "16.0 GT/s PCIe",
    max_width: int = 16,
    *,
    numa: int = -1,
    dpm: str | None = None,
) -> dict[str, str]:
    files = {
        "vendor": "0x1002",
        "class": "0x030000",
        "current_link_speed": speed,
        "current_link_width": str(width),
        "max_link_speed": max_speed,
        "max_link_width": str(max_width),
        "numa_node": str(numa),
    }
    if dpm is not None:
        files["pp_dpm_pcie"] = dpm
    return files


def numa(root: Path, cpulists: Mapping[int, str]) -> None:
    for node, cpus in cpulists.items():
        _write(root / "devices" / "system" / "node" / f"node{node}" / "cpulist", cpus)


# -- whole machines ------------------------------------------------------------------------
def mi300x_box(root: Path, gpus: int = 4) -> Path:
    """``gpus`` MI300X, every pair joined by XGMI, on one CPU node, PCIe 5.0 x16 each."""
    cpu_node(root, 0, 96)
    numa(root, {0: "0-95"})
    for i in range(gpus):
        bdf = f"0000:{0x11 + 0x20 * i:02x}:00.0"
        gpu_node(root, i + 1, bdf, MI300X)
        link(root, i + 1, 0, PCIE, 20)
        pci_device(
            root,
            (f"0000:{0x10 + 0x20 * i:02x}:01.1", bdf),
            gpu_files("32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16, numa=0),
        )
    for a in range(1, gpus + 1):
        for b in range(a + 1, gpus + 1):
            link(root, a, b, XGMI, 15, max_bandwidth=64000)
    return root


def two_socket_radeons(root: Path) -> Path:
    """Two RX 7900 XTX, one per socket (NUMA nodes 0 and 1), over PCIe 4.0 x16."""
    cpu_node(root, 0)
    cpu_node(root, 1)
    link(root, 0, 1, QPI, 21)
    numa(root, {0: "0-7", 1: "8-15"})
    for node, cpu, bdf in ((2, 0, "0000:03:00.0"), (3, 1, "0000:83:00.0")):
        gpu_node(root, node, bdf)
        link(root, node, cpu, PCIE, 20)
        rp = f"0000:{int(bdf[5:7], 16) - 3:02x}:01.1"
        pci_device(root, (rp,), port("0x1022", "16.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16))
        pci_device(root, (rp, bdf), gpu_files(numa=cpu))
    return root


def navi_behind_switch(
    root: Path,
    *,
    slot: tuple[str, int] = ("16.0 GT/s PCIe", 16),
    upstream_now: tuple[str, int] = ("16.0 GT/s PCIe", 4),
    dpm: str | None = "0: 2.5GT/s, x1 \n1: 16.0GT/s, x16 *",
) -> Path:
    """One RX 7900 XTX behind its own switch (AMD upstream and downstream ports); the
    slot's root port supports ``slot``; the card's upstream port runs at ``upstream_now``."""
    cpu_node(root, 0)
    numa(root, {0: "0-15"})
    gpu_node(root, 1, "0000:03:00.0")
    link(root, 1, 0, PCIE, 20)
    chain = ("0000:00:01.1", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0")
    pci_device(root, chain[:1], port("0x1022", slot[0], slot[1], slot[0], slot[1]))
    pci_device(
        root, chain[:2], port("0x1002", upstream_now[0], upstream_now[1], "16.0 GT/s PCIe", 16)
    )
    pci_device(root, chain[:3], port("0x1002", "16.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16))
    pci_device(root, chain, gpu_files(dpm=dpm))
    return root


def apu_with_dgpu(root: Path) -> Path:
    """A Raphael iGPU (node 1) next to an RX 7900 XTX (node 2), both on CPU node 0."""
    cpu_node(root, 0)
    numa(root, {0: "0-15"})
    gpu_node(root, 1, "0000:0e:00.0", RAPHAEL_IGPU)
    gpu_node(root, 2, "0000:03:00.0", RX7900XTX)
    link(root, 1, 0, PCIE, 20)
    link(root, 2, 0, PCIE, 20)
    pci_device(root, ("0000:00:08.1", "0000:0e:00.0"), gpu_files(numa=-1))
    pci_device(root, ("0000:00:01.1", "0000:03:00.0"), gpu_files(numa=-1))
    return root
