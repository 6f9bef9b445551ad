"""``rocmpanel probe``: run the probe worker in the workload Python and print what it saw."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "probe", help="report the workload Python's torch build and the GPUs torch sees"
    )
    parser.add_argument("--python", default=None, help="interpreter to probe (default: setting)")
    parser.add_argument("--json", action="store_true", help="print the raw JSON report")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.jobs.job_env import with_job_env
    from rocmpanel.jobs.process import JobProcess
    from rocmpanel.jobs.spec import JobSpec, prepare
    from rocmpanel.setup.probe_report import ProbeReport

    python = args.python if args.python is not None else Settings.load().general.workload_python
    try:
        job = JobProcess(
            prepare(with_job_env(JobSpec("probe", "probe", python=python))),
            lambda e: None,
            lambda o: None,
        )
        job.start()
    except PanelError as exc:
        print(f"rocmpanel probe: {exc.message}")
        return 2
    outcome = job.wait(120)
    if outcome is None:
        job.cancel()
        print("rocmpanel probe: the probe did not finish within 120 s")
        return 1
    if not outcome.was_successful() or outcome.result is None:
        print(f"rocmpanel probe: {outcome}")
        return 1
    report = dict(outcome.result)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("\n".join(ProbeReport.from_dict(report).summary_lines()))
    return 0
