"""How presets read to people: sources spelled out, values in words, unknown variables,
and which GPUs a preset suits."""

from __future__ import annotations

import pytest

from rocmpanel.envvars.catalogue import load_catalogue
from rocmpanel.jobs.preset_text import (
    archs_text,
    effect_text,
    gfx_arch,
    source_text,
    suits,
    unknown_variables,
    value_text,
)
from rocmpanel.jobs.presets import Effect, Item, Preset, builtin_presets

# ---- source_text -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("pt_tune", "pytorch/pytorch aten/src/ATen/cuda/tunable/README.md"),
        (" pt_tune ", "pytorch/pytorch aten/src/ATen/cuda/tunable/README.md"),
        (
            "pt_blas; https://example.org/x",
            "pytorch/pytorch pulls 122106, 153610, 174377 (TORCH_BLAS_PREFER_HIPBLASLT); "
            "https://example.org/x",
        ),
        ("https://docs.pytorch.org/a.html", "https://docs.pytorch.org/a.html"),
        ("pt_tun", "pt_tun"),  # not a key: shown as written
        ("PT_TUNE", "PT_TUNE"),  # keys are case-sensitive
        ("", ""),
        ("  ", ""),
    ],
)
def test_source_text(source: str, text: str) -> None:
    assert source_text(source) == text


def test_every_builtin_source_reads_as_a_reference_not_a_bare_key() -> None:
    """Each part of a built-in source is a catalogue key (spelled out) or a URL/repo path:
    a typo'd key would otherwise be shown to people as it is."""
    keys = load_catalogue().sources
    for preset in builtin_presets():
        for item in preset.items():
            for part in item.source.split(";"):
                part = part.strip()
                assert part in keys or "/" in part, (preset.id, item.key, part)
            assert source_text(item.source) != item.source or "/" in item.source


# ---- value_text ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "key", "value", "text"),
    [
        ("torch", "float32_matmul_precision", "highest", "highest"),
        ("torch", "cudnn_benchmark", True, "on"),
        ("torch", "cudnn_benchmark", False, "off"),
        ("torch", "sdpa_backends", ("flash", "math"), "flash, math"),
        ("torch", "sdpa_backends", ["mem_efficient"], "mem_efficient"),
        ("torch", "memory_fraction", 0.9, "0.9"),
        ("torch", "memory_fraction", 1.0, "1"),
        ("torch", "cpu_threads", 8, "8"),
        ("torch", "tunableop", {"enabled": False, "tuning": True}, "off"),
        ("torch", "tunableop", {"enabled": False, "tuning": False}, "off"),
        ("torch", "tunableop", {"enabled": True, "tuning": True}, "on, tuning new shapes"),
        ("torch", "tunableop", {"enabled": True}, "on, tuning new shapes"),
        ("torch", "tunableop", {"enabled": True, "tuning": False}, "on, saved results only"),
        (
            "torch",
            "alloc",
            {"max_split_size_mb": 512, "garbage_collection_threshold": 0.8},
            "garbage_collection_threshold 0.8, max_split_size_mb 512",
        ),
        (
            "torch",
            "alloc",
            {"expandable_segments": True, "max_split_size_mb": 128},
            "expandable_segments on, max_split_size_mb 128",
        ),
        ("torch", "alloc", {"expandable_segments": False}, "expandable_segments off"),
        ("env", "MIOPEN_FIND_MODE", "FAST", "FAST"),
        ("env", "HIP_VISIBLE_DEVICES", "0,1", "0,1"),
        ("env", "HSA_OVERRIDE_GFX_VERSION", "10.3.0", "10.3.0"),
    ],
)
def test_value_text(kind: str, key: str, value: object, text: str) -> None:
    assert value_text(Item(kind, key, value)) == text


def test_no_builtin_value_reads_as_a_python_repr() -> None:
    for preset in builtin_presets():
        for item in preset.items():
            shown = value_text(item)
            assert not any(mark in shown for mark in "{}[]()'"), (preset.id, item.key, shown)
            assert "True" not in shown and "False" not in shown, (preset.id, item.key, shown)


# ---- unknown_variables -----------------------------------------------------------------------


def test_unknown_variables_lists_only_names_the_catalogue_does_not_know() -> None:
    preset = Preset(
        "t",
        "T",
        env=(
            Item("env", "MIOPEN_FIND_MOD", "FAST"),
            Item("env", "MIOPEN_FIND_MODE", "FAST"),
            Item("env", "HSA_OVERRIDE_GFX_VERSION_2", "10.3.0"),  # a pattern entry
            Item("env", "MY_OWN_SWITCH", "1"),
        ),
        torch=(Item("torch", "cpu_threads", 4),),
    )
    assert unknown_variables(preset) == ["MIOPEN_FIND_MOD", "MY_OWN_SWITCH"]


def test_no_builtin_preset_sets_an_unknown_variable() -> None:
    assert {p.id: unknown_variables(p) for p in builtin_presets()} == {
        p.id: [] for p in builtin_presets()
    }


# ---- suits and the architecture of a gfx -----------------------------------------------------

ARCH_OF = [
    ("gfx1030", "rdna2"),
    ("gfx1031", "rdna2"),
    ("gfx1036", "rdna2"),
    ("gfx1037", None),
    ("gfx1010", None),  # RDNA1: no preset architecture
    ("gfx1100", "rdna3"),
    ("gfx1103", "rdna3"),
    ("gfx1150", "rdna3"),
    ("gfx1151", "rdna3"),
    ("gfx1200", "rdna4"),
    ("gfx1201", "rdna4"),
    ("gfx1250", None),
    ("gfx90a", "cdna2"),
    ("gfx90a:sramecc+:xnack-", "cdna2"),
    ("gfx908", None),  # CDNA1 (MI100)
    ("gfx940", "cdna3"),  # MI300A/X early steps: CDNA3 too
    ("gfx941", "cdna3"),
    ("gfx942", "cdna3"),
    ("gfx950", "cdna4"),
    ("gfx906", None),
    ("not a gpu", None),
    (None, None),
]


@pytest.mark.parametrize(("gfx", "arch"), ARCH_OF)
def test_gfx_arch(gfx: str | None, arch: str | None) -> None:
    assert gfx_arch(gfx) == arch


def _archs(*archs: str) -> Preset:
    return Preset("t", "T", archs=archs)


@pytest.mark.parametrize(
    ("gfx", "arch"), [(gfx, arch) for gfx, arch in ARCH_OF if gfx is not None and arch]
)
def test_a_preset_suits_each_gpu_of_its_arch_and_no_other(gfx: str, arch: str) -> None:
    others = [a for a in ("rdna2", "rdna3", "rdna4", "cdna2", "cdna3", "cdna4") if a != arch]
    assert suits(_archs(arch), gfx) is True
    assert suits(_archs(*others), gfx) is False
    assert suits(_archs(arch, others[0]), gfx) is True


@pytest.mark.parametrize("gfx", ["gfx1010", "gfx908", "gfx1250", "gfx1100", "nonsense"])
def test_any_suits_every_gpu_even_one_without_an_arch(gfx: str) -> None:
    assert suits(_archs("any"), gfx) is True


@pytest.mark.parametrize("gfx", ["gfx1010", "gfx908", "gfx1250", "nonsense"])
def test_a_gpu_without_an_arch_suits_no_arch_preset(gfx: str) -> None:
    assert suits(_archs("rdna2", "rdna3", "rdna4", "cdna2", "cdna3", "cdna4"), gfx) is False


@pytest.mark.parametrize("archs", [("any",), ("rdna3",)])
def test_an_unknown_gpu_gives_none(archs: tuple[str, ...]) -> None:
    assert suits(_archs(*archs), None) is None


def test_the_builtins_suit_a_gfx1100() -> None:
    assert {p.id: suits(p, "gfx1100") for p in builtin_presets()} == {
        "safe-defaults": True,
        "rdna3-consumer": True,
        "rdna2-consumer": False,
        "rdna4": False,
        "cdna3": False,
        "low-vram": True,
        "throughput": True,
        "debugging": True,
    }


@pytest.mark.parametrize(
    ("archs", "text"),
    [
        (("any",), "any GPU"),
        (("rdna3",), "RDNA3"),
        (("rdna3", "cdna3"), "RDNA3, CDNA3"),
        ((), "any GPU"),
    ],
)
def test_archs_text(archs: tuple[str, ...], text: str) -> None:
    assert archs_text(archs) == text


# ---- effect_text -----------------------------------------------------------------------------
_FIND = Item("env", "MIOPEN_FIND_MODE", "FAST")


@pytest.mark.parametrize(
    ("effect", "text"),
    [
        (Effect(_FIND, True), "applies"),
        (Effect(_FIND, True, "on gfx1100 only"), "applies (on gfx1100 only)"),
        (Effect(_FIND, False, "Linux only"), "no effect here: Linux only"),
        (Effect(_FIND, False), "no effect here: it does not apply on this machine"),
        (
            Effect(_FIND, True, "the GPU is not known", checked=False),
            "not checked: the GPU is not known",
        ),
        # the rule may already start its note with "not checked: ": said once, not twice
        (
            Effect(_FIND, True, "not checked: the GPU is not known", checked=False),
            "not checked: the GPU is not known",
        ),
        (Effect(_FIND, True, "not checked: no GPU"), "not checked: no GPU"),
        (
            Effect(_FIND, True, "", checked=False),
            "not checked: what it depends on is not known here",
        ),
        # an unchecked "no effect" is a guess too: "not checked" wins
        (Effect(_FIND, False, "Linux only", checked=False), "not checked: Linux only"),
    ],
)
def test_effect_text_says_applies_no_effect_or_not_checked(effect, text):
    assert effect_text(effect) == text
