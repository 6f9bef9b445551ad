"""The worker side of the JSON-lines protocol (stdlib only; imported by sibling workers).

Workers run by path, so this folder is first on sys.path and ``import _wire`` finds this
file without rocmpanel being installed in the workload environment.
"""

from __future__ import annotations

import json
import sys
import threading
import traceback
from typing import Any

_out_lock = threading.Lock()
_real_stdout = sys.stdout


def protect_stdout() -> None:
    """Send stray prints (libraries love them) to stderr so stdout stays pure protocol."""
    global _real_stdout
    _real_stdout = sys.stdout
    sys.stdout = sys.stderr


def emit(event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, **fields}, ensure_ascii=False, default=str)
    with _out_lock:
        _real_stdout.write(line + "\n")
        _real_stdout.flush()


def progress(fraction: float | None, step: str = "") -> None:
    emit("progress", fraction=fraction, step=step)


def log(message: str, level: str = "info") -> None:
    emit("log", message=message, level=level)


def result(data: dict[str, Any]) -> None:
    emit("result", data=data)


def error(message: str, kind: str = "error", detail: str = "", **fields: Any) -> None:
    emit("error", message=message, kind=kind, detail=detail, **fields)


def token(text: str, request_id: int | None = None, count: int | None = None) -> None:
    """A piece of a streamed reply to request ``request_id`` holding ``count`` tokens."""
    emit("token", text=text, id=request_id, n=count)


def check(record: dict[str, Any]) -> None:
    """One finished check of a suite (``record`` has id, name and status at least)."""
    emit("check", check=record)


def reply(request_id: int | None, text: str, **figures: Any) -> None:
    """The end of a chat reply: its text and figures."""
    emit("reply", id=request_id, text=text, **figures)


# Copies of rocmpanel.base.enums (a worker cannot import rocmpanel); tests/base/test_enums.py
# checks they match the originals.
CHECK_STATUSES = ("pass", "warn", "fail", "skip")
PRECISIONS = ("nf4", "int8", "fp16", "bf16", "fp32")
DEVICES = ("auto", "gpu", "cpu")
# Copy of rocmpanel.chat.store.ROLES: the roles of a chat message.
ROLES = ("system", "user", "assistant")


def run_main(main: Any) -> None:
    """Run ``main()``; an unexpected exception becomes an error event and exit code 1."""
    protect_stdout()
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        error(f"{type(exc).__name__}: {exc}", kind="exception", detail=traceback.format_exc())
        sys.exit(1)
