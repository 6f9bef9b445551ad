"""``rocmpanel doctor``: GPUs, compatibility verdicts and the stack checklist, headless.

With ``--from FILE`` (repeatable) it diagnoses the system a pasted output describes instead
of this one. Exit code 0 when no check fails, 1 when one does, 2 on a usage or input error
(a bad argument, an input that cannot be read or is not a tool's output). Imports no Qt.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rocmpanel.base import cliargs

DEMO_HINT = "To see rocmpanel with recorded AMD GPUs instead, run: rocmpanel --demo"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check GPUs, ROCm compatibility and the stack (or a pasted system's output)",
        description="Report every AMD GPU, its ROCm compatibility verdict and a checklist of "
        "the stack. Exit code 0 when no check fails.",
    )
    parser.add_argument("--json", action="store_true", help="print the stable JSON report")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown report")
    parser.add_argument(
        "--from",
        dest="from_files",
        action="append",
        default=[],
        metavar="FILE",
        help="diagnose pasted tool output instead of this machine (rocminfo, rocm-smi, "
        "amd-smi, hipInfo, collect_env, lspci -nn or plain lspci, Win32_VideoController; one "
        "file may hold several); repeatable, '-' reads stdin. Outputs of different machines "
        "are diagnosed apart",
    )
    parser.add_argument(
        "--rocm-version",
        metavar="V",
        type=cliargs.version,
        help="judge against this ROCm version (such as 7.2 or 6.4.1)",
    )
    parser.add_argument("--os", choices=("linux", "windows"), help="judge for this OS")
    parser.add_argument(
        "--sysfs-root",
        metavar="DIR",
        type=cliargs.folder("a captured /sys tree or a cardN/device folder"),
        help="read a captured /sys tree (or cardN/device folder) instead of /sys",
    )
    parser.add_argument(
        "--rocminfo-file",
        metavar="FILE",
        help="use this rocminfo output instead of running rocminfo ('-' reads stdin)",
    )
    parser.set_defaults(func=run)


def _read(path: str) -> str:
    from rocmpanel.setup.capture_input import read_capture

    if path == "-" and sys.stdin is not None and sys.stdin.isatty():
        end = "Ctrl+Z, then Enter" if sys.platform == "win32" else "Ctrl+D on a line of its own"
        print(f"Paste the output, then press {end}.", file=sys.stderr)
    return read_capture(path)  # bounded (64 MiB); UTF-8 or UTF-16; files, pipes, FIFOs, '-'


def run(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.setup.capture_input import CaptureReadError
    from rocmpanel.setup.report import build_report

    try:
        if args.from_files:
            from rocmpanel.setup.captured import analyse_texts

            captured = analyse_texts(
                [_read(p) for p in args.from_files],
                args.rocm_version,
                args.os,
                labels=["stdin" if p == "-" else p for p in args.from_files],
            )
            report = build_report(
                captured.system,
                captured.host,
                captured.probe,
                tuple(k.value for k in captured.kinds),
                other_machine=True,
            )
            machines = [
                build_report(
                    m.system, m.host, m.probe, tuple(k.value for k in m.kinds), other_machine=True
                )
                for m in captured.machines
            ]
        else:
            report, machines = _live_report(args), []
    except CaptureReadError as exc:
        print(f"rocmpanel doctor: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        what = exc.strerror or str(exc)
        print(
            f"rocmpanel doctor: cannot read {exc.filename or 'the input'}: {what}", file=sys.stderr
        )
        return 2
    except PanelError as exc:
        print(f"rocmpanel doctor: {exc.message}", file=sys.stderr)
        return 2
    if args.json:
        data = report.to_dict()
        if machines:  # captures of different machines: one report each, besides the overview
            data["machines"] = [m.to_dict() for m in machines]
        print(json.dumps(data, indent=2))
    elif not machines:
        if args.markdown:
            print(report.to_markdown(), end="")
        else:
            # This machine without a GPU: where to see the panel with GPUs anyway.
            print(report.to_text("" if args.from_files else DEMO_HINT), end="")
    else:
        print(f"{'**Warning:** ' if args.markdown else 'WARNING: '}{report.system.notes[0]}\n")
        for i, machine in enumerate(machines, 1):
            title = f"Machine {i} of {len(machines)}"
            print(f"## {title}\n" if args.markdown else f"===== {title} =====")
            print(machine.to_markdown() if args.markdown else machine.to_text())
    return max((m.exit_code for m in machines), default=report.exit_code)


def _live_report(args: argparse.Namespace) -> Any:
    from dataclasses import replace

    from rocmpanel.machine.inventory import detect_inventory
    from rocmpanel.setup.report import build_report

    rocminfo_text = _read(args.rocminfo_file) if args.rocminfo_file else None
    inventory = detect_inventory(
        sysfs_root=args.sysfs_root or "/sys", rocminfo_text=rocminfo_text, os_name=args.os
    )
    system = inventory.system
    if args.rocm_version:
        system = replace(system, rocm_version=args.rocm_version)
    if args.os and args.os != system.os:
        system = replace(system, os=args.os)
    captured = () if inventory.live else ("captured tree",)
    return build_report(system, inventory.host, None, captured)
