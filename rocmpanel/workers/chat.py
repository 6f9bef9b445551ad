"""The chat worker: one persistent process that loads a model and streams replies.

Commands arrive as JSON lines on stdin: ``load``, ``generate``, ``stop``, ``unload``,
``exit``. A reader thread takes them off stdin, so ``stop`` is seen while a reply is being
generated; the main thread runs loads and generations one at a time (torch's CPU kernels
are much slower on any other thread). ``stop`` sets an event that a stopping criterion
checks after every token, so a reply ends within one token. Tokens are sent from the
streamer inside ``generate``; the first at once, then at screen rate.

Hub access is off (``HF_HUB_OFFLINE=1`` before transformers is imported) unless the worker
was started with ``--allow-hub``; remote code is refused unless a load asks for it; only
safetensors weights are loaded.

The parts live in private siblings: ``_chat_load`` (loading), ``_chat_generate`` (one
reply), ``_chat_stream`` (per-token text) and ``_chat_common`` (failures, memory).
"""

from __future__ import annotations

import gc
import json
import os
import queue
import sys
import threading
import traceback

import _wire

ALLOW_HUB = "--allow-hub" in sys.argv[1:]
if not ALLOW_HUB:
    # Read at import by huggingface_hub: must be set before transformers is imported.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# The siblings import torch and transformers only inside their functions, never at import.
import _chat_generate  # noqa: E402
import _chat_load  # noqa: E402
from _chat_common import WorkerFailure, _is_oom  # noqa: E402

OOM_SUGGESTION = (
    "Reload with a smaller precision (4-bit NF4), a shorter context length, or fewer new tokens."
)


class Engine:
    """Holds the model; every method runs on the main thread (see ``_chat_generate``)."""

    def __init__(self) -> None:
        self.model = None
        self.tokenizer = None
        self.device = "cpu"
        self.precision = None
        self.context_length = 0
        self.path = None
        self.torch = None

    def load(self, cmd: dict) -> None:
        _chat_load.load(self, cmd)

    def unload(self, report: bool = True) -> None:
        had = self.model is not None
        self.model = self.tokenizer = None
        gc.collect()
        if self.torch is not None and self.device == "cuda":
            self.torch.cuda.empty_cache()
        if report:
            _wire.result({"kind": "unloaded", "had_model": had})

    def generate(self, cmd: dict) -> None:
        _chat_generate.generate(self, cmd)


class StopEvents:
    """The stop events of queued and running generations; ``stop`` sets them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: set[threading.Event] = set()

    def new(self) -> threading.Event:
        event = threading.Event()
        with self._lock:
            self._events.add(event)
        return event

    def done(self, event: threading.Event | None) -> None:
        with self._lock:
            self._events.discard(event)

    def stop_all(self) -> None:
        with self._lock:
            for event in self._events:
                event.set()


def engine_loop(engine: Engine, commands: queue.Queue, stops: StopEvents) -> None:
    while True:
        cmd = commands.get()
        if cmd is None:
            return
        op = cmd.get("op")
        try:
            if op == "load":
                engine.load(cmd)
            elif op == "generate":
                engine.generate(cmd)
            elif op == "unload":
                engine.unload()
        except WorkerFailure as exc:
            _wire.error(
                exc.message,
                kind=exc.kind,
                detail=exc.detail,
                op=op,
                id=cmd.get("id"),
                suggestion=OOM_SUGGESTION if exc.kind == "oom" else "",
            )
        except Exception as exc:
            kind = "oom" if _is_oom(exc) else op or "error"
            message = f"{type(exc).__name__}: {exc}"
            if kind == "oom":
                message = f"Out of memory during {op}: {exc}"
                engine.unload(report=False)
            _wire.error(
                message,
                kind=kind,
                detail=traceback.format_exc(),
                op=op,
                id=cmd.get("id"),
                suggestion=OOM_SUGGESTION if kind == "oom" else "",
            )
        finally:
            stops.done(cmd.get("_stop"))


def read_commands(commands: queue.Queue, stops: StopEvents) -> None:
    """The stdin reader (its own thread): queue work, act on ``stop`` at once."""
    try:
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            try:
                cmd = json.loads(line)
                op = cmd["op"]
            except (ValueError, KeyError, TypeError):
                _wire.error(f"Not a command: {line[:200]}", kind="bad_command")
                continue
            if op == "stop":
                stops.stop_all()
            elif op == "exit":
                break
            elif op == "generate":
                cmd["_stop"] = stops.new()
                commands.put(cmd)
            elif op in ("load", "unload"):
                commands.put(cmd)
            else:
                _wire.error(f"Unknown command {op!r}.", kind="bad_command")
    finally:
        # exit, or the panel went away (end of stdin): finish what runs, then leave.
        stops.stop_all()
        commands.put(None)


def main() -> None:
    stops = StopEvents()
    commands: queue.Queue = queue.Queue()
    reader = threading.Thread(
        target=read_commands, args=(commands, stops), name="stdin", daemon=True
    )
    reader.start()
    _wire.log(f"chat worker ready (pid {os.getpid()}, hub {'on' if ALLOW_HUB else 'off'})")
    # Loads and generations run on the main thread (see _chat_generate for why).
    engine_loop(Engine(), commands, stops)


if __name__ == "__main__":
    _wire.run_main(main)
