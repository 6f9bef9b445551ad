"""The parts of one reply: the prompt that fits the context, the stop check, the figures.

A private sibling of ``chat.py``; :meth:`_chat_engine.ChatEngine.generate` puts them
together around ``model.generate`` (which runs on the main thread, see there).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from _chat_errors import WorkerFailure


def build_prompt(
    tokenizer: Any,
    messages: Sequence[dict[str, str]],
    system: str,
    context_length: int,
    max_new: int,
) -> tuple[Any, int]:
    """The encoded chat and its length; the oldest messages go until it fits the context."""
    chat = [dict(m) for m in messages]
    if system and not any(m["role"] == "system" for m in chat):
        chat.insert(0, {"role": "system", "content": system})
    limit = context_length - max_new
    while True:
        encoded = tokenizer.apply_chat_template(
            chat, add_generation_prompt=True, return_dict=True, return_tensors="pt"
        )
        length = int(encoded["input_ids"].shape[-1])
        if length <= limit:
            return encoded, length
        # Drop the oldest non-system message and try again.
        droppable = [i for i, m in enumerate(chat) if m["role"] != "system"]
        if len(droppable) <= 1:
            raise WorkerFailure(
                f"The message needs {length} tokens but only {limit} fit in the context "
                f"({context_length}) with {max_new} new tokens.",
                "context",
            )
        chat.pop(droppable[0])
        # Many templates insist that the conversation starts with the user.
        while len(droppable) > 2 and chat[droppable[0]]["role"] == "assistant":
            chat.pop(droppable[0])
            droppable.pop()


def stop_criteria(transformers: Any, torch: Any, stop: threading.Event) -> Any:
    """A stopping-criteria list that ends ``generate`` after the token during which
    ``stop`` was set (checked after every token; the answers are made once, not per token)."""

    class StopOnEvent(transformers.StoppingCriteria):
        answers: tuple[Any, ...] = ()

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            if not self.answers:
                shape, device = (input_ids.shape[0],), input_ids.device
                self.answers = (
                    torch.zeros(shape, dtype=torch.bool, device=device),
                    torch.ones(shape, dtype=torch.bool, device=device),
                )
            return self.answers[stop.is_set()]

    return transformers.StoppingCriteriaList([StopOnEvent()])


@dataclass(frozen=True)
class ReplyReport:
    """A finished reply: what the ``reply`` event carries."""

    request_id: int | None
    text: str
    prompt_tokens: int
    new_tokens: int
    ttft_s: float | None
    tokens_per_s: float | None
    total_s: float
    peak_memory_bytes: int | None
    memory_kind: str  # "vram" (torch allocator peak) or "rss" (process)
    device: str  # "gpu" or "cpu"
    precision: str
    stopped: bool
    finish: str  # "stop", "eos" or "length"

    def figures(self) -> dict[str, Any]:
        """The reply's figures, as the ``reply`` event sends them beside its text."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "new_tokens": self.new_tokens,
            "ttft_s": None if self.ttft_s is None else round(self.ttft_s, 5),
            "tokens_per_s": None if self.tokens_per_s is None else round(self.tokens_per_s, 2),
            "total_s": round(self.total_s, 4),
            "peak_memory_bytes": self.peak_memory_bytes,
            "memory_kind": self.memory_kind,
            "device": self.device,
            "precision": self.precision,
            "stopped": self.stopped,
            "finish": self.finish,
        }


@dataclass(frozen=True)
class GenerationRun:
    """One ``model.generate`` call: token counts and perf_counter times (``first_at``:
    when the first text came out, None when none did), and why it ended."""

    prompt_tokens: int
    new_tokens: int
    started: float
    first_at: float | None
    ended: float
    finish: str  # "stop" (the stop event), "eos" or "length"


def decode_speed(new_tokens: int, first_at: float | None, ended: float) -> float | None:
    """Tokens per second after the first (the first one includes the prefill)."""
    decode_s = ended - first_at if first_at is not None else 0.0
    return (new_tokens - 1) / decode_s if new_tokens > 1 and decode_s > 0 else None


def finish_reason(stopped: bool, last_token: int | None, eos: Any) -> str:
    """Why a reply ended: stopped by the user, the model's end token, or the length cap."""
    if stopped:
        return "stop"
    eos_ids = eos if isinstance(eos, (list, tuple, set)) else (eos,)
    return "eos" if last_token is not None and last_token in eos_ids else "length"
