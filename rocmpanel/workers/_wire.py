"""The worker side of the JSON-lines protocol (stdlib only; imported by sibling workers).

Workers run by path, so this folder is first on sys.path and ``import _wire`` finds this
file without rocmpanel being installed in the workload environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
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


# -- no console windows on Windows ------------------------------------------------------
# Copy of rocmpanel.base.subproc.CREATE_NO_WINDOW (tests/workers/test_pip_install.py checks
# it): the console programs a worker starts (venv, pip, compilers) get no console window.
CREATE_NO_WINDOW = 0x08000000


def no_window(platform: str = sys.platform) -> dict[str, Any]:
    """Popen keyword arguments that start a console program without a window on Windows;
    none elsewhere (``creationflags`` is Windows-only). Pass them on every subprocess call."""
    return {"creationflags": CREATE_NO_WINDOW} if platform == "win32" else {}


# -- the lifeline: no worker runs on after the panel is gone ------------------------------
# Copies of rocmpanel.jobs.lifetime's names (tests/workers/test_pip_install.py checks them).
LIFELINE_ENV = "ROCMPANEL_LIFELINE"
LIFELINE_STDIN = "stdin"
# Children a worker started (pip, venv) while they run: ended with the worker.
running_children: set[subprocess.Popen[Any]] = set()


def watch_lifeline(fd: int = 0) -> threading.Thread | None:
    """When the panel holds ``fd`` (stdin) as its lifeline (``ROCMPANEL_LIFELINE=stdin``: a
    pipe it keeps open and never writes), end this worker's whole process group once that pipe
    reaches end of file, i.e. once the panel is gone however it went, even a kill -9.
    Returns the watching thread, or None when there is no lifeline (run by hand, Windows)."""
    if os.environ.get(LIFELINE_ENV) != LIFELINE_STDIN or os.name != "posix":
        return None
    thread = threading.Thread(target=_wait_for_panel, args=(fd,), name="lifeline", daemon=True)
    thread.start()
    return thread


def _wait_for_panel(fd: int) -> None:
    try:
        while os.read(fd, 4096):  # the panel never writes; data would be ignored
            pass
    except OSError:
        pass
    end_own_group()


def end_own_group(posix: bool = os.name == "posix") -> None:
    """Kill this worker and everything it started. On POSIX the panel starts it as the
    leader of a process group of its own, which its children share: one signal takes them
    all. Otherwise (not a group leader, or Windows, where the panel's Job object ends the
    tree) only the running children are killed, then this process. Never raises."""
    if posix:
        with contextlib.suppress(OSError, AttributeError):
            if os.getpgrp() == os.getpid():
                os.killpg(os.getpid(), signal.SIGKILL)
    for child in list(running_children):
        with contextlib.suppress(Exception):
            child.kill()
    os._exit(1)


def run_main(main: Any) -> None:
    """Run ``main()`` (with the panel's lifeline watched); an unexpected exception becomes an
    error event and exit code 1."""
    protect_stdout()
    watch_lifeline()
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        error(f"{type(exc).__name__}: {exc}", kind="exception", detail=traceback.format_exc())
        sys.exit(1)
