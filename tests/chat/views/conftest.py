"""Fixtures of the Chat views' tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rocmpanel.base.units import GIB
from rocmpanel.chat.model_check import ModelCheck, ModelShape, TemplateSource

FakeCheck = Callable[..., ModelCheck]


def _fake_check(folder: Path | str, *, trust_remote_code: bool = False) -> ModelCheck:
    """A checked 7B-ish LLaMA folder, without reading anything."""
    return ModelCheck(
        folder=Path(folder),
        architecture="LlamaForCausalLM",
        model_type="llama",
        shape=ModelShape(hidden_size=4096, layers=32, kv_heads=8, head_dim=128, max_positions=8192),
        parameters=7_000_000_000,
        weight_files=("model.safetensors",),
        weight_bytes=14 * GIB,
        weight_dtype="BF16",
        tokenizer_files=("tokenizer.json",),
        template=TemplateSource.TOKENIZER_CONFIG,
        needs_remote_code=False,
        quantized_on_disk=None,
        problems=(),
        warnings=(),
    )


@pytest.fixture
def fake_check() -> FakeCheck:
    """A checked 7B-ish LLaMA folder for any path, without reading anything (pass it in for
    ``model_panel.check_model``)."""
    return _fake_check
