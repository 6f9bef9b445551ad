"""``rocmpanel data``: which compatibility and install data is in force, and updating it.

``data show`` prints the data set in force, how fresh it is and its sources; ``data update
--from FOLDER|ZIP`` validates a newer set with the panel's own loaders and installs it (the
replaced set is kept for ``data rollback``). Failures exit with status 1 and say why; a
bad argument (a ``--from`` that does not exist or is a FIFO or device, ``--from`` with
``show``) exits with status 2, on stderr, as argparse's own errors do.
"""

from __future__ import annotations

import argparse
import json
import stat
import sys
from pathlib import Path
from typing import Any


def data_source(text: str) -> Path:
    """argparse ``type=``: a folder or a regular file (a .zip) that exists."""
    path = Path(text).expanduser()
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise argparse.ArgumentTypeError(f"{text} does not exist") from None
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{text} cannot be read: {exc.strerror}") from None
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else None
        raise argparse.ArgumentTypeError(
            f"{text} is {kind or 'a device'}, not a folder or a .zip file of a data set"
        )
    return path


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "data",
        help="show or update the GPU compatibility and PyTorch install data",
        description="The panel judges GPUs and picks PyTorch builds from data files "
        "(ROCm releases, GPU lists, PCI ids, PyTorch builds, community knowledge). 'show' "
        "prints what is in force and from when; 'update --from' installs a newer, validated "
        "set; 'rollback' puts the set it replaced back.",
    )
    parser.add_argument(
        "action",
        choices=("show", "update", "rollback"),
        help="show the data in force, update it from a folder or .zip, or roll back",
    )
    parser.add_argument(
        "--from",
        dest="source",
        type=data_source,
        metavar="FOLDER|ZIP",
        help="update: a folder holding dataset.yaml and the data files, or a .zip of one",
    )
    parser.add_argument(
        "--allow-older",
        action="store_true",
        help="update: install even when the set is older than the panel's own data",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def _usage(message: str) -> int:
    print(f"rocmpanel data: error: {message}", file=sys.stderr)
    return 2


def _fail(args: argparse.Namespace, message: str, detail: str = "") -> int:
    if args.json:
        print(json.dumps({"ok": False, "error": message, "detail": detail}, indent=2))
    else:
        print(f"rocmpanel data: {message}", file=sys.stderr)
        if detail and detail != message:
            print(detail, file=sys.stderr)
    return 1


def show_dict() -> dict[str, Any]:
    """What ``data show --json`` prints: the set in force and the releases it knows."""
    from rocmpanel.base import datasets
    from rocmpanel.knowledge import compat_data

    info = datasets.active()
    data = compat_data.load()
    out = info.as_dict()
    out["latest_known"] = dict(data.latest_known)
    out["latest_known_dates"] = {os: data.date_of(v) for os, v in data.latest_known.items()}
    out["age_days"] = info.age_days()
    return out


def _show_text(data: dict[str, Any]) -> str:
    where = "an installed update" if data["origin"] == "installed" else "the panel's own data"
    lines = [
        f"In force: {where} ({data['folder']})",
        f"Data as of: {data['data_as_of']} (newest ROCm release it knows; "
        f"{data['age_days']} days ago)",
    ]
    if data["generated_at"]:
        lines.append(f"Generated: {data['generated_at']}")
    for os_name, version in data["latest_known"].items():
        date = data["latest_known_dates"].get(os_name) or "date unknown"
        lines.append(f"Newest {os_name} release: ROCm {version} ({date})")
    if data["stale"]:
        lines.append(
            "The data may be stale: newer ROCm releases are judged by the newest one it "
            "knows. Get a newer data set and run `rocmpanel data update --from FOLDER`."
        )
    if data["sources"]:
        lines.append("Sources:")
        for src in data["sources"]:
            when = f" ({src['date']})" if src.get("date") else ""
            lines.append(f"  {src.get('key', '?')}: {src.get('what', src.get('url', ''))}{when}")
    for problem in data["problems"]:
        lines.append(f"Note: {problem}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.knowledge import update

    if args.action != "update":
        given = [o for o, v in (("--from", args.source), ("--allow-older", args.allow_older)) if v]
        if given:
            verb = "goes" if len(given) == 1 else "go"
            return _usage(f"{' and '.join(given)} {verb} only with 'update', not '{args.action}'.")
    elif args.source is None:
        return _usage("update needs --from FOLDER|ZIP (a data set to install).")
    try:
        if args.action == "show":
            data = show_dict()
            print(json.dumps(data, indent=2) if args.json else _show_text(data))
            return 0
        if args.action == "update":
            validated = update.install(args.source, allow_older=args.allow_older)
            if args.json:
                print(
                    json.dumps(
                        {
                            "ok": True,
                            "data_as_of": validated.info.data_as_of,
                            "files": list(validated.summary),
                        },
                        indent=2,
                    )
                )
            else:
                print(f"Installed the data set of {validated.info.data_as_of}:")
                print("\n".join(f"  {line}" for line in validated.summary))
                print("`rocmpanel data rollback` puts the previous set back.")
                from rocmpanel.base import datasets

                for problem in datasets.active().problems:
                    print(f"Note: {problem}")
            return 0
        info = update.rollback()
        if args.json:
            print(json.dumps({"ok": True, "in_force": info.as_dict()}, indent=2))
        else:
            print(f"Rolled back; in force now: {info.describe()}.")
        return 0
    except PanelError as exc:
        return _fail(args, exc.message, exc.detail or "")
