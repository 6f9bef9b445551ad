"""Build a tiny LLaMA model folder (random weights, locally trained tokenizer) for tests.

No hub access exists in tests or CI, so the model is made from a ``LlamaConfig`` with tiny
sizes, saved as safetensors, next to a byte-level BPE tokenizer trained on a few sentences
and wrapped as a ``PreTrainedTokenizerFast`` with a chat template. The benchmark imports
this file by path, so it depends on nothing from the test suite.
"""

from __future__ import annotations

import json
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}</s>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

SENTENCES = [
    "Hello, how are you today?",
    "The GPU runs the model in four bits.",
    "AMD Radeon cards use ROCm for PyTorch.",
    "A small language model answers short questions.",
    "def add(a, b):\n    return a + b",
    "Tokens stream one by one into the chat window.",
    "The quick brown fox jumps over the lazy dog.",
    "Memory, speed and time to first token are measured.",
]


def build_tokenizer(folder: Path) -> None:
    """Train a byte-level BPE tokenizer and save it in Hugging Face format."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    special = ["<unk>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>"]
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=special,
        # Only the corpus's own characters: random weights then sample readable pieces
        # of words instead of stray bytes that decode to replacement characters.
        show_progress=False,
    )
    tokenizer.train_from_iterator(SENTENCES * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="</s>",
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(folder))


def build_tiny_llama(
    folder: Path,
    *,
    hidden_size: int = 64,
    layers: int = 2,
    seed: int = 0,
    max_positions: int = 4096,
) -> Path:
    """Write a random tiny LLaMA (safetensors) with its tokenizer into ``folder``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    build_tokenizer(folder)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(folder))
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(str(folder), safe_serialization=True)
    # A random model almost never samples EOS; keep generation_config neutral.
    gen = folder / "generation_config.json"
    if gen.exists():
        data = json.loads(gen.read_text(encoding="utf-8"))
        data.pop("max_length", None)
        gen.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return folder


_BUILT: dict[str, Path] = {}


def cached_tiny_llama(base: Path) -> Path:
    """Build the default tiny model under ``base`` once per process; later calls reuse it."""
    if "default" not in _BUILT:
        _BUILT["default"] = build_tiny_llama(base / "tiny-llama")
    return _BUILT["default"]


def without_weights(base: Path) -> Path:
    """A folder that looks like a model but has no weights (config and tokenizer only)."""
    folder = base / "no-weights"
    folder.mkdir(parents=True, exist_ok=True)
    build_tokenizer(folder)
    (folder / "config.json").write_text(
        json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}),
        encoding="utf-8",
    )
    return folder


def needing_remote_code(model: Path, base: Path) -> Path:
    """A copy of ``model`` whose config asks for the repository's own Python code."""
    import shutil

    folder = base / "remote-code"
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(model, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["auto_map"] = {"AutoModelForCausalLM": "modeling_evil.EvilForCausalLM"}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "modeling_evil.py").write_text(
        "raise SystemExit('remote code ran')\n", encoding="utf-8"
    )
    return folder


if __name__ == "__main__":
    import sys

    print(build_tiny_llama(Path(sys.argv[1] if len(sys.argv) > 1 else "tiny-llama")))
