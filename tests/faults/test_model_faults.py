"""Break-it round 6, finding 6 (model part): a damaged model folder is a model-check problem.

A shard index whose ``weight_map`` is not a mapping (or names a file outside the folder), a
safetensors header whose shapes are not lists of sizes (strings, null, negative, floats, a
10**40 dimension) or whose dtype is unknown, and a tokenizer.json that transformers cannot
read (no ``added_tokens``: the worker's bare ``KeyError: 'added_tokens'``) each become a
problem that names the file. ``rocmpanel chat`` then stops before a worker starts (exit 2),
never with "unexpected error" (exit 70) or a 2e31 GiB warning.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.base.enums import Precision
from rocmpanel.chat.memory_estimate import estimate_for
from rocmpanel.chat.model_check import check_model, read_shape
from rocmpanel.shell.cli import main

CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "vocab_size": 100,
}
TOKENIZER = {"added_tokens": [{"id": 0, "content": "<s>"}], "model": {"type": "BPE"}}
AFTER = ". Download the file again; it cannot be loaded as it is."


def header_file(path: Path, header: Any) -> None:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(16))


def folder_with(tmp_path: Path, tensor: Any = None, tokenizer: Any = TOKENIZER) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(CONFIG))
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ x }}"}))
    (folder / "tokenizer.json").write_text(
        tokenizer if isinstance(tokenizer, str) else json.dumps(tokenizer)
    )
    tensor = tensor or {"dtype": "F16", "shape": [2, 4], "data_offsets": [0, 16]}
    header_file(folder / "model.safetensors", {"__metadata__": {"format": "pt"}, "w": tensor})
    return folder


def test_the_fixture_itself_passes(tmp_path: Path) -> None:
    check = check_model(folder_with(tmp_path))
    assert check.problems == () and check.parameters == 8 and check.weight_dtype == "F16"


@pytest.mark.parametrize(
    ("tensor", "detail"),
    [
        (
            {"dtype": "F16", "shape": ["abc"]},
            "tensor 'w' has the shape ['abc'], not a list of sizes",
        ),
        ({"dtype": "F16", "shape": [None]}, "tensor 'w' has the shape [None], not a list of sizes"),
        (
            {"dtype": "F16", "shape": [-5, 2]},
            "tensor 'w' has the shape [-5, 2], not a list of sizes",
        ),
        ({"dtype": "F16", "shape": [1.5]}, "tensor 'w' has the shape [1.5], not a list of sizes"),
        ({"dtype": "F16", "shape": [True]}, "tensor 'w' has the shape [True], not a list of sizes"),
        ({"dtype": "F16", "shape": "abc"}, "tensor 'w' has the shape 'abc', not a list of sizes"),
        ({"dtype": "F16"}, "tensor 'w' has the shape None, not a list of sizes"),
        ({"dtype": "Q9", "shape": [2]}, "tensor 'w' has the unknown dtype 'Q9'"),
        ({"dtype": None, "shape": [2]}, "tensor 'w' has the unknown dtype None"),
        (5, "the entry of tensor 'w' is not a description"),
        (
            {"dtype": "F16", "shape": [10**40]},
            "tensor 'w' would hold more than 10 trillion parameters, far more than any model",
        ),
        (
            {"dtype": "F16", "shape": [10**7, 10**7]},
            "tensor 'w' would hold more than 10 trillion parameters, far more than any model",
        ),
    ],
)
def test_a_damaged_tensor_entry_is_a_problem_naming_the_file(
    tmp_path: Path, tensor: Any, detail: str
) -> None:
    check = check_model(folder_with(tmp_path, tensor))
    assert check.problems == (f"model.safetensors has a damaged header: {detail}{AFTER}",)
    assert check.parameters is None
    assert estimate_for(check, Precision.FP16, 512) is None  # no 2e31 GiB estimate


def test_many_shards_that_add_up_to_an_absurd_count_are_a_problem(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, {"dtype": "F16", "shape": [4 * 10**12]})
    for name in ("b", "c"):
        header_file(folder / f"{name}.safetensors", {"w": {"dtype": "F16", "shape": [4 * 10**12]}})
    check = check_model(folder)
    assert check.problems == (
        "The safetensors headers add up to more than 10 trillion parameters, far more than any "
        "model: a header is damaged. Download the model again.",
    )
    assert check.parameters is None


@pytest.mark.parametrize(
    ("index", "problem"),
    [
        (
            {"weight_map": ["a.safetensors"]},
            "model.safetensors.index.json is damaged: its weight_map is not a mapping from "
            "tensor names to files. Download the model again.",
        ),
        (
            ["a.safetensors"],
            "model.safetensors.index.json is damaged: its weight_map is not a mapping from "
            "tensor names to files. Download the model again.",
        ),
        (
            {"weight_map": {"x": None}},
            "model.safetensors.index.json is damaged: its weight_map names the shard None, "
            "which is not a file name. Download the model again.",
        ),
        (
            {"weight_map": {"x": "../../../etc/passwd"}},
            "model.safetensors.index.json names the shard '../../../etc/passwd', which is "
            "outside the model folder; rocmpanel reads only files inside it.",
        ),
        (
            {"weight_map": {"x": "/etc/passwd"}},
            "model.safetensors.index.json names the shard '/etc/passwd', which is outside the "
            "model folder; rocmpanel reads only files inside it.",
        ),
    ],
)
def test_a_damaged_shard_index_is_a_problem(tmp_path: Path, index: Any, problem: str) -> None:
    folder = folder_with(tmp_path)
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    check = check_model(folder)
    assert check.problems == (problem,)
    assert check.weight_files == ()


@pytest.mark.parametrize(
    ("tokenizer", "detail"),
    [
        ({}, "it has no 'added_tokens' list"),
        ({"added_tokens": {}, "model": {}}, "it has no 'added_tokens' list"),
        (
            {"added_tokens": [{"content": "x"}], "model": {}},
            ("its 'added_tokens' list holds {'content': 'x'}, which has no token id"),
        ),
        ({"added_tokens": [], "model": None}, "it has no 'model' section"),
        ([1, 2], "it is not a JSON object"),
        ("{not json", "it is not valid JSON"),
        ("\udcff", "it is not valid JSON"),
    ],
)
def test_a_damaged_tokenizer_json_is_a_problem(tmp_path: Path, tokenizer: Any, detail: str) -> None:
    folder = folder_with(tmp_path, tokenizer=tokenizer if tokenizer != "\udcff" else "")
    if tokenizer == "\udcff":
        (folder / "tokenizer.json").write_bytes(b"\xff\xfe{}")
    check = check_model(folder)
    assert check.problems == (
        f"tokenizer.json is damaged: {detail}. Download the model's tokenizer files again.",
    )


def test_a_negative_or_absurd_config_size_is_left_out() -> None:
    shape = read_shape({"hidden_size": -64, "num_hidden_layers": 10**40, "num_attention_heads": 4})
    assert (shape.hidden_size, shape.layers, shape.head_dim) == (None, None, None)


@pytest.mark.parametrize(
    ("tensor", "tokenizer", "message"),
    [
        (
            {"dtype": "F16", "shape": [None]},
            TOKENIZER,
            f"model.safetensors has a damaged header: tensor 'w' has the shape [None], not a "
            f"list of sizes{AFTER}",
        ),
        (
            None,
            {},
            "tokenizer.json is damaged: it has no 'added_tokens' list. Download the model's "
            "tokenizer files again.",
        ),
    ],
)
def test_chat_stops_before_the_worker_with_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tensor: Any, tokenizer: Any, message: str
) -> None:
    folder = folder_with(tmp_path, tensor, tokenizer)
    code = main(["chat", "--model", str(folder), "--prompt", "hi", "--python", "/bin/false"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"rocmpanel chat: {message}\n" in err
    assert "unexpected error" not in err and "Traceback" not in err
