"""``rocmpanel serve``: load a model in the chat worker and serve it over an OpenAI-compatible
HTTP API, until Ctrl+C (or SIGTERM).

Everything is checked before the model loads (minutes, for a large one): the arguments
(exit status 2 with one sentence, the same checks as ``rocmpanel chat``), the API key, the
port, and fastapi and uvicorn in the workload Python. Then the worker loads the model
(progress on standard error), serves it (op ``serve``: the key travels on the worker's
stdin, never on a command line), and this command prints the URL, the key (masked unless
``--show-key``), an example request and one line per finished HTTP request. Ctrl+C or
SIGTERM asks the worker to stop serving, then to exit; it is killed if it does not within
a grace period. ``--vllm`` prints the equivalent vLLM-on-ROCm command and loads nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import socket
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rocmpanel.base import cliargs
from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.frozen import own_python
from rocmpanel.chat.cli import DEVICE_CHOICES, bounds, declared, model_folder
from rocmpanel.jobs.gpu_choice import add_gpus_option

if TYPE_CHECKING:
    from rocmpanel.base.api_key import ApiKey
    from rocmpanel.chat.cli import WorkerEvents
    from rocmpanel.chat.serve_protocol import Served, Serving

PROG = "rocmpanel serve"
KEY_VARIABLE = "ROCMPANEL_API_KEY"  # a key given this way stays out of `ps`
SERVE_TIMEOUT_S = 120.0  # from the serve command to the server listening
STOP_GRACE_S = 15.0  # for serve_stop, then again for the worker to exit, before a kill
POLL_S = 0.25

DESCRIPTION = (
    "Load a local Hugging Face model folder in the workload Python and serve it over an "
    "OpenAI-compatible HTTP API (/v1/models, /v1/chat/completions, /v1/completions) on "
    "127.0.0.1, with an API key made on first use and kept in rocmpanel's config folder. "
    "Ctrl+C stops the server and frees the model's memory. With --vllm, print the "
    "equivalent vLLM-on-ROCm command (several GPUs) instead."
)


def _api_key(text: str) -> str:
    from rocmpanel.base.api_key import key_problem

    problem = key_problem(text.strip())
    if problem is not None:
        raise argparse.ArgumentTypeError(f"this API key cannot be used: {problem}")
    return text.strip()


def _host(text: str) -> str:
    if not text.strip() or any(c.isspace() or c in "/?#@" for c in text.strip()):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an address to listen on; give one such as 127.0.0.1 or ::1"
        )
    return text.strip()


def _origin(text: str) -> str:
    """``--cors-origin``: scheme://host[:port], no path, no wildcard (each origin named)."""
    from urllib.parse import urlsplit

    value = text.strip().rstrip("/")
    parts = urlsplit(value)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path
        or parts.query
        or parts.fragment
        or "*" in value
    ):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an origin; give scheme, host and port only, such as "
            "http://localhost:3000 (one --cors-origin per origin, no wildcard)"
        )
    return value


def _options() -> list[tuple[str, dict[str, Any]]]:
    """Each option and its argparse settings (help included: every option has one)."""
    ctx = bounds("context_length")
    return [
        ("--model", {"required": True, "type": model_folder, "metavar": "DIR",
            "help": "model folder: config.json, the *.safetensors weights and the tokenizer"}),
        ("--precision", {"choices": [p.value for p in Precision], "default": None,
            "help": "weights in memory (default: nf4 on an AMD GPU, else bf16)"}),
        ("--device", {"type": str.lower, "choices": DEVICE_CHOICES, "default": None,
            "help": "where the model runs (default: from the settings; cuda = gpu)"}),
        ("--context", {"type": declared("context_length", int), "default": None,
            "metavar": "TOKENS", "help": f"context length in tokens ({ctx}; default: from "
            "the settings); longer prompts get a 400"}),
        ("--port", {"type": cliargs.integer(0, 65535), "default": 8000, "metavar": "N",
            "help": "TCP port (default 8000; 0: any free port, printed when serving)"}),
        ("--host", {"type": _host, "default": "127.0.0.1", "metavar": "ADDRESS",
            "help": "address to listen on (default 127.0.0.1: this machine only); another "
            "lets anyone who can reach it and has the key use the model, over plain HTTP"}),
        ("--api-key", {"type": _api_key, "default": None, "metavar": "KEY",
            "help": "the key clients must send (16 characters or more; default: the stored "
            "one, made on first use); other users can read a command line: prefer the "
            f"{KEY_VARIABLE} environment variable"}),
        ("--cors-origin", {"type": _origin, "action": "append", "default": [],
            "metavar": "ORIGIN", "help": "let web pages from this origin call the API "
            "(repeat for more; default: none)"}),
        ("--max-queue", {"type": cliargs.integer(1, 1024), "default": 16, "metavar": "N",
            "help": "requests that may wait for the model; one more gets 429 (default 16)"}),
        ("--timeout", {"type": cliargs.number(1, 86400), "default": 300.0,
            "metavar": "SECONDS", "help": "longest a request may wait and run (default 300)"}),
        ("--vllm", {"action": "store_true",
            "help": "print the equivalent vLLM-on-ROCm command (several GPUs) and exit"}),
        ("--show-key", {"action": "store_true",
            "help": "print the whole API key, not a masked one"}),
        ("--new-key", {"action": "store_true",
            "help": "replace the stored API key with a new one (the old one is backed up)"}),
        ("--python", {"default": None, "metavar": "PATH",
            "help": "workload Python interpreter (default: the one in the settings)"}),
        ("--trust-remote-code", {"action": "store_true",
            "help": "run the model repository's own Python code (only repositories you trust)"}),
    ]  # fmt: skip


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve a local model over an OpenAI-compatible HTTP API",
        description=DESCRIPTION,
    )
    for name, settings in _options():
        parser.add_argument(name, **settings)
    add_gpus_option(parser)  # the server's model, and --vllm's tensor parallel, use them
    parser.set_defaults(func=run, allow_hub=False, json=False)


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return code


def _port_problem(host: str, port: int) -> str | None:
    """Why the worker could not listen on ``host``:``port`` (checked before a long load; the
    worker checks again when it binds)."""
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        if os.name == "posix":  # as the worker binds: a port in TIME_WAIT is free
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            if exc.errno in (98, 48, 10048):  # EADDRINUSE on Linux, macOS, Windows
                return (
                    f"port {port} on {host} is already in use by another program: choose "
                    "another with --port (--port 0 picks a free one)."
                )
            return f"cannot listen on {host}:{port} ({exc.strerror or exc})."
    return None


def _the_key(args: argparse.Namespace) -> tuple[str, str]:
    """(the key, where it comes from, for the status line); PanelError when the stored key
    cannot be read or made."""
    from rocmpanel.base.api_key import key_problem, load_or_create, regenerate

    if args.api_key is not None:
        return args.api_key, "given with --api-key"
    from_env = os.environ.get(KEY_VARIABLE, "").strip()
    if from_env and not args.new_key:
        problem = key_problem(from_env)
        if problem is not None:
            from rocmpanel.base.errors import PanelError

            raise PanelError(f"{KEY_VARIABLE} cannot be used as the API key: {problem}.")
        return from_env, f"from {KEY_VARIABLE}"
    stored: ApiKey = regenerate() if args.new_key else load_or_create()
    if stored.note:
        print(f"{PROG}: {stored.note}", file=sys.stderr)
    made = "new, " if stored.created else ""
    return stored.value, f"{made}stored in {stored.path}"


def _print_vllm(args: argparse.Namespace) -> int:
    from rocmpanel.chat.vllm import command_lines, for_this_machine

    command = for_this_machine(
        args.model, port=args.port or 8000, host=args.host, gpus=getattr(args, "gpus", None)
    )
    if args.port == 0:
        print(f"{PROG}: --port 0 (any free port) is rocmpanel's; vLLM's line uses 8000.",
              file=sys.stderr)  # fmt: skip
    print("\n".join(command_lines(command)))
    return 0


class _StopServing(KeyboardInterrupt):
    """Ctrl+C or SIGTERM while serving: stop the server, then the worker, and exit 0."""


@contextlib.contextmanager
def _stop_on_signals(worker: WorkerEvents) -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise :class:`_StopServing` once; a second one kills the
    worker's process group at once (the command then exits without waiting)."""
    from rocmpanel.jobs import lifetime

    asked: list[int] = []

    def handle(signum: int, _frame: Any) -> None:
        if asked:
            worker.job.kill_group()
            return
        asked.append(signum)
        raise _StopServing(signum)

    previous: dict[int, Any] = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None and (lifetime.ENABLED or name == "SIGINT"):
            with contextlib.suppress(OSError, ValueError):
                previous[signum] = signal.signal(signum, handle)
    try:
        yield
    finally:
        lifetime.restore_handlers(previous)


def run(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.chat.cli import model_path_problem

    problem = model_path_problem(args.model)
    if problem is not None:
        return _fail(problem, 2)
    if args.vllm:
        return _print_vllm(args)
    port_problem = _port_problem(args.host, args.port)
    if port_problem is not None:
        return _fail(port_problem, 1)
    try:  # after the port check: a refused run must not have replaced the key (--new-key)
        key, key_source = _the_key(args)
    except PanelError as exc:
        return _fail(exc.message, 1)
    from rocmpanel.chat.serve_protocol import is_loopback

    if not is_loopback(args.host):
        print(
            f"{PROG}: warning: listening on {args.host}: anyone who can reach this machine "
            "there and has the key can use the model, and requests travel as plain HTTP "
            "(no TLS): use it only on a network you trust.",
            file=sys.stderr,
        )
    return _load_and_serve(args, key, key_source)


def _load_and_serve(args: argparse.Namespace, key: str, key_source: str) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.chat.cli import Stopped, WorkerEvents, precheck, wait_for_load
    from rocmpanel.chat.free_memory import detected_gpu_budget, ram_budget
    from rocmpanel.chat.memory_estimate import default_precision, estimate_device
    from rocmpanel.chat.protocol import LoadRequest
    from rocmpanel.chat.session import ChatSession
    from rocmpanel.machine.inventory import detect_inventory

    settings = Settings.load()
    device = Device.parse(args.device) if args.device else settings.chat.device
    inventory = detect_inventory()
    precision = Precision(args.precision) if args.precision else None
    precision = precision or default_precision(device, inventory.has_amd_gpu)
    context = args.context or settings.chat.context_length
    where = estimate_device(device, inventory.has_amd_gpu)
    budget = detected_gpu_budget(inventory=inventory) if where is Device.GPU else ram_budget()
    ok, why = precheck(args, where, precision, context, budget)
    if not ok:
        return _fail(why, 2)
    python = args.python if args.python is not None else settings.general.workload_python
    missing = _missing_packages(python, precision, where)
    if missing:
        return _fail(missing, 1)
    try:
        worker = WorkerEvents(args, python)
        worker.job.start()
    except PanelError as exc:
        return _fail(exc.message, 2)
    session = ChatSession(gui=False)
    session.use_worker(worker.job, False)
    loading = True
    try:
        with _stop_on_signals(worker):
            try:
                load = LoadRequest(args.model, precision, device, context, args.trust_remote_code)
                session.load(load)
                loaded, _data = wait_for_load(session, worker, True)
                loading = False
                print(
                    f"Loaded {loaded.path} ({loaded.precision.value} on {loaded.device_name}) "
                    f"in {loaded.load_s} s.",
                    file=sys.stderr,
                )
                serving = _start_serving(args, worker, key)
                _announce(serving, key, key_source, args.show_key)
                _report_requests(worker)
            except _StopServing:
                if loading:  # nothing served yet: no need to wait for the load to end
                    print("Stopped while the model was loading.", file=sys.stderr, flush=True)
                    worker.job.cancel()
                    worker.job.wait(STOP_GRACE_S)
                    return 0
                return _stop(worker)
    except Stopped as exc:
        return _fail(str(exc), 1)
    except PanelError as exc:
        return _fail(exc.message, 1)
    finally:
        _end_worker(worker)
    return 0


def _missing_packages(python: str, precision: Precision, where: Device) -> str:
    """All that loading and serving lack in the workload Python, in one message with the
    fix ("" when nothing, or when it cannot be told: the worker then says it)."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.chat.installed import read_installed
    from rocmpanel.chat.requirements import describe_missing, missing_for, missing_for_serve

    try:
        installed = read_installed(python)
    except PanelError:
        return ""
    missing = missing_for(installed.versions, precision, where)
    missing += missing_for_serve(installed.versions)
    if not missing:
        return ""
    shown = python or own_python()
    return f"the workload Python ({shown}) cannot serve yet. " + describe_missing(
        missing, gui=False, python=shown
    )


def _start_serving(args: argparse.Namespace, worker: WorkerEvents, key: str) -> Serving:
    """Send the serve command and wait for the server to listen; Stopped with the reason
    when it does not."""
    from rocmpanel.chat.cli import Stopped
    from rocmpanel.chat.serve_protocol import ServeRequest, Serving
    from rocmpanel.jobs.process import JobOutcome
    from rocmpanel.jobs.protocol import Result, WorkerError

    request = ServeRequest(
        api_key=key,
        host=args.host,
        port=args.port,
        cors_origins=tuple(args.cors_origin),
        max_queue=args.max_queue,
        request_timeout_s=float(args.timeout),
    )
    worker.job.send(request.op, **request.fields())
    deadline = time.monotonic() + SERVE_TIMEOUT_S
    while True:
        event = worker.next(deadline)
        if event is None:
            raise Stopped(f"the server did not start within {SERVE_TIMEOUT_S:g} s.")
        if isinstance(event, Result) and event.data.get("kind") == "serving":
            return Serving.from_result(event.data)
        if isinstance(event, WorkerError):  # its own words: port_in_use, missing_package...
            raise Stopped(event.message)
        if isinstance(event, JobOutcome):
            raise Stopped(f"the chat worker stopped: {event}")


def _announce(serving: Serving, key: str, key_source: str, show_key: bool) -> None:
    from rocmpanel.base.api_key import mask

    base = f"{serving.url}/v1"
    print(
        f"Serving {serving.model_id} at {base} (context {serving.context_length} tokens, "
        f"up to {serving.max_queue} requests waiting)."
    )
    print(f"API key: {key if show_key else mask(key)} ({key_source}).")
    if "stored in " in key_source and not show_key:
        path = shlex.quote(key_source.split("stored in ", 1)[1])
        print(f'Put it in {KEY_VARIABLE} for the example: export {KEY_VARIABLE}="$(cat {path})"')
    body = (
        f'{{"model": "{serving.model_id}", "messages": [{{"role": "user", "content": "Hello"}}]}}'
    )
    print(
        f'Example: curl {base}/chat/completions -H "Authorization: Bearer ${KEY_VARIABLE}" '
        f"-H \"Content-Type: application/json\" -d '{body}'"
    )
    print("Press Ctrl+C to stop.", flush=True)


def served_line(served: Served) -> str:
    """One finished request: time, method and path, status, tokens, latency, speed."""
    parts = [
        time.strftime("%H:%M:%S", time.localtime(served.at)),
        f"{served.method} {served.path}",
        str(served.status),
        f"{served.prompt_tokens}+{served.completion_tokens} tokens",
        "-" if served.latency_s is None else f"{served.latency_s:.2f} s",
    ]
    if served.tokens_per_s is not None:
        parts.append(f"{served.tokens_per_s:.1f} tok/s")
    if served.disconnected:
        parts.append("(client went away)")
    elif served.error:
        parts.append(f"({served.error})")
    return " ".join(parts)


def _report_requests(worker: WorkerEvents) -> None:
    """Print each finished request until the worker stops (Stopped) or a signal comes."""
    from rocmpanel.chat.cli import Stopped
    from rocmpanel.chat.serve_protocol import Served, ServeStopped, read_serve_result
    from rocmpanel.jobs.process import JobOutcome
    from rocmpanel.jobs.protocol import Result, WorkerError

    while True:
        event = worker.next(time.monotonic() + POLL_S)
        if isinstance(event, Result):
            serve_event = read_serve_result(event)
            if isinstance(serve_event, Served):
                print(served_line(serve_event), flush=True)
            elif isinstance(serve_event, ServeStopped):
                raise Stopped(f"the server stopped ({serve_event.reason}).")
        elif isinstance(event, WorkerError):
            print(f"{PROG}: {event.message}", file=sys.stderr)
        elif isinstance(event, JobOutcome):
            raise Stopped(f"the chat worker stopped: {event}")


def _stop(worker: WorkerEvents) -> int:
    """Stop serving (in-flight requests end), then let the worker exit: 0."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.chat.serve_protocol import Served, ServeStopped, read_serve_result
    from rocmpanel.jobs.process import JobOutcome
    from rocmpanel.jobs.protocol import Result

    print("Stopping the server…", file=sys.stderr, flush=True)
    served = 0
    with contextlib.suppress(PanelError):
        worker.job.send("serve_stop")
        deadline = time.monotonic() + STOP_GRACE_S
        while worker.job.running:
            event = worker.next(deadline)
            if event is None or isinstance(event, JobOutcome):
                break
            serve_event = read_serve_result(event) if isinstance(event, Result) else None
            if isinstance(serve_event, Served):
                print(served_line(serve_event), flush=True)
            elif isinstance(serve_event, ServeStopped):
                served = serve_event.served_requests
                break
    _end_worker(worker)
    print(f"Server stopped ({served} request{'s' if served != 1 else ''} served).", flush=True)
    return 0


def _end_worker(worker: WorkerEvents) -> None:
    """Ask the worker to exit; kill it when it does not within the grace period."""
    from rocmpanel.base.errors import PanelError

    if not worker.job.running:
        return
    with contextlib.suppress(PanelError):
        worker.job.send("exit")
    if worker.job.wait(STOP_GRACE_S) is None:
        worker.job.cancel()
        worker.job.wait(STOP_GRACE_S)
