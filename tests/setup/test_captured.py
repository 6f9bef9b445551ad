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
    captured = analyse_texts([ROCMINFO, json.dumps(ROCM_SMI_6)])
    assert len(captured.system.gpus) == 2  # a 6800 XT (rocminfo) and a 7900 XTX (smi)
    same = analyse_texts([COLLECT_ENV, HIPINFO])
    assert len(same.system.gpus) == 2


@pytest.mark.parametrize("text", ["", "hello world", '{"a": 1}', "Traceback (most recent"])
def test_unknown_text_is_a_clear_error(text: str) -> None:
    with pytest.raises(PanelError, match="not output rocmpanel recognises"):
        analyse_texts([text])
