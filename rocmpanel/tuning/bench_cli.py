"""``rocmpanel bench``: an A/B benchmark of two presets, driven from the command line.

The --json shape is described in docs/tuning-json.md. Exit codes: 0 done; 1 a run failed
or the result could not be saved or written; 2 wrong arguments or a preset that cannot be
used; 130 cancelled with Ctrl+C (what was measured is printed and saved).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmpanel.base.cliargs import folder, integer, nonempty
from rocmpanel.jobs.gpu_choice import add_gpus_option, say_where
from rocmpanel.tuning.bench import MAX_REPS, MIN_REPS, WORKLOADS
from rocmpanel.tuning.bench_stats import WINNER_RUNS
from rocmpanel.tuning.presets_cli import fail, open_store, or_none, out_file, side_of

if TYPE_CHECKING:
    from rocmpanel.tuning.bench import BenchResult

#: ``--device`` words, as ``chat --device`` takes them; "gpu" runs as "cuda" (torch's
#: name for the GPU, on ROCm too), the plan's and the worker's word.
DEVICE_CHOICES = ("auto", "gpu", "cpu", "cuda")
RUN_TIMEOUT_S = 1800.0  # one worker run (a chat model load on a slow disk included)


def register(subparsers: Any) -> None:
    """``rocmpanel bench``."""
    parser = subparsers.add_parser(
        "bench",
        help="A/B benchmark of two presets",
        description='Measure a workload under preset A and preset B (or "none"), '
        "alternating A B A B in fresh worker processes, and report each case's medians, "
        "the ratio (above 1: B is better; for times A/B) with its spread, and a verdict; "
        'overlapping spreads read "no measurable difference", and a winner is named only '
        f"with {WINNER_RUNS} or more runs of each side. The result is saved in the data folder's "
        "bench/ (and written to --out). Ctrl+C stops the run and keeps what was measured.",
    )
    parser.add_argument(
        "--a",
        required=True,
        metavar="PRESET",
        type=nonempty("preset A", has_default=False),
        help='preset A: an id or name, or "none" for no preset',
    )
    parser.add_argument(
        "--b",
        required=True,
        metavar="PRESET",
        type=nonempty("preset B", has_default=False),
        help='preset B: an id or name, or "none" for no preset',
    )
    parser.add_argument(
        "--workload",
        required=True,
        choices=WORKLOADS,
        help="gemm (matrix products: TFLOP/s), sdpa (attention: ms), alloc (allocation "
        "churn: ms), or chat (a model's decode tok/s; needs --model or a model chosen in "
        "the Chat tab)",
    )
    parser.add_argument(
        "--reps",
        type=integer(MIN_REPS, MAX_REPS),
        default=WINNER_RUNS,
        help=f"runs of each side, {MIN_REPS} to {MAX_REPS} (default {WINNER_RUNS}; a winner "
        f"needs {WINNER_RUNS} or more)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: a fast check, or a CPU run"
    )
    parser.add_argument(
        "--device",
        type=str.lower,
        choices=DEVICE_CHOICES,
        default="auto",
        help="where to run: the GPU when torch sees one (auto, the default), cpu, or gpu "
        "(cuda is the same as gpu, on ROCm too; as chat --device)",
    )
    parser.add_argument(
        "--model",
        type=folder("a model folder with config.json and safetensors"),
        default=None,
        metavar="DIR",
        help="chat workload: the model folder (default: the Chat tab's last model)",
    )
    parser.add_argument(
        "--python",
        default=None,
        metavar="PATH",
        help="workload Python interpreter (default: the active one)",
    )
    parser.add_argument(
        "--out",
        type=export_path,
        default=None,
        metavar="FILE",
        help="also write the result to FILE: .json (as --json prints it) or .csv (one row "
        "per case); an existing file is backed up first",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_gpus_option(parser)
    parser.set_defaults(func=run_bench)


def export_path(text: str) -> Path:
    """``bench --out``: a .json or .csv file in a folder that exists (checked before a long
    run, not after)."""
    if Path(text).suffix.lower() not in (".json", ".csv"):
        raise argparse.ArgumentTypeError(
            f"{text!r} does not end in .json or .csv: a benchmark result is written as one of those"
        )
    return out_file(text)


def run_bench(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.tuning.bench import ABRun, BenchPlan, export_result, save_result

    store = open_store()
    try:
        (a_id, a_name), (b_id, b_name) = side_of(store, args.a), side_of(store, args.b)
    except PanelError as exc:
        return fail("bench", or_none(exc.message), 2)
    settings = Settings.load()
    python = args.python if args.python is not None else settings.general.workload_python
    model = args.model or (settings.chat.last_model if args.workload == "chat" else "")
    plan = BenchPlan(
        a=a_id,
        b=b_id,
        workload=args.workload,
        reps=args.reps,
        python=python,
        device="cuda" if args.device == "gpu" else args.device,
        model=model or "",
        quick=args.quick,
    )
    try:
        run = ABRun(plan, a_name, b_name)
    except PanelError as exc:
        return fail("bench", exc.message, 2)
    try:
        interrupted = drive(run, args.gpus)
    except PanelError as exc:  # the worker could not start (no such Python, …)
        run.cancel()
        return fail("bench", exc.message, 1)
    result = run.result()
    measured = bool(result.cases)  # else nothing to compare: neither kept nor written
    saved_as: str | None = None
    if measured:
        try:
            result = save_result(result)
            saved_as = result.id
        except PanelError as exc:
            print(f"rocmpanel bench: the result was not saved: {exc.message}", file=sys.stderr)
    exported = True
    if args.out is not None and measured:
        try:
            export_result(result, args.out)
        except PanelError as exc:
            exported = False
            print(f"rocmpanel bench: the result was not written: {exc.message}", file=sys.stderr)
    if args.json:
        data = result.to_json()
        data["saved"] = saved_as is not None
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print_table(result)
        if saved_as:
            print(f"Saved as {saved_as}.")
        if args.out is not None and measured and exported:
            print(f"Written to {args.out}.")
    for error in result.errors:
        print(f"rocmpanel bench: {error}", file=sys.stderr)
    if not measured:
        written = f" or written to {args.out}" if args.out is not None else ""
        print(
            "rocmpanel bench: no case was measured on both sides, so the result was not "
            f"saved{written}.",
            file=sys.stderr,
        )
    if interrupted:
        return 130
    done, planned = run.progress
    return 1 if run.stopped or done < planned or not exported or not measured else 0


def drive(run: Any, gpus: tuple[str, ...] | None = None) -> bool:
    """Run every worker ``run`` hands out, one at a time, on ``gpus`` (None: the saved
    choice); progress goes to stderr. Returns whether Ctrl+C stopped it (the worker is then
    killed and the run cancelled)."""
    from rocmpanel.jobs.job_env import with_job_env
    from rocmpanel.jobs.process import JobProcess
    from rocmpanel.jobs.protocol import Progress
    from rocmpanel.jobs.spec import prepare

    while (spec := run.next_spec()) is not None:
        done, planned = run.progress
        print(f"[{done + 1}/{planned}] {spec.name}", file=sys.stderr, flush=True)

        def on_event(event: object) -> None:
            if isinstance(event, Progress) and event.step:
                print(f"      {event.step}", file=sys.stderr, flush=True)

        # As the panel's job manager does: the "Panel jobs" variables and the preset.
        launched = with_job_env(dataclasses.replace(spec, gpus=gpus))
        if done == 0:
            say_where(launched.env, "rocmpanel bench")
        job = JobProcess(prepare(launched), on_event, lambda o: None)
        job.start()
        try:
            outcome = job.wait(RUN_TIMEOUT_S)
        except KeyboardInterrupt:
            job.cancel()
            job.wait(30)
            run.cancel()
            print("rocmpanel bench: cancelled; the worker was stopped.", file=sys.stderr)
            return True
        if outcome is None:
            job.cancel()
            job.wait(30)
            run.failed(f"it did not finish within {RUN_TIMEOUT_S:.0f} s")
        elif outcome.was_successful() and outcome.result is not None:
            run.record(dict(outcome.result), env=launched.env)
        else:
            message = outcome.error.message if outcome.error is not None else outcome.message
            run.failed(message)
    return False


def print_table(result: BenchResult) -> None:
    """The cases as a table (case, unit, medians, ratio with its spread, verdict; 3
    significant digits), then, per side, the preset settings that had no effect."""
    from rocmpanel.tuning.bench_stats import figure, ratio_text, spread_text

    print(
        f"A: {result.a_name}   B: {result.b_name}   workload: {result.plan.workload}   "
        f"on {result.device_label or 'unknown device'} (torch {result.torch_version or '?'})"
    )
    header = ("case", "unit", "A median", "B median", "ratio", "spread", "verdict")
    rows = [
        (
            c.case,
            c.unit + ("" if c.higher_is_better else " (lower is better)"),
            figure(c.a_median),
            figure(c.b_median),
            ratio_text(c.ratio),
            spread_text(c.ratio_low, c.ratio_high),
            c.verdict,
        )
        for c in result.cases
    ]
    if not rows:
        print("No case was measured on both sides.")
    else:
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
        for row in (header, *rows):
            cells = zip(row, widths, strict=True)
            print("  ".join(cell.ljust(w) for cell, w in cells).rstrip())
        runs = len(result.runs)
        print(
            f"{runs} runs; ratio above 1 means B is better (for times A/B); spread: worst to "
            "best of each side."
        )
    for line in no_effect_lines(result):
        print(line)


def no_effect_lines(result: BenchResult) -> list[str]:
    """Per side, the preset's settings its workers reported as not applied (each once,
    with the reason), e.g. "B (Throughput): no effect from tunableop (no effect on CPU)"."""
    lines = []
    for side, name in (("A", result.a_name), ("B", result.b_name)):
        seen: dict[str, str] = {}
        for run in result.runs:
            if run.get("side") != side:
                continue
            for record in run.get("preset_settings") or []:
                if isinstance(record, dict) and record.get("applied") is False:
                    seen.setdefault(str(record.get("key")), str(record.get("note") or ""))
        if seen:
            parts = ", ".join(f"{key} ({note})" if note else key for key, note in seen.items())
            lines.append(f"{side} ({name}): settings that had no effect: {parts}.")
    return lines
