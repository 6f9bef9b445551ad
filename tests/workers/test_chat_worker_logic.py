"""The chat worker's pure parts, imported by path (no torch needed)."""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

WORKERS = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers"


@pytest.fixture
def chat_worker(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    # The worker sets HF_HUB_OFFLINE at import; monkeypatch restores the environment.
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM"):
        monkeypatch.setenv(key, os.environ.get(key, ""))
    monkeypatch.syspath_prepend(str(WORKERS))
    spec = importlib.util.spec_from_file_location("rocmpanel_chat_worker", WORKERS / "chat.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert os.environ["HF_HUB_OFFLINE"] == "1"  # set before transformers could be imported
    return module


@pytest.fixture
def chat_parts(chat_worker: ModuleType) -> SimpleNamespace:
    """The worker's private siblings (``_chat_stream`` as ``.stream``...), as chat.py has them."""
    names = ("common", "load", "stream")
    return SimpleNamespace(**{n: importlib.import_module(f"_chat_{n}") for n in names})


class ByteTokenizer:
    """Token i is byte i: decoding a cut multi-byte character gives U+FFFD, like BPE."""

    def decode(self, ids: list[int], **_kwargs: Any) -> str:
        return bytes(ids).decode("utf-8", errors="replace")


class FakeIds:
    def __init__(self, ids: list[int]) -> None:
        self.ids = ids
        self.shape = (1, len(ids))

    def __getitem__(self, index: int) -> FakeIds:
        return self

    def tolist(self) -> list[int]:
        return self.ids


def test_streamer_sends_every_token_and_holds_cut_characters(chat_parts: SimpleNamespace) -> None:
    streamer = SimpleNamespace(
        tokenizer=ByteTokenizer(),
        decode_kwargs={},
        skip_prompt=True,
        next_tokens_are_prompt=True,
    )
    got: list[tuple[str, int]] = []
    ended: list[bool] = []

    def on_text(text: str, stream_end: bool = False, tokens: int = 1) -> None:
        if text:
            got.append((text, tokens))
        if stream_end:
            ended.append(True)

    chat_parts.stream._flush_each_token(streamer, on_text)
    streamer.put(FakeIds(list(b"prompt")))  # the prompt is skipped
    for byte in "hé!".encode():
        streamer.put(FakeIds([byte]))
    streamer.end()
    # "é" is two bytes: nothing is sent for the first, both go out together.
    assert got == [("h", 1), ("é", 2), ("!", 1)]
    assert ended == [True]


def test_fast_tokenizers_stream_through_decode_stream(chat_parts: SimpleNamespace) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    if not hasattr(tokenizers.decoders, "DecodeStream"):
        pytest.skip("tokenizers before 0.21 has no DecodeStream")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(["hello world"] * 3, trainer=trainer)
    streamer = SimpleNamespace(
        tokenizer=SimpleNamespace(backend_tokenizer=backend),
        decode_kwargs={"skip_special_tokens": True},
        skip_prompt=True,
        next_tokens_are_prompt=True,
    )
    got: list[tuple[str, int]] = []
    chat_parts.stream._flush_each_token(
        streamer, lambda text, stream_end=False, tokens=1: text and got.append((text, tokens))
    )
    ids = backend.encode("hello wé!").ids
    streamer.put(FakeIds([1, 2, 3]))  # the prompt
    for token in [*ids, backend.token_to_id("</s>")]:
        streamer.put(FakeIds([token]))
    streamer.end()
    assert "".join(text for text, _ in got) == "hello wé!"
    # The two bytes of "é" arrive as one piece, counted as two tokens.
    assert ("é", 2) in got


def test_out_of_memory_is_recognised(chat_worker: ModuleType) -> None:
    class OutOfMemoryError(RuntimeError):
        pass

    assert chat_worker._is_oom(MemoryError())
    assert chat_worker._is_oom(OutOfMemoryError("CUDA"))
    assert chat_worker._is_oom(RuntimeError("HIP out of memory. Tried to allocate 2 GiB"))
    assert not chat_worker._is_oom(ValueError("bad shape"))


def test_stop_reaches_queued_and_running_generations(chat_worker: ModuleType) -> None:
    stops = chat_worker.StopEvents()
    running, queued = stops.new(), stops.new()
    stops.stop_all()
    assert running.is_set() and queued.is_set()
    stops.done(running)
    stops.done(queued)
    later = stops.new()
    assert not later.is_set()
    assert isinstance(later, type(threading.Event()))


def test_memory_reading_on_this_platform(chat_parts: SimpleNamespace) -> None:
    current, peak = chat_parts.common._rss_bytes()
    if sys.platform.startswith("linux"):
        assert current is not None and peak is not None and peak >= current > 0


def test_transformers_versions_are_compared_numerically(chat_parts: SimpleNamespace) -> None:
    assert chat_parts.load._version("5.24.0") == (5, 24)
    assert chat_parts.load._version("4.45.2") < (4, 56) <= chat_parts.load._version("4.56.0.dev0")
    assert chat_parts.load._version("4") == (4, 0)
