"""Every real recorded output in ../shared/fixtures that describes a GPU yields the name, gfx
target and VRAM its SOURCES.md lists (skipped when ../shared is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.base.enums import CheckStatus
from rocmpanel.machine.detect import detect
from rocmpanel.setup.captured import analyse_texts
from rocmpanel.setup.compat import VerdictStatus, verdict_for
from rocmpanel.setup.report import build_report

KB = 1024
MB = 2**20

# file -> [(name, gfx, vram_bytes, pci_id, bdf)] per GPU, from tools/SOURCES.md
TOOLS = {
    "rocminfo_gfx1100_rx7900xtx_rocm6.2.2.txt": [
        ("Radeon RX 7900 XTX", "gfx1100", 25149440 * KB, "1002:744c", "0000:03:00.0")
    ],
    "rocminfo_gfx1100_rx7900xtx_wsl2_rocm6.3.4.txt": [
        ("AMD Radeon RX 7900 XTX", "gfx1100", 25101988 * KB, "1002:744c", None)
    ],
    "rocminfo_gfx1031_rx6700xt_rocm5.6-5.7.txt": [
        ("AMD Radeon RX 6700 XT", "gfx1031", 12566528 * KB, "1002:73df", "0000:28:00.0")
    ],
    "rocminfo_gfx900_mi25_multi_rocm5.x.txt": [
        ("Radeon Instinct MI25", "gfx900", 16760832 * KB, "1002:6860", None)
    ]
    * 7,
    "rocm-smi_concise_6.x_mi300x_x4.txt": [
        ("AMD Instinct MI300X", "gfx942", None, "1002:74a1", None)
    ]
    * 4,
    "rocm-smi_showallinfo_6.x_mi300x_x4.txt": [
        ("AMD Instinct MI300X OAM", "gfx942", None, "1002:74a1", None)
    ]
    * 4,
    "rocm-smi_concise_7.2.1_rx9070xt_plus_granite_ridge_igpu.txt": [
        (None, "gfx1201", None, "1002:7550", None),
        (None, "gfx1036", None, "1002:13c0", None),
    ],
    "rocm-smi_json_4.3_rx6700xt_gfx1031.json": [
        (None, "gfx1031", 12868124672, "1002:73df", "0000:07:00.0")
    ],
    "rocm-smi_json_6.0.2_mi100_x4.json": [
        ("Arcturus GL-XL [Instinct MI100]", "gfx908", 34342961152, "1002:738c", bdf)
        for bdf in ("0000:83:00.0", "0000:a3:00.0", "0000:c3:00.0", "0000:e3:00.0")
    ],
    "rocm-smi_json_rocm4.x_mi50-32gb_gfx906.json": [
        ("Radeon Instinct MI50 32GB", "gfx906", 34342961152, "1002:66a1", "0000:63:00.0")
    ],
    "amd-smi_default_26.2.1_rocm7.2.0_r9700_x2.txt": [
        ("Radeon AI PRO R9700", "gfx1201", 32624 * MB, None, "0000:03:00.0"),
        ("Radeon AI PRO R9700", "gfx1201", 32624 * MB, None, "0000:43:00.0"),
    ],
    "powershell_get-wmiobject_win32_videocontroller_rx580_ru-locale.txt": [
        ("AMD Radeon RX 580 2048SP", "gfx803", None, "1002:6fdf", None)
    ],
    "lspci-nn_vga_rx6800-navi21_plus_raphael_igpu.txt": [
        (
            "Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]",
            "gfx1030",
            None,
            "1002:73bf",
            "0000:03:00.0",
        ),
        ("Raphael", "gfx1036", None, "1002:164e", "0000:13:00.0"),
    ],
    "collect_env_rocm6.3.4_wsl2_rx7900xtx.txt": [
        ("AMD Radeon RX 7900 XTX", "gfx1100", None, None, None)
    ],
}

# folder -> (pci id, slot, gfx, vram) from sysfs/SOURCES.md (gfx from the PCI table)
SYSFS = {
    "rx580": ("1002:67df", "0000:09:00.0", "gfx803", 4294967296),
    "rx6900xt": ("1002:73bf", "0000:0c:00.0", "gfx1030", 17163091968),
    "rx7600s": ("1002:7480", "0000:03:00.0", "gfx1102", None),
    "rx7900xt": ("1002:744c", "0000:03:00.0", "gfx1100", None),
}


def _read(shared: Path, name: str) -> str:
    return (shared / "tools" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_tool_fixture(shared_fixtures: Path, name: str) -> None:
    captured = analyse_texts([_read(shared_fixtures, name)])
    got = [(g.name, g.gfx, g.vram_bytes, g.pci_id, g.bdf) for g in captured.system.gpus]
    assert len(got) == len(TOOLS[name])
    for (name_, gfx, vram, pci, bdf), want in zip(got, TOOLS[name], strict=True):
        if want[0] is not None:
            assert name_ == want[0]
        assert gfx == want[1] and vram == want[2] and pci == want[3]
        if want[4] is not None:
            assert bdf == want[4]


def test_every_gpu_fixture_is_covered(shared_fixtures: Path) -> None:
    files = {p.name for p in (shared_fixtures / "tools").iterdir() if p.suffix != ".md"}
    errors_only = {f for f in files if f.startswith("rocminfo_error_")}
    assert files - errors_only == set(TOOLS)


@pytest.mark.parametrize("folder", sorted(SYSFS))
def test_sysfs_fixture(shared_fixtures: Path, folder: str) -> None:
    system = detect(sysfs_root=shared_fixtures / "sysfs" / folder).system
    (gpu,) = system.gpus
    pci, slot, gfx, vram = SYSFS[folder]
    assert (gpu.pci_id, gpu.bdf, gpu.gfx, gpu.vram_bytes) == (pci, slot, gfx, vram)
    assert gpu.name and gpu.integrated is False


def test_sysfs_folder_of_captures(shared_fixtures: Path) -> None:
    system = detect(sysfs_root=shared_fixtures / "sysfs").system
    assert sorted(g.pci_id or "" for g in system.gpus) == sorted(p for p, *_ in SYSFS.values())


def test_system_facts(shared_fixtures: Path) -> None:
    native = analyse_texts([_read(shared_fixtures, "rocminfo_gfx1100_rx7900xtx_rocm6.2.2.txt")])
    assert native.system.driver == "amdgpu 6.8.5"
    smi = analyse_texts([_read(shared_fixtures, "amd-smi_default_26.2.1_rocm7.2.0_r9700_x2.txt")])
    assert (smi.system.rocm_version, smi.system.driver) == ("7.2.0", "amdgpu 6.16.6")
    mi50 = analyse_texts([_read(shared_fixtures, "rocm-smi_json_rocm4.x_mi50-32gb_gfx906.json")])
    assert mi50.system.driver == "amdgpu 5.9.17"
    allinfo = analyse_texts([_read(shared_fixtures, "rocm-smi_showallinfo_6.x_mi300x_x4.txt")])
    assert allinfo.system.driver == "amdgpu 6.7.0"
    env = analyse_texts([_read(shared_fixtures, "collect_env_rocm6.3.4_wsl2_rx7900xtx.txt")])
    assert env.probe is not None
    assert env.probe.torch_version == "2.4.0+rocm6.3.4.git7cecbf6d"
    assert env.host.wsl and env.system.rocm_version == "6.3"
    wmi = analyse_texts(
        [
            _read(
                shared_fixtures,
                "powershell_get-wmiobject_win32_videocontroller_rx580_ru-locale.txt",
            )
        ]
    )
    assert wmi.system.os == "windows" and any("capped" in n for n in wmi.notes)


def test_expected_verdicts(shared_fixtures: Path) -> None:
    rx6700 = analyse_texts(
        [_read(shared_fixtures, "rocminfo_gfx1031_rx6700xt_rocm5.6-5.7.txt")], rocm_version="5.7.1"
    )
    report = build_report(rx6700.system, rx6700.host)
    assert report.verdicts[0].status is VerdictStatus.OVERRIDE
    assert report.verdicts[0].override == "10.3.0"
    mi25 = analyse_texts([_read(shared_fixtures, "rocminfo_gfx900_mi25_multi_rocm5.x.txt")])
    for version in ("5.7.1", "6.0.0", "6.2.4", "6.4.1", "7.0.2", "7.2.1"):
        # AMD lists no gfx900 for these releases; the PyTorch wheels still build it, so the
        # verdict is limited (native, validate it), never an override.
        verdict = verdict_for(mi25.system.gpus[0], "linux", version)
        assert verdict.status is VerdictStatus.LIMITED, version
        assert verdict.override is None and "not in AMD's list" in verdict.reason


def test_error_outputs_explain_themselves(shared_fixtures: Path) -> None:
    enomem = analyse_texts(
        [_read(shared_fixtures, "rocminfo_error_kfd_enomem_navi14_unsupported_rocm3.x.txt")]
    )
    assert enomem.host.kfd_error == "Cannot allocate memory"
    checks = {c.id: c for c in build_report(enomem.system, enomem.host).checks}
    assert checks["gpu_found"].status is CheckStatus.FAIL
    wsl = analyse_texts(
        [_read(shared_fixtures, "rocminfo_error_wsl_out_of_resources_rocm6.4.2.txt")]
    )
    assert wsl.host.wsl and wsl.host.hsa_status == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"


def test_igpu_is_not_the_rocm_target(shared_fixtures: Path) -> None:
    name = "rocm-smi_concise_7.2.1_rx9070xt_plus_granite_ridge_igpu.txt"
    captured = analyse_texts([_read(shared_fixtures, name)], rocm_version="7.2.1")
    report = build_report(captured.system, captured.host)
    checks = {c.id: c for c in report.checks}
    assert checks["visible_devices"].status is CheckStatus.WARN
    assert checks["visible_devices"].fix.value == "0"  # type: ignore[union-attr]
    assert checks["hsa_override"].status is CheckStatus.PASS
