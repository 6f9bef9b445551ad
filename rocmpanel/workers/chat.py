"""The chat worker: one persistent process that loads a model and streams replies.

Commands arrive as JSON lines on stdin: ``load``, ``generate``, ``stop``, ``unload``,
``serve``, ``serve_stop``, ``exit``. A reader thread takes them off stdin, so ``stop`` is
seen while a reply is being generated; the main thread runs loads and generations one at
a time (torch's CPU kernels are much slower on any other thread). ``stop`` sets an event
that a stopping criterion checks after every token, so a reply ends within one token.
Tokens are sent from the streamer inside ``generate``, each event with the request id it
answers; the end of a reply is a ``reply`` event with its text and figures.

``serve`` puts the loaded model behind an OpenAI-compatible HTTP server (FastAPI and
uvicorn on a thread, imported only then); its requests queue for the main thread beside
the chat's commands, each with a stop event of its own, so the chat's ``stop`` never ends
them; ``serve_stop``, ``unload``, a new ``load`` and ``exit`` stop the server first.

Hub access is off (``HF_HUB_OFFLINE=1`` before transformers is imported) unless the worker
was started with ``--allow-hub``; remote code is refused unless a load asks for it; only
safetensors weights are loaded.

The parts live in private siblings, by responsibility: ``_chat_loop`` (commands in,
events out), ``_chat_requests`` (commands as typed records), ``_chat_engine`` (the model
and what it does), ``_chat_load`` (loading), ``_chat_generate`` (one reply),
``_chat_stream`` (text out of generate), ``_chat_errors`` and ``_chat_memory``; the server
in ``_serve_front`` (start, stop, jobs), ``_serve_http`` (the app), ``_serve_guards``
(key, body cap, CORS, accounting), ``_serve_bridge`` (between the HTTP thread and the main
thread), ``_serve_api`` (OpenAI's requests, read and checked) and ``_serve_shapes`` (its
replies).
"""

from __future__ import annotations

import os
import queue
import sys
import threading

import _wire

ALLOW_HUB = "--allow-hub" in sys.argv[1:]
if not ALLOW_HUB:
    # Read at import by huggingface_hub: must be set before transformers is imported.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# The siblings import torch and transformers only inside their functions, never at import.
from _chat_engine import ChatEngine  # noqa: E402
from _chat_loop import Queued, StopEvents, read_commands, serve  # noqa: E402
from _serve_front import ServeControl  # noqa: E402


def main() -> None:
    stops = StopEvents()
    commands: queue.Queue[Queued | None] = queue.Queue()
    control = ServeControl(commands)
    reader = threading.Thread(
        target=read_commands,
        args=(sys.stdin, commands, stops, control),
        name="stdin",
        daemon=True,
    )
    reader.start()
    _wire.log(f"chat worker ready (pid {os.getpid()}, hub {'on' if ALLOW_HUB else 'off'})")
    # Loads and generations run on the main thread (see ChatEngine.generate for why).
    code = serve(ChatEngine(), commands, stops, control)
    if code:
        sys.exit(code)  # a failed load: its error event was sent


if __name__ == "__main__":
    _wire.run_main(main)
