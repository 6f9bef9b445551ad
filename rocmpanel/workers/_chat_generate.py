"""One reply of the chat worker: the prompt that fits the context, then a streamed generate.

A private sibling of ``chat.py``. ``generate`` runs on the thread that loaded the model
(the main thread); tokens leave from inside it through ``_wire.token``.
"""

from __future__ import annotations

import threading
import time
import traceback
from typing import Any

import _wire
from _chat_common import WorkerFailure, _is_oom, _rss_bytes
from _chat_stream import _flush_each_token

EMIT_INTERVAL_S = 0.015


def build_prompt(engine: Any, messages: list, system: str, max_new: int):
    """The encoded chat and its length; the oldest messages go until it fits the context."""
    chat = [m for m in messages if m.get("role") in ("user", "assistant", "system")]
    if system and not any(m["role"] == "system" for m in chat):
        chat.insert(0, {"role": "system", "content": system})
    limit = engine.context_length - max_new
    while True:
        encoded = engine.tokenizer.apply_chat_template(
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
                f"({engine.context_length}) with {max_new} new tokens.",
                "context",
            )
        chat.pop(droppable[0])
        # Many templates insist that the conversation starts with the user.
        while len(droppable) > 2 and chat[droppable[0]]["role"] == "assistant":
            chat.pop(droppable[0])
            droppable.pop()


def generate(engine: Any, cmd: dict) -> None:
    """Answer one ``generate`` command: tokens as they come, then a ``reply`` result."""
    if engine.model is None:
        raise WorkerFailure("No model is loaded.", "no_model")
    torch, model, tokenizer = engine.torch, engine.model, engine.tokenizer
    import transformers

    request = cmd.get("id")
    max_new = max(1, int(cmd.get("max_new_tokens", 256)))
    max_new = min(max_new, max(1, engine.context_length - 8))
    encoded, prompt_tokens = build_prompt(
        engine, list(cmd.get("messages", [])), str(cmd.get("system", "")), max_new
    )
    encoded = {k: v.to(model.device) for k, v in encoded.items()}
    seed = cmd.get("seed")
    if seed is not None and int(seed) >= 0:
        transformers.set_seed(int(seed))
    temperature = float(cmd.get("temperature", 0.7))
    sampling: dict = {"do_sample": temperature > 0}
    if temperature > 0:
        sampling.update(
            temperature=temperature,
            top_p=float(cmd.get("top_p", 0.95)),
            top_k=int(cmd.get("top_k", 50)),
        )
    sampling["repetition_penalty"] = float(cmd.get("repetition_penalty", 1.0))
    # Created by the stdin reader when the command arrived, so a stop sent right
    # after generate is not lost while the command waits in the queue.
    stop_event = cmd.get("_stop") or threading.Event()

    class StopOnEvent(transformers.StoppingCriteria):
        """Checked after every token; the answers are made once, not per token."""

        answers: tuple = ()

        def __call__(self, input_ids, scores, **kwargs):
            if not self.answers:
                shape, device = (input_ids.shape[0],), input_ids.device
                self.answers = (
                    torch.zeros(shape, dtype=torch.bool, device=device),
                    torch.ones(shape, dtype=torch.bool, device=device),
                )
            return self.answers[stop_event.is_set()]

    streamer = transformers.TextStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)
    started = time.perf_counter()
    first: list[float] = []
    pieces: list[str] = []
    pending: list[str] = []
    counts = [0, 0.0]  # tokens waiting in ``pending``, time of the last token event

    def flush() -> None:
        if pending:
            _wire.token("".join(pending), request_id=request, count=counts[0])
            pending.clear()
            counts[0] = 0
            counts[1] = time.perf_counter()

    def on_text(text: str, stream_end: bool = False, tokens: int = 1) -> None:
        # Called from inside generate: a token goes out with no hand-over to another
        # thread. The first one at once; later ones at most every EMIT_INTERVAL_S,
        # which spares a fast model hundreds of pipe writes (and the panel as many
        # wake-ups) per second while the text still flows at screen rate.
        if text:
            now = time.perf_counter()
            if not first:
                first.append(now)
            pieces.append(text)
            pending.append(text)
            counts[0] += tokens
            if now - counts[1] >= EMIT_INTERVAL_S:
                flush()
        if stream_end:
            flush()

    _flush_each_token(streamer, on_text)
    if engine.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    # generate runs right here, on the thread that loaded the model (the main
    # thread): torch's CPU kernels run several times slower on any other thread (their
    # OpenMP pools belong to the main thread; measured 2.5x for bf16/NF4). Tokens
    # leave from inside generate, so there is no consumer that a failing generate
    # could leave waiting: an exception comes straight back here.
    try:
        with torch.inference_mode():
            ids = model.generate(
                **encoded,
                max_new_tokens=max_new,
                streamer=streamer,
                stopping_criteria=transformers.StoppingCriteriaList([StopOnEvent()]),
                pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
                **sampling,
            )
    except Exception as exc:
        flush()
        trace = traceback.format_exc()
        if _is_oom(exc):
            message = f"Out of memory while generating: {exc}"
            del exc  # its traceback holds the frames that hold the big tensors
            if engine.device == "cuda":
                torch.cuda.empty_cache()
            raise WorkerFailure(message, "oom", trace) from None
        raise WorkerFailure(
            f"Generation failed: {type(exc).__name__}: {exc}", "generate", trace
        ) from exc
    ended = time.perf_counter()
    new_tokens = int(ids.shape[-1]) - prompt_tokens
    ttft = (first[0] - started) if first else None
    decode_s = ended - first[0] if first else 0.0
    # Speed over the tokens after the first, as the first one includes the prefill.
    speed = (new_tokens - 1) / decode_s if new_tokens > 1 and decode_s > 0 else None
    if engine.device == "cuda":
        peak, kind = torch.cuda.max_memory_allocated(), "vram"
    else:
        peak, kind = _rss_bytes()[1], "rss"
    eos = tokenizer.eos_token_id
    last = int(ids[0, -1]) if new_tokens > 0 else None
    finish = "stop" if stop_event.is_set() else ("eos" if last == eos else "length")
    _wire.result(
        {
            "kind": "reply",
            "id": request,
            "text": "".join(pieces),
            "prompt_tokens": prompt_tokens,
            "new_tokens": new_tokens,
            "ttft_s": None if ttft is None else round(ttft, 5),
            "tokens_per_s": None if speed is None else round(speed, 2),
            "total_s": round(ended - started, 4),
            "peak_memory_bytes": peak,
            "memory_kind": kind,
            "device": engine.device,
            "precision": engine.precision,
            "stopped": stop_event.is_set(),
            "finish": finish,
        }
    )
