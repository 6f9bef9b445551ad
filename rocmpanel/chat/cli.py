"""``rocmpanel chat``: chat with a local model from the terminal, through the chat worker.

With ``--prompt`` it answers once and exits (``--json`` prints the reply and its figures);
without, it is a REPL: ``/new`` starts over, ``/exit`` (or Ctrl-D) quits, Ctrl-C stops a
reply. The model folder is checked and its memory need estimated before anything loads.
Every argument is checked first: an empty ``--model`` (which would mean the current folder),
a path that is not a folder, a number out of its declared range are refused with one
sentence and exit status 2, before any worker starts.
The chat itself is the same :class:`~rocmpanel.chat.session.ChatSession` the Chat tab uses;
the worker's events are handled on the main thread, in order.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import queue
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rocmpanel.base import cliargs
from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.settings import ChatSettings, option_of
from rocmpanel.jobs.gpu_choice import add_gpus_option, say_where

if TYPE_CHECKING:  # imported where used, so that `rocmpanel --help` stays quick
    from rocmpanel.chat.free_memory import Budget
    from rocmpanel.chat.memory_estimate import GpuRoom
    from rocmpanel.chat.protocol import LoadedModel, Reply, Sampling
    from rocmpanel.chat.session import ChatSession

LOAD_TIMEOUT_S = 1800.0
STOP_TIMEOUT_S = 60.0
# The Device enum's values, and "cuda" (torch's name for a GPU) as an alias Device.parse reads.
DEVICE_CHOICES = (*(d.value for d in Device), "cuda")


def declared(name: str, kind: type[int] | type[float]) -> Callable[[str], int | float]:
    """An argparse type that holds a value to the range ChatSettings declares for it."""
    opt = option_of(ChatSettings, name)
    low, high = opt.minimum, opt.maximum
    if kind is int:
        parse: Callable[[str], int | float] = cliargs.integer(
            None if low is None else int(low), None if high is None else int(high)
        )
    else:
        parse = cliargs.number(low, high)
    return parse


def bounds(name: str) -> str:
    """The range ChatSettings declares for ``name``, for a help text ("1..65536")."""
    opt = option_of(ChatSettings, name)
    low, high = (
        str(int(v)) if v is not None and float(v).is_integer() else f"{v}"
        for v in (opt.minimum, opt.maximum)
    )
    return f"{low}..{high}"


def model_folder(text: str) -> str:
    """``--model``: not empty (an empty path would silently mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "the model folder is empty; give the folder that holds config.json and the "
            "weights, such as --model ~/models/Llama-3.2-1B-Instruct"
        )
    return text


def model_path_problem(path: str) -> str | None:
    """Why ``path`` cannot be a model folder (missing, a file, a FIFO...), or None. Only
    ``stat`` is used: nothing is opened, so a FIFO cannot block it."""
    import os
    import stat

    expanded = os.path.expanduser(path)
    try:
        mode = os.stat(expanded).st_mode
    except FileNotFoundError:
        return f"there is no model folder at {path}: the path does not exist."
    except OSError as exc:
        return f"the model folder {path} cannot be read: {exc.strerror or exc}."
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        kind = "a FIFO (named pipe)"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    else:
        kind = "a file"
    return (
        f"{path} is {kind}, not a model folder; give the folder that holds config.json "
        "and the weights."
    )


def _prompt(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("the prompt is empty; give the text to answer")
    return text


DESCRIPTION = (
    "Load a local Hugging Face model folder (safetensors) in the workload Python and chat "
    "with it. With --prompt, answer once and exit; without, read prompts from the terminal "
    "(/new starts over, /exit or Ctrl-D ends). The reply goes to standard output, progress "
    "and figures to standard error."
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="chat with a local Hugging Face model (one-shot or interactive)",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "--model",
        required=True,
        type=model_folder,
        metavar="DIR",
        help="model folder: config.json, the *.safetensors weights and the tokenizer",
    )
    parser.add_argument(
        "--precision",
        choices=[p.value for p in Precision],
        default=None,
        help="weights in memory (default: nf4 on an AMD GPU, else bf16); on the CPU "
        "bf16/fp32 work, and nf4/int8 through bitsandbytes' CPU kernels",
    )
    parser.add_argument("--prompt", type=_prompt, default=None, help="answer this once and exit")
    parser.add_argument(
        "--max-new-tokens",
        type=declared("max_new_tokens", int),
        default=None,
        metavar="N",
        help=f"longest reply, in tokens ({bounds('max_new_tokens')}; default: from the settings)",
    )
    parser.add_argument(
        "--system", default=None, metavar="TEXT", help="system prompt (default: from the settings)"
    )
    parser.add_argument(
        "--temperature",
        type=declared("temperature", float),
        default=None,
        metavar="T",
        help=f"0: always the likeliest token; higher: more varied ({bounds('temperature')}; "
        "default: from the settings)",
    )
    parser.add_argument(
        "--top-p",
        type=declared("top_p", float),
        default=None,
        metavar="P",
        help="sample from the likeliest tokens that together reach P "
        f"({bounds('top_p')}; default: from the settings)",
    )
    parser.add_argument(
        "--seed",
        type=declared("seed", int),
        default=None,
        metavar="N",
        help="sampling seed (-1: a random one, the default)",
    )
    parser.add_argument(
        "--context",
        type=declared("context_length", int),
        default=None,
        metavar="TOKENS",
        help=f"context length in tokens ({bounds('context_length')}; default: from the settings)",
    )
    parser.add_argument(
        "--device",
        type=str.lower,
        choices=DEVICE_CHOICES,
        default=None,
        help="where the model runs (default: from the settings; cuda is the same as gpu)",
    )
    parser.add_argument(
        "--python",
        default=None,
        metavar="PATH",
        help="workload Python interpreter (default: the active one)",
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="run the model repository's own Python code (only for repositories you trust)",
    )
    parser.add_argument(
        "--allow-hub", action="store_true", help="let transformers reach the Hugging Face hub"
    )
    parser.add_argument("--json", action="store_true", help="print the reply and figures as JSON")
    add_gpus_option(parser)
    parser.set_defaults(func=run)


class WorkerEvents:
    """The worker job and a queue of everything it says (filled on its reader threads,
    read on the main thread, so the session is only ever touched there)."""

    def __init__(self, args: argparse.Namespace, python: str) -> None:
        from rocmpanel.chat.protocol import ALLOW_HUB_ARG, WORKER
        from rocmpanel.jobs.job_env import with_job_env
        from rocmpanel.jobs.process import JobProcess
        from rocmpanel.jobs.spec import JobSpec, prepare

        self.events: queue.Queue[Any] = queue.Queue()
        spec = JobSpec(
            "chat",
            WORKER,
            args=(ALLOW_HUB_ARG,) if args.allow_hub else (),
            python=python,
            interactive=True,
            gpus=getattr(args, "gpus", None),
        )
        launched = with_job_env(spec)
        say_where(launched.env, f"rocmpanel {getattr(args, 'command', None) or 'chat'}")
        self.job = JobProcess(prepare(launched), self.events.put, self.events.put)

    def next(self, deadline: float) -> Any:
        """The next event or exit outcome; None once ``deadline`` (monotonic) has passed."""
        try:
            return self.events.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None


def _fail(args: argparse.Namespace, kind: str, message: str, code: int) -> int:
    """A failure: one sentence on standard error, or with ``--json`` one object on standard
    output, shaped as ``env --json`` and ``data --json`` report theirs (``ok`` false,
    ``error`` the sentence) plus ``kind``: "model" (the folder), "start" (the worker did
    not start), "load" or "reply" (it failed then)."""
    if args.json:
        print(json.dumps({"ok": False, "kind": kind, "error": message}))
    else:
        print(f"rocmpanel chat: {message}", file=sys.stderr)
    return code


class Stopped(Exception):
    """The worker failed or went away: the message to print."""


def precheck(
    args: argparse.Namespace, device: Device, precision: Precision, context: int, budget: Budget
) -> tuple[bool, str]:
    """Check the folder and warn when the estimate says it will not fit."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.chat.memory_estimate import Fit, estimate_for, judge_fit
    from rocmpanel.chat.model_check import check_model

    try:
        check = check_model(args.model, trust_remote_code=args.trust_remote_code)
    except PanelError as exc:
        return False, exc.message
    if not check.ok:  # the failure comes alone: warnings about a folder that cannot load
        return False, " ".join(check.problems)
    for warning in check.warnings:
        print(f"rocmpanel chat: warning: {warning}", file=sys.stderr)
    estimate = estimate_for(check, precision, context, device=device)
    if estimate is not None:
        rooms = chosen_rooms(getattr(args, "gpus", None)) if device is Device.GPU else []
        if rooms:  # every chosen GPU: a model one cannot hold may be spread over several
            verdict = judge_fit(estimate, device, rooms[0].free, total=rooms[0].total, gpus=rooms)
        else:
            verdict = judge_fit(estimate, device, budget.free, total=budget.total)
        if verdict.fit is Fit.WONT_FIT:
            print(f"rocmpanel chat: warning: {verdict.message}", file=sys.stderr)
    return True, ""


def chosen_rooms(gpus: tuple[str, ...] | None) -> list[GpuRoom]:
    """The GPUs a chat job gets (``gpus``: PCI addresses; None: the saved choice), as the
    job numbers them, with the free VRAM sysfs reports (blocking: a command's check)."""
    from rocmpanel.chat.free_memory import read_amd_vram
    from rocmpanel.chat.memory_estimate import rooms_for
    from rocmpanel.jobs.gpu_choice import resolve
    from rocmpanel.machine.gpu_model import GpuInfo

    readings = {r.bdf: r for r in read_amd_vram() if r.bdf}

    def memory_of(gpu: GpuInfo) -> tuple[int | None, int | None]:
        reading = readings.get(gpu.bdf or "")
        return (reading.free, reading.total) if reading is not None else (None, gpu.vram_bytes)

    return rooms_for(resolve(gpus).gpus, memory_of)


def run(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.chat.free_memory import detected_gpu_budget, ram_budget
    from rocmpanel.chat.memory_estimate import default_precision, estimate_device
    from rocmpanel.chat.protocol import LoadRequest, Sampling
    from rocmpanel.chat.session import ChatSession
    from rocmpanel.machine.inventory import detect_inventory

    problem = model_path_problem(args.model)
    if problem is not None:
        return _fail(args, "model", problem, 2)
    settings = Settings.load()
    device = Device.parse(args.device) if args.device else settings.chat.device
    # A CLI may detect the machine itself (it has no GUI thread); the card and the default
    # precision are then chosen as the Chat tab chooses them from the app's inventory.
    inventory = detect_inventory()
    gpu = detected_gpu_budget(inventory=inventory)
    has_amd_gpu = inventory.has_amd_gpu
    precision = Precision(args.precision) if args.precision else None
    precision = precision or default_precision(device, has_amd_gpu)
    context = args.context or settings.chat.context_length
    where = estimate_device(device, has_amd_gpu)
    budget = gpu if where is Device.GPU else ram_budget()
    ok, why = precheck(args, where, precision, context, budget)
    if not ok:
        return _fail(args, "model", why, 2)
    python = args.python if args.python is not None else settings.general.workload_python
    try:
        worker = WorkerEvents(args, python)
        worker.job.start()
    except PanelError as exc:
        return _fail(args, "start", exc.message, 2)
    session = ChatSession(gui=False)
    session.use_worker(worker.job, args.allow_hub)
    stream = not args.json
    stage = "load"
    try:
        load = LoadRequest(
            path=args.model,
            precision=precision,
            device=device,
            context_length=context,
            trust_remote_code=args.trust_remote_code,
        )
        session.load(load)
        loaded, loaded_data = wait_for_load(session, worker, stream)
        stage = "reply"
        if stream:
            spread = loaded.placement_text()  # a model spread over several GPUs says how
            print(
                f"Loaded {loaded.path} ({loaded.precision.value} on {loaded.device_name}) "
                f"in {loaded.load_s} s." + (f" {spread}." if spread else ""),
                file=sys.stderr,
            )
        changes: dict[str, Any] = {}
        if args.temperature is not None:
            changes["temperature"] = args.temperature
        if args.top_p is not None:
            changes["top_p"] = args.top_p
        if args.max_new_tokens:
            changes["max_new_tokens"] = args.max_new_tokens
        if args.seed is not None:
            changes["seed"] = args.seed
        sampling = Sampling.from_settings(settings.chat, **changes)
        system = args.system if args.system is not None else settings.chat.system_prompt
        _converse(args, session, worker, system, sampling, loaded_data)
    except Stopped as exc:
        if worker.job.running:
            worker.job.cancel()
        return _fail(args, stage, str(exc), 1)
    except PanelError as exc:
        return _fail(args, stage, exc.message, 1)
    except KeyboardInterrupt:
        pass
    finally:
        if worker.job.running:
            with contextlib.suppress(PanelError):  # it may go between the check and the send
                worker.job.send("exit")
            if worker.job.wait(10) is None:
                worker.job.cancel()
    return 0


def _handle(session: ChatSession, worker: WorkerEvents, event: Any, stream: bool) -> Any:
    """Feed one worker event to the session; what it means for the CLI (or None)."""
    from rocmpanel.jobs.process import JobOutcome
    from rocmpanel.jobs.protocol import Progress, ReplyDone, Result, Token, WorkerError

    if event is None:
        raise Stopped("no answer in time")
    if isinstance(event, Token):
        streamed = session.on_tokens([event])
        if streamed is not None and stream:
            sys.stdout.write(streamed.text)
            sys.stdout.flush()
        return None
    if isinstance(event, Progress):
        if stream and event.step:
            print(f"… {event.step}", file=sys.stderr)
        return None
    if isinstance(event, ReplyDone):
        return session.on_reply(event)
    if isinstance(event, Result):
        return session.on_result(event)
    if isinstance(event, WorkerError):
        raise Stopped(session.on_error(event).message)
    if isinstance(event, JobOutcome):
        failure = session.on_worker_exit(worker.job, event)
        raise Stopped(failure.message if failure is not None else str(event))
    return None  # log lines and the rest


def wait_for_load(
    session: ChatSession, worker: WorkerEvents, stream: bool
) -> tuple[LoadedModel, Mapping[str, Any]]:
    """The loaded model, and the worker's whole report of it (``--json`` prints that)."""
    from rocmpanel.chat.protocol import LoadedModel
    from rocmpanel.jobs.protocol import Result

    deadline = time.monotonic() + LOAD_TIMEOUT_S
    while True:
        event = worker.next(deadline)
        loaded = _handle(session, worker, event, stream)
        if isinstance(loaded, LoadedModel) and isinstance(event, Result):
            return loaded, event.data


def _wait_for_reply(session: ChatSession, worker: WorkerEvents, stream: bool) -> Reply:
    from rocmpanel.chat.protocol import Reply
    from rocmpanel.jobs.lifetime import Interrupted

    deadline = time.monotonic() + LOAD_TIMEOUT_S
    while True:
        try:
            reply = _handle(session, worker, worker.next(deadline), stream)
        except KeyboardInterrupt as exc:
            if isinstance(exc, Interrupted):  # SIGTERM or SIGHUP: the chat ends
                raise
            if session.stop():  # Ctrl-C ends the reply; a second one ends the chat
                deadline = time.monotonic() + STOP_TIMEOUT_S
                continue
            raise
        if isinstance(reply, Reply):
            return reply


def _converse(
    args: argparse.Namespace,
    session: ChatSession,
    worker: WorkerEvents,
    system: str,
    sampling: Sampling,
    loaded_data: Mapping[str, Any],
) -> None:
    stream = not args.json
    one_shot = args.prompt is not None
    while True:
        if one_shot:
            prompt = args.prompt
        else:
            try:
                prompt = input("\n> ")
            except EOFError:
                return
            if prompt.strip() == "/exit":
                return
            if prompt.strip() == "/new":
                session.new_conversation()
                continue
            if not prompt.strip():
                continue
        session.add_user_message(prompt)
        session.start_reply(system, sampling)
        reply = _wait_for_reply(session, worker, stream)
        if args.json:
            print(
                json.dumps(
                    {
                        "reply": reply.text,
                        "finish": reply.finish,
                        "model": dict(loaded_data),
                        "figures": reply.figures.as_dict(),
                    }
                )
            )
        else:
            # The reply streamed without a final newline; end its line on standard output,
            # so a one-shot reply is a complete line for whatever reads it.
            if not reply.text.endswith("\n"):
                sys.stdout.write("\n")
                sys.stdout.flush()
            # The preset the model runs under ends the line, so two runs can be compared.
            loaded = session.loaded  # parsed once from the worker's "loaded" event
            preset = (loaded.preset if loaded is not None else None) or "none"
            print(f"[{reply.figures.summary()} · preset: {preset}]", file=sys.stderr)
        if one_shot:
            return
