"""Facts in the shipped resources/torch_builds.yaml, one case per fact, each naming its source.

The file is read with yaml.safe_load (not the loader), so these tests check the data as
shipped. Source keys in the ids are keys of the file's own ``sources`` mapping.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.version import InvalidVersion, Version

DATA = Path(__file__).resolve().parents[2] / "resources" / "torch_builds.yaml"
GFX_NAME = re.compile(r"^gfx[0-9]{2,3}[0-9a-f]$")
PYTORCH = "https://download.pytorch.org/whl/"
MULTI_ARCH = "https://repo.amd.com/rocm/whl-multi-arch/"
WHL_NEXT = "https://stable.repo.amd.com/rocm/whl-next/"


@lru_cache(maxsize=1)
def data() -> dict[str, Any]:
    loaded = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def rows() -> list[dict[str, Any]]:
    return list(data()["builds"])


def row(build_id: str) -> dict[str, Any]:
    found = [r for r in rows() if r["id"] == build_id]
    assert len(found) == 1, f"expected one row {build_id!r}, found {len(found)}"
    return found[0]


def gfx_of(r: dict[str, Any]) -> set[str]:
    value = r["gfx"]
    if isinstance(value, str):
        return set(data()["arch_sets"][value])
    return set(value)


def pytorch_row(torch: str, index: str) -> dict[str, Any]:
    found = [r for r in rows() if r["torch"] == torch and r["url"] == PYTORCH + index]
    assert len(found) == 1, f"expected one torch {torch} row on {index}, found {len(found)}"
    return found[0]


def py_range(low: int, high: int) -> list[str]:
    return [f"3.{minor}" for minor in range(low, high + 1)]


# ---- pytorch.org index rows (src: pytorch_release_matrix, pytorch_previous) ----


@pytest.mark.parametrize(
    ("torch", "index", "python"),
    [
        pytest.param("2.14", "rocm7.14", py_range(11, 14), id="2.14-rocm7.14-amd_pytorch_python"),
        # 3.15 is left out: only a mirror of RELEASE.md names it, and no cp315 ROCm wheel is seen.
        pytest.param("2.14", "rocm7.2", py_range(10, 14), id="2.14-rocm7.2-install_logs_torch214"),
        pytest.param("2.13", "rocm7.2", py_range(10, 14), id="2.13-rocm7.2-pytorch_release_matrix"),
        pytest.param("2.12", "rocm7.2", py_range(10, 14), id="2.12-rocm7.2-pytorch_release_matrix"),
        pytest.param("2.11", "rocm7.2", py_range(10, 14), id="2.11-rocm7.2-pytorch_release_matrix"),
        pytest.param("2.10", "rocm7.1", py_range(10, 14), id="2.10-rocm7.1-pytorch_previous"),
        pytest.param("2.10", "rocm7.0", py_range(10, 14), id="2.10-rocm7.0-install_logs"),
        pytest.param("2.9", "rocm6.4", py_range(10, 14), id="2.9-rocm6.4-pytorch_release_matrix"),
        pytest.param("2.8", "rocm6.4", py_range(9, 13), id="2.8-rocm6.4-pytorch_release_matrix"),
        pytest.param("2.7", "rocm6.3", py_range(9, 13), id="2.7-rocm6.3-pytorch_release_matrix"),
        pytest.param("2.6", "rocm6.2.4", py_range(9, 13), id="2.6-rocm6.2.4-pytorch_previous"),
        pytest.param("2.5", "rocm6.2", py_range(9, 12), id="2.5-rocm6.2-pytorch_release_matrix"),
        pytest.param("2.4", "rocm6.1", py_range(8, 12), id="2.4-rocm6.1-pytorch_release_matrix"),
    ],
)
def test_pytorch_org_row_index_and_python(torch: str, index: str, python: list[str]) -> None:
    r = pytorch_row(torch, index)
    assert r["os"] == "linux"
    assert r["kind"] == "index"
    assert r["python"] == python


def test_rocm714_wheels_pull_rocm_from_pip_and_say_so() -> None:
    # src: pytorch_rocm714_deps (pytorch#191688, #193979): rocm[device-all,libraries]==7.14.*
    r = pytorch_row("2.14", "rocm7.14")
    assert "rocm[device-all,libraries]==7.14.*" in r["notes"]
    assert "pytorch_rocm714_deps" in r["src"]
    # every device pack comes along: more than a wheel that bundles ROCm for a few targets
    assert r["download_mb"] > pytorch_row("2.13", "rocm7.2")["download_mb"]


def test_no_windows_row_on_pytorch_org() -> None:
    # src: pytorch_previous ("ROCM x.y (Linux only)")
    assert not [r for r in rows() if r["url"].startswith(PYTORCH) and r["os"] != "linux"]


# ---- kernels per torch release (src: pytorch_manywheel and the PRs) ----


@pytest.mark.parametrize(
    ("torch", "index"),
    [
        pytest.param("2.3", "rocm6.0", id="2.3-pytorch_manywheel@1fca82d4"),
        pytest.param("2.4", "rocm6.1", id="2.4-pytorch_manywheel@1fca82d4"),
        pytest.param("2.5", "rocm6.2", id="2.5-pytorch_manywheel@1fca82d4"),
    ],
)
def test_early_rows_lack_gfx1101_and_gfx1102(torch: str, index: str) -> None:
    gfx = gfx_of(pytorch_row(torch, index))
    assert "gfx1100" in gfx
    assert not gfx & {"gfx1101", "gfx1102", "gfx1103"}


def test_gfx1101_from_torch_2_6() -> None:
    # src: pytorch_141667 (merged 2024-12-04)
    gfx = gfx_of(pytorch_row("2.6", "rocm6.2.4"))
    assert "gfx1101" in gfx
    assert "gfx1102" not in gfx


@pytest.mark.parametrize(
    ("torch", "index"),
    [
        pytest.param("2.7", "rocm6.3", id="2.7-pytorch_147761-pytorch_148562"),
        pytest.param("2.9", "rocm6.4", id="2.9-pytorch_147761-pytorch_148562"),
    ],
)
def test_gfx1102_and_rdna4_from_torch_2_7(torch: str, index: str) -> None:
    assert {"gfx1102", "gfx1200", "gfx1201"} <= gfx_of(pytorch_row(torch, index))


def test_gfx115x_not_before_rocm7_wheels() -> None:
    # src: pytorch_167299 (before it: only ROCm >= 7.0 builds; torch 2.9 shipped ROCm 6.4)
    assert not gfx_of(pytorch_row("2.9", "rocm6.4")) & {"gfx950", "gfx1150", "gfx1151"}


@pytest.mark.parametrize(
    ("torch", "index"),
    [
        pytest.param("2.10", "rocm7.1", id="2.10-pytorch_167299"),
        pytest.param("2.12", "rocm7.2", id="2.12-pytorch_167299"),
        pytest.param("2.13", "rocm7.2", id="2.13-pytorch_167299"),
    ],
)
def test_gfx1150_gfx1151_in_rocm7_wheels(torch: str, index: str) -> None:
    assert {"gfx950", "gfx1150", "gfx1151"} <= gfx_of(pytorch_row(torch, index))


def test_gfx1103_not_in_torch_2_12() -> None:
    # src: pytorch_179653 landed after the 2.12 branch cut (13 Apr 2026, pytorch_release_matrix)
    assert "gfx1103" not in gfx_of(pytorch_row("2.12", "rocm7.2"))


@pytest.mark.parametrize(
    ("torch", "index"),
    [
        pytest.param("2.13", "rocm7.2", id="2.13-pytorch_179653"),
        pytest.param("2.14", "rocm7.14", id="2.14-pytorch_179653-pytorch_190276"),
    ],
)
def test_gfx1103_native_from_torch_2_13(torch: str, index: str) -> None:
    assert "gfx1103" in gfx_of(pytorch_row(torch, index))


# ---- AMD's indexes and Windows wheels ----


@pytest.mark.parametrize("os_name", ["linux", "windows"])
def test_multi_arch_index_rows(os_name: str) -> None:
    # src: amd_multiarch_714 (torch[device-gfxNNNN]==2.12.0+rocm7.14.1), amd_pytorch_python
    found = [r for r in rows() if r["url"] == MULTI_ARCH and r["os"] == os_name]
    assert len(found) == 1
    r = found[0]
    assert r["kind"] == "index"
    assert r["extra"] == "device-{gfx}"
    assert r["torch"] == "2.12.0+rocm7.14.1"
    assert r["pins"] == {"torchvision": "0.27.0+rocm7.14.1", "torchaudio": "2.11.0+rocm7.14.1"}
    assert r["python"] == py_range(11, 14)
    assert {"gfx1100", "gfx1103", "gfx1151", "gfx1152", "gfx1153", "gfx1201"} <= gfx_of(r)


def test_multi_arch_windows_has_rdna2_and_no_instinct() -> None:
    # src: amd_multiarch_714: gfx1030 on Windows from 7.14; Instinct rows are Linux only
    r = row("amd-multiarch-rocm7.14.1-torch2.12-windows")
    assert "gfx1030" in gfx_of(r)
    assert not gfx_of(r) & {"gfx908", "gfx90a", "gfx942", "gfx950"}


@pytest.mark.parametrize("os_name", ["linux", "windows"])
def test_rocm10_pages_pair_torch_2_13_and_2_14_from_whl_next(os_name: str) -> None:
    # src: amd_whl_next_1010 / amd_whl_next_1000 (2.13); amd_whl_next_1010_214: the 10.1 page
    # and release notes also give 2.14.0 (torchvision 0.29, torchaudio 2.11.0.3).
    found = {r["torch"]: r for r in rows() if r["url"] == WHL_NEXT and r["os"] == os_name}
    assert sorted(found) == ["2.13.0+rocm10.1.0", "2.14.0+rocm10.1.0"]
    for r in found.values():
        assert r["extra"] == "device-{gfx}"
    assert found["2.13.0+rocm10.1.0"]["pins"]["torchvision"] == "0.28.0+rocm10.1.0"
    assert found["2.14.0+rocm10.1.0"]["pins"]["torchvision"] == "0.29+rocm10.1.0"
    assert found["2.14.0+rocm10.1.0"]["pins"]["torchaudio"] == "2.11.0.3+rocm10.1.0"


@pytest.mark.parametrize("build_id", ["pytorch-2.9-rocm6.4", "pytorch-2.13-rocm7.2"])
def test_wheels_bundling_rocm_6_4_or_later_have_no_gfx900_gfx906(build_id: str) -> None:
    # src: pytorch_179865 (the rocm7.2 wheels' rocBLAS has no gfx900/gfx906 kernels),
    # rocm_4625 (ROCm 6.4.0's rocBLAS has no gfx906 kernels; 6.3 worked).
    assert not {"gfx900", "gfx906"} & set(gfx_of(row(build_id)))
    assert "gfx906" in gfx_of(row("pytorch-2.7-rocm6.3"))


def test_rocm10_linux_row_leaves_out_gfx1150() -> None:
    # src: amd_whl_next_1010: gfx1150 on Linux gets torch 2.12.0 in the 2.13 slot
    assert "gfx1150" not in gfx_of(row("amd-whl-next-rocm10.1-torch2.13"))
    assert "gfx1150" in gfx_of(row("amd-whl-next-rocm10.1-torch2.13-windows"))


def test_windows_7_2_wheels_and_sdk_first() -> None:
    # src: amd_windows_72
    r = row("amd-windows-rocm7.2-torch2.9")
    directory = "https://repo.radeon.com/rocm/windows/rocm-rel-7.2/"
    assert (r["os"], r["kind"], r["url"]) == ("windows", "find_links", directory)
    assert r["torch"] == "2.9.1+rocmsdk20260116"
    assert r["python"] == ["3.12"]
    (step,) = r["pre_install"]
    assert step["find_links"] == directory
    names = {p.split("==")[0] for p in step["packages"]}
    assert {"rocm-sdk-core", "rocm-sdk-libraries-custom", "rocm"} <= names


def test_windows_preview_wheels_lack_rdna2() -> None:
    # src: amd_windows_644, hip_sdk_win_72 (RDNA2 not supported before 7.14)
    for build_id in ("amd-windows-rocm6.4.4-torch2.8", "amd-windows-rocm7.2-torch2.9"):
        assert not {g for g in gfx_of(row(build_id)) if g.startswith("gfx103")}


# ---- form of every row ----


def test_find_links_rows_pin_every_companion() -> None:
    # find_links companions are local or pre-release versions: unpinned, pip takes PyPI's
    find_links = [r for r in rows() if r["kind"] == "find_links"]
    assert find_links
    for r in find_links:
        companions = [p for p in r["packages"] if p != "torch"]
        assert companions, r["id"]
        assert set(r.get("pins") or {}) == set(companions), r["id"]


def test_pins_and_torch_are_versions() -> None:
    for r in rows():
        for version in [r["torch"], *(r.get("pins") or {}).values()]:
            try:
                Version(str(version))
            except InvalidVersion:
                pytest.fail(f"{r['id']}: {version!r} is not a version")


def test_extra_only_on_index_rows_and_names_gfx() -> None:
    for r in rows():
        if "extra" in r:
            assert r["kind"] == "index", r["id"]
            assert "{gfx}" in r["extra"], r["id"]


def test_no_linux_overrides_here() -> None:
    # overrides moved to community.yaml
    assert "linux_overrides" not in data()


def test_ids_unique() -> None:
    ids = [r["id"] for r in rows()]
    assert len(ids) == len(set(ids))


def test_every_src_key_defined() -> None:
    defined = set(data()["sources"])
    for r in rows():
        assert r["src"], r["id"]
        assert set(r["src"]) <= defined, r["id"]


def test_every_gfx_name_well_formed() -> None:
    for name, targets in data()["arch_sets"].items():
        assert targets, name
        for gfx in targets:
            assert GFX_NAME.match(gfx), f"arch set {name}: {gfx}"
    for r in rows():
        value = r["gfx"]
        if isinstance(value, str):
            assert value in data()["arch_sets"], r["id"]
        else:
            for gfx in value:
                assert GFX_NAME.match(gfx), f"{r['id']}: {gfx}"


def test_status_known_and_unverified_rows_say_why() -> None:
    for r in rows():
        assert r["status"] in ("official", "community", "unverified"), r["id"]
        if r["status"] != "official":
            assert len(r.get("notes", "")) > 20, r["id"]
