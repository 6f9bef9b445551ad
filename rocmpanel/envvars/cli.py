"""``rocmpanel env``: list, read, set, unset and undo persistent environment variables.

The same stores, checks, backups and undo journal as the Setup tab's editor. A value the
catalogue refuses exits with status 2 and the reason; other failures exit with status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

STORE_CHOICES = ("all", "environment.d", "profile", "session", "registry")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "env",
        help="list, set or unset ROCm environment variables safely (backed up, undoable)",
        description="Edit environment variables in persistent stores: on Linux "
        "~/.config/environment.d/60-rocmpanel.conf and a managed block in ~/.profile, on "
        "Windows HKCU\\Environment; 'session' is for jobs rocmpanel starts only.",
    )
    parser.add_argument("action", choices=("list", "get", "set", "unset", "undo"))
    parser.add_argument("name", nargs="?", help="variable name (get, set, unset)")
    parser.add_argument("value", nargs="?", help="new value (set)")
    parser.add_argument(
        "--store",
        choices=STORE_CHOICES,
        default="all",
        help="where to write (default all: every persistent store of this platform)",
    )
    entry = parser.add_mutually_exclusive_group()
    entry.add_argument("--append", action="store_true", help="PATH-like: add VALUE at the end")
    entry.add_argument("--prepend", action="store_true", help="PATH-like: add VALUE first")
    entry.add_argument("--remove-entry", action="store_true", help="PATH-like: drop VALUE")
    parser.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--home", type=Path, default=None, help="home folder (default: yours)")
    parser.set_defaults(func=run)


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    if args.json:
        print(json.dumps(data, indent=2))
    elif text:
        print(text)


def _fail(args: argparse.Namespace, message: str, code: int, detail: str = "") -> int:
    if args.json:
        print(json.dumps({"ok": False, "error": message, "detail": detail}, indent=2))
    else:
        print(f"rocmpanel env: {message}", file=sys.stderr)
        if detail and detail != message:
            print(detail, file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.envvars.store import EnvConflictError, make_stores

    stores = make_stores(home=args.home)
    if args.store != "all" and args.store not in stores:
        return _fail(args, f"the {args.store} store does not exist on this platform", 2)
    try:
        if args.action == "list":
            return _list(args, stores)
        if args.action == "undo":
            from rocmpanel.envvars.store import undo_last

            result = undo_last(stores)
            _emit(args, {"ok": True, "restored": list(result.targets)}, result.message)
            return 0
        if not args.name:
            return _fail(args, f"'{args.action}' needs a variable name", 2)
        if args.action == "get":
            return _get(args, stores)
        return _change(args, stores)
    except EnvConflictError as exc:
        return _fail(args, exc.message, 1, exc.diff)
    except PanelError as exc:
        return _fail(args, exc.message, 1, exc.detail)


def _targets(args: argparse.Namespace, stores: dict[str, Any]) -> list[Any]:
    if args.store == "all":
        return [store for store in stores.values() if store.persistent]
    return [stores[args.store]]


def _list(args: argparse.Namespace, stores: dict[str, Any]) -> int:
    import os

    from rocmpanel.envvars.catalogue import load_catalogue

    catalogue = load_catalogue()
    snapshots = {key: store.read() for key, store in stores.items()}
    names: set[str] = {n for snap in snapshots.values() for n in snap.values}
    names |= {n for n in os.environ if catalogue.lookup(n) is not None and n != "PATH"}
    rows = []
    for name in sorted(names):
        row: dict[str, Any] = {"name": name, "process": os.environ.get(name)}
        row["stores"] = {key: snap.values.get(name) for key, snap in snapshots.items()}
        shown = next((v for v in row["stores"].values() if v is not None), row["process"])
        verdict = catalogue.validate(name, shown or "")
        row["status"] = verdict.status.value
        row["message"] = verdict.message
        rows.append(row)
    problems = {key: snap.problem for key, snap in snapshots.items() if snap.problem}
    lines = []
    for row in rows:
        where = ", ".join(f"{k}={v}" for k, v in row["stores"].items() if v is not None)
        lines.append(f"{row['name']} [{row['status']}]  process={row['process']!s}  {where}")
    lines += [f"problem in {key}: {text}" for key, text in problems.items()]
    _emit(args, {"ok": True, "variables": rows, "problems": problems}, "\n".join(lines))
    return 0


def _get(args: argparse.Namespace, stores: dict[str, Any]) -> int:
    import os

    from rocmpanel.envvars.catalogue import load_catalogue

    catalogue = load_catalogue()
    values = {key: store.read().values.get(args.name) for key, store in stores.items()}
    data = {
        "ok": True,
        "name": args.name,
        "process": os.environ.get(args.name),
        "stores": values,
        "description": catalogue.describe(args.name),
    }
    lines = [f"{args.name}", f"  this process: {data['process']}"]
    lines += [f"  {key}: {value}" for key, value in values.items()]
    lines += ["", catalogue.describe(args.name)]
    _emit(args, data, "\n".join(lines))
    return 0


def _change(args: argparse.Namespace, stores: dict[str, Any]) -> int:
    from rocmpanel.envvars import plan as env_plan
    from rocmpanel.envvars.catalogue import Status, load_catalogue
    from rocmpanel.envvars.store import apply_plans

    catalogue = load_catalogue()
    if args.action == "set" and args.value is None:
        return _fail(args, "'set' needs a value (use 'unset' to remove a variable)", 2)
    edits_entry = args.append or args.prepend or args.remove_entry
    info = catalogue.lookup(args.name)
    if edits_entry and (info is None or not info.is_list):
        return _fail(args, f"{args.name} is not a list variable like PATH", 2)
    plans = []
    for store in _targets(args, stores):
        snapshot = store.read()
        value: str | None = None if args.action == "unset" else args.value
        if edits_entry and value is not None:
            current = snapshot.values.get(args.name)
            if current is None:
                current = "$PATH" if args.name == "PATH" and store.platform == "linux" else ""
            if args.remove_entry:
                value = env_plan.without_entry(current, value, store.platform)
            else:
                value = env_plan.with_entry(current, value, store.platform, first=args.prepend)
        if value is not None:
            verdict = catalogue.validate(args.name, value, store.platform)
            if verdict.status is Status.INVALID:
                return _fail(args, f"refused: {verdict.message}", 2)
            if verdict.status is Status.WARNING and not args.json:
                print(f"warning ({store.label}): {verdict.message}", file=sys.stderr)
        if snapshot.problem:
            return _fail(args, snapshot.problem, 1)
        plans.append(store.plan(snapshot, [env_plan.EnvChange(args.name, value)]))
    diff = "".join(plan.diff for plan in plans)
    if args.dry_run:
        _emit(args, {"ok": True, "dry_run": True, "diff": diff}, diff or "Nothing to change.")
        return 0
    result = apply_plans({s.key: s for s in _targets(args, stores)}, plans)
    _emit(args, {"ok": True, "wrote": list(result.targets), "diff": diff}, result.message)
    return 0
