"""Small KFD topology trees in the kernel's format, for tests of the GPU choice.

The node files are written by tests/topo_trees.py (one place for the format); this module
keeps the short form the GPU-choice tests use: a CPU node, then GPUs by (device, bus, gfx,
VRAM)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

# (device id, bus, gfx_target_version, VRAM bytes); a CPU node comes first, as on a real
# machine (KFD node 0 is the CPU).
RX7900XTX = (0x744C, 0x03, 110000, 24 << 30)
RX7900XTX_2 = (0x744C, 0x43, 110000, 24 << 30)  # a second one, in another slot
RX6900XT = (0x73BF, 0x0C, 100300, 16 << 30)
RAPHAEL_IGPU = (0x164E, 0x73, 100306, 512 << 20)


def _topo_trees() -> ModuleType:
    """tests/topo_trees.py, under the name conftest's ``topo_trees`` fixture gives it, so
    both share one module (tests/ is not a package: loaded by path)."""
    name = "rocmpanel_tests_topo_trees"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).with_name("topo_trees.py")
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def kfd_tree(root: Path, *gpus: tuple[int, int, int, int]) -> Path:
    """Write ``root/class/kfd/kfd/topology/nodes`` with a CPU node and ``gpus`` in order;
    returns ``root`` (a /sys-like folder)."""
    trees = _topo_trees()
    trees.cpu_node(root, 0, 16)
    for number, (device, bus, gfx, vram) in enumerate(gpus, start=1):
        simd = 96 if vram > 1 << 30 else 4  # an iGPU has few SIMDs
        trees.gpu_node(root, number, f"0000:{bus:02x}:00.0", (gfx, device, simd), vram=vram)
    return root
