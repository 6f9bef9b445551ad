"""Captures of different machines are never merged silently (issue 11, point 7): another GPU
in the same PCI slot, a GPU a full listing lacks, another host name or another ROCm; and
captures of one machine still merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmpanel.setup.capture_input import split_input
from rocmpanel.setup.captured import analyse_texts
from rocmpanel.setup.report import build_report

from ..machine.test_parsers import CIM, HIPINFO, ROCMINFO
from .test_captured import AMD_SMI_R9700, COLLECT_ENV, ROCM_SMI_6, ROCMINFO_7900

GIB = 2**30


def _machine_gpus(captured) -> list[list[str]]:
    return [[g.gfx or "?" for g in m.system.gpus] for m in captured.parts]


def test_issue_example_inline() -> None:
    # A 7900 XTX rocminfo plus an R9700 amd-smi used to merge into "RX 7900 XTX 31.9 GiB".
    captured = analyse_texts([ROCMINFO_7900, AMD_SMI_R9700], labels=["a.txt", "b.txt"])
    assert _machine_gpus(captured) == [["gfx1100"], ["gfx1201", "gfx1201"]]
    xtx = captured.machines[0].system.gpus[0]
    assert xtx.name == "Radeon RX 7900 XTX" and xtx.vram_bytes == 25149440 * 1024
    assert xtx.sources == ("rocminfo",)
    assert not any(
        g.name == "Radeon RX 7900 XTX" and g.sources != ("rocminfo",) for g in captured.system.gpus
    )
    note = captured.system.notes[0]
    assert "2 different machines" in note and "a.txt (rocminfo)" in note
    assert "PCI slot 0000:03:00.0" in note and "gfx1100" in note and "gfx1201" in note
    assert "amdgpu driver 6.8.5" in note and "6.16.6" in note
    # each machine is judged on its own facts: only amd-smi knows a ROCm version
    assert captured.machines[0].system.rocm_version is None
    assert captured.machines[1].system.rocm_version == "7.2.0"
    assert captured.system.rocm_version is None  # the machines disagree
    assert captured.machines[1].system.notes[0].startswith("Machine 2 of 2")


def test_issue_example_in_one_input_with_prompts() -> None:
    text = "alice@ws1:~$ rocminfo\n" + ROCMINFO_7900 + "alice@ws1:~$ sudo amd-smi\n" + AMD_SMI_R9700
    assert [host for _, host in split_input(text)] == ["ws1", "ws1"]
    captured = analyse_texts([text])
    assert [k.value for k in captured.kinds] == ["rocminfo", "amd-smi"]
    assert captured.labels == (
        "the pasted text, part 1 (rocminfo)",
        "the pasted text, part 2 (amd-smi)",
    )
    assert _machine_gpus(captured) == [["gfx1100"], ["gfx1201", "gfx1201"]]


def test_issue_example_fixtures(shared_fixtures: Path) -> None:
    # tools/SOURCES.md: ROCm/ROCm #3949 (7900 XTX, ROCm 6.2.2) and #5706 (2x R9700, 7.2.0)
    tools = shared_fixtures / "tools"
    texts = [
        (tools / "rocminfo_gfx1100_rx7900xtx_rocm6.2.2.txt").read_text(encoding="utf-8"),
        (tools / "amd-smi_default_26.2.1_rocm7.2.0_r9700_x2.txt").read_text(encoding="utf-8"),
    ]
    for captured in (analyse_texts(texts), analyse_texts(["\n".join(texts)])):
        assert _machine_gpus(captured) == [["gfx1100"], ["gfx1201", "gfx1201"]]
        assert all(
            g.vram_bytes is None or g.vram_bytes < 25 * GIB
            for g in captured.machines[0].system.gpus
        )
        report = build_report(captured.system, captured.host, captured.probe)
        data = report.to_dict()
        assert "different machines" in data["system"]["notes"][0]
        assert "different machines" in report.to_text()
        assert "different machines" in report.to_markdown()
        assert not any(
            g["name"] == "Radeon RX 7900 XTX" and g["vram_bytes"] > 30 * GIB for g in data["gpus"]
        )


def test_one_machine_in_one_input_merges() -> None:
    text = ROCMINFO_7900 + "\n" + json.dumps(ROCM_SMI_6, indent=2) + "\n"
    captured = analyse_texts([text])
    assert captured.machines == ()
    (gpu,) = captured.system.gpus
    assert gpu.sources[:2] == ("rocminfo", "rocm-smi")


def test_host_names_differ() -> None:
    first = "bob@gpu-a:~$ rocminfo\n" + ROCMINFO_7900
    second = "[bob@gpu-b ~]$ rocminfo\n" + ROCMINFO_7900
    captured = analyse_texts([first, second])
    assert len(captured.machines) == 2
    assert (
        "host name gpu-a in text 1 (rocminfo), gpu-b in text 2 (rocminfo)"
        in (captured.system.notes[0])
    )
    same = analyse_texts([first, "bob@gpu-a:~$ rocminfo\n" + ROCMINFO_7900])
    assert same.machines == ()


def test_rocm_versions_differ() -> None:
    older = AMD_SMI_R9700.replace("ROCm version: 7.2.0", "ROCm version: 6.4.1")
    captured = analyse_texts([AMD_SMI_R9700, older])
    assert len(captured.machines) == 2
    assert "ROCm 7.2.0 in text 1 (amd-smi), 6.4.1 in text 2 (amd-smi)" in captured.notes[0]
    assert [m.system.rocm_version for m in captured.machines] == ["7.2.0", "6.4.1"]
    assert analyse_texts([AMD_SMI_R9700, AMD_SMI_R9700]).machines == ()


def test_full_listing_with_fewer_discrete_gpus() -> None:
    # amd-smi shows two R9700; a rocm-smi of one RX 9070 XT (also gfx1201) is another machine.
    rocm_smi = {"card0": {"Device ID": "0x7550"}, "system": {}}
    captured = analyse_texts([AMD_SMI_R9700, json.dumps(rocm_smi)])
    assert len(captured.machines) == 2
    assert "lists 2 discrete GPU(s)" in captured.notes[0]
    # with PCI slots, the R9700 in 43:00.0 is simply not in rocm-smi's list
    rocm_smi["card0"]["PCI Bus"] = "0000:03:00.0"
    slotted = analyse_texts([AMD_SMI_R9700, json.dumps(rocm_smi)])
    assert "Radeon AI PRO R9700 (gfx1201) at 0000:43:00.0" in slotted.notes[0]


def test_hsa_override_does_not_split() -> None:
    # With HSA_OVERRIDE_GFX_VERSION=10.3.0 a 6700 XT (gfx1031, 73df) reports gfx1030; its PCI id
    # stays. Same card, same machine.
    overridden = ROCMINFO.replace("29631(0x73bf)", "29663(0x73df)")
    rocm_smi = {"card0": {"Device ID": "0x73df", "PCI Bus": "0000:0b:00.0"}, "system": {}}
    assert analyse_texts([overridden, json.dumps(rocm_smi)]).machines == ()
    env = COLLECT_ENV.replace(
        "GPU 0: AMD Radeon RX 7900 XTX (gfx1100)\nGPU 1: AMD Radeon Graphics (gfx1036)",
        "GPU 0: AMD Radeon RX 6700 XT (gfx1030)",
    )
    no_slot = {"card0": {"Device ID": "0x73df"}, "system": {}}
    assert analyse_texts([env, json.dumps(no_slot)]).machines == ()


def test_integrated_gpu_missing_from_one_listing_does_not_split() -> None:
    with_igpu = {
        "card0": {"Device ID": "0x744c", "PCI Bus": "0000:03:00.0"},
        "card1": {"Device ID": "0x164e", "PCI Bus": "0000:13:00.0"},
        "system": {},
    }
    assert analyse_texts([ROCMINFO_7900, json.dumps(with_igpu)]).machines == ()
    windows = analyse_texts([HIPINFO, CIM])  # the same 7900 XTX and Raphael iGPU
    assert windows.machines == ()
    # Pasted CIM has no slot and hipInfo no PCI id: each name, listed once on each side,
    # pairs them (issue 18 item 3: this gave 4 GPUs for 2).
    assert [
        (g.name, g.pci_id, g.gfx, g.bdf, g.vram_bytes, g.integrated, g.sources)
        for g in windows.system.gpus
    ] == [
        (
            "AMD Radeon RX 7900 XTX",
            "1002:744c",
            "gfx1100",
            "0000:03:00.0",
            int(23.98 * GIB),  # hipInfo's; CIM's AdapterRAM is at its 4 GiB cap
            False,
            ("hipinfo", "cim"),
        ),
        (
            "AMD Radeon(TM) Graphics",
            "1002:164e",
            "gfx1036",
            "0000:13:00.0",
            536870912,  # CIM's exact AdapterRAM over hipInfo's rounded 0.50 GB
            True,
            ("hipinfo", "cim"),
        ),
    ]


def test_three_inputs_two_machines() -> None:
    captured = analyse_texts([ROCMINFO_7900, AMD_SMI_R9700, json.dumps(ROCM_SMI_6)])
    assert [m.labels for m in captured.machines] == [
        ("text 1 (rocminfo)", "text 3 (rocm-smi --json)"),
        ("text 2 (amd-smi)",),
    ]
    assert _machine_gpus(captured) == [["gfx1100"], ["gfx1201", "gfx1201"]]


@pytest.mark.parametrize("kind", ["text", "markdown", "json"])
def test_every_output_names_the_conflict(kind: str) -> None:
    captured = analyse_texts([ROCMINFO_7900, AMD_SMI_R9700])
    report = build_report(captured.system, captured.host, captured.probe)
    out = {
        "text": report.to_text,
        "markdown": report.to_markdown,
        "json": lambda: json.dumps(report.to_dict()),
    }[kind]()
    assert "different machines" in out and "0000:03:00.0" in out
    for machine in captured.parts:
        single = build_report(machine.system, machine.host, machine.probe)
        assert "diagnosed from" in single.to_text()
