"""``rocmpanel env``: list, read, set, unset and undo persistent environment variables.

The same stores, checks, backups, lock and undo journal as the Setup tab's editor. A value
the catalogue refuses exits with status 2 and the reason; other failures exit with status 1.
A change is read, planned and written under the environment lock, so concurrent ``env set``
commands of different variables all land.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

STORE_CHOICES = ("all", "environment.d", "profile", "session", "registry")
NOT_SET = "(not set)"
HELP_WIDTH = 79  # columns of the help's hand-wrapped text

VALUES_POLICY = """\
Values and $:
  Values are stored literally: a $ in a value stays a $ (written as '...' in
  ~/.profile and as $$ in environment.d), so nothing is expanded when you log
  in; `env set X 'a$b'` gives X=a$b everywhere.
  Paths and PATH-like lists (PATH, LD_LIBRARY_PATH, ROCM_PATH, ...) may refer
  to other variables, only as $NAME or ${NAME}:
  `env set PATH /opt/rocm/bin --prepend` keeps $PATH. Any other $ in them
  (${X:-y}, ${X/a/b}, $1, $$, an unclosed ${) is refused: ~/.profile and
  environment.d do not agree on what it means.
  Line breaks, NUL, ` and $( are refused in every value.

On Windows (HKCU\\Environment) a value holding %NAME% is stored expandable
  (REG_EXPAND_SZ). Only programs that Explorer starts after a change see the
  new values: open terminals, running programs and rocmpanel itself keep the
  old ones until restarted; rocmpanel's own jobs get the new ones.

Every change is backed up first and can be undone with `rocmpanel env undo`.
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "env",
        help="list, set or unset ROCm environment variables safely (backed up, undoable)",
        # The epilog's layout needs the raw formatter, which wraps nothing: the description
        # is wrapped here, to the width the epilog uses.
        description=textwrap.fill(
            "Edit environment variables in persistent stores: on Linux "
            "~/.config/environment.d/60-rocmpanel.conf and a managed block in ~/.profile, on "
            "Windows HKCU\\Environment; 'session' is for jobs rocmpanel starts only.",
            HELP_WIDTH,
        ),
        epilog=VALUES_POLICY,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "action",
        choices=("list", "get", "set", "unset", "undo"),
        help="list the variables that are set, get one, set or unset one, or undo the last change",
    )
    parser.add_argument("name", nargs="?", help="variable name (get, set, unset)")
    parser.add_argument("value", nargs="?", help="new value (set), stored literally: see below")
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
    parser.add_argument(
        "--force",
        action="store_true",
        help="write a variable that can break the next login (HOME, IFS, LD_PRELOAD, a PATH "
        "without $PATH, ...) anyway",
    )
    parser.add_argument(
        "--home", type=_home_folder, default=None, help="home folder (default: yours)"
    )
    parser.set_defaults(func=run)


def unknown_name_notice(name: str) -> str:
    """What ``env set`` says of a name the catalogue does not know: it is written anyway."""
    return f"{name} is not in rocmpanel's catalogue of ROCm variables: set as given, no checks."


def _home_folder(text: str) -> Path:
    """``--home``: a folder that exists (never '' = the current folder)."""
    from rocmpanel.base.cliargs import folder

    return Path(folder("your home folder")(text))


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    if args.json:
        print(json.dumps(data, indent=2))
    elif text:
        print(text)


def _note(args: argparse.Namespace, notes: list[str] | tuple[str, ...]) -> None:
    """Lines about what recovery or the journal did: stderr (in --json, the "notes" key)."""
    if args.json:
        return
    for line in notes:
        print(f"rocmpanel env: {line}", file=sys.stderr)


def _fail(
    args: argparse.Namespace,
    message: str,
    code: int,
    detail: str = "",
    notes: list[str] | tuple[str, ...] = (),
    *,
    show_detail: bool = True,
) -> int:
    if args.json:
        data = {"ok": False, "error": message, "detail": detail, "notes": list(notes)}
        print(json.dumps(data, indent=2))
    else:
        _note(args, notes)
        print(f"rocmpanel env: {message}", file=sys.stderr)
        if show_detail and detail and detail not in message:
            print(detail, file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.envvars.plan import ValueRefusedError
    from rocmpanel.envvars.store import EnvConflictError, make_stores

    extra = _extra_arguments(args)
    if extra:
        return _fail(args, extra, 2)
    stores = make_stores(home=args.home)
    if args.store != "all" and args.store not in stores:
        return _fail(args, f"the {args.store} store does not exist on this platform", 2)
    try:
        if args.action == "list":
            return _list(args, stores)
        if args.action == "undo":
            from rocmpanel.envvars.transaction import undo_last

            result = undo_last(stores)
            notes = [*result.notes, *_registry_note(result.targets)]
            _note(args, notes)
            data = {"ok": True, "restored": list(result.targets), "notes": notes}
            _emit(args, data, result.message)
            return 0
        if not args.name:
            return _fail(args, f"'{args.action}' needs a variable name", 2)
        if args.action == "get":
            return _get(args, stores)
        return _change(args, stores)
    except ValueRefusedError as exc:
        return _fail(args, exc.message, 2, exc.detail, show_detail=False)
    except EnvConflictError as exc:
        return _fail(args, exc.message, 1, exc.diff)
    except PanelError as exc:  # the detail (an OS error, say) is in --json only
        return _fail(args, exc.message, 1, exc.detail, show_detail=False)


def _extra_arguments(args: argparse.Namespace) -> str:
    """Why the positional arguments do not fit the action ('' when they do)."""
    given = [word for word in (args.name, args.value) if word is not None]
    takes = {"list": 0, "undo": 0, "get": 1, "unset": 1, "set": 2}[args.action]
    if len(given) <= takes:
        return ""
    surplus = " ".join(repr(word) for word in given[takes:])
    if takes == 0:
        return (
            f"'{args.action}' takes no variable name or value (got {surplus}); "
            f"run `rocmpanel env {args.action}` alone."
        )
    return f"'{args.action}' takes one variable name only (got {surplus} as well)."


def _recover(stores: dict[str, Any]) -> list[str]:
    """Finish an interrupted change before reading; its lines (or why it could not run)."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.envvars.transaction import recover

    try:
        return recover(stores)
    except PanelError as exc:
        return [exc.message]


def _registry_note(targets: tuple[str, ...]) -> list[str]:
    """Who sees a change of HKCU\\Environment (nothing when it was not written)."""
    from rocmpanel.envvars.stores import windows

    return [windows.APPLY_NOTE] if windows.TARGET in targets else []


def _value_in(values: dict[str, str], name: str, platform: str) -> str | None:
    """``values[name]``; on Windows whatever the case of the name (Path is PATH)."""
    if platform != "windows":
        return values.get(name)
    from rocmpanel.base.registry import find_name

    found = find_name(values, name)
    return values[found] if found is not None else None


def _targets(args: argparse.Namespace, stores: dict[str, Any]) -> list[Any]:
    if args.store == "all":
        return [store for store in stores.values() if store.persistent]
    return [stores[args.store]]


def _shown(value: str | None) -> str:
    return NOT_SET if value is None else value


def _list(args: argparse.Namespace, stores: dict[str, Any]) -> int:
    import os

    from rocmpanel.envvars.catalogue import load_catalogue
    from rocmpanel.envvars.store import read_stores

    catalogue = load_catalogue()
    notes = _recover(stores)
    read = read_stores(stores)
    snapshots = read.snapshots
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
        lines.append(f"{row['name']} [{row['status']}]  process={_shown(row['process'])}  {where}")
    if not rows:
        places = ", ".join(store.label for store in stores.values() if store.persistent)
        lines.append(
            f"No ROCm variables are set in {places} or in this process's environment. "
            "`rocmpanel env set NAME VALUE` sets one."
        )
    lines += [f"problem in {key}: {text}" for key, text in problems.items()]
    about = list(read.about)
    lines += [f"note: {line}" for line in about]
    _note(args, notes)
    data = {"ok": True, "variables": rows, "problems": problems, "notes": [*notes, *about]}
    _emit(args, data, "\n".join(lines))
    return 0


def _get(args: argparse.Namespace, stores: dict[str, Any]) -> int:
    import os

    from rocmpanel.envvars.catalogue import load_catalogue
    from rocmpanel.envvars.store import read_stores

    catalogue = load_catalogue()
    notes = _recover(stores)
    read = read_stores(stores)
    values = {key: snap.values.get(args.name) for key, snap in read.snapshots.items()}
    data = {
        "ok": True,
        "name": args.name,
        "process": os.environ.get(args.name),
        "stores": values,
        "description": catalogue.describe(args.name),
        "problems": {k: s.problem for k, s in read.snapshots.items() if s.problem},
        "notes": notes,
    }
    lines = [f"{args.name}", f"  this process: {_shown(data['process'])}"]
    lines += [f"  {key}: {_shown(value)}" for key, value in values.items()]
    lines += [f"  problem in {key}: {text}" for key, text in data["problems"].items()]
    lines += ["", catalogue.describe(args.name)]
    _note(args, notes)
    _emit(args, data, "\n".join(lines))
    return 0


def _change(args: argparse.Namespace, stores: dict[str, Any]) -> int:
    from rocmpanel.envvars import plan as env_plan
    from rocmpanel.envvars.catalogue import (
        NAME_RE,
        Status,
        empty_value_refusal,
        load_catalogue,
    )
    from rocmpanel.envvars.store import damaged_store_error, store_notes
    from rocmpanel.envvars.transaction import apply_changes

    catalogue = load_catalogue()
    if args.action == "set" and args.value is None:
        return _fail(args, "'set' needs a value (use 'unset' to remove a variable)", 2)
    edits_entry = args.append or args.prepend or args.remove_entry
    info = catalogue.lookup(args.name)
    if NAME_RE.fullmatch(args.name) is None:  # validate() words it; the value plays no part
        return _fail(args, f"refused: {catalogue.validate(args.name, 'x').message}", 2)
    if edits_entry and (info is None or not info.is_list):
        return _fail(args, f"{args.name} is not a list variable like PATH", 2)
    if args.action == "set" and args.value == "":
        if args.append or args.prepend:
            return _fail(
                args,
                "refused: an empty entry means the current folder, which lets any folder you "
                "are in supply programs or libraries; nothing was changed.",
                2,
            )
        if not args.remove_entry:
            return _fail(args, f"refused: {empty_value_refusal(args.name)}.", 2)
    warnings: dict[str, None] = {}
    said: dict[str, None] = {}
    if info is None and args.action == "set":
        said[unknown_name_notice(args.name)] = None

    def changes(store: Any, snapshot: Any) -> list[env_plan.EnvChange]:
        """The change for ``store``, from what it holds now (under the lock)."""
        value: str | None = None if args.action == "unset" else args.value
        if args.remove_entry and value is not None:
            current = _value_in(snapshot.values, args.name, store.platform)
            if current is None or value not in env_plan.list_entries(current, store.platform):
                return []  # nothing to remove here: the store is left as it is
            value = env_plan.without_entry(current, value, store.platform)
            if not env_plan.list_entries(value, store.platform):
                said[
                    f"{args.name} held only {args.value} in {store.label}; an empty value "
                    f"cannot be stored, so {args.name} is unset there instead."
                ] = None
                value = None
        elif edits_entry and value is not None:
            current = _value_in(snapshot.values, args.name, store.platform)
            if current is None:
                current = "$PATH" if args.name == "PATH" and store.platform == "linux" else ""
            value = env_plan.with_entry(current, value, store.platform, first=args.prepend)
        if value is not None:
            verdict = catalogue.validate(args.name, value, store.platform)
            if verdict.status is Status.INVALID:
                raise env_plan.ValueRefusedError(f"refused: {verdict.message}")
            danger = catalogue.danger(args.name, value, store.platform)
            if danger is not None and not args.force:
                raise env_plan.ValueRefusedError(
                    f"refused: {danger} Nothing was changed; add --force to write it anyway."
                )
            if danger is not None:
                warnings[f"warning ({store.label}): written with --force: {danger}"] = None
            elif verdict.status is Status.WARNING:
                warnings[f"warning ({store.label}): {verdict.message}"] = None
        wanted = [env_plan.EnvChange(args.name, value)]
        for text in store.plan(snapshot, wanted).warnings:  # Path length, %NAME% at logon
            warnings[f"warning ({store.label}): {text}"] = None
        return wanted

    targets = _targets(args, stores)
    if args.dry_run:
        plans = []
        for store in targets:
            snapshot = store.read()
            if snapshot.problem:
                raise damaged_store_error(store, snapshot)
            plans.append(store.plan(snapshot, changes(store, snapshot)))
        diff = "".join(plan.diff for plan in plans)
        about = [*said, *store_notes(targets)]
        if not args.json:
            for line in [*warnings, *(f"note: {text}" for text in about)]:
                print(line, file=sys.stderr)
        data = {
            "ok": True,
            "dry_run": True,
            "diff": diff,
            "notes": about,
            "warnings": list(warnings),
        }
        _emit(args, data, diff or "Nothing to change.")
        return 0
    result = apply_changes(stores, [store.key for store in targets], changes)
    about = [*said, *store_notes(targets)] if result.targets else []
    about += _registry_note(result.targets)
    if not args.json:
        for line in warnings:
            print(line, file=sys.stderr)
    _note(args, result.notes)
    if not args.json:
        for text in about:
            print(f"note: {text}", file=sys.stderr)
    data = {
        "ok": True,
        "wrote": list(result.targets),
        "diff": result.diff,
        "notes": [*result.notes, *about],
        "warnings": list(warnings),
    }
    _emit(args, data, result.message)
    return 0
