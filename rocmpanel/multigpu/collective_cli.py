"""``rocmpanel collective``: the all-reduce bandwidth test from the command line.

Prints a table like rccl-tests' (size, count, time, algbw, busbw), the peak bus bandwidth,
and where the run was saved. Exit codes: 0 done; 1 the run failed (its cause is printed)
or could not start; 2 wrong arguments; 130 cancelled with Ctrl+C (the sizes measured so
far are printed and saved).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from rocmpanel.base.cliargs import integer
from rocmpanel.jobs.gpu_choice import add_gpus_option
from rocmpanel.multigpu.collective import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MIN_BYTES,
    MAX_PROCS,
    RUN_TIMEOUT_S,
    backend_name,
    bandwidth_text,
    format_size,
    parse_size,
)

if TYPE_CHECKING:
    from rocmpanel.multigpu.collective import CollectivePlan, CollectiveRun


def size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(subparsers: Any) -> None:
    """``rocmpanel collective``."""
    parser = subparsers.add_parser(
        "collective",
        help="all-reduce bandwidth test across GPUs (RCCL) or CPU processes (gloo)",
        description="Run an all-reduce over sizes from --min-size to --max-size under "
        "torchrun, one process per chosen GPU (RCCL), and report time, algorithm bandwidth "
        "and bus bandwidth as rccl-tests defines them; every size is checked for the right "
        "sum. Without an AMD GPU (or with --cpu) it runs on the CPU with gloo. The run is "
        "saved in the data folder's collective history.",
    )
    add_gpus_option(parser)
    parser.add_argument(
        "--cpu", action="store_true", help="run on the CPU with gloo (not with --gpus)"
    )
    parser.add_argument(
        "--procs",
        type=integer(2, MAX_PROCS),
        default=None,
        metavar="N",
        help="processes on the CPU (default 2; CPU only)",
    )
    parser.add_argument(
        "--min-size",
        type=size_arg,
        default=DEFAULT_MIN_BYTES,
        metavar="SIZE",
        help="smallest size, e.g. 1K (default 1K; units K, M, G are powers of 1024)",
    )
    parser.add_argument(
        "--max-size",
        type=size_arg,
        default=DEFAULT_MAX_BYTES,
        metavar="SIZE",
        help="largest size, e.g. 1G (default 1G)",
    )
    parser.add_argument(
        "--python", default=None, metavar="PATH", help="workload Python (default: the active one)"
    )
    parser.add_argument("--json", action="store_true", help="print the run as JSON")
    parser.set_defaults(func=run_collective)


def fail(message: str, code: int) -> int:
    print(f"rocmpanel collective: {message}", file=sys.stderr)
    return code


def build_plan(args: argparse.Namespace) -> CollectivePlan:
    """The plan for the arguments (reads the GPU choice and the saved workload Python)."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.jobs import gpu_choice
    from rocmpanel.multigpu.collective import make_plan

    if args.cpu and args.gpus is not None:
        raise PanelError("--cpu runs the test on the CPU: leave out --gpus, or --cpu to use GPUs.")
    python = args.python
    if python is None:
        python = Settings.load().general.workload_python
    if args.cpu:
        count, gpus, label = 0, None, ""
    else:
        choice = gpu_choice.resolve(args.gpus)
        count, label = choice.count, choice.label
        gpus = tuple(g.bdf for g in choice.gpus if g.bdf) if choice.count else None
    return make_plan(
        count,
        gpus=gpus,
        cpu=args.cpu,
        procs=args.procs,
        min_bytes=args.min_size,
        max_bytes=args.max_size,
        python=python,
        label=label,
    )


def run_collective(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.jobs.job_env import with_job_env
    from rocmpanel.jobs.process import JobProcess
    from rocmpanel.jobs.protocol import Progress
    from rocmpanel.jobs.spec import prepare
    from rocmpanel.multigpu.collective import SizeCollector, collective_spec, run_from_outcome
    from rocmpanel.multigpu.collective_store import CollectiveStore

    try:
        plan = build_plan(args)
    except PanelError as exc:
        return fail(str(exc), 2)
    out = sys.stderr if args.json else sys.stdout
    print(f"Running on: {plan.where}", file=out, flush=True)
    collector = SizeCollector()

    def on_event(event: object) -> None:
        found = collector.feed(event)
        if found is not None and not args.json:
            if len(collector.sizes) == 1:  # no bare header above a run that fails at once
                print_header()
            print(row_text(found), flush=True)
        elif isinstance(event, Progress) and event.step and args.json:
            print(f"  {event.step}", file=sys.stderr, flush=True)

    try:
        spec = with_job_env(collective_spec(plan))
        job = JobProcess(prepare(spec), on_event, lambda o: None)
        job.start()
    except PanelError as exc:
        return fail(str(exc), 1)
    interrupted = False
    try:
        outcome = job.wait(RUN_TIMEOUT_S)
    except KeyboardInterrupt:
        interrupted = True
        job.cancel()
        outcome = job.wait(30)
    if outcome is None:
        job.cancel()
        outcome = job.wait(30)
        if outcome is None:
            return fail(f"the run did not end within {RUN_TIMEOUT_S:.0f} s", 1)
    run = run_from_outcome(plan, outcome, collector.sizes)
    saved: CollectiveRun | None = None
    store = CollectiveStore()
    if run.sizes or run.error:
        try:
            saved = store.save(run)
        except PanelError as exc:
            print(f"rocmpanel collective: the run was not saved: {exc.message}", file=sys.stderr)
    if store.notice:
        print(f"rocmpanel collective: {store.notice}", file=sys.stderr)
    shown = saved or run
    if args.json:
        print(json.dumps(run_json(shown), indent=2, ensure_ascii=False))
    else:
        print_summary(shown, collector.skipped)
    if run.outcome == "failed":
        sys.stdout.flush()  # the table and summary above the error, as they happened
        print(f"rocmpanel collective: {run.error}", file=sys.stderr, flush=True)
        if run.cause:
            print(f"Cause: {run.cause}", file=sys.stderr, flush=True)
    if saved is not None and saved.id is not None and not args.json:
        print(f"Saved as run #{saved.id} in {store.path}.")
    if run.outcome == "failed":
        return 1
    if interrupted or run.outcome == "cancelled":
        print("rocmpanel collective: cancelled; the processes were stopped.", file=sys.stderr)
        return 130
    return 0


HEADER = ("size", "count", "time (us)", "algbw (GB/s)", "busbw (GB/s)")
WIDTHS = (12, 12, 13, 13, 13)


def print_header() -> None:
    print("".join(h.rjust(w) for h, w in zip(HEADER, WIDTHS, strict=True)))


def row_text(size: Any) -> str:
    cells = (
        format_size(size.bytes),
        str(size.count),
        f"{size.time_us:.1f}",
        bandwidth_text(size.algbw_gbs),
        bandwidth_text(size.busbw_gbs),
    )
    return "".join(c.rjust(w) for c, w in zip(cells, WIDTHS, strict=True))


def print_summary(run: CollectiveRun, skipped: list[tuple[int, str]]) -> None:
    for size, reason in run.skipped or tuple(skipped):
        print(f"{format_size(size).rjust(WIDTHS[0])}  skipped: {reason}")
    peak = run.peak()
    versions = ", ".join(
        f"{name} {value}"
        for name, value in (
            ("torch", run.torch_version),
            ("HIP", run.hip_version),
            ("RCCL", run.rccl_version),
        )
        if value
    )
    backend = backend_name(run.backend)
    print(f"{run.world_size} processes, {backend}" + (f"; {versions}" if versions else ""))
    if peak is not None:
        print(
            f"Peak bus bandwidth: {bandwidth_text(peak.busbw_gbs)} GB/s at "
            f"{format_size(peak.bytes)} "
            f"(algbw {bandwidth_text(peak.algbw_gbs)} GB/s)."
        )


def run_json(run: CollectiveRun) -> dict[str, Any]:
    data = asdict(run)
    peak = run.peak()
    data["peak"] = asdict(peak) if peak else None
    data["info"] = dict(run.info)
    return data
