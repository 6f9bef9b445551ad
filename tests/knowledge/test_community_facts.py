"""Facts in the shipped resources/community.yaml, one case per fact, each naming its source.

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
from packaging.version import Version

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
GFX_NAME = re.compile(r"^gfx[0-9]{2,3}[0-9a-f]$")
OVERRIDE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


@lru_cache(maxsize=2)
def load(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((RESOURCES / name).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def data() -> dict[str, Any]:
    return load("community.yaml")


def overrides() -> list[dict[str, Any]]:
    return list(data()["overrides"])


def harms() -> list[dict[str, Any]]:
    return list(data()["harmful"])


def override_for(gfx: str) -> dict[str, Any] | None:
    found = [o for o in overrides() if o["gfx"] == gfx]
    assert len(found) <= 1, f"more than one override row for {gfx}"
    return found[0] if found else None


def harm(gfx: str, value: str) -> dict[str, Any] | None:
    found = [h for h in harms() if gfx in h["gfx"] and h["override"] in (value, "any")]
    return found[0] if found else None


def gfx_parts(gfx: str) -> tuple[int, int, int]:
    """gfx1031 -> (10, 3, 1), gfx90c -> (9, 0, 12)."""
    digits = gfx[3:]
    return int(digits[:-2]), int(digits[-2], 16), int(digits[-1], 16)


def target_of(value: str) -> str:
    """HSA_OVERRIDE_GFX_VERSION MAJOR.MINOR.STEP -> gfx name (step in hex: 9.0.10 -> gfx90a)."""
    match = OVERRIDE.match(value)
    assert match, value
    major, minor, step = (int(g) for g in match.groups())
    return f"gfx{major}{minor}{step:x}"


def linux_build_gfx() -> list[set[str]]:
    torch_builds = load("torch_builds.yaml")
    sets = torch_builds["arch_sets"]
    out = []
    for r in torch_builds["builds"]:
        if r["os"] == "linux":
            out.append(set(sets[r["gfx"]]) if isinstance(r["gfx"], str) else set(r["gfx"]))
    return out


# ---- overrides ----


@pytest.mark.parametrize(
    ("gfx", "value", "target"),
    [
        pytest.param("gfx1031", "10.3.0", "gfx1030", id="gfx1031-frigate_rocm-ollama_gpu_md"),
        pytest.param("gfx1032", "10.3.0", "gfx1030", id="gfx1032-ollama_gpu_md"),
        pytest.param("gfx1034", "10.3.0", "gfx1030", id="gfx1034-ollama_gpu_md"),
        pytest.param("gfx1035", "10.3.0", "gfx1030", id="gfx1035-ollama_gpu_md"),
        pytest.param("gfx1036", "10.3.0", "gfx1030", id="gfx1036-ollama_8473"),
        pytest.param("gfx1102", "11.0.0", "gfx1100", id="gfx1102-disc_4188"),
        pytest.param("gfx1103", "11.0.0", "gfx1100", id="gfx1103-frigate_rocm"),
        pytest.param("gfx90c", "9.0.0", "gfx900", id="gfx90c-frigate_rocm"),
    ],
)
def test_override_row(gfx: str, value: str, target: str) -> None:
    row = override_for(gfx)
    assert row is not None
    assert (row["value"], row["target"], row["status"]) == (value, target, "community")


def test_no_gfx1101_override_row() -> None:
    # Discussion 4188 (the old row's only source) is about an RX 7600S, a gfx1102; gfx1101
    # kernels are in the PyTorch wheels from torch 2.6 (pytorch/pytorch pull 141667).
    assert override_for("gfx1101") is None


@pytest.mark.parametrize(
    "gfx",
    [
        pytest.param("gfx1151", id="gfx1151-pytorch_167299-localai_9229"),
        pytest.param("gfx1150", id="gfx1150-pytorch_167299"),
        pytest.param("gfx1100", id="gfx1100-native"),
        pytest.param("gfx1201", id="gfx1201-rocm_systems_3461"),
    ],
)
def test_no_override_for_targets_with_native_kernels(gfx: str) -> None:
    assert override_for(gfx) is None


def test_override_value_names_its_target() -> None:
    for row in overrides():
        assert target_of(str(row["value"])) == row["target"], row["gfx"]


def test_override_stays_in_the_family() -> None:
    # only same-family substitutes work (10.3.x -> 10.3.0, 11.0.x -> 11.0.0)
    for row in overrides():
        gfx_major, gfx_minor, _ = gfx_parts(row["gfx"])
        value_major, value_minor, _ = gfx_parts(row["target"])
        assert (gfx_major, gfx_minor) == (value_major, value_minor), row["gfx"]


def test_every_override_target_has_builds_without_the_gfx() -> None:
    # an override only helps on a build carrying the target but not the GPU's own kernels
    builds = linux_build_gfx()
    for row in overrides():
        assert any(row["target"] in b and row["gfx"] not in b for b in builds), row["gfx"]


def test_overrides_unique_per_gfx() -> None:
    gfx = [o["gfx"] for o in overrides()]
    assert len(gfx) == len(set(gfx))


def test_until_is_a_version() -> None:
    for row in overrides():
        if "until" in row:
            Version(str(row["until"]))


# ---- harmful combinations ----


@pytest.mark.parametrize(
    ("gfx", "value"),
    [
        pytest.param("gfx1151", "11.0.0", id="gfx1151-11.0.0-pytorch_167299-localai_9229"),
        pytest.param("gfx1103", "11.0.0", id="gfx1103-11.0.0-pytorch_179653-miopen_3954"),
        pytest.param("gfx1103", "11.0.2", id="gfx1103-11.0.2-miopen_3954"),
        pytest.param("gfx1151", "12.0.1", id="gfx1151-12.0.1-rocm_systems_3531"),
        pytest.param("gfx1201", "11.0.0", id="gfx1201-any-rocm_systems_3461"),
        pytest.param("gfx90a", "10.3.0", id="gfx90a-any-legacy_5238"),
    ],
)
def test_danger_rows(gfx: str, value: str) -> None:
    row = harm(gfx, value)
    assert row is not None
    assert row["severity"] == "danger"


@pytest.mark.parametrize(
    ("gfx", "value"),
    [
        pytest.param("gfx1102", "11.0.0", id="gfx1102-11.0.0-rocm_4557"),
        pytest.param("gfx1150", "11.0.0", id="gfx1150-11.0.0-likelovewant_37"),
        pytest.param("gfx1150", "11.5.1", id="gfx1150-11.5.1-likelovewant_37-kyuz0_43"),
        pytest.param("gfx90c", "9.0.0", id="gfx90c-9.0.0-legacy_5121"),
    ],
)
def test_warning_rows(gfx: str, value: str) -> None:
    row = harm(gfx, value)
    assert row is not None
    assert row["severity"] == "warning"


def test_gfx1103_override_always_comes_with_the_danger_warning() -> None:
    row = override_for("gfx1103")
    assert row is not None
    found = harm("gfx1103", row["value"])
    assert found is not None and found["severity"] == "danger"


def test_gfx1151_identity_value_is_not_flagged() -> None:
    # src: localai_9229: 11.5.1 is gfx1151's own target
    assert harm("gfx1151", "11.5.1") is None


def test_harm_rows_well_formed() -> None:
    ids = [h["id"] for h in harms()]
    assert len(ids) == len(set(ids))
    for h in harms():
        assert h["severity"] in ("warning", "danger"), h["id"]
        assert h["override"] == "any" or OVERRIDE.match(str(h["override"])), h["id"]
        assert 20 < len(h["text"]) < 400, h["id"]
        assert h["gfx"], h["id"]


# ---- unlisted products (moved from compat.yaml) ----


def test_rx_6800_6900_listed_as_unlisted_products() -> None:
    # src: gpu_os_5_7_1, sysreq_linux_600
    (row,) = data()["unlisted_products"]
    assert set(row["pci_ids"]) == {"73a5", "73af", "73bf"}
    assert row["status"] == "official"


# ---- every row ----


def test_every_src_key_defined() -> None:
    defined = set(data()["sources"])
    sections = ("overrides", "harmful", "unlisted_products")
    for section in sections:
        for row in data()[section]:
            assert row["src"], (section, row)
            assert set(row["src"]) <= defined, (section, row)


def test_every_gfx_name_well_formed() -> None:
    names = [o["gfx"] for o in overrides()] + [o["target"] for o in overrides()]
    names += [g for h in harms() for g in h["gfx"]]
    for gfx in names:
        assert GFX_NAME.match(gfx), gfx
