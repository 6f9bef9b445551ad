"""``rocmpanel presets``: list, show, use, validate and export tuning presets.

The --json shapes are described in docs/tuning-json.md. Exit codes: 0 done; 1 a file did
not validate or could not be written; 2 wrong arguments or a preset that cannot be used.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmpanel.base.cliargs import nonempty

if TYPE_CHECKING:
    from rocmpanel.jobs.presets import Preset, PresetStore, Target


def register(subparsers: Any) -> None:
    """``rocmpanel presets``."""
    parser = subparsers.add_parser(
        "presets",
        help="list, show, use, validate and export tuning presets",
        description="Tuning presets are named sets of environment variables and torch "
        "settings that the panel's jobs run under. List them, show one item by item (with "
        "why, its source, and whether it does anything on this machine), choose the one "
        "jobs run under, validate preset files, or export one as a file.",
    )
    sub = parser.add_subparsers(
        dest="presets_command",
        metavar="ACTION",
        required=True,
        help="what to do; `rocmpanel presets ACTION --help` explains one",
    )
    p_list = sub.add_parser(
        "list",
        help="list the built-in and user presets",
        description="List every preset: built-ins first, then yours (from the config "
        "folder's presets/); the one jobs run under is marked [active]. Preset files that "
        "cannot be read are named on stderr.",
    )
    p_list.add_argument("--json", action="store_true", help="print the presets as JSON")
    p_list.set_defaults(func=run_list)

    p_show = sub.add_parser(
        "show",
        help="show one preset item by item",
        description="Show a preset's items, each with what it does, its source and whether "
        "it applies on this machine's GPU.",
    )
    _add_name(p_show)
    p_show.add_argument("--json", action="store_true", help="print the preset as JSON")
    p_show.set_defaults(func=run_show)

    p_use = sub.add_parser(
        "use",
        help="choose the preset jobs run under",
        description="Make a preset the active one, kept in the settings: jobs the command "
        "line starts from now on (probe, validation, chat, benchmarks) run under it, and so "
        "do the panel's jobs from its next start. A panel that is running keeps its own "
        'choice: choose the preset in its Tuning tab (Use for jobs). "none" runs jobs '
        "without a preset.",
    )
    _add_name(p_use, or_none=True)
    p_use.set_defaults(func=run_use)

    p_validate = sub.add_parser(
        "validate",
        help="check preset files against the schema",
        description="Check preset files; each problem is printed as file:line: field: "
        "problem. A variable rocmpanel does not know is a note, not a problem. Exit code 1 "
        "when any file is bad.",
    )
    p_validate.add_argument(
        "files", metavar="FILE", nargs="+", type=Path, help="preset YAML files to check"
    )
    p_validate.add_argument("--json", action="store_true", help="print the findings as JSON")
    p_validate.set_defaults(func=run_validate)

    p_export = sub.add_parser(
        "export",
        help="write a preset to a file",
        description="Write a preset (built-in or yours) as a preset file that `rocmpanel "
        "presets validate` and the Tuning tab's import read back.",
    )
    _add_name(p_export)
    p_export.add_argument(
        "--out",
        required=True,
        type=out_file,
        metavar="FILE",
        help="the file to write, in a folder that exists (an existing file is backed up first)",
    )
    p_export.add_argument("--json", action="store_true", help="print what was written as JSON")
    p_export.set_defaults(func=run_export)


def _add_name(parser: argparse.ArgumentParser, *, or_none: bool = False) -> None:
    """The NAME argument of show, use and export."""
    parser.add_argument(
        "name",
        metavar="NAME",
        type=nonempty("the preset", has_default=False),
        help="the preset's id or name" + (', or "none"' if or_none else ""),
    )


def out_file(text: str) -> Path:
    """``--out``: a file in a folder that exists (bench_store.check_out_folder: a missing
    folder is refused rather than created, as a mistyped path would leave folders behind)."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.tuning.bench_store import check_out_folder

    path = Path(text)
    try:
        check_out_folder(path)
    except PanelError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
    return path


def fail(command: str, message: str, code: int) -> int:
    print(f"rocmpanel {command}: {message}", file=sys.stderr)
    return code


def open_store() -> PresetStore:
    from rocmpanel.jobs.presets import PresetStore

    return PresetStore()


def _report_problems(store: PresetStore) -> None:
    for problem in store.problems:
        # The message starts with the file (control characters escaped): print it alone.
        print(f"rocmpanel presets: skipped {problem.message}", file=sys.stderr)


def _item_json(item: Any) -> dict[str, Any]:
    value = list(item.value) if isinstance(item.value, tuple) else item.value
    return {
        "kind": item.kind,
        "key": item.key,
        "value": value,
        "why": item.why,
        "source": item.source,
        "platforms": list(item.platforms),
    }


def _preset_json(preset: Preset) -> dict[str, Any]:
    return {
        "id": preset.id,
        "name": preset.name,
        "description": preset.description,
        "archs": list(preset.archs),
        "builtin": preset.builtin,
        "path": str(preset.path) if preset.path else None,
        "items": [_item_json(i) for i in preset.items()],
    }


def _active_id() -> str:
    """The saved active preset's id ("" = none)."""
    from rocmpanel.base.settings import Settings

    return Settings.load().general.active_preset


def run_list(args: argparse.Namespace) -> int:
    store = open_store()
    presets = store.all()
    _report_problems(store)
    active = _active_id()
    if active and active not in {p.id for p in presets}:
        print(
            f"rocmpanel presets: the active preset {active!r} is not among the presets, so "
            "jobs run without one; choose another with `rocmpanel presets use NAME`.",
            file=sys.stderr,
        )
    if args.json:
        data = {"active": active or None, "presets": [_preset_json(p) for p in presets]}
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    width = max((len(p.id) for p in presets), default=2)
    for preset in presets:
        kind = "built-in" if preset.builtin else "user"
        archs = ", ".join(preset.archs)
        count = len(preset.items())
        mark = "  [active]" if preset.id == active else ""
        print(
            f"{preset.id:<{width}}  {preset.name} ({kind}; {archs}; "
            f"{count} item{'s' if count != 1 else ''}){mark}"
        )
    return 0


def run_use(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.jobs.presets import NO_PRESET

    store = open_store()
    try:
        ident, name = side_of(store, args.name)
    except PanelError as exc:
        return fail("presets", or_none(exc.message), 2)
    settings = Settings.load()
    settings.general.active_preset = "" if ident == NO_PRESET else ident
    try:
        notes = settings.save()
    except PanelError as exc:
        return fail("presets", f"the active preset was not changed: {exc.message}", 1)
    for note in notes:
        print(f"rocmpanel presets: {note}", file=sys.stderr)
    what = "without a preset" if ident == NO_PRESET else f"under {name} ({ident})"
    print(
        f"Jobs the command line starts from now on, and the panel's from its next start, "
        f"run {what}. In a panel that is running, choose it in the Tuning tab."
    )
    return 0


def this_target() -> Target:
    """This machine as an item's effect depends on it, judged as the Tuning tab judges it
    (presets.machine_target): the first discrete GPU with a gfx in the machine detection,
    and this platform. The workload torch is not known here: effects that depend on its
    version say "not checked"."""
    from rocmpanel.jobs.presets import machine_target

    try:
        from rocmpanel.machine.inventory import detect_inventory

        gpus = detect_inventory().gpus
    except Exception:  # detection is best effort: the effects then say "not checked"
        gpus = ()
    return machine_target(gpus)


def run_show(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.jobs.preset_text import archs_text, effect_text, source_text, value_text
    from rocmpanel.jobs.presets import item_effects

    store = open_store()
    try:
        preset = store.get(args.name)
    except PanelError as exc:  # no such preset, or its file cannot be read (and why)
        return fail("presets", exc.message, 2)
    target = this_target()
    effects = item_effects(preset, target)
    if args.json:
        data = _preset_json(preset)
        data["target"] = {"platform": target.platform, "gfx": target.gfx}
        for item_data, effect in zip(data["items"], effects, strict=True):
            item_data["applies"] = effect.applies
            item_data["checked"] = effect.checked
            item_data["note"] = effect.note
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    kind = "built-in" if preset.builtin else f"user preset, {preset.path}"
    print(f"{preset.name} ({preset.id}; {kind})")
    print(f"Suits: {archs_text(preset.archs)}")
    if preset.description:
        print(preset.description)
    where = target.gfx or "GPU not detected"
    print(f"\nItems (on this machine: {target.platform}, {where}):")
    if not effects:
        print("  (none)")
    for effect in effects:
        item = effect.item
        print(f"  {item.kind} {item.key} = {value_text(item)}  [{effect_text(effect)}]")
        if item.why:
            print(f"      {item.why}")
        if item.source:
            print(f"      source: {source_text(item.source)}")
    return 0


def problem_line(exc: Any) -> str:
    """A PresetError as ``file:line: field: problem`` (``file: field: problem`` without a
    line)."""
    where = f"{exc.file}:{exc.line}" if exc.line else str(exc.file)
    return f"{where}: {exc.field}: {exc.problem}"


def unknown_note(name: str) -> str:
    """The note for an env variable the catalogue does not know."""
    return f"note: {name} is not a variable rocmpanel knows: check the spelling"


def run_validate(args: argparse.Namespace) -> int:
    from rocmpanel.jobs.preset_text import unknown_variables
    from rocmpanel.jobs.presets import PresetError, read_preset_file

    findings: list[dict[str, Any]] = []
    for path in args.files:
        name = str(path)
        try:  # bounded, regular files only: a FIFO or /dev/zero is refused, never read
            preset = read_preset_file(Path(path))
        except PresetError as exc:
            findings.append({"file": name, "ok": False, "problem": problem_line(exc)})
            continue
        findings.append(
            {
                "file": name,
                "ok": True,
                "id": preset.id,
                "items": len(preset.items()),
                "notes": [unknown_note(v) for v in unknown_variables(preset)],
            }
        )
    bad = [f for f in findings if not f["ok"]]
    if args.json:
        print(json.dumps(findings, indent=2, ensure_ascii=False))
    else:
        for finding in findings:
            if finding["ok"]:
                count = finding["items"]
                items = f"{count} item{'s' if count != 1 else ''}"
                print(f"{finding['file']}: ok ({finding['id']}, {items})")
                for note in finding["notes"]:
                    print(f"  {note}")
            else:
                print(finding["problem"])
    return 1 if bad else 0


def run_export(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError

    store = open_store()
    try:
        preset = store.get(args.name)
    except PanelError as exc:
        return fail("presets", exc.message, 2)
    try:
        store.export(preset.id, args.out)
    except PanelError as exc:
        return fail("presets", exc.message, 1)
    if args.json:
        print(json.dumps({"id": preset.id, "path": str(args.out)}))
    else:
        print(f"Wrote {preset.name} ({preset.id}) to {args.out}.")
    return 0


def side_of(store: PresetStore, ident: str) -> tuple[str, str]:
    """(preset id or "none", name shown) for ``--a``/``--b`` and ``use``; PanelError (from
    the store: no such preset, or its file cannot be read) otherwise."""
    from rocmpanel.jobs.presets import NO_PRESET

    if ident.strip().lower() == NO_PRESET:
        return NO_PRESET, NO_PRESET
    preset = store.get(ident)
    return preset.id, preset.name


def or_none(message: str) -> str:
    """The store's message, reminding that "none" (no preset) is a choice here too."""
    return f'{message.rstrip(".")}; or "none" for no preset.'
