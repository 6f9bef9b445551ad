"""``rocmpanel report --out FILE.html|FILE.md|-``: the health report, headless.

The format follows the file name's suffix; ``-`` prints Markdown. User names in paths are
replaced unless ``--keep-paths``; the host name and secrets always are. ``--demo`` reports
on rocmpanel's recorded demo GPUs, with the replayed past minutes as telemetry, and lists
none of this machine's variables, validation runs or environments. Exit code 0 when the report
was written, 2 when it could not be (a bad name, a folder, a FIFO). Imports no Qt.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="export a health report (system, GPUs, checklist, variables, validation, "
        "environments) to paste in a forum or an issue",
        description="Write a health report of this machine: system, GPUs with their "
        "verdicts, the stack checklist, the ROCm/PyTorch and PATH-like variables "
        "(shortened), the last validation run, recent telemetry peaks and the managed "
        "environments. User names in paths, the host name and secrets are taken out. "
        "Exit code 0 when written, 2 when the report could not be written.",
    )
    parser.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="where to write: a name ending in .html (one self-contained page) or .md "
        "(Markdown); '-' prints Markdown",
    )
    parser.add_argument(
        "--keep-paths",
        action="store_true",
        help="keep user names in paths (/home/NAME) and the user name; the host name and "
        "secrets are still taken out",
    )
    parser.add_argument(
        "--demo",
        dest="report_demo",  # not "demo": the top-level --demo opens the window
        action="store_true",
        help="report on rocmpanel's recorded demo GPUs instead of this machine",
    )
    parser.set_defaults(func=run)


def _demo_report() -> Any:
    import shutil
    import tempfile
    import time

    from rocmpanel.machine import demo
    from rocmpanel.monitor.demo_replay import past_samples
    from rocmpanel.shell.report import gather_report
    from rocmpanel.shell.report_peaks import peaks_from_samples

    recording = demo.load_recording()
    folder = Path(tempfile.mkdtemp(prefix="rocmpanel-report-demo-"))
    try:
        demo.build_tree(folder, recording)
        inventory = demo.detect_demo_inventory(folder, recording)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    now = time.time()
    peaks = peaks_from_samples(past_samples(now, recording=recording), now)
    # Not this machine: none of its variables, validation runs or environments.
    return gather_report(
        inventory=inventory, demo=True, telemetry=peaks, environ={}, read_stores=False, now=now
    )


def run(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.shell.report import gather_report
    from rocmpanel.shell.report_file import bad_suffix_message, format_for, save_report
    from rocmpanel.shell.report_redact import Redactor, redact
    from rocmpanel.shell.report_render import render

    out: str = args.out
    fmt = "md" if out == "-" else format_for(out)
    if fmt is None:
        print(f"rocmpanel report: {bad_suffix_message(out)}", file=sys.stderr)
        return 2
    if out != "-":
        from rocmpanel.shell.report_file import check_target

        try:  # before gathering: a wrong name is said at once
            check_target(Path(out))
        except PanelError as exc:
            print(f"rocmpanel report: {exc.message}", file=sys.stderr)
            return 2
    report = _demo_report() if args.report_demo else gather_report()
    text = render(redact(report, Redactor.for_this_machine(args.keep_paths)), fmt)
    if out == "-":
        sys.stdout.write(text)
        return 0
    try:
        written = save_report(Path(out), text)
    except PanelError as exc:
        print(f"rocmpanel report: {exc.message}", file=sys.stderr)
        return 2
    print(
        f"rocmpanel report: wrote {written} ({len(text.encode('utf-8'))} bytes).", file=sys.stderr
    )
    return 0
