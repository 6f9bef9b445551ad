"""``rocmpanel chat``: chat with a local model from the terminal, through the chat worker.

With ``--prompt`` it answers once and exits (``--json`` prints the reply and its figures);
without, it is a REPL: ``/new`` starts over, ``/exit`` (or Ctrl-D) quits, Ctrl-C stops a
reply. The model folder is checked and its memory need estimated before anything loads.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import queue
import sys
from typing import Any

PRECISION_CHOICES = ("nf4", "int8", "fp16", "bf16", "fp32")
LOAD_TIMEOUT_S = 1800.0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "chat", help="chat with a local Hugging Face model (one-shot or interactive)"
    )
    parser.add_argument("--model", required=True, metavar="DIR", help="model folder")
    parser.add_argument(
        "--precision",
        choices=PRECISION_CHOICES,
        default=None,
        help="weights in memory (default: nf4 on an AMD GPU, else bf16); on the CPU "
        "bf16/fp32 work, and nf4/int8 through bitsandbytes' CPU kernels",
    )
    parser.add_argument("--prompt", default=None, help="answer this once and exit")
    parser.add_argument("--max-new-tokens", type=int, default=None, metavar="N")
    parser.add_argument("--system", default=None, help="system prompt")
    parser.add_argument("--temperature", type=float, default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--context", type=int, default=None, help="context length in tokens")
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default=None)
    parser.add_argument("--python", default=None, help="workload interpreter (default: setting)")
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="run the model repository's own Python code (only for repositories you trust)",
    )
    parser.add_argument(
        "--allow-hub", action="store_true", help="let transformers reach the Hugging Face hub"
    )
    parser.add_argument("--json", action="store_true", help="print the reply and figures as JSON")
    parser.set_defaults(func=run)


class _Session:
    """The worker job and a queue of what it said (filled on the reader thread)."""

    def __init__(self, args: argparse.Namespace, python: str, stream: bool) -> None:
        from rocmpanel.chat.protocol import ALLOW_HUB_ARG, WORKER
        from rocmpanel.jobs.job_env import with_job_env
        from rocmpanel.jobs.process import JobProcess
        from rocmpanel.jobs.protocol import Progress, Result, Token, WorkerError
        from rocmpanel.jobs.spec import JobSpec, prepare

        self.events: queue.Queue[Any] = queue.Queue()
        self.stream = stream
        self._types = (Progress, Result, Token, WorkerError)
        spec = JobSpec(
            "chat",
            WORKER,
            args=(ALLOW_HUB_ARG,) if args.allow_hub else (),
            python=python,
            interactive=True,
        )
        self.job = JobProcess(
            prepare(with_job_env(spec)), self._on_event, lambda o: self.events.put(o)
        )

    def _on_event(self, event: Any) -> None:
        Progress, Result, Token, WorkerError = self._types
        if isinstance(event, Token):
            if self.stream:
                sys.stdout.write(event.text)
                sys.stdout.flush()
        elif isinstance(event, Progress):
            if self.stream and event.step:
                print(f"… {event.step}", file=sys.stderr)
        elif isinstance(event, (Result, WorkerError)):
            self.events.put(event)

    def wait(self, timeout: float) -> Any:
        """The next result, error or exit outcome (None on timeout)."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None


def _precheck(
    args: argparse.Namespace, device: str, precision: Any, context: int
) -> tuple[bool, str]:
    """Check the folder and warn when the estimate says it will not fit."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.chat.memory_estimate import Fit, estimate_for, judge_device
    from rocmpanel.chat.model_check import check_model

    try:
        check = check_model(args.model, trust_remote_code=args.trust_remote_code)
    except PanelError as exc:
        return False, exc.message
    for warning in check.warnings:
        print(f"rocmpanel chat: warning: {warning}", file=sys.stderr)
    if not check.ok:
        return False, " ".join(check.problems)
    where = "cpu" if device == "cpu" else "gpu"
    estimate = estimate_for(check, precision, context, device=where)
    if estimate is not None:
        verdict = judge_device(estimate, where)
        if verdict.fit is Fit.WONT_FIT:
            print(f"rocmpanel chat: warning: {verdict.message}", file=sys.stderr)
    return True, ""


def run(args: argparse.Namespace) -> int:
    from rocmpanel.base.enums import Device
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.chat.memory_estimate import Precision, read_amd_vram
    from rocmpanel.chat.protocol import (
        GenerateRequest,
        LoadedModel,
        LoadRequest,
        Reply,
        Sampling,
    )
    from rocmpanel.jobs.protocol import Result, WorkerError

    settings = Settings.load()
    device = args.device or (
        "auto" if settings.chat.device is Device.AUTO else settings.chat.device.torch_name
    )
    precision = Precision(
        args.precision or ("nf4" if device != "cpu" and read_amd_vram() else "bf16")
    )
    context = args.context or settings.chat.context_length
    ok, why = _precheck(args, device, precision, context)
    if not ok:
        print(f"rocmpanel chat: {why}", file=sys.stderr)
        return 2
    python = args.python if args.python is not None else settings.general.workload_python
    one_shot = args.prompt is not None
    session = _Session(args, python, stream=not args.json)
    try:
        session.job.start()
    except PanelError as exc:
        print(f"rocmpanel chat: {exc.message}", file=sys.stderr)
        return 2

    def fail(message: str) -> int:
        print(f"rocmpanel chat: {message}", file=sys.stderr)
        if session.job.running:
            session.job.cancel()
        return 1

    def answer(event: Any) -> Any:
        if isinstance(event, WorkerError):
            suggestion = event.data.get("suggestion")
            return fail(event.message + (f" {suggestion}" if suggestion else ""))
        if not isinstance(event, Result):
            return fail(f"the chat worker stopped: {event}" if event else "no answer in time")
        return event.data

    load = LoadRequest(
        path=args.model,
        precision=precision,
        device=device,
        context_length=context,
        trust_remote_code=args.trust_remote_code,
    )
    session.job.send(load.op, **load.fields())
    loaded = answer(session.wait(LOAD_TIMEOUT_S))
    if isinstance(loaded, int):
        return loaded
    info = LoadedModel.from_dict(loaded)
    if not args.json:
        print(
            f"Loaded {info.path} ({info.precision} on {info.device_name}) in {info.load_s} s.",
            file=sys.stderr,
        )
    sampling = Sampling(
        temperature=args.temperature if args.temperature is not None else settings.chat.temperature,
        top_p=settings.chat.top_p,
        top_k=settings.chat.top_k,
        repetition_penalty=settings.chat.repetition_penalty,
        max_new_tokens=args.max_new_tokens or settings.chat.max_new_tokens,
        seed=args.seed if args.seed is not None else settings.chat.seed,
    )
    system = args.system if args.system is not None else settings.chat.system_prompt
    history: list[tuple[str, str]] = []
    counter = 0
    try:
        while True:
            if one_shot:
                prompt = args.prompt
            else:
                try:
                    prompt = input("\n> ")
                except EOFError:
                    break
                if prompt.strip() == "/exit":
                    break
                if prompt.strip() == "/new":
                    history.clear()
                    continue
                if not prompt.strip():
                    continue
            counter += 1
            history.append(("user", prompt))
            request = GenerateRequest(counter, tuple(history), system, sampling)
            session.job.send(request.op, **request.fields())
            try:
                data = answer(session.wait(LOAD_TIMEOUT_S))
            except KeyboardInterrupt:
                session.job.send("stop")
                data = answer(session.wait(60))
            if isinstance(data, int):
                return data
            reply = Reply.from_dict(data)
            history.append(("assistant", reply.text))
            if args.json:
                print(
                    json.dumps(
                        {
                            "reply": reply.text,
                            "finish": reply.finish,
                            "model": loaded,
                            "figures": reply.figures.as_dict(),
                        }
                    )
                )
            else:
                print(f"\n[{reply.figures.summary()}]", file=sys.stderr)
            if one_shot:
                break
    except KeyboardInterrupt:
        pass
    finally:
        if session.job.running:
            with contextlib.suppress(PanelError):
                session.job.send("exit")
            if session.job.wait(10) is None:
                session.job.cancel()
    return 0
