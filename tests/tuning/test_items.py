"""The answered tuning items: every guide snippet has one, search finds it in Chinese and in
English, the schema refuses broken entries with exact messages, and every preset setting
(TORCH_SETTINGS and the built-in presets' variables) has a "what is this?" item."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from rocmpanel.base.errors import PanelError
from rocmpanel.base.resources import read_resource
from rocmpanel.envvars.catalogue import load_catalogue
from rocmpanel.jobs.presets import TORCH_SETTINGS
from rocmpanel.tuning import items as items_mod
from rocmpanel.tuning.items import (
    TuningItem,
    TuningItemsError,
    item_for_setting,
    load_items,
    parse_items,
    search,
)

# The guide's tuning snippets (memory, kernel and communication sections), verbatim, with
# the item that answers each, a word the guide uses for it and an English word.
GUIDE_SNIPPETS = [
    ("torch.backends.cuda.enable_flash_sdp(True)", "enable-flash-sdp", "碎片整理", "flash"),
    (
        "torch.cuda.set_per_process_memory_fraction(0.9)",
        "memory-fraction",
        "内存分配策略",
        "fraction",
    ),
    (
        "model.gradient_checkpointing_enable()",
        "gradient-checkpointing",
        "梯度检查点",
        "checkpointing",
    ),
    ("torch.cuda.amp.GradScaler()", "amp-autocast", "混合精度", "GradScaler"),
    ("with torch.cuda.amp.autocast():", "amp-autocast", "混合精度", "autocast"),
    ("torch.set_num_threads(8)", "set-num-threads", "线程块", "threads"),
    ("torch.backends.cudnn.allow_tf32 = True", "cudnn-allow-tf32", "张量核心", "TF32"),
    ("torch.backends.cudnn.benchmark = True", "cudnn-benchmark", "卷积算法", "convolution"),
    (
        "torch._C._jit_set_texpr_fuser_enabled(True)",
        "texpr-fuser",
        "ROCm特定优化",
        "TorchScript",
    ),
    ("os.environ['NCCL_SOCKET_IFNAME'] = 'eth0'", "nccl-socket-ifname", "通信", "interface"),
    ("os.environ['NCCL_IB_HCA'] = 'mlx5_0,mlx5_1'", "nccl-ib-hca", "通信", "InfiniBand"),
    (
        "torch.distributed.all_reduce(tensor, op=dist.ReduceOp.SUM, async_op=True)",
        "all-reduce-async",
        "通信优化",
        "async_op",
    ),
]

# The settings ROCm users need that the guide never mentions (issue 14), by item id.
REQUIRED_KNOBS = {
    "tunableop": ("torch", "tunableop"),
    "alloc-conf": ("torch", "alloc"),
    "expandable-segments": ("torch", "alloc"),
    "alloc-fragmentation": ("torch", "alloc"),
    "miopen-find-mode": ("env", "MIOPEN_FIND_MODE"),
    "miopen-cache": ("env", "MIOPEN_USER_DB_PATH"),
    "aotriton-experimental": ("env", "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL"),
    "hipblaslt": ("env", "TORCH_BLAS_PREFER_HIPBLASLT"),
    "float32-matmul-precision": ("torch", "float32_matmul_precision"),
    "hip-launch-blocking": ("env", "HIP_LAUNCH_BLOCKING"),
    "amd-log-level": ("env", "AMD_LOG_LEVEL"),
    "amd-serialize-kernel": ("env", "AMD_SERIALIZE_KERNEL"),
}


def _by_id() -> dict[str, TuningItem]:
    return {item.id: item for item in load_items()}


# ---- the shipped list -----------------------------------------------------------------------


@pytest.mark.parametrize(("snippet", "ident", "chinese", "english"), GUIDE_SNIPPETS)
def test_every_guide_snippet_is_answered(snippet, ident, chinese, english):
    item = _by_id()[ident]
    assert item.kind == "guide"
    assert snippet in item.snippet
    assert item.guide_says
    assert ident in [i.id for i in search(load_items(), chinese)]
    assert ident in [i.id for i in search(load_items(), english)]


@pytest.mark.parametrize("ident", sorted(REQUIRED_KNOBS))
def test_every_required_knob_has_an_item_with_its_setting(ident):
    item = _by_id()[ident]
    assert item.kind == "knob"
    assert item.setting == REQUIRED_KNOBS[ident]


def test_the_wrong_claims_get_the_verdicts_and_settings_the_facts_give():
    by_id = _by_id()
    assert (by_id["enable-flash-sdp"].verdict, by_id["enable-flash-sdp"].setting) == (
        "use",
        ("torch", "sdpa_backends"),
    )
    assert (by_id["set-num-threads"].verdict, by_id["set-num-threads"].setting) == (
        "use",
        ("torch", "cpu_threads"),
    )
    assert (by_id["cudnn-allow-tf32"].verdict, by_id["cudnn-allow-tf32"].setting) == (
        "not_useful",
        None,
    )
    assert by_id["cudnn-allow-tf32"].archs == ()
    assert (by_id["texpr-fuser"].verdict, by_id["texpr-fuser"].setting) == ("not_useful", None)
    assert by_id["float32-matmul-precision"].archs == ("cdna3", "cdna4")
    assert by_id["tunableop"].related_env == (
        "PYTORCH_TUNABLEOP_ENABLED",
        "PYTORCH_TUNABLEOP_TUNING",
        "PYTORCH_TUNABLEOP_FILENAME",
    )


def _text(item: TuningItem) -> str:
    """An item's prose as one line (the YAML folds its lines with single spaces)."""
    return " ".join(f"{item.what_it_does} {item.instead} {item.torch}".split())


# Claims the fact check (issue 14, c3) corrected: (item id, text it must say, text it must
# no longer say).
FACT_CHECKED = [
    (
        "expandable-segments",
        'Upstream torch ignores it on ROCm through 2.11 (with a "not supported on this '
        "platform\" warning) and honours it from 2.12 with ROCm 7.0 and later; AMD's own 2.11 "
        "builds carry the backport.",
        "through 2.10",
    ),
    (
        "tunableop",
        "one per device index (torch puts the current device ordinal, counted after "
        "HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES, into the name;",
        "one per GPU",
    ),
    ("texpr-fuser", "tensor-expression fuser, and it is on by default;", None),
    (
        "cudnn-allow-tf32",
        "torch up to 2.13 runs no TF32 convolutions there (newer releases unverified)",
        "no TF32 path in released stacks",
    ),
    (
        "cudnn-benchmark",
        "On torch 2.7 and later MIOPEN_FIND_MODE matters only while cudnn_benchmark is off.",
        "to trade start-up time against kernel speed",
    ),
    (
        "miopen-find-mode",
        "On torch 2.7 and later it matters only while cudnn_benchmark is off: "
        "cudnn_benchmark=True sets NORMAL for each convolution itself.",
        "NORMAL with cudnn_benchmark",
    ),
    ("miopen-find-mode", "torch.backends.miopen.immediate = True", None),
    (
        "aotriton-experimental",
        "AOTriton's own gate from AOTriton 0.9 (about torch 2.7; unverified which release "
        "first shipped 0.9); torch 2.5-2.6 gated gfx1100 themselves",
        "(torch 2.6+)",
    ),
    (
        "float32-matmul-precision",
        "CDNA4 (MI350, where hipBLASLt emulates TF32 with bf16 instructions)",
        "CDNA3 (MI300) and CDNA4 only",
    ),
    (
        "float32-matmul-precision",
        "as long as HIPBLASLT_ALLOW_TF32 is not set: with it, hipBLASLt may find no algorithm "
        "for float32 GEMMs there.",
        None,
    ),
    (
        "float32-matmul-precision",
        'On CPU "high" changes nothing unless the processor has AMX-FP16 (oneDNN may then use '
        'TF32); "medium" may run float32 matmuls in bf16.',
        None,
    ),
]


@pytest.mark.parametrize(("ident", "says", "not_says"), FACT_CHECKED)
def test_the_fact_checked_claims_read_as_corrected(ident, says, not_says):
    text = _text(_by_id()[ident])
    assert says in text
    if not_says is not None:
        assert not_says not in text


def test_expandable_segments_reads_the_same_in_items_and_presets():
    """One wording everywhere: the item, the low-VRAM preset's why and the effect rule."""
    from rocmpanel.jobs.presets import Item, Preset, Target, builtin_presets, item_effects

    wording = "ignores it on ROCm through 2.11 and honours it from 2.12 with ROCm 7.0 and later"
    low = next(p for p in builtin_presets() if p.id == "low-vram")
    assert wording in low.torch[0].why
    assert "AMD's own 2.11 builds carry the backport" in low.torch[0].why
    item = _text(_by_id()["expandable-segments"])
    assert "ignores it on ROCm through 2.11" in item
    assert "honours it from 2.12 with ROCm 7.0 and later" in item
    alloc = Preset("t", "T", torch=(Item("torch", "alloc", {"expandable_segments": True}),))
    (effect,) = item_effects(alloc, Target("linux", "gfx1100", "2.9.1+rocm6.4", "6.4"))
    assert effect.note == (
        "torch 2.9 ignores expandable_segments on ROCm (upstream torch honours it from 2.12 "
        "with ROCm 7.0 and later)"
    )


def test_env_items_claim_no_platform_their_variable_lacks():
    catalogue = load_catalogue()
    for item in load_items():
        if item.setting and item.setting[0] == "env":
            info = catalogue.lookup(item.setting[1])
            assert info is not None
            assert set(item.platforms) <= set(info.platforms), item.id


def test_load_items_reads_the_file_once():
    assert load_items() is load_items()


def test_a_missing_resource_is_a_panel_error(monkeypatch):
    load_items.cache_clear()

    def missing(name: str) -> str:
        raise FileNotFoundError(name)

    monkeypatch.setattr(items_mod, "read_resource", missing)
    try:
        with pytest.raises(PanelError) as caught:
            load_items()
        assert caught.value.message == "The list of tuning items is missing."
        assert caught.value.detail == "tuning_items.yaml"
        monkeypatch.undo()  # the file is back: the failure was not cached
        assert [i.id for i in load_items()][:2] == ["enable-flash-sdp", "memory-fraction"]
    finally:
        load_items.cache_clear()


# ---- search ---------------------------------------------------------------------------------


def _item(ident: str, **fields: object) -> TuningItem:
    base: dict[str, object] = {
        "id": ident,
        "title": f"title of {ident}",
        "kind": "knob",
        "verdict": "use",
        "what_it_does": "does",
        "instead": "instead",
        "sources": ("pt_tune",),
    }
    base.update(fields)
    return TuningItem(**base)  # type: ignore[arg-type]


SMALL = [
    _item("a", title="Flash attention backends", keywords=("注意力",)),
    _item("b", snippet="torch.set_num_threads(8)", guide_says="thread block size"),
    _item("c", what_it_does="Caps the caching ALLOCATOR of this process", keywords=("显存",)),
    _item("d", title="hidden", instead="flash only in instead"),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ["a", "b", "c", "d"]),
        ("   ", ["a", "b", "c", "d"]),
        ("FLASH", ["a"]),  # case-insensitive; "instead" is not searched
        ("注意力", ["a"]),
        ("set_num_threads", ["b"]),
        ("block thread", ["b"]),  # every word, any order
        ("block flash", []),
        ("allocator 显存", ["c"]),
        ("title", ["b", "c"]),  # the default titles of b and c only
        ("nothing-like-this", []),
    ],
)
def test_search_needs_every_word_in_the_searched_fields(text, expected):
    assert [i.id for i in search(SMALL, text)] == expected


def test_tf32_finds_every_item_about_tf32_in_the_real_list():
    """HIPBLASLT_ALLOW_TF32 (CDNA3's preset) is looked for under hipBLASLt too."""
    found = [i.id for i in search(load_items(), "tf32")]
    assert {"hipblaslt", "cudnn-allow-tf32", "float32-matmul-precision"} <= set(found)


# ---- item_for_setting -----------------------------------------------------------------------


@pytest.mark.parametrize("key", TORCH_SETTINGS)
def test_every_torch_setting_has_an_item(key):
    item = item_for_setting("torch", key)
    assert item is not None
    assert item.setting == ("torch", key)


def _builtin_preset_env_names() -> list[str]:
    """The variables the built-in presets set, read from resources/presets.yaml directly
    ([] while the file is missing: the test below fails then)."""
    try:
        text = read_resource("presets.yaml")
    except OSError:
        return []
    data = yaml.safe_load(text)
    presets = data["presets"] if isinstance(data, dict) else data
    return sorted({str(name) for preset in presets for name in (preset.get("env") or {})})


def test_the_built_in_presets_set_variables():
    assert read_resource("presets.yaml")
    assert len(_builtin_preset_env_names()) >= 3


@pytest.mark.parametrize("name", _builtin_preset_env_names())
def test_every_variable_of_the_built_in_presets_has_an_item(name):
    item = item_for_setting("env", name)
    assert item is not None, f"no tuning item explains {name}"
    assert item.setting == ("env", name) or name in item.related_env


def test_item_for_setting_prefers_the_setting_then_related_variables():
    assert item_for_setting("env", "MIOPEN_FIND_MODE").id == "miopen-find-mode"  # type: ignore[union-attr]
    # named in cudnn-benchmark's related_env too, but miopen-find-mode owns it
    assert item_for_setting("env", "PYTORCH_TUNABLEOP_TUNING").id == "tunableop"  # type: ignore[union-attr]
    assert item_for_setting("env", "OMP_NUM_THREADS").id == "set-num-threads"  # type: ignore[union-attr]
    assert item_for_setting("torch", "alloc").id == "alloc-conf"  # type: ignore[union-attr]


def test_a_per_node_override_is_explained_by_the_override_item():
    item = item_for_setting("env", "HSA_OVERRIDE_GFX_VERSION_1")
    assert item is not None
    assert item.id == "hsa-override-gfx-version"
    assert item.related_env == ("HSA_OVERRIDE_GFX_VERSION_<node>",)
    assert item_for_setting("env", "HSA_OVERRIDE_GFX_VERSION_x") is None


def test_item_for_setting_answers_none_for_the_unknown():
    assert item_for_setting("env", "NOT_A_KNOWN_VARIABLE") is None
    assert item_for_setting("torch", "OMP_NUM_THREADS") is None  # related_env is env-only
    assert item_for_setting("torch", "no_such_key") is None
    assert item_for_setting("env", "X", items=[]) is None


# ---- schema ---------------------------------------------------------------------------------

VALID = """\
items:
  - id: sample
    title: A sample item
    kind: guide
    snippet: "torch.set_num_threads(8)"
    guide_says: Sets the thread block size.
    verdict: use
    what_it_does: Sets CPU threads.
    instead: Use cpu_threads.
    setting: {torch: cpu_threads}
    related_env: [OMP_NUM_THREADS]
    archs: [any]
    platforms: [linux, windows]
    sources: [libgomp, "https://example.org/doc"]
    keywords: [线程块]
"""


def _broken(old: str, new: str) -> str:
    assert old in VALID
    return VALID.replace(old, new)


def test_the_valid_sample_parses_to_every_field():
    (item,) = parse_items(VALID, "t.yaml")
    assert item == TuningItem(
        id="sample",
        title="A sample item",
        kind="guide",
        verdict="use",
        what_it_does="Sets CPU threads.",
        instead="Use cpu_threads.",
        sources=("libgomp", "https://example.org/doc"),
        snippet="torch.set_num_threads(8)",
        guide_says="Sets the thread block size.",
        setting=("torch", "cpu_threads"),
        related_env=("OMP_NUM_THREADS",),
        archs=("any",),
        platforms=("linux", "windows"),
        torch="",
        keywords=("线程块",),
    )


def test_optional_fields_take_their_defaults():
    text = textwrap.dedent(
        """\
        items:
          - id: k
            title: T
            kind: knob
            verdict: caution
            what_it_does: W
            instead: I
            sources: [pt_tune]
        """
    )
    (item,) = parse_items(text, "t.yaml")
    assert (item.snippet, item.guide_says, item.setting, item.related_env) == ("", "", None, ())
    assert (item.archs, item.platforms, item.torch, item.keywords) == (
        ("any",),
        ("linux", "windows"),
        "",
        (),
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "verdict: use",
            "verdict: maybe",
            "t.yaml: item sample: verdict: 'maybe' is not one of use, not_useful, caution",
        ),
        (
            "kind: guide",
            "kind: tip",
            "t.yaml: item sample: kind: 'tip' is not one of guide, knob",
        ),
        (
            '    sources: [libgomp, "https://example.org/doc"]\n',
            "",
            "t.yaml: item sample: sources: missing: every item names its sources",
        ),
        (
            'sources: [libgomp, "https://example.org/doc"]',
            "sources: []",
            "t.yaml: item sample: sources: missing: every item names its sources",
        ),
        (
            'sources: [libgomp, "https://example.org/doc"]',
            "sources: [no_such_source]",
            "t.yaml: item sample: sources: 'no_such_source' is not a source key of"
            " env_catalogue.yaml",
        ),
        (
            "setting: {torch: cpu_threads}",
            "setting: {env: ROCMPANEL_NO_SUCH_VAR}",
            "t.yaml: item sample: setting: ROCMPANEL_NO_SUCH_VAR is not in the environment"
            " catalogue (env_catalogue.yaml)",
        ),
        (
            "setting: {torch: cpu_threads}",
            "setting: {torch: num_threads}",
            "t.yaml: item sample: setting: 'num_threads' is not a torch setting (known: "
            + ", ".join(TORCH_SETTINGS)
            + ")",
        ),
        (
            "setting: {torch: cpu_threads}",
            "setting: {python: cpu_threads}",
            "t.yaml: item sample: setting: must be {env: NAME} or {torch: KEY}",
        ),
        (
            "setting: {torch: cpu_threads}",
            "setting: {torch: cpu_threads, env: OMP_NUM_THREADS}",
            "t.yaml: item sample: setting: must be {env: NAME} or {torch: KEY}",
        ),
        (
            "    setting: {torch: cpu_threads}\n",
            "",
            "t.yaml: item sample: setting: verdict 'use' needs a preset setting",
        ),
        (
            "related_env: [OMP_NUM_THREADS]",
            "related_env: [OMP_THREADS]",
            "t.yaml: item sample: related_env: OMP_THREADS is not in the environment catalogue"
            " (env_catalogue.yaml)",
        ),
        (
            "    guide_says: Sets the thread block size.\n",
            "",
            "t.yaml: item sample: guide_says: missing",
        ),
        (
            "guide_says: Sets the thread block size.",
            'guide_says: "  "',
            "t.yaml: item sample: guide_says: empty",
        ),
        (
            '    snippet: "torch.set_num_threads(8)"\n',
            "",
            "t.yaml: item sample: snippet: missing",
        ),
        ("title: A sample item", "title: 12", "t.yaml: item sample: title: must be text"),
        (
            "archs: [any]",
            "archs: [rdna5]",
            "t.yaml: item sample: archs: 'rdna5' is not one of any, rdna2, rdna3, rdna4, cdna2,"
            " cdna3, cdna4",
        ),
        (
            "platforms: [linux, windows]",
            "platforms: [macos]",
            "t.yaml: item sample: platforms: must list linux and/or windows",
        ),
        (
            "platforms: [linux, windows]",
            "platforms: []",
            "t.yaml: item sample: platforms: must list linux and/or windows",
        ),
        (
            "keywords: [线程块]",
            "keywords: [线程块, '']",
            "t.yaml: item sample: keywords: must be a list of non-empty texts",
        ),
        (
            "keywords: [线程块]",
            "keywords: 线程块",
            "t.yaml: item sample: keywords: must be a list of non-empty texts",
        ),
        (
            "keywords: [线程块]",
            "keywords: [线程块]\n    note: extra",
            "t.yaml: item sample: note: unknown field",
        ),
        (
            "- id: sample",
            "- id: Sample Item",
            "t.yaml: item #1: id: missing or not a slug ([a-z0-9-], at most 48)",
        ),
    ],
)
def test_a_broken_entry_names_the_item_and_field(old, new, message):
    with pytest.raises(TuningItemsError) as caught:
        parse_items(_broken(old, new), "t.yaml")
    assert str(caught.value) == message


def test_a_duplicate_id_is_refused_at_the_second_entry():
    entry = VALID.split("items:\n", 1)[1]
    with pytest.raises(TuningItemsError) as caught:
        parse_items("items:\n" + entry + entry, "t.yaml")
    assert str(caught.value) == "t.yaml: item sample: id: used by an earlier item"
    assert (caught.value.item_id, caught.value.field) == ("sample", "id")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("items: {}", "t.yaml: item -: items: the file needs a list under 'items'"),
        ("- a\n- b\n", "t.yaml: item -: items: the file needs a list under 'items'"),
        ("items:\n  - just text\n", "t.yaml: item #1: entry: must be a mapping"),
    ],
)
def test_a_file_of_the_wrong_shape_is_refused(text, message):
    with pytest.raises(TuningItemsError) as caught:
        parse_items(text, "t.yaml")
    assert str(caught.value) == message


def test_unreadable_yaml_is_refused_with_the_parser_reason():
    with pytest.raises(TuningItemsError) as caught:
        parse_items("items: [unclosed", "t.yaml")
    assert str(caught.value).startswith("t.yaml: item -: yaml: not readable YAML (")
