"""``doctor --from`` on plain ``lspci`` output (issue 11, point 7): AMD "Device XXXX" lines give
the id, named lines the name only, and the notes say that ``lspci -nn`` shows the ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmpanel.setup.captured import CapturedKind, analyse_texts, detect_kind
from rocmpanel.setup.report import build_report

from ..machine.test_parsers import LSPCI_PLAIN
from .test_captured import AMD_SMI_R9700

# The brief's example line: pci.ids without 7551 prints "Device 7551".
DEVICE_LINE = (
    "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Device 7551 "
    "(rev c0)\n"
)
# pci.ids 2026.05.24 (pciutils/pciids 006181e2): 744c "Navi 31 [Radeon RX 7900 XT/7900 XTX/
# 7900 GRE/7900M]"
NAMED_LINE = (
    "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 "
    "[Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M] (rev c8)\n"
)


def test_device_line_gives_the_id() -> None:
    assert detect_kind(DEVICE_LINE) is CapturedKind.LSPCI_PLAIN
    captured = analyse_texts([DEVICE_LINE])
    (gpu,) = captured.system.gpus
    assert gpu.pci_id == "1002:7551" and gpu.bdf == "0000:03:00.0"
    assert gpu.gfx == "gfx1201"  # from the PCI table, by id
    assert captured.kinds == (CapturedKind.LSPCI_PLAIN,)
    assert any("`lspci -nn`" in n and "`lspci -nnk`" in n for n in captured.notes)


def test_named_line_invents_no_id() -> None:
    captured = analyse_texts([NAMED_LINE])
    (gpu,) = captured.system.gpus
    assert gpu.pci_id is None
    assert gpu.name == "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]"
    assert gpu.gfx == "gfx1100"  # every table entry with that product says gfx1100
    (note,) = [n for n in captured.notes if "lspci" in n]
    assert "without -nn" in note and "not PCI ids" in note


def test_kernel_driver_lines() -> None:
    captured = analyse_texts([LSPCI_PLAIN])
    assert [g.bdf for g in captured.system.gpus] == [
        "0000:03:00.0",
        "0000:0b:00.0",
        "0000:0c:00.0",
    ]
    assert captured.system.driver == "amdgpu"  # "Kernel driver in use: amdgpu"
    assert any("0000:0b:00.0 is bound to the vfio-pci driver" in n for n in captured.notes)


def test_plain_lspci_and_another_machine() -> None:
    # lspci of a 7900 XTX in 03:00.0 and amd-smi of R9700s in 03:00.0 and 43:00.0
    captured = analyse_texts([NAMED_LINE, AMD_SMI_R9700])
    assert len(captured.machines) == 2
    assert "PCI slot 0000:03:00.0" in captured.notes[0]


@pytest.mark.parametrize("form", ["text", "markdown", "json"])
def test_note_reaches_every_output(form: str) -> None:
    captured = analyse_texts([DEVICE_LINE])
    report = build_report(captured.system, captured.host, captured.probe)
    out = {
        "text": report.to_text,
        "markdown": report.to_markdown,
        "json": lambda: json.dumps(report.to_dict()),
    }[form]()
    assert "lspci -nn" in out and "lspci -nnk" in out


def test_nn_fixture_gets_no_plain_note(shared_fixtures: Path) -> None:
    # tools/SOURCES.md: lspci -nn of an RX 6800 (73bf) and a Raphael iGPU (164e)
    text = (shared_fixtures / "tools/lspci-nn_vga_rx6800-navi21_plus_raphael_igpu.txt").read_text()
    captured = analyse_texts([text])
    assert [g.pci_id for g in captured.system.gpus] == ["1002:73bf", "1002:164e"]
    assert not any("without -nn" in n for n in captured.notes)
    assert captured.kinds == (CapturedKind.LSPCI,)
