"""The install planner against the built-in manifest (and overlays)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rocmpanel.pytorch.manifest import load_manifest
from rocmpanel.pytorch.plan import Mirrors, plan


@pytest.fixture(scope="module")
def manifest():
    return load_manifest(user_path=Path("/nonexistent/torch_builds.yaml"))


def test_linux_rdna3_gets_the_newest_pytorch_org_build(manifest):
    p = plan("gfx1100", None, "linux", "3.11.7", manifest)
    assert p.supported and p.refusal is None
    assert p.torch_version == "2.12"
    assert p.index_url == "https://download.pytorch.org/whl/rocm7.2"
    assert "3.11" in p.python_versions and p.python_ok
    assert p.pip_args[0] == "torch==2.12.*"
    assert p.command.endswith("--index-url https://download.pytorch.org/whl/rocm7.2")
    assert p.job_env == {}
    assert p.free_disk_bytes > p.download_bytes > 0


def test_linux_prefers_the_index_of_the_installed_rocm(manifest):
    p = plan("gfx1100", "6.4.2", "linux", "3.12", manifest)
    assert p.index_url == "https://download.pytorch.org/whl/rocm6.4"
    assert p.torch_version == "2.9"


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
    assert mi355.supported and mi355.rocm_build is not None and mi355.rocm_build.startswith("7")


def test_windows_rdna3_uses_amd_preview_wheels_for_python_312(manifest):
    p = plan("gfx1100", None, "windows", "3.12.4", manifest)
    assert p.supported and p.preview
    assert p.python_versions == ("3.12",)
    assert p.index_url is not None and p.index_url.startswith(
        "https://repo.radeon.com/rocm/windows/"
    )
    assert "download.pytorch.org" not in p.command
    assert "--find-links" in p.pip_args
    assert any("preview" in w for w in p.warnings)
    assert "HSA_OVERRIDE_GFX_VERSION" not in p.job_env


def test_windows_other_python_is_warned_not_silently_planned(manifest):
    p = plan("gfx1201", None, "windows", "3.11", manifest)
    assert p.supported and not p.python_ok
    assert any("3.12" in w for w in p.warnings)


def test_windows_rdna2_is_refused(manifest):
    p = plan("gfx1030", None, "windows", "3.12", manifest)
    assert not p.supported
    assert p.refusal is not None and "RDNA2" in p.refusal
    assert p.pip_args == () and p.command == ""


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
    p = plan("gfx1100", None, "linux", "3.11", manifest, mirrors=mirrors)
    assert p.index_url == "https://mirror.example/torch/rocm7.2"
    w = plan("gfx1100", None, "windows", "3.12", manifest, mirrors=mirrors)
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
        "  - {id: pytorch-2.13-rocm7.3, torch: '2.13', os: linux, rocm: '7.3', kind: index,\n"
        "     url: 'https://download.pytorch.org/whl/rocm7.3', python: ['3.11'],\n"
        "     gfx: pytorch_rocm7, download_mb: 5000}\n"
        "  - {id: amd-windows-rocm7.2-torch2.9, disabled: true}\n"
        "  - {id: broken, torch: 'not a version', os: linux}\n",
        encoding="utf-8",
    )
    m = load_manifest(user_path=overlay)
    assert m.by_id("pytorch-2.13-rocm7.3") is not None
    assert m.by_id("amd-windows-rocm7.2-torch2.9") is None
    assert any("broken" in problem for problem in m.problems)
    assert plan("gfx1100", None, "linux", "3.11", m).torch_version == "2.13"


def test_every_builtin_row_is_sourced(manifest):
    for build in manifest.builds:
        assert build.src, build.id
        assert all(key in manifest.sources for key in build.src), build.id
    for override in manifest.overrides.values():
        assert override.src and all(key in manifest.sources for key in override.src)


def test_cli_plan_json(capsys):
    from rocmpanel.shell.cli import main

    code = main(
        ["torch", "plan", "--gfx", "gfx1100", "--os", "windows", "--python", "3.12", "--json"]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["supported"] is True
    assert data["python_versions"] == ["3.12"] and "--find-links" in data["command"]
    refused = main(["torch", "plan", "--gfx", "gfx1030", "--os", "windows", "--json"])
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
