"""Every decision of the install planner, pinned with exact values at its boundaries.

Against the built-in manifest (resources/torch_builds.yaml) where its rows show the case, and
against a few hand-written rows where they do not (an unverified row, an index pre-install).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rocmpanel.knowledge.torch_builds import Manifest, load_manifest
from rocmpanel.pytorch.plan import (
    DISK_MARGIN_BYTES,
    MB,
    UNPACK_FACTOR,
    InstallPlan,
    Mirrors,
    normalise_gfx,
    normalise_os,
    plan,
)

NO_OVERLAY = Path("/nonexistent/torch_builds.yaml")
PYTORCH_ROCM64 = "https://download.pytorch.org/whl/rocm6.4"
AMD_WHL_NEXT = "https://stable.repo.amd.com/rocm/whl-next/"
WIN_721 = "https://repo.radeon.com/rocm/windows/rocm-rel-7.2.1/"
NOTES_214_LINUX = (
    "The PyTorch 2.14 that ROCm 10.1's release notes name. Same GPU targets as AMD's 2.13 build "
    "for 10.1 (gfx1150 gets torch 2.12 on Linux there). AMD's command also installs torchvision "
    "with the same device extra."
)
NOTES_214_WINDOWS = (
    "The PyTorch 2.14 that ROCm 10.1's release notes name, for the Radeon and Ryzen targets AMD "
    "lists on Windows. AMD's command also installs torchvision with the same device extra."
)


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    return load_manifest(user_path=NO_OVERLAY)


def driver_warning(row_rocm: str, host: str) -> str:
    return (
        f"The wheels bundle ROCm {row_rocm} user-space libraries; the installed ROCm is {host}. "
        f"Only the amdgpu kernel driver is used from the host: if it is too old for ROCm "
        f"{row_rocm}, update the driver (see AMD's user/kernel-space compatibility matrix)."
    )


# ---- normalising the inputs ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("gfx90a:sramecc+:xnack-", "gfx90a"),
        (" GFX1100 ", "gfx1100"),
        ("gfx1100", "gfx1100"),
        (":xnack-", None),
        ("", None),
        (None, None),
    ],
)
def test_normalise_gfx(raw: str | None, expected: str | None) -> None:
    assert normalise_gfx(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Windows", "windows"),
        ("win32", "windows"),
        (" Linux ", "linux"),
        ("linux2", "linux"),
        ("Darwin", "darwin"),
        ("freebsd", "freebsd"),
    ],
)
def test_normalise_os(raw: str, expected: str) -> None:
    assert normalise_os(raw) == expected


# ---- mirrors --------------------------------------------------------------------------------


def test_mirrors_replace_only_their_own_host() -> None:
    mirrors = Mirrors(pytorch_index="https://m.example/torch/", amd_repo="https://amd.example/")
    assert mirrors.apply(PYTORCH_ROCM64) == "https://m.example/torch/rocm6.4"
    assert mirrors.apply(WIN_721) == "https://amd.example/rocm/windows/rocm-rel-7.2.1/"
    # Not a host it mirrors: unchanged.
    assert mirrors.apply(AMD_WHL_NEXT) == AMD_WHL_NEXT
    assert Mirrors().apply(PYTORCH_ROCM64) == PYTORCH_ROCM64
    # Only the trailing slashes of the mirror are dropped.
    assert Mirrors(pytorch_index="https://box.example/X//").apply(PYTORCH_ROCM64) == (
        "https://box.example/X/rocm6.4"
    )
    assert Mirrors().apply(WIN_721) == WIN_721
    # Only the PyTorch mirror set: AMD's host stays.
    assert Mirrors(pytorch_index="https://m.example").apply(WIN_721) == WIN_721
    assert Mirrors(amd_repo="https://amd.example").apply(PYTORCH_ROCM64) == PYTORCH_ROCM64


def test_pypi_mirror_or_the_public_index() -> None:
    assert Mirrors().pypi == "https://pypi.org/simple"
    assert Mirrors(pypi_index="https://pypi.example/simple").pypi == "https://pypi.example/simple"


def test_windows_find_links_plan_uses_every_mirror(manifest: Manifest) -> None:
    mirrors = Mirrors(amd_repo="https://amd.example/", pypi_index="https://pypi.example/simple")
    p = plan("gfx1100", "7.2.1", "windows", "3.12", manifest, mirrors=mirrors)
    folder = "https://amd.example/rocm/windows/rocm-rel-7.2.1/"
    assert p.index_url == folder
    assert p.pip_args == (
        "torch==2.9.1+rocm7.2.1",
        "torchvision==0.24.1+rocm7.2.1",
        "torchaudio==2.9.1+rocm7.2.1",
        "--find-links",
        folder,
        "--index-url",
        "https://pypi.example/simple",
    )
    assert p.pre_pip_args == (
        (
            "rocm-sdk-core==7.2.1",
            "rocm-sdk-devel==7.2.1",
            "rocm-sdk-libraries-custom==7.2.1",
            "rocm==7.2.1",
            "--find-links",
            folder,
            "--index-url",
            "https://pypi.example/simple",
        ),
    )


def test_own_index_url_replaces_the_rows_index_even_with_a_mirror(manifest: Manifest) -> None:
    p = plan(
        "gfx1100",
        "6.4.2",
        "linux",
        "3.12",
        manifest,
        mirrors=Mirrors(pytorch_index="https://m.example/torch"),
        index_url="https://own.example/simple",
    )
    assert p.index_url == "https://own.example/simple"
    assert p.pip_args == (
        "torch==2.9.*",
        "torchvision",
        "torchaudio",
        "--index-url",
        "https://own.example/simple",
    )
    assert p.warnings == ()


# ---- refusals ---------------------------------------------------------------------------------


def _refused(p: InstallPlan, reason: str) -> None:
    assert p.supported is False
    assert p.refusal == reason
    assert (p.build_id, p.index_url, p.kernels, p.status) == (None, None, None, None)
    assert (p.pip_args, p.pre_pip_args, p.command, p.warnings) == ((), (), "", ())
    assert (p.download_bytes, p.free_disk_bytes, dict(p.job_env)) == (0, 0, {})


def test_an_os_without_rocm_builds_is_refused(manifest: Manifest) -> None:
    p = plan("GFX1100:xnack-", "6.4.2", "Darwin", "3.12.4", manifest)
    _refused(p, "There are no ROCm PyTorch builds for 'Darwin': only Linux and Windows (preview).")
    assert (p.os, p.gfx, p.python_version, p.rocm_version) == ("darwin", "gfx1100", "3.12", "6.4.2")


def test_an_unknown_build_id_is_refused(manifest: Manifest) -> None:
    _refused(
        plan("gfx1100", None, "linux", "3.12", manifest, build_id="nope"),
        "No build 'nope' in the manifest.",
    )


def test_a_build_of_the_other_os_is_refused(manifest: Manifest) -> None:
    _refused(
        plan("gfx1100", None, "linux", "3.12", manifest, build_id="amd-windows-rocm7.2.1-torch2.9"),
        "Build amd-windows-rocm7.2.1-torch2.9 is for windows, not linux.",
    )


def test_a_manifest_without_rows_for_the_os_is_refused(manifest: Manifest) -> None:
    linux_only = replace(manifest, builds=manifest.for_os("linux"))
    _refused(
        plan("gfx1100", None, "Windows", "3.12", linux_only),
        "The manifest has no PyTorch builds for windows.",
    )


@pytest.mark.parametrize("gfx", [None, "", ":sramecc+"])
def test_no_gpu_is_refused(manifest: Manifest, gfx: str | None) -> None:
    _refused(
        plan(gfx, None, "linux", "3.12", manifest),
        "No AMD GPU was detected, so there is no GPU to pick a build for. Give the GPU's "
        "gfx target (e.g. gfx1100) to plan for it anyway.",
    )


def test_no_build_for_the_gpu_gives_the_decisions_reason(manifest: Manifest) -> None:
    _refused(
        plan("gfx1010", None, "linux", "3.12", manifest),
        "No ROCm PyTorch build has kernels for gfx1010 (RDNA1), and no reliable "
        "HSA_OVERRIDE_GFX_VERSION substitute exists for it.",
    )
    _refused(
        plan("gfx1031", None, "windows", "3.12", manifest),
        "No PyTorch build for Windows in the panel's data has kernels for gfx1031 (RDNA2), "
        "and HSA_OVERRIDE_GFX_VERSION has no effect on Windows.",
    )


# ---- the row chosen, its command and sizes --------------------------------------------------


def test_linux_on_rocm_64_installs_the_rocm64_index(manifest: Manifest) -> None:
    p = plan("gfx1100", "6.4.2", "linux", "3.12.4", manifest)
    assert p.supported is True and p.refusal is None
    assert (p.os, p.gfx, p.python_version, p.rocm_version) == ("linux", "gfx1100", "3.12", "6.4.2")
    assert (p.build_id, p.torch_version, p.rocm_build) == ("pytorch-2.9-rocm6.4", "2.9", "6.4")
    assert (p.index_url, p.index_kind, p.kernels) == (PYTORCH_ROCM64, "index", "native")
    assert p.python_versions == ("3.10", "3.11", "3.12", "3.13", "3.14")
    assert p.python_ok is True
    assert p.pip_args == (
        "torch==2.9.*",
        "torchvision",
        "torchaudio",
        "--index-url",
        PYTORCH_ROCM64,
    )
    assert p.pre_pip_args == ()
    assert p.command == (
        "python -m pip install 'torch==2.9.*' torchvision torchaudio --index-url " + PYTORCH_ROCM64
    )
    assert p.warnings == ()
    assert (p.preview, p.status, p.notes, dict(p.job_env)) == (False, "official", "", {})
    assert p.sources == tuple(
        manifest.sources[k]
        for k in ("pytorch_previous", "pytorch_release_matrix", "pytorch_manywheel")
    )


def test_disk_figures_are_decimal_bytes_with_unpack_factor_and_margin(manifest: Manifest) -> None:
    # The constants themselves: a factor of 1000 in MB, or a changed margin, must show here.
    assert (MB, UNPACK_FACTOR, DISK_MARGIN_BYTES) == (1_000_000, 2.5, 1_000_000_000)
    p = plan("gfx1100", "6.4.2", "linux", "3.12", manifest)  # download_mb: 4500
    assert p.download_bytes == 4_500_000_000
    assert p.free_disk_bytes == 4_500_000_000 + 11_250_000_000 + 1_000_000_000
    amd = plan("gfx1100", None, "linux", "3.12", manifest)  # download_mb: 3500
    assert (amd.download_bytes, amd.free_disk_bytes) == (3_500_000_000, 13_250_000_000)


def test_no_rocm_installed_gets_amds_newest_index_with_the_device_extra(
    manifest: Manifest,
) -> None:
    p = plan("gfx1100", None, "linux", "3.11.7", manifest)
    assert p.build_id == "amd-whl-next-rocm10.1-torch2.14"
    assert p.pip_args == (
        "torch[device-gfx1100]==2.14.0+rocm10.1.0",
        "torchvision[device-gfx1100]==0.29+rocm10.1.0",
        "torchaudio==2.11.0.3+rocm10.1.0",
        "--index-url",
        AMD_WHL_NEXT,
    )
    assert p.command == (
        "python -m pip install 'torch[device-gfx1100]==2.14.0+rocm10.1.0' "
        "'torchvision[device-gfx1100]==0.29+rocm10.1.0' torchaudio==2.11.0.3+rocm10.1.0 "
        "--index-url " + AMD_WHL_NEXT
    )
    # No host ROCm: no driver warning, only the row's notes.
    assert p.warnings == (NOTES_214_LINUX,)
    assert p.notes == NOTES_214_LINUX


def test_the_windows_row_on_hip_sdk_721(manifest: Manifest) -> None:
    p = plan("gfx1100", "7.2.1", "Windows", "3.12.4", manifest)
    assert (p.os, p.build_id, p.rocm_build) == (
        "windows",
        "amd-windows-rocm7.2.1-torch2.9",
        "7.2.1",
    )
    assert (p.index_url, p.index_kind, p.preview) == (WIN_721, "find_links", True)
    assert p.python_versions == ("3.12",) and p.python_ok is True
    assert p.command == (
        "python -m pip install rocm-sdk-core==7.2.1 rocm-sdk-devel==7.2.1 "
        "rocm-sdk-libraries-custom==7.2.1 rocm==7.2.1 --find-links " + WIN_721 + " --index-url "
        "https://pypi.org/simple && python -m pip install torch==2.9.1+rocm7.2.1 "
        "torchvision==0.24.1+rocm7.2.1 torchaudio==2.9.1+rocm7.2.1 --find-links " + WIN_721 + " "
        "--index-url https://pypi.org/simple"
    )
    assert p.warnings == (
        "AMD's PyTorch on Windows is a preview: expect missing features and rough edges.",
        "AMD's ROCm SDK packages (rocm_sdk_* wheels and the rocm sdist) go in first. Python 3.12 "
        "only. The GPU list is the HIP SDK 7.2 list: AMD's PyTorch page does not list the "
        "wheels' targets.",
    )
    assert p.worker_pip_args() == (*p.pre_pip_args[0], "--then", *p.pip_args)
    assert p.argv("/venv/bin/python") == ["/venv/bin/python", "-m", "pip", "install", *p.pip_args]


def test_windows_without_hip_sdk_is_not_a_preview_row(manifest: Manifest) -> None:
    p = plan("gfx1100", None, "windows", "3.12", manifest)
    assert (p.build_id, p.preview, p.kernels) == (
        "amd-whl-next-rocm10.1-torch2.14-windows",
        False,
        "native",
    )
    assert p.warnings == (NOTES_214_WINDOWS,)
    assert p.worker_pip_args() == p.pip_args
    assert p.argv() == ["python", "-m", "pip", "install", *p.pip_args]


def test_an_explicit_build_is_planned_with_its_unverified_warning(manifest: Manifest) -> None:
    p = plan("gfx1100", "6.4.1", "linux", "3.12", manifest, build_id="amd-rocm6.4.1-torch2.6")
    assert (p.build_id, p.status, p.index_kind) == (
        "amd-rocm6.4.1-torch2.6",
        "unverified",
        "find_links",
    )
    assert p.pip_args[-4:] == (
        "--find-links",
        "https://repo.radeon.com/rocm/manylinux/rocm-rel-6.4.1/",
        "--index-url",
        "https://pypi.org/simple",
    )
    assert p.warnings == (
        "This row of the manifest is unverified: check its URL before relying on it.",
        "AMD-built wheels (file names verified); the directory also holds torch 2.7.1, hence the "
        "exact pins. The GPU target list of AMD's build is not confirmed: it is assumed to match "
        "the pytorch.org ROCm 6.x wheels.",
    )


# ---- Python ---------------------------------------------------------------------------------


def test_unknown_python_is_warned_with_the_rows_versions(manifest: Manifest) -> None:
    for unknown in (None, ""):
        p = plan("gfx1100", "6.4.2", "linux", unknown, manifest)
        assert p.python_version is None and p.python_ok is True
        assert p.warnings == (
            "Python version unknown: wheels exist for 3.10, 3.11, 3.12, 3.13, 3.14.",
        )


def test_a_python_no_row_has_is_warned_on_linux_once(manifest: Manifest) -> None:
    p = plan("gfx1100", "6.4.2", "linux", "3.7.9", manifest)
    assert (p.python_version, p.python_ok, p.build_id) == ("3.7", False, "pytorch-2.9-rocm6.4")
    assert p.warnings == (
        "torch 2.9 from this index has wheels for Python 3.10, 3.11, 3.12, 3.13, 3.14 only, not "
        "3.7: the environment must be created with one of those Python versions.",
    )


def test_a_python_the_row_lacks_on_windows_names_the_python_to_install(
    manifest: Manifest,
) -> None:
    p = plan("gfx1201", None, "windows", "3.10", manifest)
    assert p.python_ok is False
    assert p.warnings == (
        "torch 2.14.0+rocm10.1.0 from this index has wheels for Python 3.11, 3.12, 3.13, 3.14 "
        "only, not 3.10: the environment must be created with one of those Python versions.",
        "Install Python 3.14 (python.org) and choose it as the base Python.",
        NOTES_214_WINDOWS,
    )


def test_a_python_with_wheels_picks_the_row_that_has_them(manifest: Manifest) -> None:
    # Python 3.8: of the rows for ROCm 6.4's GPU, only the older torch has 3.8 wheels.
    p = plan("gfx1100", "6.4.2", "linux", "3.8", manifest)
    assert (p.build_id, p.python_ok) == ("pytorch-2.4-rocm6.1", True)
    assert p.warnings == (
        "This index is Linux-only: it is not a Windows install (a common guide mistake).",
    )


# ---- override, driver and http warnings ---------------------------------------------------


def test_override_sets_the_job_env_and_warns_first(manifest: Manifest) -> None:
    p = plan("gfx1031", "6.2.0", "linux", "3.12", manifest)
    assert (p.build_id, p.kernels) == ("pytorch-2.6-rocm6.2.4", "override")
    assert dict(p.job_env) == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert p.warnings == (
        "gfx1031 has no kernels of its own in these wheels: jobs run it as gfx1030 with "
        "HSA_OVERRIDE_GFX_VERSION=10.3.0 (community knowledge, not an AMD promise; Linux only).",
        "torch 2.6 also exists on the rocm6.1 index.",
    )
    assert p.to_dict()["job_env"] == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}


def test_driver_warning_when_the_host_rocm_major_is_older(manifest: Manifest) -> None:
    # gfx1103 has kernels only from torch 2.13 on: on ROCm 6.4.1 the plan takes ROCm 10.1 wheels.
    p = plan("gfx1103", "6.4.1", "linux", "3.12", manifest)
    assert p.rocm_build == "10.1.0"
    assert p.warnings == (driver_warning("10.1.0", "6.4.1"), NOTES_214_LINUX)
    # One major below the row's: still warned.
    p = plan("gfx1150", "6.4.4", "linux", "3.12", manifest)
    assert (p.build_id, p.rocm_build) == ("pytorch-2.14-rocm7.14", "7.14")
    assert p.warnings[0] == driver_warning("7.14", "6.4.4")


def test_no_driver_warning_on_the_same_major_or_without_a_readable_host_rocm(
    manifest: Manifest,
) -> None:
    # ROCm 7.0 host, wheels bundling 7.14: the same major, no warning.
    for host in ("7.0.1", None, "unknown"):
        p = plan("gfx1150", host, "linux", "3.12", manifest)
        assert p.build_id == "pytorch-2.14-rocm7.14"
        assert not any(w.startswith("The wheels bundle") for w in p.warnings), host
    # A host newer than the wheels: no warning either.
    p = plan("gfx1100", "10.1.0", "linux", "3.12", manifest, build_id="pytorch-2.9-rocm6.4")
    assert p.warnings == ()


def test_no_driver_warning_on_windows(manifest: Manifest) -> None:
    p = plan("gfx1100", "6.2.4", "windows", "3.12", manifest)
    assert p.rocm_build == "10.1.0"
    assert p.warnings == (NOTES_214_WINDOWS,)


def test_plain_http_index_is_warned_with_its_host(manifest: Manifest) -> None:
    url = "HTTP://user:p@ss@10.0.0.1:8080/rocm6.4"  # an unquoted @ in the password
    p = plan("gfx1100", "6.4.2", "linux", "3.12", manifest, index_url=url)
    assert p.warnings == (
        f"The index {url} is plain http: pip ignores it unless 10.0.0.1:8080 is a trusted host. "
        "Use https, or add it as a trusted host (trusted-host = 10.0.0.1:8080 in pip.conf, with "
        "the setting torch_use_pip_config on).",
    )
    https = plan("gfx1100", "6.4.2", "linux", "3.12", manifest, index_url="https://10.0.0.1/x")
    assert https.warnings == ()


# ---- hand-written rows ------------------------------------------------------------------------

HAND_WRITTEN = """\
sources:
  s1: "a source"
builds:
  - {id: one, torch: "2.9", os: linux, rocm: "7.2", kind: index,
     url: "https://download.pytorch.org/whl/rocm7.2", packages: [torch],
     pre_install: [{packages: ["rocm==7.2.0"], index_url: "https://download.pytorch.org/whl/sdk"},
                   {packages: [extra], find_links: "https://download.pytorch.org/whl/x/"}],
     python: ["3.12"], gfx: [gfx1100], download_mb: 1, status: community, src: [s1, unknown_key]}
"""


def test_two_pre_installs_and_a_one_mb_row() -> None:
    m = load_manifest(user_path=NO_OVERLAY, builtin=HAND_WRITTEN)
    p = plan("gfx1100", "7.2.0", "linux", "3.12", m, mirrors=Mirrors(pytorch_index="https://m.x"))
    first = ("rocm==7.2.0", "--index-url", "https://m.x/sdk")
    second = ("extra", "--find-links", "https://m.x/x/", "--index-url", "https://pypi.org/simple")
    assert p.pre_pip_args == (first, second)
    assert p.pip_args == ("torch==2.9.*", "--index-url", "https://m.x/rocm7.2")
    assert p.worker_pip_args() == (*first, "--then", *second, "--then", *p.pip_args)
    assert p.command == (
        "python -m pip install rocm==7.2.0 --index-url https://m.x/sdk && "
        "python -m pip install extra --find-links https://m.x/x/ --index-url "
        "https://pypi.org/simple && "
        "python -m pip install 'torch==2.9.*' --index-url https://m.x/rocm7.2"
    )
    assert (p.download_bytes, p.free_disk_bytes) == (1_000_000, 1_003_500_000)
    # A community row is not "unverified": no warning; an unknown source key is shown as is.
    assert (p.status, p.warnings) == ("community", ())
    assert p.sources == ("a source", "unknown_key")
    assert p.to_dict() == {
        "supported": True,
        "os": "linux",
        "gfx": "gfx1100",
        "python_version": "3.12",
        "rocm_version": "7.2.0",
        "refusal": None,
        "build_id": "one",
        "torch_version": "2.9",
        "rocm_build": "7.2",
        "index_url": "https://m.x/rocm7.2",
        "index_kind": "index",
        "python_versions": ["3.12"],
        "python_ok": True,
        "pip_args": ["torch==2.9.*", "--index-url", "https://m.x/rocm7.2"],
        "pre_pip_args": [list(first), list(second)],
        "kernels": "native",
        "command": p.command,
        "download_bytes": 1_000_000,
        "free_disk_bytes": 1_003_500_000,
        "warnings": [],
        "job_env": {},
        "preview": False,
        "status": "community",
        "notes": "",
        "sources": ["a source", "unknown_key"],
        "profile": "pytorch",
        "extra_packages": [],
        "extra_pip_args": [],
        "extra_lines": [],
        "four_bit_gpu": None,
        "four_bit_note": "",
    }
