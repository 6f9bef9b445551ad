"""The one gfx -> family table: labels for messages and the preset architectures."""

from __future__ import annotations

import pytest

from rocmpanel.knowledge.kernels import family as kernel_family
from rocmpanel.machine.gfx import Family, arch_targets, family, preset_arch

FAMILIES = [
    ("gfx803", "GCN 3/4", None),
    ("gfx900", "GCN5", None),
    ("gfx906", "GCN5", None),
    ("gfx90c", "GCN5", None),  # Renoir APU (Vega)
    ("gfx908", "CDNA", None),  # MI100
    ("gfx90a", "CDNA2", "cdna2"),
    ("gfx90a:sramecc+:xnack-", "CDNA2", "cdna2"),
    ("gfx940", "CDNA3", "cdna3"),
    ("gfx941", "CDNA3", "cdna3"),
    ("gfx942", "CDNA3", "cdna3"),
    ("gfx950", "CDNA4", "cdna4"),
    ("gfx1010", "RDNA1", None),
    ("gfx1030", "RDNA2", "rdna2"),
    ("gfx1036", "RDNA2", "rdna2"),
    ("gfx1100", "RDNA3", "rdna3"),
    ("gfx1103", "RDNA3", "rdna3"),
    ("gfx1150", "RDNA3.5", "rdna3"),
    ("gfx1151", "RDNA3.5", "rdna3"),
    ("gfx1200", "RDNA4", "rdna4"),
    ("gfx1201", "RDNA4", "rdna4"),
]


@pytest.mark.parametrize(("gfx", "label", "arch"), FAMILIES)
def test_each_target_has_one_family(gfx: str, label: str, arch: str | None) -> None:
    assert family(gfx) == Family(label, arch)
    assert preset_arch(gfx) == arch
    assert kernel_family(gfx) == label


@pytest.mark.parametrize("gfx", ["gfx943", "gfx951", "gfx1037", "gfx1250", "gfx9999", "nonsense"])
def test_targets_outside_the_table_have_no_family(gfx: str) -> None:
    assert (family(gfx), preset_arch(gfx), kernel_family(gfx)) == (
        None,
        None,
        "an unknown family",
    )


def test_no_target_has_no_family() -> None:
    assert (family(None), preset_arch(None), family("")) == (None, None, None)


@pytest.mark.parametrize(
    ("arch", "targets"),
    [
        ("cdna2", ("gfx90a",)),
        ("cdna3", ("gfx940", "gfx941", "gfx942")),
        ("cdna4", ("gfx950",)),
        ("rdna2", tuple(f"gfx103{n}" for n in range(7))),
        ("rdna3", ()),  # open to every step: no list
        ("any", ()),
    ],
)
def test_the_targets_listed_for_an_arch(arch: str, targets: tuple[str, ...]) -> None:
    assert arch_targets(arch) == targets
