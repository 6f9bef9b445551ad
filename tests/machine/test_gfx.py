"""gfx target names, KFD versions and HSA_OVERRIDE_GFX_VERSION values."""

from __future__ import annotations

import pytest

from rocmpanel.machine.gfx import gfx_from_kfd, normalise_gfx, parse_override, same_family


@pytest.mark.parametrize(
    ("kfd", "gfx"),
    [
        (110000, "gfx1100"),
        (90010, "gfx90a"),
        (100301, "gfx1031"),
        (90012, "gfx90c"),
        (110501, "gfx1151"),
        (90402, "gfx942"),
        (0, None),
    ],
)
def test_kfd_version_to_name(kfd: int, gfx: str | None) -> None:
    assert gfx_from_kfd(kfd) == gfx


@pytest.mark.parametrize(
    ("text", "gfx"),
    [
        ("gfx90a:sramecc+:xnack-", "gfx90a"),
        ("amdgcn-amd-amdhsa--gfx1100", "gfx1100"),
        ("AMD Radeon RX 7900 XTX (gfx1100)", "gfx1100"),
        ("GFX1201", "gfx1201"),
        ("", None),
        ("Radeon", None),
    ],
)
def test_normalise(text: str, gfx: str | None) -> None:
    assert normalise_gfx(text) == gfx


def test_override_values() -> None:
    parsed = parse_override("10.3.0")
    assert parsed is not None and parsed.name == "gfx1030"
    parsed = parse_override("9.0.10")
    assert parsed is not None and parsed.name == "gfx90a"
    assert parse_override("11.5.1").name == "gfx1151"  # type: ignore[union-attr]
    for bad in ("", "10.3", "10.3.0.1", "gfx1030", "64.0.0", "10.256.0", "10.3.x"):
        assert parse_override(bad) is None, bad


def test_same_family() -> None:
    assert same_family("gfx1031", "gfx1030")
    assert not same_family("gfx1101", "gfx1030")
