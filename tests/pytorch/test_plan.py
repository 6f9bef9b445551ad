"""The install planner against the built-in manifest (and overlays)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from packaging.version import Version

from rocmpanel.knowledge.torch_builds import load_manifest
from rocmpanel.pytorch.plan import Mirrors, plan


@pytest.fixture(scope="module")
def manifest():
    return load_manifest(user_path=Path("/nonexistent/torch_builds.yaml"))


def test_linux_rdna3_gets_the_newest_stable_build(manifest):
    # No ROCm known: the newest stable torch (2.14), and among its builds the newest ROCm:
    # AMD's ROCm 10.1 index, which fetches the GPU's own device code only.
    p = plan("gfx1100", None, "linux", "3.11.7", manifest)
    assert p.supported and p.refusal is None and p.kernels == "native"
    assert p.build_id == "amd-whl-next-rocm10.1-torch2.14"
    assert p.index_url == "https://stable.repo.amd.com/rocm/whl-next/"
    assert "3.11" in p.python_versions and p.python_ok
    assert p.pip_args[0] == "torch[device-gfx1100]==2.14.0+rocm10.1.0"
    assert p.command.endswith("--index-url https://stable.repo.amd.com/rocm/whl-next/")
    assert p.job_env == {}
    assert p.free_disk_bytes > p.download_bytes > 0
    # On ROCm 7.14 the pytorch.org rocm7.14 index (torch 2.14).
    p = plan("gfx1100", "7.14.1", "linux", "3.12", manifest)
    assert p.index_url == "https://download.pytorch.org/whl/rocm7.14"
    assert p.pip_args[0] == "torch==2.14.*"


def test_linux_prefers_the_index_of_the_installed_rocm(manifest):
    p = plan("gfx1100", "6.4.2", "linux", "3.12", manifest)
    assert p.index_url == "https://download.pytorch.org/whl/rocm6.4"
    assert p.torch_version == "2.9"
    # torch 2.13 is on the rocm7.2 index (FACTS.md section 0; pytorch.org previous versions).
    p = plan("gfx1100", "7.2.4", "linux", "3.12", manifest)
    assert (p.torch_version, p.index_url) == ("2.13", "https://download.pytorch.org/whl/rocm7.2")


def test_rocm_10_gets_amds_index_with_the_device_extra(manifest):
    # AMD's ROCm 10.1 page and release notes give PyTorch 2.14 (and 2.13) from AMD's index.
    p = plan("gfx1100", "10.1.0", "linux", "3.12", manifest)
    assert p.build_id == "amd-whl-next-rocm10.1-torch2.14"
    assert p.pip_args[0] == "torch[device-gfx1100]==2.14.0+rocm10.1.0"
    assert p.pip_args[1].startswith("torchvision[device-gfx1100]==")


def test_a_gfx1103_on_an_old_rocm_gets_native_kernels_not_the_harmful_override(manifest):
    # gfx1103 kernels are in the wheels from torch 2.13 (pytorch/pytorch 179653); 11.0.0
    # page-faults and hangs it (ROCm/MIOpen 3954).
    p = plan("gfx1103", "6.4.1", "linux", "3.12", manifest)
    assert p.kernels == "native" and p.job_env == {}
    assert p.torch_version is not None
    assert Version(p.torch_version.split("+")[0]) >= Version("2.13")


def test_linux_rdna2_native_and_override(manifest):
    native = plan("gfx1030", None, "linux", "3.12", manifest)
    assert native.supported and native.job_env == {}
    p = plan("gfx1031", None, "linux", "3.12", manifest)
    assert p.supported
    assert p.job_env == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert any("HSA_OVERRIDE_GFX_VERSION=10.3.0" in w for w in p.warnings)


def test_linux_cdna(manifest):
    mi250 = plan("gfx90a:sramecc+:xnack-", "6.2.4", "linux", "3.10", manifest)
    assert mi250.supported and mi250.gfx == "gfx90a"
    assert mi250.index_url == "https://download.pytorch.org/whl/rocm6.2.4"
    mi355 = plan("gfx950", None, "linux", "3.12", manifest)
    assert mi355.supported and mi355.rocm_build is not None
    assert Version(mi355.rocm_build) >= Version("7.0")


def test_windows_rdna3_on_hip_sdk_72_uses_amd_preview_wheels_for_python_312(manifest):
    p = plan("gfx1100", "7.2.1", "windows", "3.12.4", manifest)
    assert p.supported and p.preview and p.build_id == "amd-windows-rocm7.2.1-torch2.9"
    assert p.python_versions == ("3.12",)
    assert p.index_url is not None and p.index_url.startswith(
        "https://repo.radeon.com/rocm/windows/"
    )
    assert "download.pytorch.org" not in p.command
    assert "--find-links" in p.pip_args
    assert any("preview" in w for w in p.warnings)
    assert "HSA_OVERRIDE_GFX_VERSION" not in p.job_env
    # AMD's rocm_sdk packages go in first, in their own pip call; companions are pinned.
    assert p.pre_pip_args and any("rocm-sdk-core" in a for a in p.pre_pip_args[0])
    assert p.command.count("python -m pip install") == 2
    assert any(a.startswith("torchvision==") for a in p.pip_args)
    worker = p.worker_pip_args()
    assert worker.count("--then") == 1 and worker[-len(p.pip_args) :] == p.pip_args


def test_windows_without_a_hip_sdk_gets_the_newest_amd_index(manifest):
    p = plan("gfx1100", None, "windows", "3.12.4", manifest)
    assert p.supported and p.kernels == "native"
    assert p.index_url is not None and "repo.amd.com" in p.index_url


def test_windows_other_python_is_warned_not_silently_planned(manifest):
    p = plan("gfx1201", None, "windows", "3.10", manifest)
    assert p.supported and not p.python_ok
    assert any("3.11" in w for w in p.warnings)


def test_windows_rdna2_from_7_14_only_gfx1030(manifest):
    # AMD offers RDNA2 (gfx1030) on Windows from ROCm 7.14 on; other RDNA2 targets have no
    # Windows kernels, and HSA_OVERRIDE_GFX_VERSION does nothing there.
    p = plan("gfx1030", None, "windows", "3.12", manifest)
    assert p.supported and p.rocm_build is not None and p.rocm_build.startswith("7.14")
    refused = plan("gfx1031", None, "windows", "3.12", manifest)
    assert not refused.supported
    assert refused.refusal is not None and "RDNA2" in refused.refusal
    assert refused.pip_args == () and refused.command == ""


def test_no_gpu_and_rdna1_are_refused_with_reasons(manifest):
    none = plan(None, None, "linux", "3.11", manifest)
    assert not none.supported and "No AMD GPU" in (none.refusal or "")
    rdna1 = plan("gfx1010", None, "linux", "3.11", manifest)
    assert not rdna1.supported and "RDNA1" in (rdna1.refusal or "")
    mac = plan("gfx1100", None, "darwin", "3.11", manifest)
    assert not mac.supported


def test_mirrors_and_index_override(manifest):
    mirrors = Mirrors(
        pytorch_index="https://mirror.example/torch/", pypi_index="https://pypi.example/simple"
    )
    p = plan("gfx1100", "7.2.4", "linux", "3.11", manifest, mirrors=mirrors)
    assert p.index_url == "https://mirror.example/torch/rocm7.2"
    w = plan("gfx1100", "7.2.1", "windows", "3.12", manifest, mirrors=mirrors)
    assert w.pip_args[-2:] == ("--index-url", "https://pypi.example/simple")
    own = plan("gfx1100", None, "linux", "3.11", manifest, index_url="http://10.0.0.1/rocm7.2")
    assert own.pip_args[-1] == "http://10.0.0.1/rocm7.2"


def test_plan_json_has_the_documented_keys(manifest):
    data = json.loads(json.dumps(plan("gfx1100", None, "linux", "3.11", manifest).to_dict()))
    for key in (
        "torch_version",
        "index_url",
        "python_versions",
        "command",
        "warnings",
        "supported",
    ):
        assert key in data


def test_user_overlay_adds_replaces_and_disables(tmp_path: Path):
    overlay = tmp_path / "torch_builds.yaml"
    overlay.write_text(
        "builds:\n"
        "  - {id: pytorch-2.15-rocm7.15, torch: '2.15', os: linux, rocm: '7.15', kind: index,\n"
        "     url: 'https://download.pytorch.org/whl/rocm7.15', python: ['3.11'],\n"
        "     gfx: pytorch_rocm7, download_mb: 5000}\n"
        "  - {id: amd-windows-rocm7.2-torch2.9, disabled: true}\n"
        "  - {id: broken, torch: 'not a version', os: linux}\n",
        encoding="utf-8",
    )
    m = load_manifest(user_path=overlay)
    assert m.by_id("pytorch-2.15-rocm7.15") is not None
    assert m.by_id("amd-windows-rocm7.2-torch2.9") is None
    assert any("broken" in problem for problem in m.problems)
    assert plan("gfx1100", None, "linux", "3.11", m).torch_version == "2.15"


def test_every_builtin_row_is_sourced(manifest):
    for build in manifest.builds:
        assert build.src, build.id
        assert all(key in manifest.sources for key in build.src), build.id
    for override in manifest.overrides.values():
        assert override.sources and all(key in manifest.sources for key in override.sources)


def test_cli_plan_json(capsys):
    from rocmpanel.shell.cli import main

    code = main(
        [
            *("torch", "plan", "--gfx", "gfx1100", "--os", "windows"),
            *("--python", "3.12", "--rocm", "7.2.1", "--json"),
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["supported"] is True
    assert data["python_versions"] == ["3.12"] and "--find-links" in data["command"]
    assert data["pre_pip_args"] and data["kernels"] == "native"
    refused = main(["torch", "plan", "--gfx", "gfx1031", "--os", "windows", "--json"])
    assert refused == 1 and json.loads(capsys.readouterr().out)["supported"] is False


def test_cli_envs_and_history_when_empty(capsys):
    from rocmpanel.shell.cli import main

    assert main(["torch", "envs"]) == 0
    assert "No managed environments yet" in capsys.readouterr().out
    assert main(["torch", "history"]) == 0
    assert "No validation runs saved yet" in capsys.readouterr().out


def test_cli_plan_text_gives_download_sizes_in_decimal_units(capsys):
    from rocmpanel.shell.cli import main

    assert main(["torch", "plan", "--gfx", "gfx1100", "--os", "linux", "--python", "3.12"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Download: about \d+\.\d GB; free disk needed: about \d+\.\d GB", out)
