"""``rocmpanel probe``: run the probe worker in the workload Python and print what it saw.

Exit status 0 with the report, 1 when the probe ran but failed or timed out, 2 when the
interpreter given cannot run it (missing, not executable, not a Python 3). Every error
goes to stderr in one sentence that says what to do; the report alone goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rocmpanel.jobs.gpu_choice import add_gpus_option, say_where

PROBE_TIMEOUT_S = 120


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "probe",
        help="report the workload Python's torch build and the GPUs torch sees",
        description="Run a short script in the workload Python (the one GPU jobs use) and "
        "report its torch version and build (ROCm, CUDA or CPU) and the GPUs torch sees. "
        "Exit code 0 with the report, 1 when the probe failed, 2 when the interpreter "
        "cannot run it.",
    )
    parser.add_argument(
        "--python",
        default=None,
        metavar="PATH",
        help="Python 3 interpreter to probe (default: the workload Python of the settings)",
    )
    parser.add_argument("--json", action="store_true", help="print the raw JSON report")
    add_gpus_option(parser)
    parser.set_defaults(func=run)


def _error(message: str) -> None:
    print(f"rocmpanel probe: {message}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.jobs.job_env import env_preset, result_preset, with_job_env
    from rocmpanel.jobs.process import JobProcess, JobState
    from rocmpanel.jobs.spec import JobSpec, prepare
    from rocmpanel.setup.probe_report import ProbeReport

    if args.python is not None and not args.python.strip():
        _error("--python is empty: give the path of a Python 3 interpreter.")
        return 2
    try:
        python = args.python if args.python is not None else _workload_python()
        spec = with_job_env(JobSpec("probe", "probe", python=python, gpus=args.gpus))
        say_where(spec.env, "rocmpanel probe")
        job = JobProcess(prepare(spec), lambda e: None, lambda o: None)
        job.start()
    except PanelError as exc:
        _error(exc.message)
        return 2
    outcome = job.wait(PROBE_TIMEOUT_S)
    if outcome is None:
        job.cancel()
        _error(f"the probe did not finish within {PROBE_TIMEOUT_S} s; nothing was reported.")
        return 1
    if outcome.state is JobState.CRASHED and outcome.error is None and outcome.result is None:
        # It never spoke the worker protocol: not a Python 3 that can run the probe script.
        tail = "\n".join(outcome.stderr_tail[-5:])
        how = f" with code {outcome.exit_code}" if outcome.exit_code else ""
        _error(
            f"{python} did not run the probe: it exited{how} without a report. Give "
            "--python the path of a Python 3 interpreter, such as a virtual environment's "
            "bin/python." + (f"\nIts last error output:\n{tail}" if tail else "")
        )
        return 2
    if not outcome.was_successful() or outcome.result is None:
        _error(str(outcome))
        return 1
    report = dict(outcome.result)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        probe = ProbeReport.from_dict(report)
        lines = probe.summary_lines()
        # The tuning preset the probe ran under (as its worker reported it, else as the
        # job's environment carried it), below the interpreter line.
        preset = result_preset(report) or env_preset(spec.env) or "none"
        lines.insert(1, f"Preset: {preset}")
        print("\n".join(lines))
        if not probe.torch_imported:
            from rocmpanel.jobs.workload import NEXT_STEP_NO_TORCH

            print(NEXT_STEP_NO_TORCH)
    return 0


def _workload_python() -> str:
    from rocmpanel.base.settings import Settings

    return Settings.load().general.workload_python
