"""How the chat worker fails: a typed failure the command loop reports, and OOM recognition.

A private sibling of ``chat.py`` (workers run by path, so ``import _chat_errors`` finds it);
stdlib only. A :class:`WorkerFailure` becomes one ``error`` event of its ``kind``; ``kind``
"oom" is its own kind so the panel can offer a smaller setting, and "missing_package" names
the distributions an import lacked (``missing``) so the panel can offer to install them.
"""

from __future__ import annotations

import re

OOM_SUGGESTION = (
    "Reload with a smaller precision (4-bit NF4), a shorter context length, or fewer new tokens."
)


class WorkerFailure(Exception):
    """A failure to report as an error event of a given kind, with extra event ``fields``."""

    def __init__(self, message: str, kind: str, detail: str = "", **fields: object) -> None:
        super().__init__(message)
        self.message, self.kind, self.detail = message, kind, detail
        self.fields = fields


# The distributions the chat imports, by import name (the same as the distribution name for
# each of them); the panel's table of versions is rocmpanel/chat/requirements.py, and
# tests/workers/test_chat_worker_logic.py checks this copy names the same ones.
CHAT_PACKAGES = (
    "torch",
    "transformers",
    "accelerate",
    "safetensors",
    "tokenizers",
    "bitsandbytes",
)
SERVE_PACKAGES = ("fastapi", "uvicorn")  # imported only when serving starts (_serve_front)
KNOWN_PACKAGES = CHAT_PACKAGES + SERVE_PACKAGES


def missing_package(exc: ImportError, detail: str = "") -> WorkerFailure | None:
    """A "missing_package" failure for an import error that names the chat's packages, or
    None for any other import error (a broken install is reported as it is).

    A ``ModuleNotFoundError`` names its module (``exc.name``); transformers raises a plain
    ImportError saying which package a feature needs ("... requires accelerate")."""
    names: list[str] = []
    if exc.name:
        top = exc.name.split(".", 1)[0]
        if top in KNOWN_PACKAGES:
            names.append(top)
    if not names and not isinstance(exc, ModuleNotFoundError):
        text = str(exc).lower()
        names = [n for n in KNOWN_PACKAGES if re.search(rf"\b{n}\b", text)]
        names = [n for n in names if n != "torch"] or names  # "torch" is in many messages
    if not names:
        return None
    return WorkerFailure(
        f"This Python lacks {', '.join(names)} ({type(exc).__name__}: {exc}).",
        "missing_package",
        detail,
        missing=names,
    )


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` means out of memory (host, CUDA or HIP), whatever raised it."""
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    return name == "OutOfMemoryError" or "out of memory" in str(exc).lower()
