"""``rocmpanel presets`` (list, show, use, validate, export) and ``rocmpanel bench`` (A/B run).

The --json shapes are described in docs/tuning-json.md. Exit codes: 0 done; 1 a file did
not validate, a run failed, or a result could not be saved; 2 wrong arguments or an unknown
preset; 130 a benchmark cancelled with Ctrl+C (what was measured is printed and saved).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmpanel.base.cliargs import folder, integer, nonempty

if TYPE_CHECKING:
    from rocmpanel.jobs.presets import Preset, PresetStore, Target
    from rocmpanel.tuning.bench import BenchResult

WORKLOAD_CHOICES = ("gemm", "sdpa", "alloc", "chat")
RUN_TIMEOUT_S = 1800.0  # one worker run (a chat model load on a slow disk included)
CHAT_NEEDS_MODEL = (
    "The chat workload needs a model folder: pass --model DIR or choose a model in the Chat tab."
)


def register(subparsers: Any) -> None:
    _register_presets(subparsers)
    _register_bench(subparsers)


def _register_presets(subparsers: Any) -> None:
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
    p_show.add_argument(
        "name",
        metavar="NAME",
        type=nonempty("the preset", has_default=False),
        help="the preset's id or name",
    )
    p_show.add_argument("--json", action="store_true", help="print the preset as JSON")
    p_show.set_defaults(func=run_show)

    p_use = sub.add_parser(
        "use",
        help="choose the preset every job runs under",
        description="Make a preset the active one: every job the panel or the command line "
        'starts from now on (probe, validation, chat, benchmarks) runs under it. "none" '
        "runs jobs without a preset. Kept in the settings, as the Tuning tab's Use for "
        "jobs does.",
    )
    p_use.add_argument(
        "name",
        metavar="NAME",
        type=nonempty("the preset", has_default=False),
        help='the preset\'s id or name, or "none"',
    )
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
    p_export.add_argument(
        "name",
        metavar="NAME",
        type=nonempty("the preset", has_default=False),
        help="the preset's id or name",
    )
    p_export.add_argument(
        "--out",
        required=True,
        type=out_file,
        metavar="FILE",
        help="the file to write, in a folder that exists (an existing file is backed up first)",
    )
    p_export.add_argument("--json", action="store_true", help="print what was written as JSON")
    p_export.set_defaults(func=run_export)


def _register_bench(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="A/B benchmark of two presets",
        description='Measure a workload under preset A and preset B (or "none"), '
        "alternating A B A B in fresh worker processes, and report each case's medians, "
        "the ratio (above 1: B is better; for times A/B) with its spread, and a verdict; "
        'overlapping spreads read "no measurable difference", and a winner is named only '
        "with 5 or more runs of each side. The result is saved in the data folder's "
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
        choices=WORKLOAD_CHOICES,
        help="gemm (matrix products: TFLOP/s), sdpa (attention: ms), alloc (allocation "
        "churn: ms), or chat (a model's decode tok/s; needs --model or a model chosen in "
        "the Chat tab)",
    )
    parser.add_argument(
        "--reps",
        type=integer(2, 50),
        default=5,
        help="runs of each side, 2 to 50 (default 5; a winner needs 5 or more)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: a fast check, or a CPU run"
    )
    parser.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="where to run: the GPU when torch sees one (auto, the default), cpu, or cuda "
        "(the GPU, also on ROCm)",
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
    parser.set_defaults(func=run_bench)


def out_file(text: str) -> Path:
    """``--out``: a file in a folder that exists. A missing folder is refused rather than
    created: a mistyped path would otherwise leave new folders behind."""
    path = Path(text)
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"the folder {path.parent} does not exist: create it first or choose a file in a "
            "folder that exists"
        )
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder: give a file name")
    return path


def export_path(text: str) -> Path:
    """``bench --out``: a .json or .csv file in a folder that exists (checked before a long
    run, not after)."""
    if Path(text).suffix.lower() not in (".json", ".csv"):
        raise argparse.ArgumentTypeError(
            f"{text!r} does not end in .json or .csv: a benchmark result is written as one of those"
        )
    return out_file(text)


# -- presets -------------------------------------------------------------------------------
def _fail(command: str, message: str, code: int) -> int:
    print(f"rocmpanel {command}: {message}", file=sys.stderr)
    return code


def _store() -> PresetStore:
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
    store = _store()
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

    store = _store()
    try:
        ident, name = _side(store, args.name)
    except PanelError as exc:
        return _fail("presets", _or_none(exc.message), 2)
    settings = Settings.load()
    settings.general.active_preset = "" if ident == NO_PRESET else ident
    try:
        notes = settings.save()
    except PanelError as exc:
        return _fail("presets", f"the active preset was not changed: {exc.message}", 1)
    for note in notes:
        print(f"rocmpanel presets: {note}", file=sys.stderr)
    if ident == NO_PRESET:
        print("Jobs started from now on run without a preset.")
    else:
        print(f"Jobs started from now on run under {name} ({ident}).")
    return 0


def this_target() -> Target:
    """This machine as an item's effect depends on it: the platform, and the first GPU's
    gfx from the KFD topology in sysfs (cheap; None elsewhere: "not known")."""
    from rocmpanel.jobs.presets import Target

    platform = "windows" if sys.platform == "win32" else "linux"
    gfx = None
    if platform == "linux":
        try:
            from rocmpanel.machine.kfd_topology import read_nodes

            nodes = read_nodes()
            gfx = next((n.gfx for n in nodes if n.gfx), None)
        except Exception:  # detection is best effort: the effects then say "not checked"
            gfx = None
    return Target(platform=platform, gfx=gfx)


def run_show(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.jobs.preset_text import source_text, value_text
    from rocmpanel.jobs.presets import item_effects

    store = _store()
    try:
        preset = store.get(args.name)
    except PanelError as exc:  # no such preset, or its file cannot be read (and why)
        return _fail("presets", exc.message, 2)
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
    print(f"Suits: {', '.join(preset.archs)}")
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


def effect_text(effect: Any) -> str:
    """An item's effect here in words: "applies", "no effect here: …", or "not checked:
    …" when it depends on what is not known here (never a bare "applies" for a guess)."""
    if not effect.checked:
        why = effect.note.removeprefix("not checked: ")  # jobs/presets.py may say it already
        return f"not checked: {why}" if why else "not checked"
    if effect.applies:
        return f"applies ({effect.note})" if effect.note else "applies"
    return f"no effect here: {effect.note}" if effect.note else "no effect here"


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

    store = _store()
    try:
        preset = store.get(args.name)
    except PanelError as exc:
        return _fail("presets", exc.message, 2)
    try:
        store.export(preset.id, args.out)
    except PanelError as exc:
        return _fail("presets", exc.message, 1)
    if args.json:
        print(json.dumps({"id": preset.id, "path": str(args.out)}))
    else:
        print(f"Wrote {preset.name} ({preset.id}) to {args.out}.")
    return 0


# -- bench ---------------------------------------------------------------------------------
def _side(store: PresetStore, ident: str) -> tuple[str, str]:
    """(preset id or "none", name shown) for ``--a``/``--b`` and ``use``; PanelError (from
    the store: no such preset, or its file cannot be read) otherwise."""
    from rocmpanel.jobs.presets import NO_PRESET

    if ident.strip().lower() == NO_PRESET:
        return NO_PRESET, NO_PRESET
    preset = store.get(ident)
    return preset.id, preset.name


def _or_none(message: str) -> str:
    """The store's message, reminding that "none" (no preset) is a choice here too."""
    return f'{message.rstrip(".")}; or "none" for no preset.'


def run_bench(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.tuning.bench import ABRun, BenchPlan, export_result, save_result

    store = _store()
    try:
        (a_id, a_name), (b_id, b_name) = _side(store, args.a), _side(store, args.b)
    except PanelError as exc:
        return _fail("bench", _or_none(exc.message), 2)
    settings = Settings.load()
    python = args.python if args.python is not None else settings.general.workload_python
    model = args.model or (settings.chat.last_model if args.workload == "chat" else "")
    if args.workload == "chat" and not model:
        return _fail("bench", CHAT_NEEDS_MODEL, 2)
    plan = BenchPlan(
        a=a_id,
        b=b_id,
        workload=args.workload,
        reps=args.reps,
        python=python,
        device=args.device,
        model=model or "",
        quick=args.quick,
    )
    try:
        run = ABRun(plan, a_name, b_name)
    except PanelError as exc:
        return _fail("bench", exc.message, 2)
    try:
        interrupted = drive(run)
    except PanelError as exc:  # the worker could not start (no such Python, …)
        run.cancel()
        return _fail("bench", exc.message, 1)
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
    return 1 if done < planned or not exported or not measured else 0


def drive(run: Any) -> bool:
    """Run every worker ``run`` hands out, one at a time; progress goes to stderr. Returns
    whether Ctrl+C stopped it (the worker is then killed and the run cancelled)."""
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
        job = JobProcess(prepare(with_job_env(spec)), on_event, lambda o: None)
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
            run.record(dict(outcome.result))
        else:
            message = outcome.error.message if outcome.error is not None else outcome.message
            run.failed(message)
    return False


def print_table(result: BenchResult) -> None:
    """The cases as a table (case, unit, medians, ratio with its spread, verdict; 3
    significant digits), then, per side, the preset settings that had no effect."""
    from rocmpanel.tuning.bench_stats import figure, spread_text

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
            f"{figure(c.ratio)}×",
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
