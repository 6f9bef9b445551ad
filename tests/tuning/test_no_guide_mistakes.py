"""No tuning item and no built-in preset repeats a mistake of the seed guide (FACTS.md §6).

The mistakes are patterns checked sentence by sentence against what rocmpanel itself says
(an item's title, what_it_does and instead; a preset's name, description and every item's
why), plus rules on the presets' structure (TF32 in an RDNA preset, HSA_* on Windows).
A sentence that says the claim is wrong ("not", "no-op", "deprecated", ...) is not a hit:
the items exist to say exactly that. Every pattern is shown able to fail on a known-bad
sentence or preset.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from rocmpanel.base.resources import read_resource
from rocmpanel.tuning.items import load_items

#: Words that mark a sentence as correcting a claim rather than making it.
CORRECTS = (
    r"\b(not|no|never|nothing|wrong|deprecated|isn't|doesn't|instead of|without)\b"
    r"|no-op|不是|错误"
)


@dataclass(frozen=True)
class Mistake:
    """A FACTS.md §6 claim: ``subject`` and ``claim`` in one sentence that does not correct it."""

    name: str
    subject: str
    claim: str
    corrects: str = CORRECTS
    #: The claim as a sentence that does not name the subject makes it ("It defragments
    #: memory." in the flash-SDP item); None: such sentences are not checked.
    bare_claim: str | None = None

    def hit(self, sentence: str, about: str = "") -> bool:
        """``about``: what the text is about (an item's snippet and setting), the subject
        of its sentences that do not name one."""
        flags = re.IGNORECASE
        if re.search(self.corrects, sentence, flags):
            return False
        if re.search(self.subject, sentence, flags):
            return bool(re.search(self.claim, sentence, flags))
        return bool(
            self.bare_claim
            and re.search(self.subject, about, flags)
            and re.search(self.bare_claim, sentence, flags)
        )


MISTAKES = (
    Mistake(
        "flash-sdp-defragments",
        r"flash_sdp|flash sdp",
        r"fragment|碎片",
        bare_claim=(
            r"defragment|(reduc|lower|fix|avoid|prevent)\w* (memory )?fragmentation|碎片整理"
        ),
    ),
    Mistake(
        "num-threads-block-size",
        r"set_num_threads|cpu_threads",
        r"block|线程块",
        bare_claim=r"(thread[- ]?block|block size)|线程块",
    ),
    Mistake(
        "allow-tf32-tensor-cores",
        r"allow_tf32",
        r"tensor core|张量核心",
        bare_claim=r"tensor core|张量核心",
    ),
    Mistake(
        "texpr-fuser-rocm",
        r"texpr",
        r"rocm[- ]?(specific|optimi[sz])|rocm特定|amd[- ]optimi[sz]",
        bare_claim=r"rocm[- ]?(specific|optimi[sz])|rocm特定|amd[- ]optimi[sz]",
    ),
    Mistake("cuda-amp-recommended", r"torch\.cuda\.amp", r"."),
    Mistake("distributed-launch-recommended", r"torch\.distributed\.launch", r"."),
    Mistake("trust-remote-code", r"trust_remote_code", r"."),
    Mistake("wmic", r"\bwmic\b", r"."),
    Mistake("setx-path", r"\bsetx\b", r"PATH|/M\b"),
    Mistake("nvidia-smi-on-amd", r"nvidia-smi", r"."),
    Mistake("rocprof-stats-legacy", r"\brocprof\b(?!v)", r"--stats"),
    Mistake("bandwidth-test-flag", r"rocm-bandwidth-test|--bidirectional", r"."),
    Mistake("tensorflow-rocm-2-15-pypi", r"tensorflow-rocm", r"2\.15"),
    Mistake("mi300x-32-links", r"MI300X?", r"32 (infinity fabric|IF) links"),
)

_SENTENCE_END = re.compile(r"(?<=[.!?。；;])\s+|\n+")


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def prose_hits(text: str, about: str = "") -> list[str]:
    """The mistakes ``text`` (about ``about``) makes, as "name: sentence"."""
    return [f"{m.name}: {s}" for s in sentences(text) for m in MISTAKES if m.hit(s, about)]


def item_about(item: Any) -> str:
    """What a tuning item is about: its snippet and the setting it names."""
    return " ".join([item.snippet, *(item.setting or ()), *item.related_env])


# ---- presets (resources/presets.yaml, read as YAML: no dependency on the presets code) ------

RDNA = {"rdna2", "rdna3", "rdna4"}


def _items(section: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """(key, {value, why, source, platforms}) for a preset's env or torch section, the short
    form ``KEY: value`` included."""
    out: list[tuple[str, Mapping[str, Any]]] = []
    for key, raw in (section or {}).items():
        out.append((str(key), raw if isinstance(raw, Mapping) else {"value": raw}))
    return out


def preset_hits(preset: Mapping[str, Any]) -> list[str]:
    """The mistakes one preset (a mapping as in resources/presets.yaml) makes."""
    ident = preset.get("id", "?")
    hits = [
        f"{ident}: {h}"
        for field in ("name", "description")
        for h in prose_hits(str(preset.get(field) or ""))
    ]
    env = _items(preset.get("env"))
    torch = _items(preset.get("torch"))
    for key, raw in env + torch:
        hits += [f"{ident}: {key}: {h}" for h in prose_hits(str(raw.get("why") or ""), key)]
    archs = set(preset.get("archs") or ["any"])
    for key, raw in torch:
        tf32 = key == "float32_matmul_precision" and raw.get("value") in ("high", "medium")
        if tf32 and archs & RDNA:
            hits.append(f"{ident}: tf32-on-rdna: {key} {raw['value']} for {sorted(archs)}")
    for key, raw in env:
        if key == "HIPBLASLT_ALLOW_TF32" and archs & RDNA:
            hits.append(f"{ident}: tf32-on-rdna: {key} for {sorted(archs)}")
        if key.startswith("HSA_") and list(raw.get("platforms") or []) != ["linux"]:
            hits.append(f"{ident}: hsa-on-windows: {key} without platforms [linux]")
    return hits


def item_structure_hits(item: Any) -> list[str]:
    """Structural mistakes of one tuning item: TF32 for RDNA, HSA_* offered on Windows."""
    hits: list[str] = []
    names = list(item.related_env) + ([item.setting[1]] if item.setting else [])
    if any(n.startswith("HSA_") for n in names) and item.platforms != ("linux",):
        hits.append(f"{item.id}: hsa-on-windows")
    if item.setting == ("torch", "float32_matmul_precision") and set(item.archs) & (RDNA | {"any"}):
        hits.append(f"{item.id}: tf32-on-rdna")
    return hits


def missing_why_or_source(preset: Mapping[str, Any]) -> list[str]:
    ident = preset.get("id", "?")
    return [
        f"{ident}: {key}: {field}"
        for key, raw in _items(preset.get("env")) + _items(preset.get("torch"))
        for field in ("why", "source")
        if not str(raw.get(field) or "").strip()
    ]


def _builtin_presets() -> list[Mapping[str, Any]]:
    data = yaml.safe_load(read_resource("presets.yaml"))
    presets = data["presets"] if isinstance(data, Mapping) else data
    assert isinstance(presets, list) and presets
    return presets


# ---- the shipped data -----------------------------------------------------------------------


def test_no_tuning_item_repeats_a_guide_mistake():
    hits: list[str] = []
    for item in load_items():
        about = item_about(item)
        hits += [f"{item.id}: {h}" for part in item.prose() for h in prose_hits(part, about)]
        hits += item_structure_hits(item)
    assert hits == []


def test_no_built_in_preset_repeats_a_guide_mistake():
    hits = [h for preset in _builtin_presets() for h in preset_hits(preset)]
    assert hits == []


def test_every_built_in_preset_item_has_a_why_and_a_source():
    presets = _builtin_presets()
    assert sum(len(_items(p.get("env")) + _items(p.get("torch"))) for p in presets) >= 8
    assert [m for p in presets for m in missing_why_or_source(p)] == []


# ---- the checker can fail -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("flash-sdp-defragments", "torch.backends.cuda.enable_flash_sdp(True) defragments memory."),
        ("flash-sdp-defragments", "启用 enable_flash_sdp 进行内存碎片整理"),
        ("num-threads-block-size", "torch.set_num_threads(8) sets the best thread block size."),
        ("num-threads-block-size", "cpu_threads: 设置最佳线程块大小"),
        ("allow-tf32-tensor-cores", "cudnn.allow_tf32 = True turns on the Tensor Core path."),
        ("texpr-fuser-rocm", "_jit_set_texpr_fuser_enabled(True) is a ROCm optimisation."),
        ("texpr-fuser-rocm", "texpr fuser: ROCm-specific speed-up."),
        ("cuda-amp-recommended", "Wrap the step in torch.cuda.amp.autocast() for speed."),
        ("distributed-launch-recommended", "Start it with python -m torch.distributed.launch."),
        ("trust-remote-code", "Load LLaMA with trust_remote_code=True."),
        ("wmic", "Check the card with wmic path win32_VideoController get name."),
        ("setx-path", 'Run setx PATH "%PATH%;C:\\rocm".'),
        ("nvidia-smi-on-amd", "Watch it with nvidia-smi --loop=60."),
        ("rocprof-stats-legacy", "Profile with rocprof --stats python train.py."),
        ("bandwidth-test-flag", "Measure links with rocm-bandwidth-test."),
        ("tensorflow-rocm-2-15-pypi", "pip install tensorflow-rocm==2.15.0 works."),
        ("mi300x-32-links", "An MI300X has 32 Infinity Fabric links."),
    ],
)
def test_each_prose_pattern_catches_its_mistake(name, bad):
    hits = prose_hits(bad)
    assert [h.split(":", 1)[0] for h in hits] == [name]


@pytest.mark.parametrize(
    "good",
    [
        "enable_flash_sdp(True) is not memory defragmentation.",
        "set_num_threads sets CPU threads, not a GPU thread-block size.",
        "cudnn.allow_tf32 is a no-op on AMD, whatever the guide says about Tensor Cores.",
        "_jit_set_texpr_fuser_enabled is not a ROCm optimisation.",
        "torch.cuda.amp is the deprecated spelling: use torch.amp.autocast('cuda').",
        "Use torchrun; torch.distributed.launch is deprecated.",
        "LLaMA needs no trust_remote_code.",
        "rocprofv3 --kernel-trace --stats replaces the legacy tool.",
    ],
)
def test_a_sentence_that_corrects_the_claim_is_not_a_hit(good):
    assert prose_hits(good) == []


def test_a_sentence_about_the_item_is_checked_even_without_naming_it():
    """The subject may be the item itself: "It defragments memory." in the flash-SDP item."""
    about = "torch.backends.cuda.enable_flash_sdp(True) sdpa_backends"
    bad = "It defragments GPU memory, which is why the guide lists it."
    assert prose_hits(bad) == []  # alone, the sentence names no subject
    assert prose_hits(bad, about) == [f"flash-sdp-defragments: {bad}"]
    assert prose_hits("It lowers fragmentation.", "cpu_threads") == []
    about_threads = "torch.set_num_threads(8) cpu_threads"
    assert prose_hits("It sets the best thread-block size.", about_threads) != []
    fine = "Fragmentation is the allocator's business: use the preset setting alloc."
    assert prose_hits(fine, about) == []


def test_the_claim_must_be_in_the_same_sentence():
    split = "enable_flash_sdp(True) allows the flash backend. Fragmentation is the allocator's."
    assert prose_hits(split) == []
    joined = "enable_flash_sdp(True) reduces memory fragmentation."
    assert prose_hits(joined) == [f"flash-sdp-defragments: {joined}"]


GOOD_PRESET: dict[str, Any] = {
    "id": "good",
    "name": "Good",
    "description": "Fine.",
    "archs": ["rdna3"],
    "env": {
        "HSA_OVERRIDE_GFX_VERSION": {
            "value": "11.0.0",
            "why": "Reports gfx1100.",
            "source": "thunk",
            "platforms": ["linux"],
        }
    },
    "torch": {
        "float32_matmul_precision": {"value": "highest", "why": "Exact.", "source": "pt"},
    },
}


def _preset(**changes: Any) -> dict[str, Any]:
    preset = {k: (dict(v) if isinstance(v, dict) else v) for k, v in GOOD_PRESET.items()}
    preset.update(changes)
    return preset


def test_the_good_preset_has_no_hits():
    assert preset_hits(GOOD_PRESET) == []
    assert missing_why_or_source(GOOD_PRESET) == []


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        (
            _preset(
                torch={"float32_matmul_precision": {"value": "high", "why": "w", "source": "s"}}
            ),
            ["good: tf32-on-rdna: float32_matmul_precision high for ['rdna3']"],
        ),
        (
            _preset(
                archs=["rdna2", "cdna3"],
                torch={"float32_matmul_precision": "medium"},
            ),
            ["good: tf32-on-rdna: float32_matmul_precision medium for ['cdna3', 'rdna2']"],
        ),
        (
            _preset(env={"HIPBLASLT_ALLOW_TF32": {"value": "1", "why": "w", "source": "s"}}),
            ["good: tf32-on-rdna: HIPBLASLT_ALLOW_TF32 for ['rdna3']"],
        ),
        (
            _preset(
                env={"HSA_OVERRIDE_GFX_VERSION": {"value": "11.0.0", "why": "w", "source": "s"}}
            ),
            ["good: hsa-on-windows: HSA_OVERRIDE_GFX_VERSION without platforms [linux]"],
        ),
        (
            _preset(env={"HSA_ENABLE_SDMA": "0"}),
            ["good: hsa-on-windows: HSA_ENABLE_SDMA without platforms [linux]"],
        ),
        (
            _preset(description="Turns on enable_flash_sdp for defragmentation."),
            [
                "good: flash-sdp-defragments: Turns on enable_flash_sdp for defragmentation.",
            ],
        ),
        (
            _preset(
                torch={
                    "cpu_threads": {
                        "value": 8,
                        "why": "cpu_threads picks the GPU block size.",
                        "source": "s",
                    }
                }
            ),
            ["good: cpu_threads: num-threads-block-size: cpu_threads picks the GPU block size."],
        ),
    ],
)
def test_each_preset_rule_catches_its_mistake(preset, expected):
    assert preset_hits(preset) == expected


def test_tf32_is_fine_in_a_cdna3_preset():
    preset = _preset(archs=["cdna3"], torch={"float32_matmul_precision": "high"}, env={})
    assert preset_hits(preset) == []


def test_a_preset_item_without_why_or_source_is_reported():
    preset = _preset(
        env={"MIOPEN_FIND_MODE": "FAST"},
        torch={"cudnn_benchmark": {"value": True, "why": "  ", "source": "miopen"}},
    )
    assert missing_why_or_source(preset) == [
        "good: MIOPEN_FIND_MODE: why",
        "good: MIOPEN_FIND_MODE: source",
        "good: cudnn_benchmark: why",
    ]


class _FakeItem:
    def __init__(self, **fields: Any) -> None:
        self.id = "x"
        self.related_env: tuple[str, ...] = ()
        self.setting: tuple[str, str] | None = None
        self.platforms: tuple[str, ...] = ("linux", "windows")
        self.archs: tuple[str, ...] = ("any",)
        self.__dict__.update(fields)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"setting": ("env", "HSA_OVERRIDE_GFX_VERSION")}, ["x: hsa-on-windows"]),
        ({"related_env": ("HSA_XNACK",)}, ["x: hsa-on-windows"]),
        ({"setting": ("env", "HSA_XNACK"), "platforms": ("linux",)}, []),
        ({"setting": ("torch", "float32_matmul_precision")}, ["x: tf32-on-rdna"]),
        (
            {"setting": ("torch", "float32_matmul_precision"), "archs": ("cdna3", "rdna3")},
            ["x: tf32-on-rdna"],
        ),
        ({"setting": ("torch", "float32_matmul_precision"), "archs": ("cdna3", "cdna4")}, []),
    ],
)
def test_each_item_rule_catches_its_mistake(fields, expected):
    assert item_structure_hits(_FakeItem(**fields)) == expected
