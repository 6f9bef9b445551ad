"""Compatibility verdicts, and the integrity of the project's data files."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
import yaml

from rocmpanel.machine import pci_ids
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.setup.compat import VerdictStatus, supporting_versions, verdict_for


def _v(gfx: str, os_name: str, version: str | None, pci_id: str | None = None):
    return verdict_for(GpuInfo("test", gfx=gfx, pci_id=pci_id), os_name, version)


@pytest.mark.parametrize(
    ("gfx", "os_name", "version", "status", "override"),
    [
        ("gfx1100", "linux", "6.2.2", VerdictStatus.SUPPORTED, None),
        ("gfx942", "linux", "7.2.1", VerdictStatus.SUPPORTED, None),
        ("gfx1031", "linux", "5.7.1", VerdictStatus.OVERRIDE, "10.3.0"),
        # Not in AMD's list, but the PyTorch wheels carry the kernels: gfx1102 from torch 2.7
        # (pytorch/pytorch pull 147761), gfx1101 from 2.6 (pull 141667). No override.
        ("gfx1102", "linux", "6.3.0", VerdictStatus.LIMITED, None),
        ("gfx1101", "linux", "6.2.0", VerdictStatus.LIMITED, None),
        ("gfx1101", "linux", "6.4.0", VerdictStatus.LIMITED, None),
        ("gfx1101", "linux", "6.4.1", VerdictStatus.LIMITED, None),
        ("gfx1201", "linux", "7.0.2", VerdictStatus.LIMITED, None),
        ("gfx1201", "linux", "7.2.0", VerdictStatus.SUPPORTED, None),
        ("gfx906", "linux", "6.1.0", VerdictStatus.LIMITED, None),
        # Dropped by AMD, still in the PyTorch wheels' build list (manywheel build.sh).
        ("gfx906", "linux", "6.4.0", VerdictStatus.LIMITED, None),
        ("gfx900", "linux", "5.7.0", VerdictStatus.LIMITED, None),
        ("gfx1010", "linux", "6.2.0", VerdictStatus.UNSUPPORTED, None),
        ("gfx90c", "linux", "6.2.0", VerdictStatus.OVERRIDE, "9.0.0"),  # Frigate rocm.py
        ("gfx1031", "linux", "7.2.4", VerdictStatus.OVERRIDE, "10.3.0"),
        ("gfx1100", "linux", "9.1.0", VerdictStatus.UNKNOWN, None),  # no 9.x line exists
        # Releases through 10.1 (ROCm/rocm-docs docs/release/versions.rst).
        ("gfx1201", "linux", "7.2.4", VerdictStatus.SUPPORTED, None),
        ("gfx1151", "linux", "10.1.0", VerdictStatus.LIMITED, None),
        # Not in AMD's 7.x Linux matrix, but the PyTorch ROCm 7 wheels are built for it
        # (pytorch/pytorch pull 167299): limited and native, as plan() installs it.
        ("gfx1150", "linux", "7.2.4", VerdictStatus.LIMITED, None),
        ("gfx1100", "windows", "10.1.0", VerdictStatus.SUPPORTED, None),
        ("gfx1100", "windows", "6.2.4", VerdictStatus.SUPPORTED, None),
        ("gfx1031", "windows", "6.1.2", VerdictStatus.LIMITED, None),
        ("gfx1031", "windows", "7.2.0", VerdictStatus.UNSUPPORTED, None),
        # AMD's PyTorch wheels for Windows carry gfx1101 whatever HIP SDK is installed.
        ("gfx1101", "windows", "6.0.0", VerdictStatus.LIMITED, None),
        ("gfx1101", "windows", "6.0.2", VerdictStatus.SUPPORTED, None),
        ("gfx1100", "windows", "6.3.0", VerdictStatus.UNKNOWN, None),
    ],
)
def test_verdicts(gfx, os_name, version, status, override) -> None:
    verdict = _v(gfx, os_name, version)
    assert verdict.status is status, verdict.reason
    assert verdict.override == override
    assert verdict.reason.endswith(".")
    if status not in (VerdictStatus.UNKNOWN,):
        assert verdict.source


def test_override_never_suggested_on_windows() -> None:
    for gfx in ("gfx1031", "gfx1032", "gfx1103", "gfx1036"):
        verdict = _v(gfx, "windows", "6.4.2")
        assert verdict.override is None
        assert verdict.status is not VerdictStatus.OVERRIDE


def test_override_verdict_is_marked_community() -> None:
    verdict = _v("gfx1031", "linux", "6.2.0")
    assert verdict.knowledge == "community" and "not an AMD promise" in verdict.reason


def test_consumer_rdna2_card_is_limited_on_linux() -> None:
    verdict = _v("gfx1030", "linux", "6.2.0", pci_id="1002:73bf")
    assert verdict.status is VerdictStatus.LIMITED and "W6800" in verdict.reason
    pro = _v("gfx1030", "linux", "6.2.0", pci_id="1002:73a3")
    assert pro.status is VerdictStatus.SUPPORTED


def test_no_rocm_says_which_versions_would_work() -> None:
    verdict = _v("gfx1100", "linux", None)
    # ROCm on Radeon 5.7 listed the RX 7900 XTX and PRO W7900 (FACTS.md section 0).
    assert verdict.reason.startswith("No ROCm installed or stated. ROCm 5.7 to 10.1 on Linux")
    assert supporting_versions("gfx906", "linux") == ["5.7", "6.0", "6.1", "6.2"]
    assert "No ROCm release" in _v("gfx1010", "linux", None).reason


def test_unknown_gfx_uses_pci_table_or_says_unknown() -> None:
    verdict = verdict_for(GpuInfo("x", pci_id="1002:744c"), "linux", "6.2.0")
    assert verdict.status is VerdictStatus.SUPPORTED
    nothing = verdict_for(GpuInfo("x"), "linux", "6.2.0")
    assert nothing.status is VerdictStatus.UNKNOWN


def _yaml(name: str):
    return yaml.safe_load(resources.files("rocmpanel.resources").joinpath(name).read_text())


def test_every_data_entry_is_sourced() -> None:
    for name, sections in (
        ("compat.yaml", ("linux", "windows")),
        ("community.yaml", ("overrides", "harmful", "unlisted_products")),
        ("pci_ids.yaml", ()),
    ):
        data = _yaml(name)
        entries = [e for s in sections for e in data[s]]
        if name == "pci_ids.yaml":
            entries = list(data["devices"].values())
        for entry in entries:
            status = entry.get("status", "community" if name == "community.yaml" else None)
            assert status in ("official", "transcribed", "derived", "community"), entry
            assert entry["src"], entry
            for key in entry["src"]:
                assert key in data["sources"], (name, key)


def test_pci_table_covers_the_reference_matrix(shared_fixtures: Path) -> None:
    reference = yaml.safe_load(
        (shared_fixtures.parent / "reference/compat_matrix.yaml").read_text()
    )
    table = pci_ids.load_table().devices
    for gpu in reference["gpus"]:
        for raw in gpu.get("pci_ids", []):
            device = raw.split()[0].split(":")[1]
            assert device in table, (gpu["names"], raw)
            expected = CORRECTED_IN_THE_GENERATED_TABLE.get(device, gpu["gfx"])
            assert table[device].gfx == expected, (gpu["names"], raw)


# Where the generated table, built from the kernel, corrects the older reference file.
CORRECTED_IN_THE_GENERATED_TABLE = {
    # Krackan2 (1002:1902) is GC 11.5.3, which amdkfd (kfd_device.c, kgd2kfd_probe) reports
    # as 110503 = gfx1153; the reference had gfx1152.
    "1902": "gfx1153",
}
