"""model_check on hand-made model folders (real safetensors headers, no torch)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.base.units import format_count, format_memory
from rocmpanel.chat.model_check import (
    TemplateSource,
    check_model,
    read_safetensors_header,
)

LLAMA_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 100,
    "max_position_embeddings": 512,
}
ELEMENT_BYTES = {"F16": 2, "F32": 4, "BF16": 2}

# The smallest tokenizer.json transformers reads: an added_tokens list and a model.
TOKENIZER_JSON = '{"added_tokens": [], "model": {"type": "BPE", "vocab": {}, "merges": []}}'


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    """A valid safetensors file: 8-byte header length, JSON header, zeroed data."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = ELEMENT_BYTES[dtype]
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))


def make_folder(
    root: Path,
    *,
    config: dict | None = None,
    weights: bool = True,
    tokenizer: bool = True,
    template: str | None = "config",
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(config or LLAMA_CONFIG))
    if weights:
        write_safetensors(
            root / "model.safetensors",
            {"embed": ("F16", [100, 64]), "layer.weight": ("F16", [64, 64]), "norm": ("F32", [64])},
        )
    if tokenizer:
        (root / "tokenizer.json").write_text(TOKENIZER_JSON)
        tok_config: dict[str, str] = {}
        if template == "config":
            tok_config["chat_template"] = "{{ messages }}"
        (root / "tokenizer_config.json").write_text(json.dumps(tok_config))
    if template == "file":
        (root / "chat_template.jinja").write_text("{{ messages }}")
    return root


def test_a_complete_llama_folder_passes(tmp_path: Path) -> None:
    check = check_model(make_folder(tmp_path / "m"))
    assert check.ok, check.problems
    assert check.architecture == "LlamaForCausalLM"
    assert check.model_type == "llama"
    assert check.parameters == 100 * 64 + 64 * 64 + 64
    assert check.weight_dtype == "F16"
    assert check.template is TemplateSource.TOKENIZER_CONFIG
    assert check.shape.kv_heads == 2 and check.shape.head_dim == 16 and check.shape.layers == 2
    assert not check.needs_remote_code
    assert any("Parameters" in line for line in check.summary_lines())


def test_template_file_and_fallback(tmp_path: Path) -> None:
    assert check_model(make_folder(tmp_path / "a", template="file")).template is (
        TemplateSource.FILE
    )
    fallback = check_model(make_folder(tmp_path / "b", template=None))
    assert fallback.ok
    assert fallback.template is TemplateSource.FALLBACK
    assert any("chat template" in w for w in fallback.warnings)


def test_no_weights_is_refused(tmp_path: Path) -> None:
    check = check_model(make_folder(tmp_path / "m", weights=False))
    assert not check.ok
    assert any("No weights" in p for p in check.problems)


def test_pickled_weights_only_are_refused_with_the_reason(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "m", weights=False)
    (folder / "pytorch_model.bin").write_bytes(b"pickle")
    check = check_model(folder)
    assert not check.ok
    assert any("pickled" in p and "safetensors" in p for p in check.problems)


def test_remote_code_is_refused_unless_allowed(tmp_path: Path) -> None:
    config = {**LLAMA_CONFIG, "auto_map": {"AutoModelForCausalLM": "modeling_x.XForCausalLM"}}
    folder = make_folder(tmp_path / "m", config=config)
    refused = check_model(folder)
    assert refused.needs_remote_code and not refused.ok
    assert any("own Python code" in p for p in refused.problems)
    allowed = check_model(folder, trust_remote_code=True)
    assert allowed.ok
    assert any("rights" in w for w in allowed.warnings)


def test_remote_code_in_the_tokenizer_config_counts_too(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "m")
    (folder / "tokenizer_config.json").write_text(json.dumps({"auto_map": {"AutoTokenizer": "x"}}))
    assert not check_model(folder).ok


def test_a_sharded_model_with_a_missing_shard(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "m", weights=False)
    write_safetensors(folder / "model-00001-of-00002.safetensors", {"a": ("BF16", [8, 8])})
    index = {
        "weight_map": {
            "a": "model-00001-of-00002.safetensors",
            "b": "model-00002-of-00002.safetensors",
        }
    }
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    check = check_model(folder)
    assert not check.ok
    assert any("1 of 2 weight shards are missing" in p for p in check.problems)
    write_safetensors(folder / "model-00002-of-00002.safetensors", {"b": ("BF16", [4])})
    complete = check_model(folder)
    assert complete.ok and complete.parameters == 68 and complete.weight_dtype == "BF16"


def test_a_damaged_header_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "m", weights=False)
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", 20) + b"not json at all!!!!!")
    check = check_model(folder)
    assert not check.ok
    assert any("damaged" in p for p in check.problems)
    (folder / "model.safetensors").write_bytes(b"abc")
    with pytest.raises(PanelError, match="too short"):
        read_safetensors_header(folder / "model.safetensors")


def test_other_problems(tmp_path: Path) -> None:
    not_lm = {**LLAMA_CONFIG, "architectures": ["BertModel"], "model_type": "bert"}
    check = check_model(make_folder(tmp_path / "bert", config=not_lm))
    assert any("not a text-generation" in p for p in check.problems)
    assert any("not LLaMA-family" in w for w in check.warnings)
    no_tok = check_model(make_folder(tmp_path / "notok", tokenizer=False))
    assert any("tokenizer" in p for p in no_tok.problems)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert any("config.json is missing" in p for p in check_model(empty).problems)
    listed = make_folder(tmp_path / "listed")
    (listed / "config.json").write_text("[1, 2]", encoding="utf-8")
    assert (
        "config.json holds no settings object (a JSON object is expected): this is not a "
        "Hugging Face model folder." in check_model(listed).problems
    )
    with pytest.raises(PanelError, match="not a folder"):
        check_model(tmp_path / "nowhere")


def test_pre_quantized_weights_are_noted(tmp_path: Path) -> None:
    config = {**LLAMA_CONFIG, "quantization_config": {"quant_method": "gptq"}}
    check = check_model(make_folder(tmp_path / "m", config=config))
    assert check.quantized_on_disk == "gptq"
    assert any("already quantized" in w for w in check.warnings)


def test_formatting_comes_from_the_units_module() -> None:
    # Chat's own format_bytes/format_count went; their output is base.units'.
    assert format_count(6_738_415_616) == "6.74B"
    assert format_count(950) == "950"
    assert format_memory(None) == "n/a"
    assert format_memory(512) == "512 B"
    assert format_memory(3 * 1024**3) == "3.00 GiB"
