"""How the chat worker fails: a typed failure the command loop reports, and OOM recognition.

A private sibling of ``chat.py`` (workers run by path, so ``import _chat_errors`` finds it);
stdlib only. A :class:`WorkerFailure` becomes one ``error`` event of its ``kind`` and the
worker keeps running; ``kind`` "oom" is its own kind so the panel can offer a smaller setting.
"""

from __future__ import annotations

OOM_SUGGESTION = (
    "Reload with a smaller precision (4-bit NF4), a shorter context length, or fewer new tokens."
)


class WorkerFailure(Exception):
    """A failure to report as an error event of a given kind (the worker keeps running)."""

    def __init__(self, message: str, kind: str, detail: str = "") -> None:
        super().__init__(message)
        self.message, self.kind, self.detail = message, kind, detail


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` means out of memory (host, CUDA or HIP), whatever raised it."""
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    return name == "OutOfMemoryError" or "out of memory" in str(exc).lower()
