"""The stack checklist on constructed facts."""

from __future__ import annotations

from rocmpanel.base.enums import CheckStatus
from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo
from rocmpanel.setup.checklist import FixKind, run_checks
from rocmpanel.setup.compat import verdicts_for
from rocmpanel.setup.probe_report import ProbeReport

RX6700 = GpuInfo("AMD Radeon RX 6700 XT", gfx="gfx1031", pci_id="1002:73df", integrated=False)
RX7900 = GpuInfo("Radeon RX 7900 XTX", gfx="gfx1100", pci_id="1002:744c", integrated=False)
IGPU = GpuInfo("Raphael", gfx="gfx1036", pci_id="1002:164e", integrated=True)

GOOD_HOST = HostFacts(
    kfd_present=True,
    kfd_rw=True,
    render_nodes=("/dev/dri/renderD128",),
    render_rw=True,
    user="alice",
    process_groups=frozenset({"alice", "render", "video"}),
    member_groups=frozenset({"render", "video"}),
    amdgpu_loaded=True,
    rocm_installs=(),
)


def _checks(gpus, host=GOOD_HOST, version="6.2.2", os_name="linux", probe=None, env=None):
    system = SystemInfo(os=os_name, rocm_version=version, driver="amdgpu", gpus=tuple(gpus))
    if env is not None:
        host = HostFacts(**{**host.__dict__, "env": env})
    checks = run_checks(system, verdicts_for(system.gpus, os_name, version), host, probe)
    return {c.id: c for c in checks}


def test_healthy_system_passes() -> None:
    checks = _checks([RX7900])
    assert all(c.status in (CheckStatus.PASS, CheckStatus.SKIP) for c in checks.values()), [
        (c.id, c.message) for c in checks.values() if c.status is not CheckStatus.PASS
    ]


def test_kfd_denied_gives_group_command() -> None:
    host = HostFacts(**{**GOOD_HOST.__dict__, "kfd_rw": False})
    check = _checks([RX7900], host)["kfd_access"]
    assert check.status is CheckStatus.FAIL
    assert check.fix and check.fix.kind is FixKind.COMMAND and "usermod" in check.fix.text


def test_added_to_group_but_not_logged_in_again() -> None:
    host = HostFacts(**{**GOOD_HOST.__dict__, "process_groups": frozenset({"alice"})})
    check = _checks([RX7900], host)["groups"]
    assert check.status is CheckStatus.WARN and "log out" in check.message


def test_not_in_groups_at_all() -> None:
    host = HostFacts(
        **{
            **GOOD_HOST.__dict__,
            "process_groups": frozenset({"alice"}),
            "member_groups": frozenset(),
            "kfd_rw": False,
        }
    )
    check = _checks([RX7900], host)["groups"]
    assert check.status is CheckStatus.FAIL and check.fix is not None


def test_override_needed_suggests_setting_it() -> None:
    check = _checks([RX6700])["hsa_override"]
    assert check.status is CheckStatus.WARN
    assert check.fix and check.fix.kind is FixKind.ENV_SET
    assert (check.fix.name, check.fix.value) == ("HSA_OVERRIDE_GFX_VERSION", "10.3.0")


def test_override_set_right_passes_and_wrong_value_warns() -> None:
    assert (
        _checks([RX6700], env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})["hsa_override"].status
        is CheckStatus.PASS
    )
    wrong = _checks([RX6700], env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})["hsa_override"]
    assert wrong.status is CheckStatus.WARN and wrong.fix.value == "10.3.0"  # type: ignore[union-attr]


def test_override_for_a_gpu_with_native_kernels_fails_with_unset() -> None:
    check = _checks([RX7900], env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})["hsa_override"]
    assert check.status is CheckStatus.FAIL and "native kernels" in check.message
    assert check.fix and check.fix.kind is FixKind.ENV_UNSET


def test_override_naming_the_gpus_own_target_is_a_no_op_warning() -> None:
    # e.g. 11.5.1 on gfx1151 (mudler/LocalAI pull 9229) or 11.0.0 on gfx1100: harmless.
    check = _checks([RX7900], env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})["hsa_override"]
    assert check.status is CheckStatus.WARN and "changes nothing" in check.message
    assert check.fix and check.fix.kind is FixKind.ENV_UNSET


def test_override_empty_or_invalid_fails() -> None:
    for value in ("", "gfx1030"):
        check = _checks([RX6700], env={"HSA_OVERRIDE_GFX_VERSION": value})["hsa_override"]
        assert check.status is CheckStatus.FAIL and check.fix.kind is FixKind.ENV_UNSET  # type: ignore[union-attr]


def test_override_on_windows_is_pointless() -> None:
    check = _checks([RX6700], os_name="windows", env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})[
        "hsa_override"
    ]
    assert check.status is CheckStatus.WARN and "no effect on Windows" in check.message
    assert "kfd_access" not in _checks([RX6700], os_name="windows")


def test_mixed_generations_suggest_per_node_form() -> None:
    check = _checks([RX7900, RX6700])["hsa_override"]
    assert check.status is CheckStatus.WARN and "_<node>" in check.message
    set_globally = _checks([RX7900, RX6700], env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    assert "every GPU" in set_globally["hsa_override"].message


def test_igpu_next_to_dgpu() -> None:
    checks = _checks([RX7900, IGPU])
    check = checks["visible_devices"]
    assert check.status is CheckStatus.WARN
    assert check.fix and (check.fix.name, check.fix.value) == ("HIP_VISIBLE_DEVICES", "0")
    # the iGPU's override must not be pushed onto the supported dGPU
    assert checks["hsa_override"].status is CheckStatus.PASS


def test_empty_rocr_visible_devices_fails() -> None:
    check = _checks([RX7900], env={"ROCR_VISIBLE_DEVICES": ""})["visible_devices"]
    assert check.status is CheckStatus.FAIL and check.fix.kind is FixKind.ENV_UNSET  # type: ignore[union-attr]


def _probe(**kw):
    base = {
        "python_version": "3.12",
        "python_executable": "/x/python",
        "system": "Linux",
        "torch_imported": True,
        "torch_version": "2.5.1+rocm6.2",
        "torch_hip": "6.2.41133",
        "build": "rocm",
        "cuda_available": True,
        "devices": [{"index": 0, "name": "Radeon RX 7900 XTX", "gfx": "gfx1100"}],
    }
    return ProbeReport.from_dict({**base, **kw})


def test_torch_build_checks() -> None:
    assert _checks([RX7900])["torch_build"].status is CheckStatus.SKIP
    assert _checks([RX7900], probe=_probe())["torch_build"].status is CheckStatus.PASS
    cpu = _checks([RX7900], probe=_probe(build="cpu", torch_hip=None))["torch_build"]
    assert cpu.status is CheckStatus.FAIL and "CPU-only" in cpu.message
    blind = _checks([RX7900], probe=_probe(cuda_available=False, devices=[]))["torch_build"]
    assert blind.status is CheckStatus.FAIL
    missing = _checks([RX7900], probe=_probe(torch_imported=False))["torch_build"]
    assert missing.status is CheckStatus.WARN


def test_no_gpu_skips_device_checks() -> None:
    checks = _checks([])
    assert checks["gpu_found"].status is CheckStatus.FAIL
    assert checks["kfd_access"].status is CheckStatus.SKIP


def test_items_carry_the_shared_check_status() -> None:
    import importlib.util

    from rocmpanel.setup import checklist

    checks = _checks([RX6700], env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    assert all(type(c.status) is CheckStatus for c in checks.values())
    assert importlib.util.find_spec("rocmpanel.setup.check_model") is None  # folded in here
    assert "HostFacts" not in getattr(checklist, "__all__", ())  # machine/ is its home


def test_report_shows_vram_in_gib_as_before() -> None:
    from rocmpanel.setup.report import build_report

    gpu = GpuInfo("AMD Radeon RX 6700 XT", gfx="gfx1031", pci_id="1002:73df", vram_bytes=12 * 2**30)
    report = build_report(SystemInfo(os="linux", rocm_version="6.2.2", gpus=(gpu,)), GOOD_HOST)
    assert "[gfx1031]  12.0 GiB  " in report.to_text()
    assert "| gfx1031 | 12.0 GiB |" in report.to_markdown()
    assert report.to_dict()["gpus"][0]["vram_bytes"] == 12 * 2**30
