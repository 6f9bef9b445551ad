"""Streaming a reply out of ``generate``: text after every token, sent in screen-rate batches.

A private sibling of ``chat.py``. :func:`flush_each_token` patches a transformers
``TextStreamer`` so that it hands over the text of every token; :class:`TokenBatcher`
collects that text and sends it as token events carrying the request id.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import _wire

EMIT_INTERVAL_S = 0.015

OnText = Callable[..., None]  # (text, stream_end=False, tokens=1)


class TokenBatcher:
    """The text of one reply, sent as ``token`` events for ``request_id``.

    Called from inside ``generate``: a token goes out with no hand-over to another thread.
    The first piece at once; later ones at most every ``EMIT_INTERVAL_S``, which spares a
    fast model hundreds of pipe writes (and the panel as many wake-ups) per second while
    the text still flows at screen rate.
    """

    def __init__(self, request_id: int | None) -> None:
        self.request_id = request_id
        self.first_at: float | None = None
        self._pieces: list[str] = []
        self._pending: list[str] = []
        self._pending_tokens = 0
        self._sent_at = 0.0

    @property
    def text(self) -> str:
        return "".join(self._pieces)

    def on_text(self, text: str, stream_end: bool = False, tokens: int = 1) -> None:
        """What the streamer hands over: new text holding ``tokens`` tokens."""
        if text:
            now = time.perf_counter()
            if self.first_at is None:
                self.first_at = now
            self._pieces.append(text)
            self._pending.append(text)
            self._pending_tokens += tokens
            if now - self._sent_at >= EMIT_INTERVAL_S:
                self.flush()
        if stream_end:
            self.flush()

    def flush(self) -> None:
        """Send what is waiting now (the end of a reply, or a failure)."""
        if self._pending:
            _wire.token(
                "".join(self._pending), request_id=self.request_id, count=self._pending_tokens
            )
            self._pending.clear()
            self._pending_tokens = 0
            self._sent_at = time.perf_counter()


def flush_each_token(streamer: Any, on_text: OnText) -> None:
    """Make the streamer hand over text after every token, not at word boundaries.

    TextStreamer holds text back until a space, which delays the first visible token, and
    decodes its whole cache on every token. With a fast tokenizer, tokenizers' own
    incremental decoder does it in about a microsecond per token. Otherwise two short
    windows are decoded per token (the offsets trick of text-generation servers): the text
    of the tokens already sent, and the same plus the new one; the difference is the new
    text. Either way, text ending in a cut UTF-8 sequence is held until it completes.
    """
    if _stream_with_decode_stream(streamer, on_text):
        return
    tokens: list[int] = []
    prefix = sent = 0  # start of the decoding window, end of what was sent
    decode_kwargs = streamer.decode_kwargs

    def put(value: Any) -> None:
        nonlocal prefix, sent
        ids = _generated_ids(streamer, value)
        if ids is None:
            return
        tokens.extend(ids)
        before = streamer.tokenizer.decode(tokens[prefix:sent], **decode_kwargs)
        after = streamer.tokenizer.decode(tokens[prefix:], **decode_kwargs)
        if len(after) > len(before) and not after.endswith("\ufffd"):
            count = len(tokens) - sent
            prefix, sent = sent, len(tokens)
            on_text(after[len(before) :], tokens=count)

    def end() -> None:
        if sent < len(tokens):
            before = streamer.tokenizer.decode(tokens[prefix:sent], **decode_kwargs)
            after = streamer.tokenizer.decode(tokens[prefix:], **decode_kwargs)
            on_text(after[len(before) :], tokens=len(tokens) - sent)
        streamer.next_tokens_are_prompt = True
        on_text("", stream_end=True)

    streamer.put = put
    streamer.end = end


def _stream_with_decode_stream(streamer: Any, on_text: OnText) -> bool:
    """Use tokenizers' DecodeStream when the tokenizer has a Rust backend (0.21+)."""
    backend = getattr(streamer.tokenizer, "backend_tokenizer", None)
    try:
        from tokenizers.decoders import DecodeStream
    except ImportError:
        return False
    if backend is None:
        return False
    skip = bool(streamer.decode_kwargs.get("skip_special_tokens", False))
    decoder = DecodeStream(skip_special_tokens=skip)
    unsent = 0  # tokens whose text has not gone out yet

    def put(value: Any) -> None:
        nonlocal unsent
        ids = _generated_ids(streamer, value)
        if ids is None:
            return
        for token_id in ids:
            unsent += 1
            text = decoder.step(backend, token_id)
            if text:
                on_text(text, tokens=unsent)
                unsent = 0

    def end() -> None:
        nonlocal decoder, unsent
        streamer.next_tokens_are_prompt = True
        decoder, unsent = DecodeStream(skip_special_tokens=skip), 0
        on_text("", stream_end=True)

    streamer.put = put
    streamer.end = end
    return True


def _generated_ids(streamer: Any, value: Any) -> list[int] | None:
    """The token ids of one ``put``; None for the prompt, which the streamer skips."""
    if len(value.shape) > 1:
        value = value[0]
    if streamer.skip_prompt and streamer.next_tokens_are_prompt:
        streamer.next_tokens_are_prompt = False
        return None
    ids: list[int] = value.tolist()
    return ids
