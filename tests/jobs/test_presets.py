"""Presets: the schema (errors naming file, line and field), the built-ins, dumping, the
effect of each item on a machine, a job's environment and the preset a job runs under."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import unicodedata

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs import preset_yaml
from rocmpanel.jobs.presets import (
    HEADER_VAR,
    NO_PRESET,
    TORCH_SETTINGS,
    Item,
    Preset,
    PresetError,
    PresetStore,
    Target,
    builtin_presets,
    dump_preset,
    item_effects,
    name_key,
    parse_preset,
    parse_preset_list,
    preset_job_env,
    resolve,
    visible,
)

HEAD = "id: a\nname: A\n"
DEEP = "nests too deeply to be a preset (more than 32 levels of lists and mappings)"
UNSEEN = "which is not shown as written and can hide or change what the text says; remove it"

# (case, text, line, field, problem): each one broken file and the exact error it gets.
BROKEN = [
    (
        "syntax",
        "id: a\nname: [open\n",
        3,
        "file",
        "not valid YAML: expected ',' or ']', but got '<stream end>'",
    ),
    (
        "tab",
        "id: a\n\tname: b\n",
        2,
        "file",
        "not valid YAML: found character '\\t' that cannot start any token",
    ),
    (
        "list",
        "- id: a\n",
        1,
        "preset",
        "a preset must be a mapping with at least id and name; got a list",
    ),
    ("empty", "", None, "file", "is empty; a preset needs at least id and name"),
    (
        "comment only",
        "# nothing here\n",
        None,
        "file",
        "is empty; a preset needs at least id and name",
    ),
    (
        "unknown field",
        HEAD + "colour: red\n",
        3,
        "colour",
        "unknown field; a preset has id, name, description, archs, env, torch",
    ),
    ("missing id", "name: A\n", 1, "id", "missing; every preset needs one"),
    ("missing name", "id: a\n", 1, "name", "missing; every preset needs one"),
    (
        "bad id",
        "id: Bad_Id\nname: A\n",
        1,
        "id",
        "'Bad_Id' is not a usable id: use lower-case letters, digits and -, starting with a "
        "letter or digit",
    ),
    ("id none", "id: none\nname: A\n", 1, "id", "'none' means 'no preset'; choose another id"),
    (
        "id too long",
        "id: " + "a" * 49 + "\nname: A\n",
        1,
        "id",
        "is 49 characters long; at most 48",
    ),
    ("name a number", "id: a\nname: 12\n", 2, "name", "must be text; got the number 12"),
    (
        "unknown arch",
        HEAD + "archs: [rdna3, rdna5]\n",
        3,
        "archs[1]",
        "unknown 'rdna5'; use any, rdna2, rdna3, rdna4, cdna2, cdna3, cdna4",
    ),
    (
        "any with others",
        HEAD + "archs: [any, rdna3]\n",
        3,
        "archs",
        "'any' already covers every architecture",
    ),
    (
        "key twice",
        HEAD + 'env:\n  AMD_LOG_LEVEL: "1"\n  AMD_LOG_LEVEL: "2"\n',
        5,
        "env.AMD_LOG_LEVEL",
        "written twice in one mapping (lines 4 and 5); keep one",
    ),
    (
        "top key twice",
        HEAD + "id: b\n",
        3,
        "id",
        "written twice in one mapping (lines 1 and 3); keep one",
    ),
    ("key not text", HEAD + "[1]: x\n", 3, "preset", "a key must be plain text; got a list"),
    (
        "unknown torch key",
        HEAD + "torch:\n  num_threads: 8\n",
        4,
        "torch.num_threads",
        "unknown torch setting; use " + ", ".join(TORCH_SETTINGS),
    ),
    (
        "precision",
        HEAD + "torch:\n  float32_matmul_precision: {value: tf32}\n",
        4,
        "torch.float32_matmul_precision.value",
        "unknown 'tf32'; use highest, high, medium",
    ),
    (
        "fraction above 1",
        HEAD + "torch:\n  memory_fraction: 1.5\n",
        4,
        "torch.memory_fraction",
        "must be above 0 and at most 1 (a share of GPU memory); got 1.5",
    ),
    (
        "fraction 0",
        HEAD + "torch:\n  memory_fraction: 0\n",
        4,
        "torch.memory_fraction",
        "must be above 0 and at most 1 (a share of GPU memory); got 0.0",
    ),
    (
        "fraction bool",
        HEAD + "torch:\n  memory_fraction: true\n",
        4,
        "torch.memory_fraction",
        "must be a number; got the boolean true",
    ),
    (
        "sdpa empty",
        HEAD + "torch:\n  sdpa_backends: []\n",
        4,
        "torch.sdpa_backends",
        "must not be empty: list one or more of flash, mem_efficient, math",
    ),
    (
        "sdpa unknown",
        HEAD + "torch:\n  sdpa_backends: [flash, cudnn]\n",
        4,
        "torch.sdpa_backends[1]",
        "unknown 'cudnn'; use flash, mem_efficient, math",
    ),
    (
        "sdpa twice",
        HEAD + "torch:\n  sdpa_backends: [math, math]\n",
        4,
        "torch.sdpa_backends[1]",
        "'math' is listed twice",
    ),
    (
        "split 19",
        HEAD + "torch:\n  alloc: {max_split_size_mb: 19}\n",
        4,
        "torch.alloc.max_split_size_mb",
        "must be at least 20; got 19",
    ),
    (
        "gc 1.0",
        HEAD + "torch:\n  alloc:\n    value: {garbage_collection_threshold: 1.0}\n",
        5,
        "torch.alloc.value.garbage_collection_threshold",
        "must be between 0 and 1 (exclusive); got 1.0",
    ),
    (
        "alloc key",
        HEAD + "torch:\n  alloc: {backend: native}\n",
        4,
        "torch.alloc.backend",
        "unknown allocator option; use expandable_segments, garbage_collection_threshold, "
        "max_split_size_mb",
    ),
    (
        "threads 0",
        HEAD + "torch:\n  cpu_threads: 0\n",
        4,
        "torch.cpu_threads",
        "must be from 1 to 4096; got 0",
    ),
    (
        "benchmark text",
        HEAD + 'torch:\n  cudnn_benchmark: "yes"\n',
        4,
        "torch.cudnn_benchmark",
        "must be true or false; got the text 'yes'",
    ),
    (
        "tunableop enabled",
        HEAD + "torch:\n  tunableop: {tuning: false}\n",
        4,
        "torch.tunableop.enabled",
        "missing; say true or false",
    ),
    (
        "env int",
        HEAD + "env:\n  AMD_LOG_LEVEL:\n    value: 1\n",
        5,
        "env.AMD_LOG_LEVEL.value",
        'an environment value must be text, got the number 1: write "1" in quotes',
    ),
    (
        "env bool short",
        HEAD + "env:\n  HIP_LAUNCH_BLOCKING: true\n",
        4,
        "env.HIP_LAUNCH_BLOCKING",
        'an environment value must be text, got the boolean true: write "true" in quotes',
    ),
    (
        "catalogue refuses",
        HEAD + 'env:\n  HSA_OVERRIDE_GFX_VERSION: "11.0"\n',
        4,
        "env.HSA_OVERRIDE_GFX_VERSION",
        "HSA_OVERRIDE_GFX_VERSION must be MAJOR.MINOR.STEP, three decimal numbers such as 11.0.0 "
        "(gfx1100) or 10.3.0 (gfx1030); '11.0' has 2 parts. The ROCm runtime rejects any other "
        "form as invalid and then finds no GPU.",
    ),
    (
        "catalogue choices",
        HEAD + 'env:\n  MIOPEN_FIND_MODE: "SLOW"\n',
        4,
        "env.MIOPEN_FIND_MODE",
        "MIOPEN_FIND_MODE must be one of NORMAL, FAST, HYBRID, DYNAMIC_HYBRID, 1, 2, 3, 5; "
        "got 'SLOW'.",
    ),
    (
        "bad name",
        HEAD + 'env:\n  1BAD: "x"\n',
        4,
        "env.1BAD",
        "not a usable variable name: use letters, digits and _, not starting with a digit",
    ),
    (
        "hip visible empty",
        HEAD + 'env:\n  HIP_VISIBLE_DEVICES: ""\n',
        4,
        "env.HIP_VISIBLE_DEVICES",
        "set but empty, it hides every GPU; leave the variable out instead",
    ),
    (
        "rocr visible empty",
        HEAD + 'env:\n  ROCR_VISIBLE_DEVICES: {value: ""}\n',
        4,
        "env.ROCR_VISIBLE_DEVICES.value",
        "set but empty, it hides every GPU; leave the variable out instead",
    ),
    (
        "other empty",
        HEAD + 'env:\n  AMD_LOG_LEVEL: ""\n',
        4,
        "env.AMD_LOG_LEVEL",
        "an empty value is not the same as an unset one; leave the variable out",
    ),
    (
        "alloc variable",
        HEAD + 'env:\n  PYTORCH_HIP_ALLOC_CONF: "expandable_segments:True"\n',
        4,
        "env.PYTORCH_HIP_ALLOC_CONF",
        "set the allocator through the `alloc` torch setting; the worker writes it to the "
        "variable name its torch reads",
    ),
    (
        "tunableop variable",
        HEAD + 'env:\n  PYTORCH_TUNABLEOP_ENABLED: "1"\n',
        4,
        "env.PYTORCH_TUNABLEOP_ENABLED",
        "set TunableOp through the `tunableop` torch setting; the worker sets this variable "
        "from it",
    ),
    (
        "header variable",
        HEAD + 'env:\n  ROCMPANEL_PRESET: "{}"\n',
        4,
        "env.ROCMPANEL_PRESET",
        "rocmpanel sets this variable itself",
    ),
    (
        "item field",
        HEAD + 'env:\n  AMD_LOG_LEVEL: {value: "1", note: x}\n',
        4,
        "env.AMD_LOG_LEVEL.note",
        "unknown field; an item has value, why, source, platforms",
    ),
    (
        "item without value",
        HEAD + "env:\n  AMD_LOG_LEVEL: {why: x}\n",
        4,
        "env.AMD_LOG_LEVEL.value",
        "missing; the item needs a value",
    ),
    (
        "platform",
        HEAD + 'env:\n  AMD_LOG_LEVEL: {value: "1", platforms: [macos]}\n',
        4,
        "env.AMD_LOG_LEVEL.platforms[0]",
        "unknown 'macos'; use linux, windows",
    ),
    (
        "env a list",
        HEAD + "env: [A]\n",
        3,
        "env",
        "must be a mapping of variable names; got a list",
    ),
    (
        "python tag",
        "id: a\nname: !!python/object:os.system x\n",
        2,
        "name",
        "must be text; got a value tagged !!python/object:os.system",
    ),
    ("deep 500", HEAD + "description: " + "[" * 500 + "]" * 500 + "\n", 3, "file", DEEP),
    ("deep 100000 open", HEAD + "description: " + "[" * 100_000 + "\n", 3, "file", DEEP),
    (
        "deep maps",
        HEAD + "env:\n" + "".join(f"{' ' * n}k{n}:\n" for n in range(1, 60)),
        34,  # the keys of the level-32 mapping (line 34) are level 33
        "file",
        DEEP,
    ),
    (
        "fraction 1e-3",
        HEAD + "torch:\n  memory_fraction: 1e-3\n",
        4,
        "torch.memory_fraction",
        "must be a number; got the text '1e-3'; write it as 0.001",
    ),
    (
        "gc 5E-1 quoted",
        HEAD + 'torch:\n  alloc: {garbage_collection_threshold: "5E-1"}\n',
        4,
        "torch.alloc.garbage_collection_threshold",
        "must be a number; got the text '5E-1'; write it as 0.5",
    ),
    (
        "fraction a word",
        HEAD + "torch:\n  memory_fraction: half\n",
        4,
        "torch.memory_fraction",
        "must be a number; got the text 'half'",
    ),
    (
        "fraction nan text",
        HEAD + "torch:\n  memory_fraction: nan\n",
        4,
        "torch.memory_fraction",
        "must be a number; got the text 'nan'",
    ),
    (
        "name ESC",
        'id: a\nname: "a\\e[31mRED"\n',
        2,
        "name",
        f"holds a control character, U+001B, {UNSEEN}",
    ),
    (
        "name tab",
        'id: a\nname: "a\\tb"\n',
        2,
        "name",
        f"holds a control character, U+0009, {UNSEEN}",
    ),
    (
        "name bidi",
        'id: a\nname: "abc\\u202Etxt"\n',
        2,
        "name",
        f"holds an invisible character, U+202E (RIGHT-TO-LEFT OVERRIDE), {UNSEEN}",
    ),
    (
        "name zero width",
        'id: a\nname: "Mine\\u200B"\n',
        2,
        "name",
        f"holds an invisible character, U+200B (ZERO WIDTH SPACE), {UNSEEN}",
    ),
    (
        "name line separator",
        'id: a\nname: "a\\Lb"\n',
        2,
        "name",
        f"holds an invisible character, U+2028 (LINE SEPARATOR), {UNSEEN}",
    ),
    (
        "description BEL",
        HEAD + 'description: "ring\\a"\n',
        3,
        "description",
        f"holds a control character, U+0007, {UNSEEN}",
    ),
    (
        "why bidi",
        HEAD + 'env:\n  AMD_LOG_LEVEL: {value: "1", why: "a\\u2066b"}\n',
        4,
        "env.AMD_LOG_LEVEL.why",
        f"holds an invisible character, U+2066 (LEFT-TO-RIGHT ISOLATE), {UNSEEN}",
    ),
    (
        "source ESC",
        HEAD + 'torch:\n  cpu_threads: {value: 2, source: "\\e]0;x\\a"}\n',
        4,
        "torch.cpu_threads.source",
        f"holds a control character, U+001B, {UNSEEN}",
    ),
    (
        "key ESC echoed escaped",
        HEAD + '"\\e[31mx": 1\n',
        3,
        "\\x1b[31mx",
        "unknown field; a preset has id, name, description, archs, env, torch",
    ),
    (
        "id con",
        "id: con\nname: A\n",
        1,
        "id",
        "'con' is a device name on Windows (like CON, NUL, COM1 and LPT1), so con.yaml cannot "
        "be a file there; choose another id",
    ),
    (
        "python home",
        HEAD + 'env:\n  PYTHONHOME: "/nonexistent"\n',
        4,
        "env.PYTHONHOME",
        "the panel sets the worker's Python variables itself; a preset that changes them can "
        "stop every job",
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "field", "problem"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN]
)
def test_a_broken_preset_names_file_line_and_field(
    text: str, line: int | None, field: str, problem: str
) -> None:
    with pytest.raises(PresetError) as caught:
        parse_preset(text, "my.yaml")
    error = caught.value
    assert (error.file, error.line, error.field, error.problem) == ("my.yaml", line, field, problem)
    where = f"my.yaml, line {line}" if line else "my.yaml"
    assert error.message == f"{where}: {field}: {problem}"


@pytest.mark.parametrize(
    "ident",
    ["con", "prn", "aux", "nul", "com0", "com1", "com9", "lpt0", "lpt1", "lpt9"],
)
def test_windows_device_names_are_refused_as_ids(ident: str) -> None:
    with pytest.raises(PresetError) as caught:
        parse_preset(f"id: {ident}\nname: A\n", "w.yaml")
    assert (caught.value.field, caught.value.problem) == (
        "id",
        f"{ident!r} is a device name on Windows (like CON, NUL, COM1 and LPT1), so "
        f"{ident}.yaml cannot be a file there; choose another id",
    )


@pytest.mark.parametrize("ident", ["con1", "com10", "lpt", "console", "nul-2", "auxiliary"])
def test_ids_that_only_look_like_device_names_are_kept(ident: str) -> None:
    assert parse_preset(f"id: {ident}\nname: A\n", "w.yaml").id == ident


@pytest.mark.parametrize(
    "name", ["PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONSTARTUP", "PYTHONIOENCODING"]
)
def test_python_variables_are_refused(name: str) -> None:
    with pytest.raises(PresetError) as caught:
        parse_preset(HEAD + f'env:\n  {name}: {{value: "x", why: y}}\n', "p.yaml")
    assert (caught.value.line, caught.value.field, caught.value.problem) == (
        4,
        f"env.{name}",
        "the panel sets the worker's Python variables itself; a preset that changes them can "
        "stop every job",
    )


def test_nesting_up_to_the_limit_reaches_the_schema_one_more_is_refused() -> None:
    """The top mapping is level 1, so 31 brackets are level 32: read, then refused by the
    schema; 32 brackets are one level too many."""
    at_limit = HEAD + "description: " + "[" * 31 + "]" * 31 + "\n"
    with pytest.raises(PresetError) as caught:
        parse_preset(at_limit, "d.yaml")
    assert caught.value.message == "d.yaml, line 3: description: must be text; got a list"
    with pytest.raises(PresetError) as caught:
        parse_preset(HEAD + "description: " + "[" * 32 + "]" * 32 + "\n", "d.yaml")
    assert caught.value.message == f"d.yaml, line 3: file: {DEEP}"


def test_a_recursion_error_is_a_preset_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the depth limit (or with little stack left) the composer's RecursionError
    still ends as a PresetError, never reaching the caller."""
    monkeypatch.setattr(preset_yaml, "MAX_DEPTH", 10**9)
    with pytest.raises(PresetError) as caught:
        parse_preset(HEAD + "description: " + "[" * 100_000 + "\n", "d.yaml")
    assert caught.value.message == "d.yaml: file: nests too deeply to be a preset"


def test_multi_line_texts_keep_line_breaks_and_tabs() -> None:
    preset = parse_preset(
        HEAD + 'description: "One.\\n\\tTwo."\nenv:\n  AMD_LOG_LEVEL:\n    value: "1"\n'
        '    why: |\n      Logs.\n      More.\n    source: "a;\\tb"\n',
        "p.yaml",
    )
    assert preset.description == "One.\n\tTwo."
    assert (preset.env[0].why, preset.env[0].source) == ("Logs.\nMore.", "a;\tb")
    assert parse_preset('id: a\nname: "Café Ｍｉｎｅ 快"\n', "p.yaml").name == "Café Ｍｉｎｅ 快"


def test_names_compare_as_they_read() -> None:
    assert name_key("Ｍｉｎｅ") == name_key("MINE") == name_key("mine") == "mine"
    assert name_key("Straße") == name_key("STRASSE")
    assert name_key("Mine 2") != name_key("Mine")


def test_messages_show_unseen_characters_escaped() -> None:
    assert visible("plain Ｍｉｎｅ é") == "plain Ｍｉｎｅ é"
    assert visible("a\x1b[31m\u202eb\x00") == "a\\x1b[31m\\u202eb\\x00"
    error = PresetError("f\x07.yaml", 2, "env.X\x1b", "got \u200b")
    assert (error.file, error.field, error.problem) == ("f\\x07.yaml", "env.X\\x1b", "got \\u200b")
    assert error.message == "f\\x07.yaml, line 2: env.X\\x1b: got \\u200b"
    assert all(unicodedata.category(c) not in ("Cc", "Cf") for c in error.message)


def test_a_dangerous_variable_is_refused_with_what_it_breaks() -> None:
    with pytest.raises(PresetError) as caught:
        parse_preset(HEAD + 'env:\n  LD_PRELOAD: "/x.so"\n', "p.yaml")
    assert caught.value.field == "env.LD_PRELOAD"
    assert caught.value.problem.startswith("a preset may not set LD_PRELOAD: the dynamic linker")


def test_text_over_the_config_limit_is_refused() -> None:
    text = HEAD + "description: " + "x" * (4 * 1024 * 1024) + "\n"
    with pytest.raises(PresetError) as caught:
        parse_preset(text, "big.yaml")
    assert caught.value.message == "big.yaml: file: is larger than 4 MiB"


def test_built_in_items_need_the_long_form_with_why_and_source() -> None:
    with pytest.raises(PresetError) as caught:
        parse_preset(HEAD + 'env:\n  AMD_LOG_LEVEL: "1"\n', "b.yaml", builtin=True)
    assert caught.value.message == (
        "b.yaml, line 4: env.AMD_LOG_LEVEL: a built-in item is written long: value, why and source"
    )
    text = HEAD + 'env:\n  AMD_LOG_LEVEL: {value: "1", source: hip_env}\n'
    with pytest.raises(PresetError) as caught:
        parse_preset(text, "b.yaml", builtin=True)
    assert (
        caught.value.message == "b.yaml, line 4: env.AMD_LOG_LEVEL.why: a built-in item needs one"
    )
    assert parse_preset(text, "user.yaml").env[0].why == ""  # a user preset may leave it out


def test_short_and_long_items_read_to_the_same_values() -> None:
    short = parse_preset(
        HEAD + 'archs: rdna3\nenv:\n  AMD_LOG_LEVEL: "3"\ntorch:\n'
        "  sdpa_backends: [math, flash]\n  memory_fraction: 1\n  cpu_threads: 8\n"
        "  alloc: {max_split_size_mb: 512, expandable_segments: false}\n"
        "  tunableop: {enabled: true}\n",
        "p.yaml",
    )
    assert short.archs == ("rdna3",)
    assert short.env == (Item("env", "AMD_LOG_LEVEL", "3"),)
    assert [(i.key, i.value) for i in short.torch] == [
        ("sdpa_backends", ("math", "flash")),
        ("memory_fraction", 1.0),
        ("cpu_threads", 8),
        ("alloc", {"expandable_segments": False, "max_split_size_mb": 512}),
        ("tunableop", {"enabled": True, "tuning": True}),
    ]
    assert [i.line for i in short.items()] == [5, 7, 8, 9, 10, 11]
    long = parse_preset(
        HEAD + 'env:\n  AMD_LOG_LEVEL:\n    value: "3"\n    why: Logs.\n    source: hip_env\n'
        "    platforms: [windows, linux]\n",
        "p.yaml",
    )
    assert long.env == (Item("env", "AMD_LOG_LEVEL", "3", "Logs.", "hip_env"),)


def test_a_list_of_presets_refuses_a_clash_of_names() -> None:
    text = "- id: a\n  name: Fast\n- id: b\n  name: FAST\n"
    with pytest.raises(PresetError) as caught:
        parse_preset_list(text, "list.yaml")
    assert caught.value.message == "list.yaml, line 3: presets[1]: id or name clashes with 'a'"
    with pytest.raises(PresetError) as caught:
        parse_preset_list("- id: a\n  name: Mine\n- id: b\n  name: Ｍｉｎｅ\n", "list.yaml")
    assert caught.value.message == "list.yaml, line 3: presets[1]: id or name clashes with 'a'"
    with pytest.raises(PresetError) as caught:
        parse_preset_list("id: a\n", "list.yaml")
    assert (
        caught.value.message
        == "list.yaml, line 1: presets: must be a list of presets; got a mapping"
    )


# ---- the built-ins ---------------------------------------------------------------------------


def test_the_built_ins_are_the_issue_s_eight() -> None:
    assert [p.id for p in builtin_presets()] == [
        "safe-defaults",
        "rdna3-consumer",
        "rdna2-consumer",
        "rdna4",
        "cdna3",
        "low-vram",
        "throughput",
        "debugging",
    ]
    assert all(p.builtin and p.path is None for p in builtin_presets())


@pytest.mark.parametrize("preset", builtin_presets(), ids=lambda p: p.id)
def test_every_built_in_survives_a_round_trip(preset: Preset) -> None:
    again = parse_preset(dump_preset(preset), f"{preset.id}.yaml")
    assert again == dataclasses.replace(preset, builtin=False)
    assert dump_preset(again) == dump_preset(preset)


def test_every_built_in_item_says_what_it_does_and_where_that_is_written() -> None:
    from rocmpanel.envvars.catalogue import load_catalogue

    catalogue = load_catalogue()
    for preset in builtin_presets():
        assert preset.description, preset.id
        for item in preset.items():
            assert item.why.endswith("."), (preset.id, item.key)
            assert item.source, (preset.id, item.key)
            if item.kind == "env" and catalogue.lookup(item.key) is not None:
                # a catalogued variable cites the catalogue's own source keys
                assert item.source in catalogue.lookup(item.key).sources, (preset.id, item.key)


def _builtin(ident: str) -> Preset:
    return next(p for p in builtin_presets() if p.id == ident)


_GUIDE_WORDS = re.compile(
    r"defragment|thread.block|tensor core|texpr|fuser|cudnn\.allow_tf32", re.IGNORECASE
)


def _mistakes(preset: Preset) -> list[str]:
    """The FACTS.md section 6 (and section 5) mistakes ``preset`` repeats: TF32 only on
    CDNA3/4, flash SDPA is not defragmentation, set_num_threads is CPU threads, HSA_* is
    Linux only, TorchScript fuser switches and cudnn.allow_tf32 are no ROCm tuning."""
    found = []
    match = _GUIDE_WORDS.search(dump_preset(preset))
    if match is not None:
        found.append(f"says {match.group(0)!r}")
    tf32_only = {"cdna3", "cdna4"}
    for item in preset.items():
        if item.key.startswith("HSA_") and "windows" in item.platforms:
            found.append(f"{item.key} on Windows")
        tf32 = item.key == "HIPBLASLT_ALLOW_TF32" or (
            item.key == "float32_matmul_precision" and item.value != "highest"
        )
        if tf32 and not set(preset.archs) <= tf32_only:
            found.append(f"TF32 ({item.key}) for {', '.join(preset.archs)}")
        if item.key == "sdpa_backends" and "memory" in item.why.lower():
            found.append("SDPA backends as a memory setting")
        if item.key == "cpu_threads" and "CPU" not in item.why:
            found.append("cpu_threads not described as CPU threads")
    return found


def test_no_built_in_repeats_a_mistake_of_the_guide() -> None:
    assert {p.id: _mistakes(p) for p in builtin_presets()} == {p.id: [] for p in builtin_presets()}
    for rdna in ("rdna2-consumer", "rdna3-consumer", "rdna4"):
        precision = {i.key: i.value for i in _builtin(rdna).torch}["float32_matmul_precision"]
        assert precision == "highest"
    assert "expandable_segments" not in _builtin("low-vram").torch[0].value  # hangs: #192259


def test_the_mistake_check_catches_the_guide_s_snippets() -> None:
    bad = Preset(
        "bad",
        "Bad",
        archs=("rdna3",),
        env=(Item("env", "HSA_OVERRIDE_GFX_VERSION", "11.0.0"),),
        torch=(
            Item("torch", "float32_matmul_precision", "high", why="Tensor Core speed-up."),
            Item("torch", "sdpa_backends", ("flash",), why="Saves memory by defragmentation."),
            Item("torch", "cpu_threads", 8, why="Best thread block size."),
        ),
    )
    assert _mistakes(bad) == [
        "says 'Tensor Core'",
        "HSA_OVERRIDE_GFX_VERSION on Windows",
        "TF32 (float32_matmul_precision) for rdna3",
        "SDPA backends as a memory setting",
        "cpu_threads not described as CPU threads",
    ]


def test_the_rdna2_override_is_linux_only_and_says_for_which_chips() -> None:
    (item,) = _builtin("rdna2-consumer").env
    assert (item.key, item.value, item.platforms) == (
        "HSA_OVERRIDE_GFX_VERSION",
        "10.3.0",
        ("linux",),
    )
    assert "gfx1031" in item.why and "gfx1032" in item.why and "Windows" in item.why


def test_low_vram_sets_no_memory_cap_and_debugging_is_marked_slow() -> None:
    low = _builtin("low-vram")
    assert [i.key for i in low.items()] == ["alloc"]
    assert low.torch[0].value == {"garbage_collection_threshold": 0.8, "max_split_size_mb": 512}
    debug = {i.key: i for i in _builtin("debugging").env}
    assert sorted(debug) == ["AMD_LOG_LEVEL", "AMD_SERIALIZE_KERNEL", "HIP_LAUNCH_BLOCKING"]
    assert all("slow" in i.why for i in debug.values())
    # AMD_SERIALIZE_KERNEL=3 includes HIP_LAUNCH_BLOCKING's wait (clr): the why says so
    assert debug["AMD_SERIALIZE_KERNEL"].value == "3"
    assert "already part of AMD_SERIALIZE_KERNEL=3" in debug["HIP_LAUNCH_BLOCKING"].why


def test_throughput_leaves_the_find_mode_to_cudnn_benchmark() -> None:
    """From torch 2.7 cudnn_benchmark=true sets MIOpen's NORMAL find mode per convolution
    (pytorch pull 145294): MIOPEN_FIND_MODE=NORMAL next to it would add nothing."""
    throughput = _builtin("throughput")
    assert throughput.env == ()
    assert {i.key: i.value for i in throughput.torch} == {
        "tunableop": {"enabled": True, "tuning": True},
        "cudnn_benchmark": True,
    }
    assert "NORMAL find mode" in throughput.torch[1].why
    assert "per device index" in throughput.torch[0].why
    safe = {i.key: i for i in _builtin("safe-defaults").torch}
    assert safe["cudnn_benchmark"].value is False
    assert "find database or a quick search" in safe["cudnn_benchmark"].why
    assert "no exhaustive search" in safe["cudnn_benchmark"].why


# ---- effects ---------------------------------------------------------------------------------

GFX = ("gfx1100", "gfx1030", "gfx942", None)
ROCM = "2.13.0+rocm7.2"


def _one(kind: str, key: str, value: object, platforms: tuple[str, ...] = ("linux", "windows")):
    item = Item(kind, key, value, platforms=platforms)
    return Preset(
        "t", "T", env=(item,) if kind == "env" else (), torch=(item,) if kind == "torch" else ()
    )


NO_TF32 = "{gfx} has no TF32 hardware: float32 matmuls stay full float32"
ALLOW_TF32_RISK = (
    "{gfx} has no TF32 hardware: nothing to allow, and hipBLASLt may find no algorithm for "
    "float32 GEMMs with it set (pytorch pull 193345)"
)
NO_MATH = (
    "without math, attention fails where no flash or memory-efficient kernel exists (on CPU "
    "with only mem_efficient allowed, on GPUs without AOTriton kernels)"
)
OVERRIDE_HARM = (
    "makes this {gfx} report as gfx1030, another family: kernels built for gfx1030 may "
    "fault, hang or give wrong results on it; do not use this preset on this GPU"
)
# (applies, checked, note)
OK = (True, True, "")
#: Target.gfx None on a ROCm torch: a GPU-bound item's effect is a guess.
UNCHECKED = (True, False, "not checked: no AMD GPU detected")
# item, then per platform (linux, windows) a tuple over GFX of (applies, checked, note)
EFFECTS = [
    (
        _one("torch", "float32_matmul_precision", "high"),
        [
            (False, True, NO_TF32.format(gfx="gfx1100")),
            (False, True, NO_TF32.format(gfx="gfx1030")),
            OK,
            UNCHECKED,
        ],
        None,
    ),
    (_one("torch", "float32_matmul_precision", "highest"), [OK] * 4, None),
    (
        _one("env", "HSA_OVERRIDE_GFX_VERSION", "10.3.0", ("linux",)),
        [
            (True, True, OVERRIDE_HARM.format(gfx="gfx1100")),
            (
                False,
                True,
                "the GPU is gfx1030, already in the gfx1030 family the override names: it "
                "changes nothing",
            ),
            (True, True, OVERRIDE_HARM.format(gfx="gfx942")),
            UNCHECKED,
        ],
        [(False, True, "set on Linux only: a Windows job does not get it")] * 4,
    ),
    (
        _one("env", "HSA_ENABLE_SDMA", "0"),
        [OK, OK, OK, UNCHECKED],
        [(False, True, "HSA_ENABLE_SDMA is read on Linux only: it does nothing on Windows")] * 4,
    ),
    (
        _one("env", "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL", "1"),
        [
            (
                True,
                True,
                "may be unneeded: torch 2.13's AOTriton supports gfx1100 without it (it was "
                "gated in torch 2.5-2.6 and 2.9)",
            ),
            OK,
            (
                False,
                True,
                "AOTriton never marks gfx942 experimental: its fast attention is on without this",
            ),
            UNCHECKED,
        ],
        None,
    ),
    (
        _one("env", "HIPBLASLT_ALLOW_TF32", "1"),
        [
            (False, True, ALLOW_TF32_RISK.format(gfx="gfx1100")),
            (False, True, ALLOW_TF32_RISK.format(gfx="gfx1030")),
            OK,
            UNCHECKED,
        ],
        None,
    ),
    (
        _one("env", "TORCH_BLAS_PREFER_HIPBLASLT", "1"),
        [OK, OK, OK, UNCHECKED],
        [
            (
                False,
                True,
                "TORCH_BLAS_PREFER_HIPBLASLT is read on Linux only: it does nothing on Windows",
            )
        ]
        * 4,
    ),
    (_one("env", "MIOPEN_FIND_MODE", "FAST"), [OK, OK, OK, UNCHECKED], None),
    (_one("env", "PYTORCH_TUNABLEOP_TUNING", "0"), [OK, OK, OK, UNCHECKED], None),
    (_one("env", "AMD_LOG_LEVEL", "3"), [OK, OK, OK, UNCHECKED], None),
    (_one("env", "HIP_LAUNCH_BLOCKING", "1"), [OK, OK, OK, UNCHECKED], None),
    (_one("env", "OMP_NUM_THREADS", "4"), [OK] * 4, None),
    (_one("torch", "cudnn_benchmark", True), [OK, OK, OK, UNCHECKED], None),
    (
        _one("torch", "tunableop", {"enabled": True, "tuning": True}),
        [OK, OK, OK, UNCHECKED],
        None,
    ),
    (_one("torch", "memory_fraction", 0.9), [OK, OK, OK, UNCHECKED], None),
    (_one("torch", "cpu_threads", 4), [OK] * 4, None),
    (_one("torch", "sdpa_backends", ("flash", "mem_efficient", "math")), [OK] * 4, None),
    (
        _one("torch", "sdpa_backends", ("flash", "mem_efficient")),
        [(True, True, NO_MATH)] * 4,
        None,
    ),
    (
        _one("torch", "alloc", {"expandable_segments": True}),
        [OK, OK, OK, UNCHECKED],
        # On Windows expandable_segments does nothing whatever the GPU: checked even then.
        [(False, True, "expandable_segments does nothing on Windows")] * 4,
    ),
    (
        _one("torch", "alloc", {"garbage_collection_threshold": 0.8}),
        [OK, OK, OK, UNCHECKED],
        None,
    ),
]


@pytest.mark.parametrize("platform", ["linux", "windows"])
@pytest.mark.parametrize("case", range(len(EFFECTS)))
def test_item_effects_table(case: int, platform: str) -> None:
    preset, linux, windows = EFFECTS[case]
    expected = linux if platform == "linux" or windows is None else windows
    got = [
        (e.applies, e.checked, e.note)
        for gfx in GFX
        for e in item_effects(preset, Target(platform, gfx, ROCM, "7.2"))
    ]
    assert got == expected


def test_with_nothing_known_only_gpu_bound_items_are_unchecked() -> None:
    """The CLI's target off Linux sysfs: no gfx, no torch version (a CPU-only machine looks
    the same): the GPU-bound items are not checked, the rest are."""
    preset = Preset(
        "t",
        "T",
        env=(Item("env", "HIP_VISIBLE_DEVICES", "0"), Item("env", "OMP_NUM_THREADS", "2")),
        torch=(
            Item("torch", "float32_matmul_precision", "medium"),
            Item("torch", "float32_matmul_precision", "highest"),
            Item("torch", "sdpa_backends", ("math",)),
            Item("torch", "alloc", {"expandable_segments": True}),
        ),
    )
    got = [(e.item.key, e.applies, e.checked, e.note) for e in item_effects(preset, Target())]
    unchecked = "not checked: no AMD GPU detected"
    assert got == [
        ("HIP_VISIBLE_DEVICES", True, False, unchecked),
        ("OMP_NUM_THREADS", True, True, ""),
        ("float32_matmul_precision", True, False, unchecked),
        ("float32_matmul_precision", True, True, ""),
        ("sdpa_backends", True, True, ""),
        ("alloc", True, False, unchecked),
    ]


@pytest.mark.parametrize(
    ("value", "gfx", "applies", "note"),
    [
        (
            "10.3.0",
            "gfx1031",
            True,
            "makes this gfx1031 report as gfx1030, a chip of its family: needed only when the "
            "installed ROCm and PyTorch have no gfx1031 kernels",
        ),
        (
            "11.0.0",
            "gfx1103",
            True,
            "makes this gfx1103 report as gfx1100, a chip of its family with more registers: "
            "kernels built for gfx1100 may need more than gfx1103 has and fault or hang (ROCm "
            "issue 4557)",
        ),
        (
            "11.5.1",
            "gfx1150",
            True,
            "makes this gfx1150 report as gfx1151, a chip of its family with more registers: "
            "kernels built for gfx1151 may need more than gfx1150 has and fault or hang (ROCm "
            "issue 4557)",
        ),
        (
            "11.0.2",
            "gfx1103",
            True,
            "makes this gfx1103 report as gfx1102, a chip of its family: needed only when the "
            "installed ROCm and PyTorch have no gfx1103 kernels",
        ),
        (
            "11.0.3",
            "gfx1100",
            True,
            "makes this gfx1100 report as gfx1103, a chip of its family: needed only when the "
            "installed ROCm and PyTorch have no gfx1100 kernels",
        ),
        (
            "11.0.0",
            "gfx1030",
            True,
            "makes this gfx1030 report as gfx1100, another family: kernels built for gfx1100 "
            "may fault, hang or give wrong results on it; do not use this preset on this GPU",
        ),
        (
            "10.3.0",
            "gfx90a",
            True,
            "makes this gfx90a report as gfx1030, another family: kernels built for gfx1030 "
            "may fault, hang or give wrong results on it; do not use this preset on this GPU",
        ),
        (
            "11.0.0",
            "gfx1100",
            False,
            "the GPU is gfx1100, already in the gfx1100 family the override names: it changes "
            "nothing",
        ),
    ],
)
def test_gfx_override_against_the_gpu(value: str, gfx: str, applies: bool, note: str) -> None:
    """Same target: redundant; same family: the substitute it is meant to be (gfx1031 has no
    kernels of its own in most builds); another family: a warning (override_harm)."""
    preset = _one("env", "HSA_OVERRIDE_GFX_VERSION", value)
    (effect,) = item_effects(preset, Target("linux", gfx, ROCM, "7.2"))
    assert (effect.applies, effect.checked, effect.note) == (applies, True, note)


@pytest.mark.parametrize(
    "target",
    [
        Target(),
        Target("windows"),
        Target("linux", None, "2.13.0+cpu"),
        Target("linux", None, ROCM, "7.2"),
        Target("linux", "gfx1100"),
        Target("linux", "gfx1100", "2.11.0+rocm7.1", "7.1"),
        Target("linux", "gfx1100", ROCM),
        Target("linux", "gfx942", ROCM, "7.2"),
        Target("windows", "gfx1201", ROCM, "7.2"),
    ],
)
def test_an_effect_is_unchecked_exactly_when_its_note_says_so(target: Target) -> None:
    """Over every built-in item and every table item: checked is False iff the note starts
    "not checked", and an unchecked effect always guesses "applies"."""
    presets = [*builtin_presets(), *(preset for preset, _, _ in EFFECTS)]
    effects = [e for preset in presets for e in item_effects(preset, target)]
    assert effects
    for effect in effects:
        assert effect.checked is not effect.note.startswith("not checked"), effect
        assert effect.checked or effect.applies, effect


def test_the_per_node_override_is_not_compared_with_the_first_gpu() -> None:
    """HSA_OVERRIDE_GFX_VERSION_<node> names one GPU; the target's gfx may be another one."""
    preset = _one("env", "HSA_OVERRIDE_GFX_VERSION_1", "10.3.0")
    assert [
        (e.applies, e.checked, e.note)
        for gfx in GFX
        for e in item_effects(preset, Target("linux", gfx, ROCM, "7.2"))
    ] == [OK, OK, OK, UNCHECKED]


def test_a_cpu_only_run_ignores_gpu_settings() -> None:
    cpu = Target("linux", None, "2.13.0+cpu", None)
    preset = Preset(
        "t",
        "T",
        env=(
            Item("env", "PYTORCH_TUNABLEOP_TUNING", "0"),
            Item("env", "HIPBLASLT_ALLOW_TF32", "1"),
            Item("env", "OMP_NUM_THREADS", "4"),
        ),
        torch=(
            Item("torch", "tunableop", {"enabled": True, "tuning": True}),
            Item("torch", "cudnn_benchmark", True),
            Item("torch", "cpu_threads", 4),
            Item("torch", "float32_matmul_precision", "medium"),
            Item("torch", "float32_matmul_precision", "high"),
            Item("torch", "sdpa_backends", ("math", "flash")),
            Item("torch", "sdpa_backends", ("mem_efficient",)),
        ),
    )
    assert [(e.item.key, e.applies, e.note) for e in item_effects(preset, cpu)] == [
        ("PYTORCH_TUNABLEOP_TUNING", False, "no GPU: CPU runs ignore it"),
        ("HIPBLASLT_ALLOW_TF32", False, "no GPU: CPU runs ignore it"),
        ("OMP_NUM_THREADS", True, ""),
        ("tunableop", False, "no GPU: CPU runs ignore it"),
        ("cudnn_benchmark", False, "no GPU: CPU runs ignore it"),
        ("cpu_threads", True, ""),
        (
            "float32_matmul_precision",
            True,
            "on CPU float32 matmuls may run in bf16 (oneDNN), which is less precise",
        ),
        (
            "float32_matmul_precision",
            True,
            "on CPU it changes nothing unless the processor has AMX-FP16, where oneDNN may run "
            "float32 matmuls as TF32",
        ),
        ("sdpa_backends", True, ""),  # CPU attention honours the flags: not a GPU-only setting
        ("sdpa_backends", True, NO_MATH),
    ]


@pytest.mark.parametrize(
    ("torch", "hip", "value", "applies", "note"),
    [
        (
            "2.11.0+rocm7.1",
            "7.1",
            {"expandable_segments": True},
            True,
            "not checked: upstream torch 2.11 ignores expandable_segments on ROCm, AMD's own "
            "2.11 builds honour it on ROCm 7.0 and later",
        ),
        (
            "2.10.1+rocm7.0",
            "7.0",
            {"expandable_segments": True},
            False,
            "torch 2.10 ignores expandable_segments on ROCm (upstream torch honours it from "
            "2.12 with ROCm 7.0 and later)",
        ),
        (
            "2.12.0+rocm6.4",
            "6.4",
            {"expandable_segments": True},
            False,
            "ROCm 6.4 is too old for expandable_segments (needs 7.0)",
        ),
        ("2.12.0+rocm7.0", "7.0", {"expandable_segments": True}, True, ""),
        (
            None,
            None,
            {"expandable_segments": True},
            True,
            "not checked: the torch version is not known",
        ),
        (
            "2.13.0+rocm7.2",
            None,
            {"expandable_segments": True},
            True,
            "not checked: the HIP version is not known",
        ),
        (
            "2.10.0+rocm7.0",
            "7.0",
            {"expandable_segments": True, "max_split_size_mb": 128},
            True,
            "torch 2.10 ignores expandable_segments on ROCm (upstream torch honours it from "
            "2.12 with ROCm 7.0 and later); the other allocator options apply",
        ),
        ("2.10.0+rocm7.0", "7.0", {"expandable_segments": False}, True, ""),
    ],
)
def test_expandable_segments_by_torch_and_rocm_version(
    torch: str | None, hip: str | None, value: dict[str, object], applies: bool, note: str
) -> None:
    (effect,) = item_effects(_one("torch", "alloc", value), Target("linux", "gfx1100", torch, hip))
    assert (effect.applies, effect.note) == (applies, note)


@pytest.mark.parametrize(
    ("gfx", "torch", "note"),
    [
        ("gfx1100", "2.5.1+rocm6.2", ""),
        ("gfx1100", "2.6.0+rocm6.2.4", ""),
        ("gfx1100", "2.9.0+rocm6.4", ""),
        (
            "gfx1100",
            "2.7.1+rocm6.3",
            "may be unneeded: torch 2.7's AOTriton supports gfx1100 without it (it was gated "
            "in torch 2.5-2.6 and 2.9)",
        ),
        (
            "gfx1100",
            "2.10.0+rocm7.0",
            "may be unneeded: torch 2.10's AOTriton supports gfx1100 without it (it was gated "
            "in torch 2.5-2.6 and 2.9)",
        ),
        (
            "gfx1100",
            None,
            "not checked: gfx1100 needs it only in some torch releases (2.5-2.6, 2.9)",
        ),
        ("gfx1101", "2.13.0+rocm7.2", ""),
        (
            "gfx1101",
            "2.4.1+rocm6.1",
            "may be unneeded: torch 2.4 predates the variable (read from about torch 2.5, "
            "pytorch pull 134498)",
        ),
        ("gfx1200", None, ""),
        (
            "gfx1201",
            "2.13.0+rocm7.2",
            "may be unneeded: recent AOTriton supports gfx1201 without it; older releases gate it",
        ),
        (
            "gfx950",
            "2.8.0+rocm7.0",
            "may be unneeded: recent AOTriton supports gfx950 without it; older releases gate it",
        ),
        (
            "gfx1151",
            None,
            "may be unneeded: recent AOTriton supports gfx1151 without it; older releases gate it",
        ),
    ],
)
def test_aotriton_experimental_by_gfx_and_torch(gfx: str, torch: str | None, note: str) -> None:
    """The variable never reads as "no effect" on an RDNA/MI350 chip: where recent AOTriton
    supports it, it is "may be unneeded" (the list changes per release)."""
    preset = _one("env", "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL", "1")
    (effect,) = item_effects(preset, Target("linux", gfx, torch, "7.0"))
    assert (effect.applies, effect.note) == (True, note)


def test_the_gfx_name_is_read_from_a_full_target_string() -> None:
    preset = _one("env", "HSA_OVERRIDE_GFX_VERSION", "9.0.10")
    (effect,) = item_effects(preset, Target("linux", "gfx90a:sramecc+:xnack-", ROCM, "7.2"))
    assert effect.applies is False
    assert effect.note.startswith("the GPU is gfx90a, already in the gfx90a family")


# ---- job environment and resolve -------------------------------------------------------------


def test_job_env_holds_the_platform_s_variables_and_a_compact_header() -> None:
    rdna2 = _builtin("rdna2-consumer")
    header = (
        '{"id":"rdna2-consumer","name":"RDNA2 consumer",'
        '"torch":{"float32_matmul_precision":"highest"}}'
    )
    assert preset_job_env(rdna2, "linux") == {
        "HSA_OVERRIDE_GFX_VERSION": "10.3.0",
        HEADER_VAR: header,
    }
    assert preset_job_env(rdna2, "windows") == {HEADER_VAR: header}
    assert preset_job_env(None, "linux") == {}
    low = preset_job_env(_builtin("low-vram"), "linux")
    assert json.loads(low[HEADER_VAR] or "") == {
        "id": "low-vram",
        "name": "Low VRAM / large model",
        "torch": {"alloc": {"garbage_collection_threshold": 0.8, "max_split_size_mb": 512}},
    }
    sdpa = Preset("s", "S", torch=(Item("torch", "sdpa_backends", ("math", "flash")),))
    assert preset_job_env(sdpa, "linux")[HEADER_VAR] == (
        '{"id":"s","name":"S","torch":{"sdpa_backends":["math","flash"]}}'
    )


def test_resolve_follows_the_active_preset_and_none(caplog: pytest.LogCaptureFixture) -> None:
    store = PresetStore()
    assert resolve(None, "") is None
    assert resolve(None, NO_PRESET, store) is None
    assert resolve(None, "throughput", store) == _builtin("throughput")
    assert resolve(NO_PRESET, "throughput", store) is None
    assert resolve("Debugging", "throughput", store) == _builtin("debugging")
    with caplog.at_level(logging.WARNING):
        assert resolve(None, "gone", store) is None
    assert "The active preset 'gone' no longer exists: jobs run without a preset." in caplog.text
    with pytest.raises(PanelError) as caught:
        resolve("gone", "throughput", store)
    assert caught.value.message.startswith(
        "There is no preset 'gone'. Known presets: safe-defaults, "
    )


@pytest.mark.parametrize(
    "name", ["PYTORCH_TUNABLEOP_ENABLED", "PYTORCH_TUNABLEOP_TUNING", "PYTORCH_TUNABLEOP_FILENAME"]
)
def test_the_tunableop_variables_the_worker_sets_are_refused(name: str) -> None:
    with pytest.raises(PresetError) as caught:
        parse_preset(f'{HEAD}env:\n  {name}: "0"\n', "my.yaml")
    assert (caught.value.line, caught.value.field, caught.value.problem) == (
        4,
        f"env.{name}",
        "set TunableOp through the `tunableop` torch setting; the worker sets this variable "
        "from it",
    )


def test_other_tunableop_variables_stay_allowed() -> None:
    preset = parse_preset(f'{HEAD}env:\n  PYTORCH_TUNABLEOP_VERBOSE: "1"\n', "my.yaml")
    assert [(i.key, i.value) for i in preset.env] == [("PYTORCH_TUNABLEOP_VERBOSE", "1")]


def test_tf32_targets_are_every_cdna3_and_cdna4_target() -> None:
    from rocmpanel.jobs.presets import TF32_GFX

    assert TF32_GFX == ("gfx940", "gfx941", "gfx942", "gfx950")


@pytest.mark.parametrize(
    ("gfx", "applies"), [("gfx940", True), ("gfx941", True), ("gfx90a", False)]
)
def test_high_matmul_precision_on_the_first_mi300_targets(gfx: str, applies: bool) -> None:
    preset = Preset("t", "T", torch=(Item("torch", "float32_matmul_precision", "high"),))
    [effect] = item_effects(preset, Target("linux", gfx, "2.13.0+rocm7.2", "7.2"))
    note = "" if applies else f"{gfx} has no TF32 hardware: float32 matmuls stay full float32"
    assert (effect.applies, effect.note, effect.checked) == (applies, note, True)
