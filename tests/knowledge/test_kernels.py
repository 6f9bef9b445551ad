"""The one native / override / none decision, on small inline data sets."""

from __future__ import annotations

import pytest

from rocmpanel.knowledge import community
from rocmpanel.knowledge.kernels import KernelMode, decide, family, harm_advice
from rocmpanel.knowledge.torch_builds import TorchBuild

KNOWN = community.parse(
    """
schema: 1
sources:
  a: "source A"
  b: "source B"
overrides:
  - {gfx: gfx1031, value: "10.3.0", target: gfx1030, src: [a]}
  - {gfx: gfx1103, value: "11.0.0", target: gfx1100, src: [a]}
harmful:
  - {id: x, gfx: [gfx1103], override: "11.0.0", severity: danger, text: "Hangs.", src: [b]}
  - {id: y, gfx: [gfx1151], override: any, severity: warning, text: "Not needed.", src: [b]}
  - {id: z, gfx: [gfx1031], override: "10.3.0", severity: warning, text: "Slow.", src: [b]}
"""
)


def _row(
    id_: str, torch: str, gfx: tuple[str, ...], *, os: str = "linux", rocm: str = "7.2", **kw
) -> TorchBuild:
    return TorchBuild(
        id=id_,
        torch=torch,
        os=os,
        rocm=rocm,
        kind=kw.pop("kind", "index"),
        url="https://example.invalid/" + id_,
        packages=("torch",),
        python=kw.pop("python", ("3.10", "3.11", "3.12")),
        gfx=gfx,
        download_mb=1,
        **kw,
    )


OLD = _row("old", "2.9", ("gfx1030", "gfx1100"), rocm="6.4")
NEW = _row("new", "2.13", ("gfx1030", "gfx1100", "gfx1103", "gfx1151"))


def test_native_beats_an_older_row_needing_an_override_even_on_the_older_rocm() -> None:
    # The harmful 11.0.0 override for gfx1103 must never win over native kernels, even
    # when the host ROCm (6.4) matches the older row.
    d = decide("gfx1103", "linux", [OLD, NEW], KNOWN, rocm_version="6.4.1")
    assert d.mode is KernelMode.NATIVE and d.build is NEW
    assert d.override_value is None and d.advice == ()


def test_override_only_when_no_row_has_native_kernels_and_harms_come_with_it() -> None:
    d = decide("gfx1031", "linux", [OLD], KNOWN)
    assert d.mode is KernelMode.OVERRIDE and d.override_value == "10.3.0"
    assert [a.text for a in d.advice][1:] == ["Slow."]
    assert "source B" in d.advice[1].source


def test_an_override_known_to_be_dangerous_is_never_chosen() -> None:
    # Without native kernels, gfx1103's 11.0.0 (danger: hangs) means no build at all.
    d = decide("gfx1103", "linux", [OLD], KNOWN)
    assert d.mode is KernelMode.NONE and d.build is None and d.override_value is None
    assert "Hangs." in d.reason and d.advice[0].severity == "danger"


def test_override_never_on_windows_and_none_without_a_rule() -> None:
    win = _row("win", "2.9.1", ("gfx1100",), os="windows")
    assert decide("gfx1031", "windows", [win], KNOWN).mode is KernelMode.NONE
    d = decide("gfx1010", "linux", [OLD, NEW], KNOWN)
    assert d.mode is KernelMode.NONE and d.build is None and "RDNA1" in d.reason
    assert family("gfx9999") == "an unknown family" and family("gfx803") == "GCN 3/4"


def test_rows_of_another_os_are_ignored() -> None:
    win = _row("win", "2.9.1", ("gfx1201",), os="windows")
    assert decide("gfx1201", "linux", [win], KNOWN).mode is KernelMode.NONE
    assert decide("gfx1201", "windows", [win], KNOWN).build is win


@pytest.mark.parametrize(
    ("rocm", "python", "expected"),
    [
        (None, None, "new"),  # newest torch
        ("6.4.2", None, "old"),  # the installed ROCm's own line, both native
        ("6.4.2", "3.13", "new"),  # Python first: only "new" has 3.13 wheels
    ],
)
def test_ranking(rocm: str | None, python: str | None, expected: str) -> None:
    new = _row("new", "2.13", ("gfx1100",), python=("3.10", "3.13"))
    d = decide("gfx1100", "linux", [OLD, new], KNOWN, rocm_version=rocm, python_version=python)
    assert d.build is not None and d.build.id == expected


def test_stable_rows_beat_previews_of_newer_torch() -> None:
    preview = _row("preview", "2.14", ("gfx1100",), preview=True)
    d = decide("gfx1100", "linux", [NEW, preview], KNOWN)
    assert d.build is NEW


def test_harm_advice_matches_value_or_any() -> None:
    assert [a.text for a in harm_advice("gfx1103", "11.0.0", KNOWN)] == ["Hangs."]
    assert harm_advice("gfx1103", "10.3.0", KNOWN) == ()
    assert [a.text for a in harm_advice("gfx1151", "11.5.1", KNOWN)] == ["Not needed."]
    assert harm_advice("gfx1100", None, KNOWN) == ()


def test_community_refuses_bad_rows() -> None:
    from rocmpanel.base.errors import PanelError

    for text in (
        "overrides: [{gfx: gfx1031, value: '10.3', target: gfx1030}]",
        "overrides: [{gfx: navi, value: '10.3.0', target: gfx1030}]",
        "harmful: [{gfx: [gfx1103], severity: fatal, text: x}]",
        "overrides: [{gfx: gfx1031, value: '10.3.0', target: gfx1030, src: [nowhere]}]",
        "- just a list",
    ):
        with pytest.raises(PanelError):
            community.parse(text)
