"""Pasted-output diagnosis on the project's own small captures."""

from __future__ import annotations

import json

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.setup.captured import CapturedKind, analyse_texts, detect_kind
from rocmpanel.setup.report import build_report

from ..machine.test_parsers import CIM, HIPINFO, ROCMINFO

ROCM_SMI_6 = {
    "card0": {
        "Device ID": "0x744c",
        "Card Series": "Navi 31 [Radeon RX 7900 XT/7900 XTX]",
        "GFX Version": "gfx1100",
        "PCI Bus": "0000:03:00.0",
        "VRAM Total Memory (B)": "25753026560",
    },
    "system": {"Driver version": "6.8.5"},
}
AMD_SMI_STATIC = [
    {
        "gpu": 0,
        "asic": {
            "market_name": "AMD Instinct MI300X",
            "vendor_id": "0x1002",
            "device_id": "0x74a1",
            "target_graphics_version": "gfx942",
        },
        "bus": {"bdf": "0000:05:00.0"},
        "vram": {"type": "HBM", "size": {"value": 196592, "unit": "MB"}},
        "driver": {"name": "amdgpu", "version": "6.10.5"},
    },
]
# Small captures in the real formats (shortened): a 7900 XTX rocminfo (ROCk 6.8.5, BDFID 768
# = 03:00.0) and a default ``amd-smi`` table of two Radeon AI PRO R9700 (layout of amd-smi
# 26.2.1, ROCm/ROCm issue #5706).
ROCMINFO_7900 = """\
ROCk module version 6.8.5 is loaded
=====================
HSA System Attributes
=====================
Runtime Version:         1.14
Runtime Ext Version:     1.6

==========
HSA Agents
==========
*******
Agent 1
*******
  Name:                    gfx1100
  Marketing Name:          Radeon RX 7900 XTX
  Node:                    1
  Device Type:             GPU
  Chip ID:                 29772(0x744c)
  BDFID:                   768
  Pool Info:
    Pool 1
      Segment:                 GLOBAL; FLAGS: COARSE GRAINED
      Size:                    25149440(0x17fc000) KB
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1100
*** Done ***
"""
AMD_SMI_R9700 = """\
+------------------------------------------------------------------------------+
| AMD-SMI 26.2.1+fc0010cf6a    amdgpu version: 6.16.6   ROCm version: 7.2.0    |
| Platform: Linux Baremetal                                                    |
|-------------------------------------+----------------------------------------|
| BDF                        GPU-Name | Mem-Uti   Temp   UEC       Power-Usage |
| GPU  HIP-ID  OAM-ID  Partition-Mode | GFX-Uti    Fan               Mem-Usage |
|=====================================+========================================|
| 0000:03:00.0 ...Radeon AI PRO R9700 | 1 %      79 °C   0           103/300 W |
|   0       0     N/A             N/A | 100 %   38.82           29777/32624 MB |
|-------------------------------------+----------------------------------------|
| 0000:43:00.0 ...Radeon AI PRO R9700 | 0 %      80 °C   0            92/300 W |
|   1       1     N/A             N/A | 100 %   40.0 %          29777/32624 MB |
+-------------------------------------+----------------------------------------+
"""
COLLECT_ENV = """\
PyTorch version: 2.5.1+rocm6.2
Is debug build: False
CUDA used to build PyTorch: N/A
ROCM used to build PyTorch: 6.2.41133-dd7f95766

OS: Ubuntu 24.04.1 LTS (x86_64)
Python version: 3.12.3 (main) [GCC 13.2.0] (64-bit runtime)
Python platform: Linux-6.8.0-47-generic-x86_64-with-glibc2.39
Is CUDA available: True
GPU models and configuration: GPU 0: AMD Radeon RX 7900 XTX (gfx1100)
GPU 1: AMD Radeon Graphics (gfx1036)
HIP runtime version: 6.2.41133
"""


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (ROCMINFO, CapturedKind.ROCMINFO),
        (json.dumps(ROCM_SMI_6), CapturedKind.ROCM_SMI_JSON),
        (json.dumps(AMD_SMI_STATIC), CapturedKind.AMD_SMI_JSON),
        (json.dumps({"gpu_data": AMD_SMI_STATIC}), CapturedKind.AMD_SMI_JSON),
        (COLLECT_ENV, CapturedKind.COLLECT_ENV),
        (HIPINFO, CapturedKind.HIPINFO),
        (CIM, CapturedKind.WINDOWS_CIM),
        (
            "0b:00.0 Display controller [0380]: Advanced Micro Devices, Inc. [AMD/ATI] "
            "Device [1002:740f] (rev 02)\n",
            CapturedKind.LSPCI,
        ),
        (
            "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] "
            "Device 7551 (rev c0)\n",
            CapturedKind.LSPCI_PLAIN,
        ),
        ("03:00.0 0300: 1002:744c (rev c8)\n", CapturedKind.LSPCI_NUMERIC),
        (ROCMINFO_7900, CapturedKind.ROCMINFO),
        (AMD_SMI_R9700, CapturedKind.AMD_SMI_TEXT),
    ],
)
def test_kinds(text: str, kind: CapturedKind) -> None:
    assert detect_kind(text) is kind
    assert analyse_texts([text]).system.gpus


def test_rocm_smi_json_newer_keys() -> None:
    (gpu,) = analyse_texts([json.dumps(ROCM_SMI_6)]).system.gpus
    assert (gpu.gfx, gpu.pci_id, gpu.bdf, gpu.vram_bytes) == (
        "gfx1100",
        "1002:744c",
        "0000:03:00.0",
        25753026560,
    )


def test_amd_smi_static_json() -> None:
    captured = analyse_texts([json.dumps(AMD_SMI_STATIC)])
    (gpu,) = captured.system.gpus
    assert gpu.name == "AMD Instinct MI300X" and gpu.gfx == "gfx942"
    assert gpu.vram_bytes == 196592 * 2**20
    assert captured.system.driver == "amdgpu 6.10.5"


def test_collect_env_gives_torch_facts() -> None:
    captured = analyse_texts([COLLECT_ENV])
    assert [g.gfx for g in captured.system.gpus] == ["gfx1100", "gfx1036"]
    assert captured.system.rocm_version == "6.2"
    probe = captured.probe
    assert probe is not None and probe.build == "rocm" and probe.cuda_available
    assert [d.gfx for d in probe.devices] == ["gfx1100", "gfx1036"]


def test_windows_text_is_judged_for_windows_and_overrides() -> None:
    captured = analyse_texts([HIPINFO], rocm_version="6.2.4")
    assert captured.system.os == "windows"
    report = build_report(captured.system, captured.host, captured.probe)
    assert report.verdicts[0].status.value == "supported"
    linux = analyse_texts([HIPINFO], os_name="linux")
    assert linux.system.os == "linux"


def test_several_texts_of_one_machine_merge() -> None:
    same = analyse_texts([ROCMINFO_7900, json.dumps(ROCM_SMI_6)])
    (gpu,) = same.system.gpus  # one 7900 XTX at 03:00.0, seen by both
    assert gpu.sources[:2] == ("rocminfo", "rocm-smi") and gpu.vram_bytes == 25753026560
    assert same.machines == () and same.parts == (same,)
    assert not any("different machines" in n for n in same.notes)
    windows = analyse_texts([COLLECT_ENV, HIPINFO])
    assert len(windows.system.gpus) == 2 and windows.machines == ()


def test_texts_of_two_machines_are_kept_apart() -> None:
    # A 6800 XT in slot 0b:00.0 (rocminfo) is missing from rocm-smi's full list, which shows
    # a 7900 XTX in 03:00.0: two machines, each diagnosed on its own.
    captured = analyse_texts([ROCMINFO, json.dumps(ROCM_SMI_6)])
    assert len(captured.machines) == 2
    assert [[g.gfx for g in m.system.gpus] for m in captured.machines] == [
        ["gfx1030"],
        ["gfx1100"],
    ]
    assert [g.gfx for g in captured.system.gpus] == ["gfx1030", "gfx1100"]
    assert "different machines" in captured.system.notes[0]


@pytest.mark.parametrize("text", ["", "hello world", '{"a": 1}', "Traceback (most recent"])
def test_unknown_text_is_a_clear_error(text: str) -> None:
    with pytest.raises(PanelError, match="not output rocmpanel recognises"):
        analyse_texts([text])
