"""Streaming text out of ``generate``: the streamer hands over text after every token.

A private sibling of ``chat.py``; it patches a transformers ``TextStreamer`` in place.
"""

from __future__ import annotations


def _flush_each_token(streamer, on_text) -> None:
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
    offsets = [0, 0]  # prefix start, end of what was sent
    decode_kwargs = streamer.decode_kwargs

    def put(value) -> None:
        ids = _generated_ids(streamer, value)
        if ids is None:
            return
        tokens.extend(ids)
        prefix, sent = offsets
        before = streamer.tokenizer.decode(tokens[prefix:sent], **decode_kwargs)
        after = streamer.tokenizer.decode(tokens[prefix:], **decode_kwargs)
        if len(after) > len(before) and not after.endswith("\ufffd"):
            offsets[0], offsets[1] = sent, len(tokens)
            on_text(after[len(before) :], tokens=len(tokens) - sent)

    def end() -> None:
        prefix, sent = offsets
        if sent < len(tokens):
            before = streamer.tokenizer.decode(tokens[prefix:sent], **decode_kwargs)
            after = streamer.tokenizer.decode(tokens[prefix:], **decode_kwargs)
            on_text(after[len(before) :], tokens=len(tokens) - sent)
        streamer.next_tokens_are_prompt = True
        on_text("", stream_end=True)

    streamer.put = put
    streamer.end = end


def _stream_with_decode_stream(streamer, on_text) -> bool:
    """Use tokenizers' DecodeStream when the tokenizer has a Rust backend (0.21+)."""
    backend = getattr(streamer.tokenizer, "backend_tokenizer", None)
    try:
        from tokenizers.decoders import DecodeStream
    except ImportError:
        return False
    if backend is None:
        return False
    skip = bool(streamer.decode_kwargs.get("skip_special_tokens", False))
    state = [DecodeStream(skip_special_tokens=skip), 0]  # decoder, tokens not yet sent

    def put(value) -> None:
        ids = _generated_ids(streamer, value)
        if ids is None:
            return
        for token_id in ids:
            state[1] += 1
            text = state[0].step(backend, token_id)
            if text:
                on_text(text, tokens=state[1])
                state[1] = 0

    def end() -> None:
        streamer.next_tokens_are_prompt = True
        state[0], state[1] = DecodeStream(skip_special_tokens=skip), 0
        on_text("", stream_end=True)

    streamer.put = put
    streamer.end = end
    return True


def _generated_ids(streamer, value) -> list[int] | None:
    """The token ids of one ``put``; None for the prompt, which the streamer skips."""
    if len(value.shape) > 1:
        value = value[0]
    if streamer.skip_prompt and streamer.next_tokens_are_prompt:
        streamer.next_tokens_are_prompt = False
        return None
    return value.tolist()
