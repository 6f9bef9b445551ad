"""Verdict, checklist and install plan share one native/override/none decision, on the
shipped data: they cannot disagree, and no harmful override is ever recommended."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.base.enums import CheckStatus
from rocmpanel.knowledge import community, compat_data
from rocmpanel.knowledge.kernels import KernelMode
from rocmpanel.knowledge.torch_builds import load_manifest
from rocmpanel.machine import pci_ids
from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo
from rocmpanel.pytorch.plan import plan
from rocmpanel.setup.checklist_env import hsa_override_check
from rocmpanel.setup.compat import VerdictStatus, verdict_for

MANIFEST = load_manifest(user_path=Path("/nonexistent/torch_builds.yaml"))
ALL_GFX = sorted({e.gfx for e in pci_ids.load_table().devices.values() if e.gfx})
ROCM = (None, "5.7.1", "6.2.4", "6.4.1", "7.2.4", "10.1.0", "99.0.0")


def _system(gfx: str, os_name: str, rocm: str | None) -> SystemInfo:
    return SystemInfo(
        os=os_name, gpus=(GpuInfo("gpu", gfx=gfx, integrated=False),), rocm_version=rocm
    )


@pytest.mark.parametrize("os_name", ["linux", "windows"])
@pytest.mark.parametrize("rocm", ROCM)
def test_verdict_and_plan_agree_for_every_known_gfx(os_name: str, rocm: str | None) -> None:
    for gfx in ALL_GFX:
        verdict = verdict_for(GpuInfo("gpu", gfx=gfx), os_name, rocm)
        p = plan(gfx, rocm, os_name, None, MANIFEST)
        assert verdict.kernels is not None
        mode = verdict.kernels.mode
        assert p.supported == (mode is not KernelMode.NONE), (gfx, rocm, p.refusal)
        if p.supported:
            assert p.kernels == mode.value, gfx
            assert p.job_env.get("HSA_OVERRIDE_GFX_VERSION") == verdict.kernels.override_value
        if verdict.status is VerdictStatus.OVERRIDE:
            assert verdict.override == p.job_env["HSA_OVERRIDE_GFX_VERSION"], gfx
        if mode is KernelMode.NATIVE:
            assert verdict.override is None and p.job_env == {}, gfx


@pytest.mark.parametrize("rocm", ROCM)
def test_no_override_is_recommended_with_a_known_harm_unless_nothing_native(
    rocm: str | None,
) -> None:
    known = community.load()
    for gfx in ALL_GFX:
        verdict = verdict_for(GpuInfo("gpu", gfx=gfx), "linux", rocm)
        if verdict.override and known.harms_for(gfx, verdict.override):
            # Only when no build has native kernels, and then with the harm spelled out.
            assert verdict.kernels is not None and verdict.kernels.mode is KernelMode.OVERRIDE
            assert any(a.severity == "danger" or a.text for a in verdict.advice)


@pytest.mark.parametrize("gfx", ["gfx1151", "gfx1103"])
def test_strix_halo_and_phoenix_never_get_11_0_0(gfx: str) -> None:
    # gfx1151: native kernels in the PyTorch ROCm 7 wheels (mudler/LocalAI pull 9229 runs it
    # as 11.5.1, itself); gfx1103: native from torch 2.13, and 11.0.0 page-faults and hangs
    # (pytorch/pytorch issue 179653, ROCm/MIOpen issue 3954).
    for rocm in ROCM:
        verdict = verdict_for(GpuInfo("gpu", gfx=gfx), "linux", rocm)
        assert verdict.override != "11.0.0", (rocm, verdict.reason)
        p = plan(gfx, rocm, "linux", "3.12", MANIFEST)
        assert p.job_env.get("HSA_OVERRIDE_GFX_VERSION") != "11.0.0"
    host = HostFacts(env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    verdicts = (verdict_for(GpuInfo("gpu", gfx=gfx), "linux", "7.2.4"),)
    check = hsa_override_check(_system(gfx, "linux", "7.2.4"), verdicts, host)
    assert check.status is CheckStatus.FAIL
    assert check.fix is not None and check.fix.value is None  # the fix unsets it


def test_an_override_set_for_a_natively_supported_gpu_fails_the_checklist() -> None:
    host = HostFacts(env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    verdicts = (verdict_for(GpuInfo("gpu", gfx="gfx1100"), "linux", "7.2.4"),)
    check = hsa_override_check(_system("gfx1100", "linux", "7.2.4"), verdicts, host)
    assert check.status is CheckStatus.FAIL and "native kernels" in check.message


def test_a_rocm_newer_than_the_data_is_judged_by_the_newest_release() -> None:
    data = compat_data.load()
    latest = data.latest_known["linux"]
    verdict = verdict_for(GpuInfo("gpu", gfx="gfx1100"), "linux", "99.0.0")
    assert verdict.status is not VerdictStatus.UNKNOWN
    assert "newer than the panel's data" in verdict.reason
    assert latest in verdict.reason and data.date_of(latest) in verdict.reason


def test_an_unreadable_rocm_version_keeps_verdict_checklist_and_plan_together() -> None:
    # `doctor --rocm-version abc` once said "not needed" while the plan set 10.3.0.
    verdict = verdict_for(GpuInfo("gpu", gfx="gfx1031"), "linux", "abc")
    p = plan("gfx1031", "abc", "linux", "3.12", MANIFEST)
    assert verdict.status is VerdictStatus.UNKNOWN
    assert verdict.override == p.job_env.get("HSA_OVERRIDE_GFX_VERSION") == "10.3.0"
    check = hsa_override_check(_system("gfx1031", "linux", "abc"), (verdict,), HostFacts())
    assert check.status is CheckStatus.WARN and "10.3.0" in check.message


def test_pre_releases_and_absurd_versions() -> None:
    rc = verdict_for(GpuInfo("gpu", gfx="gfx1100"), "linux", "10.1rc1")
    assert rc.status is not VerdictStatus.UNKNOWN and "newer than" not in rc.reason
    huge = verdict_for(GpuInfo("gpu", gfx="gfx1100"), "linux", "1" * 5000)
    assert huge.status is VerdictStatus.UNKNOWN
