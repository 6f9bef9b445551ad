"""Every decision of the compatibility verdict, pinned with exact values at its boundaries.

The issue's cases (no ROCm installed, Windows, the unlisted cards, the override) against the
project's data (resources/compat.yaml, torch_builds.yaml, community.yaml); the shape of the
"would support" span and the newer-than-the-data note also against a small hand-written
compat.yaml, where the releases can be chosen to sit at each boundary.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.knowledge.compat_data import CompatData, load, parse
from rocmpanel.knowledge.kernels import KernelMode
from rocmpanel.knowledge.torch_builds import TorchBuild, load_manifest
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.setup.compat import (
    Verdict,
    VerdictStatus,
    supporting_versions,
    verdict_for,
    verdicts_for,
)

# Out of order on purpose: the span must sort the series it compares against.
HAND_WRITTEN = """\
schema: 2
latest_known: {linux: 6.2.1, windows: 6.1.0}
releases:
  - {version: 6.2.1, date: '2024-09-01'}
sources:
  m: "the matrix"
  w: "the Windows page"
linux:
  - {series: '6.2', supported: [gfx1100, gfx900], src: [m]}
  - {series: '6.0', supported: [gfx1100, gfx900, gfx908], limited: {gfx908: "Only on RHEL."},
     src: [m], status: transcribed}
  - {series: '6.1', supported: [gfx1100, gfx908], deprecated: [gfx906], src: [m]}
  - {series: '5.7', supported: [gfx900], src: [m]}
windows:
  - {series: '6.1', supported: [gfx1100], runtime_only: [gfx1031], src: [w]}
"""

GFX1100_LINUX = (
    "AMD supports gfx1100 products on Linux only on Ubuntu 26.04, 24.04 (HWE 6.17 kernel), "
    "22.04 (HWE 6.8 kernel); RHEL 10.2, 9.8."
)


@pytest.fixture(scope="module")
def data() -> CompatData:
    return load()


@pytest.fixture(scope="module")
def hand() -> CompatData:
    return parse(HAND_WRITTEN)


@pytest.fixture(scope="module")
def builds() -> tuple[TorchBuild, ...]:
    return load_manifest(user_path=Path("/nonexistent/torch_builds.yaml")).builds


def _v(
    gfx: str | None,
    os_name: str,
    version: str | None,
    data: CompatData,
    builds: tuple[TorchBuild, ...] | None = None,
    pci_id: str | None = None,
) -> Verdict:
    return verdict_for(GpuInfo("test", gfx=gfx, pci_id=pci_id), os_name, version, data, builds)


def _sources(data: CompatData, os_name: str, series: str) -> str:
    release = next(r for r in reversed(data.series_releases(os_name)) if r.series == series)
    return data.describe_sources(release.sources)


# ---- no gfx target ----------------------------------------------------------------------------


def test_no_gfx_and_an_unknown_pci_id_is_unknown(data: CompatData) -> None:
    for pci in (None, "1002:ffff"):
        verdict = _v(None, "linux", "6.2.0", data, pci_id=pci)
        assert verdict == Verdict(
            VerdictStatus.UNKNOWN,
            "The GPU's gfx target is unknown (no rocminfo or KFD data, and its PCI id is not in "
            "the panel's table).",
            "",
        )
        assert (verdict.rocm_version, verdict.kernels, verdict.knowledge) == (
            None,
            None,
            "official",
        )


def test_the_pci_table_gives_the_target_and_detection_wins_over_it(data: CompatData) -> None:
    # 1002:744c is the RX 7900 XTX (gfx1100).
    verdict = _v(None, "linux", "6.2.2", data, pci_id="1002:744c")
    assert (verdict.status, verdict.reason) == (
        VerdictStatus.SUPPORTED,
        "gfx1100 is supported by ROCm 6.2.2 on Linux.",
    )
    detected = _v("gfx1010", "linux", "6.2.2", data, pci_id="1002:744c")
    assert detected.status is VerdictStatus.UNSUPPORTED


# ---- no ROCm installed ----------------------------------------------------------------------


def test_no_rocm_on_linux_is_judged_by_the_newest_release(data: CompatData) -> None:
    verdict = _v("gfx1100", "linux", None, data)
    assert verdict.status is VerdictStatus.LIMITED
    assert verdict.reason == (
        "No ROCm installed or stated. ROCm 5.7 to 10.1 on Linux would support gfx1100. "
        + GFX1100_LINUX
    )
    assert verdict.rocm_version == "10.1.0"
    assert (verdict.override, verdict.knowledge, verdict.advice) == (None, "official", ())
    assert verdict.kernels is not None and verdict.kernels.mode is KernelMode.NATIVE


def test_no_rocm_on_windows_names_the_hip_sdk(data: CompatData) -> None:
    verdict = _v("gfx1100", "windows", None, data)
    assert (verdict.status, verdict.rocm_version) == (VerdictStatus.SUPPORTED, "10.1.0")
    assert verdict.reason == (
        "No ROCm installed or stated. ROCm 5.7 to 10.1 on Windows (HIP SDK) would support "
        "gfx1100. gfx1100 is supported by ROCm 10.1.0 on Windows (HIP SDK)."
    )
    rdna2 = _v("gfx1031", "windows", None, data)
    assert rdna2.status is VerdictStatus.UNSUPPORTED
    assert rdna2.reason == (
        "No ROCm installed or stated. ROCm 5.7 to 6.4 on Windows (HIP SDK) would support "
        "gfx1031. gfx1031 is not supported by ROCm 10.1.0 on Windows (HIP SDK); "
        "HSA_OVERRIDE_GFX_VERSION has no effect on Windows."
    )


def test_no_rocm_and_no_release_supporting_the_gpu(data: CompatData) -> None:
    verdict = _v("gfx1010", "linux", None, data)
    assert verdict.status is VerdictStatus.UNSUPPORTED
    assert verdict.reason == (
        "No ROCm installed or stated. No ROCm release in the panel's data supports gfx1010 on "
        "Linux. gfx1010 is not supported by ROCm 10.1.0 on Linux, no PyTorch build in the "
        "panel's data has kernels for it, and no known override works."
    )
    assert verdict.source == _sources(data, "linux", "10.1")


@pytest.mark.parametrize(
    ("gfx", "span"),
    [
        ("gfx1100", "6.0 to 6.2"),  # three in a row
        ("gfx908", "6.0, 6.1"),  # two in a row: listed, not a range
        ("gfx900", "5.7, 6.0, 6.2"),  # three with a gap: not "5.7 to 6.2"
    ],
)
def test_the_span_of_supporting_releases(hand: CompatData, gfx: str, span: str) -> None:
    verdict = _v(gfx, "linux", None, hand, builds=())
    assert verdict.reason.startswith(
        f"No ROCm installed or stated. ROCm {span} on Linux would support {gfx}. "
    )
    assert verdict.rocm_version == "6.2.1"


def test_supporting_versions_sorts_and_counts_every_kind_of_support(hand: CompatData) -> None:
    assert supporting_versions("gfx1100", "linux", hand) == ["6.0", "6.1", "6.2"]
    assert supporting_versions("gfx906", "linux", hand) == ["6.1"]  # deprecated counts
    assert supporting_versions("gfx1031", "windows", hand) == ["6.1"]  # runtime only counts
    assert supporting_versions("gfx1031", "linux", hand) == []
    assert supporting_versions("gfx906", "linux") == ["5.7", "6.0", "6.1", "6.2"]


# ---- each kind of release entry -----------------------------------------------------------


def test_supported_names_the_version_and_the_sources(data: CompatData) -> None:
    verdict = _v("gfx1100", "linux", "6.2.2", data)
    assert verdict == Verdict(
        VerdictStatus.SUPPORTED,
        "gfx1100 is supported by ROCm 6.2.2 on Linux.",
        _sources(data, "linux", "6.2"),
        rocm_version="6.2.2",
        kernels=verdict.kernels,
    )
    assert verdict.knowledge == "official"


def test_a_limited_entry_gives_its_reason_and_the_release_status(hand: CompatData) -> None:
    verdict = _v("gfx908", "linux", "6.0.0", hand, builds=())
    assert (verdict.status, verdict.reason, verdict.source) == (
        VerdictStatus.LIMITED,
        "Only on RHEL.",
        "the matrix",
    )
    assert verdict.knowledge == "transcribed"
    assert _v("gfx908", "linux", "6.1.0", hand, builds=()).status is VerdictStatus.SUPPORTED


def test_deprecated_and_runtime_only(hand: CompatData) -> None:
    deprecated = _v("gfx906", "linux", "6.1.3", hand, builds=())
    assert (deprecated.status, deprecated.reason) == (
        VerdictStatus.LIMITED,
        "gfx906 is deprecated in ROCm 6.1.3 on Linux: it still works but later releases drop it.",
    )
    runtime = _v("gfx1031", "windows", "6.1.0", hand, builds=())
    assert (runtime.status, runtime.reason, runtime.source) == (
        VerdictStatus.LIMITED,
        "ROCm 6.1.0 on Windows (HIP SDK) ships only the HIP runtime for gfx1031, without the SDK "
        "libraries (rocBLAS, MIOpen and others).",
        "the Windows page",
    )


def test_a_version_newer_than_the_data_is_judged_as_the_newest_with_a_note(
    hand: CompatData, data: CompatData
) -> None:
    verdict = _v("gfx1100", "linux", "6.3.0", hand, builds=())
    assert (verdict.status, verdict.rocm_version) == (VerdictStatus.SUPPORTED, "6.3.0")
    assert verdict.reason == (
        "gfx1100 is supported by ROCm 6.2 on Linux. ROCm 6.3.0 is newer than the panel's data "
        "(newest known: 6.2.1 of 2024-09-01); it is judged as 6.2. Run `rocmpanel data update` "
        "for newer data."
    )
    real = _v("gfx1100", "linux", "11.0.0", data)
    assert real.reason == (
        GFX1100_LINUX + " ROCm 11.0.0 is newer than the panel's data (newest known: 10.1.0 of "
        "2026-10-05); it is judged as 10.1. Run `rocmpanel data update` for newer data."
    )


# ---- unlisted cards (Linux only) ------------------------------------------------------------


def test_an_unlisted_rdna2_card_is_limited_on_linux_only(data: CompatData) -> None:
    verdict = _v("gfx1030", "linux", "6.2.0", data, pci_id="1002:73bf")
    assert (verdict.status, verdict.source) == (
        VerdictStatus.LIMITED,
        data.describe_sources(("gpu_os_5_7_1", "sysreq_linux_600")),
    )
    assert verdict.reason == (
        "gfx1030 is a supported target, but AMD's Linux product list names only the Radeon PRO "
        "W6800 and V620; the RX 6800/6900 cards run the same code without an official listing."
    )
    # A bare device id, as the PCI table accepts it, is the same card.
    bare = _v("gfx1030", "linux", "6.2.0", data, pci_id="73bf")
    assert (bare.status, bare.reason) == (verdict.status, verdict.reason)
    for os_name, version, pci in (
        ("windows", "6.2.4", "1002:73bf"),  # the group is about AMD's Linux list
        ("linux", "6.2.0", "1002:73a3"),  # the PRO W6800 is listed
        ("linux", "6.2.0", None),
    ):
        listed = _v("gfx1030", os_name, version, data, pci_id=pci)
        assert listed.status is VerdictStatus.SUPPORTED, (os_name, pci)


# ---- targets AMD does not list: what the kernel decision says -------------------------------


def test_native_wheels_for_an_unlisted_target(data: CompatData) -> None:
    verdict = _v("gfx1101", "linux", "6.2.0", data)
    assert (verdict.status, verdict.override, verdict.knowledge) == (
        VerdictStatus.LIMITED,
        None,
        "official",
    )
    assert verdict.reason == (
        "gfx1101 is not in AMD's list for ROCm 6.2.0 on Linux, but the PyTorch wheels "
        "(pytorch-2.6-rocm6.2.4) carry kernels for it, so no override is needed; AMD does not "
        "promise the libraries they bundle, so run the PyTorch tab's validation."
    )
    assert verdict.source == _sources(data, "linux", "6.2")


def test_the_override_verdict_as_a_dict(data: CompatData) -> None:
    verdict = _v("gfx1031", "linux", "6.2.0", data)
    frigate_ollama = data.describe_sources(("frigate_rocm", "ollama_gpu_md"))
    assert verdict.source == frigate_ollama
    assert verdict.as_dict() == {
        "status": "override",
        "override": "10.3.0",
        "reason": "gfx1031 is not in AMD's list for ROCm 6.2.0 on Linux; users run it as gfx1030 "
        "with HSA_OVERRIDE_GFX_VERSION=10.3.0 (community knowledge, not an AMD promise).",
        "source": frigate_ollama,
        "knowledge": "community",
        "kernels": "override",
        "torch_build": "pytorch-2.6-rocm6.2.4",
        "advice": [
            {
                "text": "gfx1031 has no kernels of its own in these wheels: jobs run it as "
                "gfx1030 with HSA_OVERRIDE_GFX_VERSION=10.3.0 (community knowledge, not an AMD "
                "promise; Linux only).",
                "source": frigate_ollama,
                "severity": "warning",
            }
        ],
    }


def test_unsupported_on_windows_and_on_linux(data: CompatData) -> None:
    windows = _v("gfx1031", "windows", "7.2.0", data)
    assert (windows.status, windows.override, windows.knowledge) == (
        VerdictStatus.UNSUPPORTED,
        None,
        "transcribed",
    )
    assert windows.reason == (
        "gfx1031 is not supported by ROCm 7.2.0 on Windows (HIP SDK); HSA_OVERRIDE_GFX_VERSION "
        "has no effect on Windows."
    )
    linux = _v("gfx1010", "linux", "6.2.0", data)
    assert linux.reason == (
        "gfx1010 is not supported by ROCm 6.2.0 on Linux, no PyTorch build in the panel's data "
        "has kernels for it, and no known override works."
    )
    assert linux.as_dict()["kernels"] == "none" and linux.as_dict()["torch_build"] is None


def test_a_harmful_override_is_not_advised_by_an_unsupported_verdict(data: CompatData) -> None:
    # With no build carrying gfx1103 kernels, its only override (11.0.0) is known to hang it:
    # the kernel decision says none and carries the danger, the verdict suggests nothing.
    verdict = _v("gfx1103", "linux", "6.4.1", data, builds=())
    assert verdict.kernels is not None and verdict.kernels.mode is KernelMode.NONE
    assert verdict.kernels.advice[0].severity == "danger"
    assert (verdict.status, verdict.override, verdict.advice) == (
        VerdictStatus.UNSUPPORTED,
        None,
        (),
    )


# ---- a version the data has no table for ---------------------------------------------------


def test_no_table_for_the_series(data: CompatData) -> None:
    verdict = _v("gfx1100", "linux", "9.1.0", data)
    assert verdict == Verdict(
        VerdictStatus.UNKNOWN,
        "The panel has no Linux support table for ROCm 9.1. gfx1100 is supported by ROCm 5.7 "
        "to 10.1.",
        "",
        rocm_version="9.1.0",
        kernels=verdict.kernels,
    )
    windows = _v("gfx1100", "windows", "6.3.0", data)
    assert windows.reason == (
        "The panel has no Windows (HIP SDK) support table for ROCm 6.3. gfx1100 is supported by "
        "ROCm 5.7 to 10.1."
    )
    nothing = _v("gfx1010", "linux", "9.1.0", data)
    assert nothing.reason == "The panel has no Linux support table for ROCm 9.1."


def test_no_table_for_an_older_series_spans_the_given_data(hand: CompatData) -> None:
    verdict = _v("gfx1100", "linux", "5.0.0", hand, builds=())
    assert (verdict.status, verdict.rocm_version) == (VerdictStatus.UNKNOWN, "5.0.0")
    assert verdict.reason == (
        "The panel has no Linux support table for ROCm 5.0. gfx1100 is supported by ROCm 6.0 "
        "to 6.2."
    )


def test_no_table_still_gives_the_override_the_plan_sets(data: CompatData) -> None:
    verdict = _v("gfx1031", "linux", "9.1.0", data)
    assert (verdict.status, verdict.override, verdict.source) == (
        VerdictStatus.UNKNOWN,
        "10.3.0",
        "",
    )
    assert verdict.reason == "The panel has no Linux support table for ROCm 9.1."
    assert verdict.kernels is not None
    assert verdict.advice == verdict.kernels.advice and len(verdict.advice) == 1
    harmful = _v("gfx1103", "linux", "9.1.0", data, builds=())
    assert (harmful.override, harmful.advice) == (None, ())


@pytest.mark.parametrize(
    ("version", "shown"),
    [
        ("x" * 40, "x" * 40),
        ("x" * 41, "x" * 40 + "..."),
    ],
)
def test_unreadable_version_is_shown_cut_at_40_characters(
    data: CompatData, version: str, shown: str
) -> None:
    verdict = _v("gfx1010", "linux", version, data)
    assert verdict.status is VerdictStatus.UNKNOWN
    assert verdict.reason == f"'{shown}' is not a ROCm version the panel can read."
    assert verdict.rocm_version == version


def test_verdicts_for_uses_the_given_data(hand: CompatData) -> None:
    (verdict,) = verdicts_for((GpuInfo("a", gfx="gfx908"),), "linux", "6.0.0", hand)
    assert (verdict.status, verdict.reason) == (VerdictStatus.LIMITED, "Only on RHEL.")


def test_verdicts_for_judges_each_gpu(data: CompatData) -> None:
    gpus = (GpuInfo("a", gfx="gfx1100"), GpuInfo("b", gfx="gfx1010"))
    verdicts = verdicts_for(gpus, "linux", "6.2.2", data)
    assert [v.status for v in verdicts] == [VerdictStatus.SUPPORTED, VerdictStatus.UNSUPPORTED]
    assert verdicts == (
        verdict_for(gpus[0], "linux", "6.2.2", data),
        verdict_for(gpus[1], "linux", "6.2.2", data),
    )


def test_an_os_without_rocm_has_no_table(data: CompatData) -> None:
    verdict = _v("gfx1100", "darwin", "6.2.0", data)
    assert (verdict.status, verdict.override, verdict.advice) == (VerdictStatus.UNKNOWN, None, ())
    assert verdict.reason == "The panel has no darwin support table for ROCm 6.2."


def test_the_unknown_verdict_as_a_dict(data: CompatData) -> None:
    assert _v(None, "linux", "6.2.0", data).as_dict() == {
        "status": "unknown",
        "override": None,
        "reason": "The GPU's gfx target is unknown (no rocminfo or KFD data, and its PCI id is "
        "not in the panel's table).",
        "source": "",
        "knowledge": "official",
        "kernels": None,
        "torch_build": None,
        "advice": [],
    }
