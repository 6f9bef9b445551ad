"""``rocmpanel presets`` (list, show, validate, export) and ``rocmpanel bench`` (A/B run).

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


def register(subparsers: Any) -> None:
    _register_presets(subparsers)
    _register_bench(subparsers)


def _register_presets(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "presets",
        help="list, show, validate and export tuning presets",
        description="Tuning presets are named sets of environment variables and torch "
        "settings that the panel's jobs run under. List them, show one item by item (with "
        "why, its source, and whether it does anything on this machine), validate preset "
        "files, or export one as a file.",
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
        "folder's presets/). Preset files that cannot be read are named on stderr.",
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

    p_validate = sub.add_parser(
        "validate",
        help="check preset files against the schema",
        description="Check preset files; each problem is printed as file:line: field: "
        "problem. Exit code 1 when any file is bad.",
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
        type=Path,
        metavar="FILE",
        help="the file to write (an existing one is backed up first)",
    )
    p_export.add_argument("--json", action="store_true", help="print what was written as JSON")
    p_export.set_defaults(func=run_export)


def _register_bench(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="A/B benchmark of two presets",
        description='Measure a workload under preset A and preset B (or "none"), '
        "alternating A B A B in fresh worker processes, and report each case's medians, "
        "the ratio B/A (above 1: B is better) with its spread, and a verdict; overlapping "
        'spreads read "no measurable difference". The result is saved in the data '
        "folder's bench/. Ctrl+C stops the run and keeps what was measured.",
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
        help="runs of each side, 2 to 50 (default 5)",
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
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(func=run_bench)


# -- presets -------------------------------------------------------------------------------
def _fail(command: str, message: str, code: int) -> int:
    print(f"rocmpanel {command}: {message}", file=sys.stderr)
    return code


def _store() -> PresetStore:
    from rocmpanel.jobs.presets import PresetStore

    return PresetStore()


def _report_problems(store: PresetStore) -> None:
    for problem in store.problems:
        print(f"rocmpanel presets: skipped {problem.path}: {problem.message}", file=sys.stderr)


def _known(store: PresetStore, *, with_none: bool = False) -> str:
    """The ids a user may give (and "none" where no preset is a choice)."""
    from rocmpanel.jobs.presets import NO_PRESET

    ids = [p.id for p in store.all()]
    return ", ".join([NO_PRESET, *ids] if with_none else ids)


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


def run_list(args: argparse.Namespace) -> int:
    store = _store()
    presets = store.all()
    _report_problems(store)
    if args.json:
        print(json.dumps([_preset_json(p) for p in presets], indent=2, ensure_ascii=False))
        return 0
    width = max((len(p.id) for p in presets), default=2)
    for preset in presets:
        kind = "built-in" if preset.builtin else "user"
        archs = ", ".join(preset.archs)
        count = len(preset.items())
        print(
            f"{preset.id:<{width}}  {preset.name} ({kind}; {archs}; "
            f"{count} item{'s' if count != 1 else ''})"
        )
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
    from rocmpanel.jobs.presets import item_effects

    store = _store()
    try:
        preset = store.get(args.name)
    except PanelError:
        return _fail("presets", f"unknown preset {args.name!r}. Known: {_known(store)}.", 2)
    target = this_target()
    effects = item_effects(preset, target)
    if args.json:
        data = _preset_json(preset)
        data["target"] = {"platform": target.platform, "gfx": target.gfx}
        for item_data, effect in zip(data["items"], effects, strict=True):
            item_data["applies"] = effect.applies
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
        value = ", ".join(map(str, item.value)) if isinstance(item.value, tuple) else item.value
        if effect.applies:
            state = f"applies ({effect.note})" if effect.note else "applies"
        else:
            state = f"no effect here: {effect.note}" if effect.note else "no effect here"
        print(f"  {item.kind} {item.key} = {value}  [{state}]")
        if item.why:
            print(f"      {item.why}")
        if item.source:
            print(f"      source: {item.source}")
    return 0


def problem_line(exc: Any) -> str:
    """A PresetError as ``file:line: field: problem`` (``file: field: problem`` without a
    line)."""
    where = f"{exc.file}:{exc.line}" if exc.line else str(exc.file)
    return f"{where}: {exc.field}: {exc.problem}"


def run_validate(args: argparse.Namespace) -> int:
    from rocmpanel.jobs.presets import PresetError, parse_preset

    findings = []
    for path in args.files:
        name = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            findings.append({"file": name, "ok": False, "problem": f"{name}: cannot read: {why}"})
            continue
        try:
            preset = parse_preset(text, name)
        except PresetError as exc:
            findings.append({"file": name, "ok": False, "problem": problem_line(exc)})
            continue
        findings.append({"file": name, "ok": True, "id": preset.id, "items": len(preset.items())})
    bad = [f for f in findings if not f["ok"]]
    if args.json:
        print(json.dumps(findings, indent=2, ensure_ascii=False))
    else:
        for finding in findings:
            if finding["ok"]:
                count = finding["items"]
                items = f"{count} item{'s' if count != 1 else ''}"
                print(f"{finding['file']}: ok ({finding['id']}, {items})")
            else:
                print(finding["problem"])
    return 1 if bad else 0


def run_export(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError

    store = _store()
    try:
        preset = store.get(args.name)
    except PanelError:
        return _fail("presets", f"unknown preset {args.name!r}. Known: {_known(store)}.", 2)
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
def _side(store: PresetStore, ident: str) -> tuple[str, str] | None:
    """(preset id or "none", name shown) for ``--a``/``--b``; None when unknown."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.jobs.presets import NO_PRESET

    if ident.strip().lower() == NO_PRESET:
        return NO_PRESET, NO_PRESET
    try:
        preset = store.get(ident)
    except PanelError:
        return None
    return preset.id, preset.name


def run_bench(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.tuning.bench import ABRun, BenchPlan, save_result

    store = _store()
    side_a, side_b = _side(store, args.a), _side(store, args.b)
    for given, side in ((args.a, side_a), (args.b, side_b)):
        if side is None:
            known = _known(store, with_none=True)
            return _fail("bench", f"unknown preset {given!r}. Known: {known}.", 2)
    assert side_a is not None and side_b is not None
    (a_id, a_name), (b_id, b_name) = side_a, side_b
    settings = Settings.load()
    python = args.python if args.python is not None else settings.general.workload_python
    model = args.model or (settings.chat.last_model if args.workload == "chat" else "")
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
    saved_as: str | None = None
    try:
        result = save_result(result)
        saved_as = result.id
    except PanelError as exc:
        print(f"rocmpanel bench: the result was not saved: {exc.message}", file=sys.stderr)
    if args.json:
        data = result.to_json()
        data["saved"] = saved_as is not None
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print_table(result)
        if saved_as:
            print(f"Saved as {saved_as}.")
    for error in result.errors:
        print(f"rocmpanel bench: {error}", file=sys.stderr)
    if interrupted:
        return 130
    done, planned = run.progress
    return 1 if done < planned else 0


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


def _figure(value: float) -> str:
    return f"{value:.4g}"


def print_table(result: BenchResult) -> None:
    """The cases as a table: medians, the ratio (> 1: B better) with its spread, verdict."""
    print(
        f"A: {result.a_name}   B: {result.b_name}   workload: {result.plan.workload}   "
        f"on {result.device_label or 'unknown device'} (torch {result.torch_version or '?'})"
    )
    header = ("case", "A median", "B median", "ratio", "spread", "verdict", "unit")
    rows = [
        (
            c.case,
            _figure(c.a_median),
            _figure(c.b_median),
            f"{c.ratio:.3f}",
            f"{c.ratio_low:.3f}-{c.ratio_high:.3f}",
            c.verdict,
            c.unit + ("" if c.higher_is_better else " (lower is better)"),
        )
        for c in result.cases
    ]
    if not rows:
        print("No case was measured on both sides.")
        return
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    runs = len(result.runs)
    print(f"{runs} runs; ratio above 1 means B is better; spread: worst to best of each side.")
