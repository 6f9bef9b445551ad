"""``rocmpanel torch``: plan, install, list and validate PyTorch environments headless."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import re
import sys
from typing import Any

from rocmpanel.base.cliargs import gfx_name, integer, nonempty, version
from rocmpanel.base.frozen import own_python
from rocmpanel.jobs.gpu_choice import add_gpus_option, say_where

_PYTHON_VERSION_RE = re.compile(r"\d+\.\d+")
_INDEX_SCHEMES = ("https://", "http://", "file://")
QUOTE_LIMIT = 40  # characters of a refused value an error message quotes


def quoted(text: str) -> str:
    """``text`` as an error message quotes it: whole when short, else its first
    :data:`QUOTE_LIMIT` characters and its length (a pasted 10 kB value is not echoed)."""
    if len(text) <= QUOTE_LIMIT:
        return repr(text)
    head = repr(text[:QUOTE_LIMIT])
    return f"{head[:-1]}…{head[-1]} ({len(text)} characters)"


def base_target(text: str) -> str:
    """The processor of an AMDGPU target ID, lower-cased: rocminfo and torch print targets
    with their feature settings ("gfx90a:sramecc+:xnack-", "gfx1100:xnack-"); the part
    before the first ':' is the gfx target. Target ID syntax:
    https://llvm.org/docs/AMDGPUUsage.html#target-id"""
    return text.strip().lower().split(":", 1)[0].strip()


def gfx_target(text: str) -> str:
    """``--gfx`` of ``torch validate``: a well-formed gfx target, feature settings dropped
    (as for plan and install)."""
    try:
        return gfx_name(base_target(text))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} is not a gfx target name (expected gfx followed by 3 or 4 hex "
            "digits, such as gfx1100 or gfx90a)"
        ) from None


def python_version(text: str) -> str:
    """A Python version as X.Y (``3.12``), for ``--python`` of plan and install."""
    value = text.strip()
    if not _PYTHON_VERSION_RE.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} is not a Python version (expected X.Y, such as 3.12)"
        )
    return value


def os_name(text: str) -> str:
    value = text.strip().lower()
    if value not in ("linux", "windows"):
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} is not an OS rocmpanel plans for (linux or windows)"
        )
    return value


def index_url(text: str) -> str:
    value = text.strip()
    if not value.lower().startswith(_INDEX_SCHEMES) or len(value) <= len("file://"):
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} is not an index URL (expected https://…, http://… or file://…)"
        )
    return value


def known_gfx(text: str) -> str:
    """A gfx target the panel's data knows (the same data ``doctor`` judges by), for
    ``--gfx`` of plan and install; a typo gets the closest known names. A target ID with
    feature settings, as rocminfo prints it ("gfx90a:sramecc+:xnack-"), is its base target:
    the plan then uses that."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.knowledge.kernels import known_gfx_targets
    from rocmpanel.knowledge.torch_builds import load_manifest

    value = base_target(text)
    try:
        known = known_gfx_targets(load_manifest().builds)
    except PanelError:  # the data cannot be read: the format check has to do
        return gfx_name(value)
    if value in known:
        return value
    product = _gfx_of_product(value)
    if product:
        hint = f"it looks like a product name: {product}. Known"
    else:
        close = difflib.get_close_matches(value, sorted(known), n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(close)}? Known" if close else "known"
    raise argparse.ArgumentTypeError(
        f"{quoted(text)} is not a GPU target rocmpanel knows; {hint} targets: "
        f"{', '.join(sorted(known, key=_gfx_order))}."
    )


def _gfx_of_product(text: str) -> str | None:
    """Words for ``--gfx`` given a product's model number ("rx7900", "7900xtx", "MI300X"):
    the gfx targets of the products with that number, from the PCI table; None when the
    text is no model number or no product (or more than three targets) has it."""
    import re

    from rocmpanel.machine.pci_ids import load_table, products

    numbers = re.findall(r"\d{3,4}", text)
    if text.startswith("gfx") or len(numbers) != 1:
        return None
    number = numbers[0]
    targets = {
        entry.gfx
        for entry in load_table().devices.values()
        if entry.gfx
        and any(re.search(rf"(?<![\d.]){number}(?!\d)", p) for p in products(entry.name))
    }
    if not targets or len(targets) > 3:
        return None
    if len(targets) == 1:
        [gfx] = targets
        return f"AMD GPUs numbered {number} are {gfx}, so pass --gfx {gfx}"
    listed = " or ".join(sorted(targets, key=_gfx_order))
    return f"AMD GPUs numbered {number} are {listed} depending on the exact model"


def _gfx_order(gfx: str) -> tuple[int, str]:
    return (len(gfx), gfx)


def profile_name(text: str) -> str:
    from rocmpanel.knowledge.install_profiles import PROFILE_IDS

    value = text.strip().lower()
    if value not in PROFILE_IDS:
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} is not an install profile (expected {' or '.join(PROFILE_IDS)})"
        )
    return value


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "torch",
        help="plan, install and validate the right PyTorch build for this GPU",
        description="Plan and install the PyTorch build that fits this GPU, ROCm and Python "
        "into a managed environment, list environments, validate one, and read the history "
        "of validation runs. plan and install take --profile pytorch|llm (default llm: also "
        "the packages Chat needs).",
    )
    sub = parser.add_subparsers(
        dest="torch_command",
        metavar="ACTION",
        required=True,
        help="what to do; `rocmpanel torch ACTION --help` explains one",
    )
    run_id = integer(1)

    def plan_inputs(p: argparse.ArgumentParser) -> None:
        p.add_argument("--gfx", type=known_gfx, help="GPU target, e.g. gfx1100 (default: detected)")
        p.add_argument(
            "--profile",
            type=profile_name,
            metavar="{pytorch,llm}",
            default="llm",
            help="what to install: pytorch (torch and the build's companions: torchvision, "
            "torchaudio where the build has them) or llm (also transformers, accelerate, "
            "safetensors, tokenizers and, where it works, bitsandbytes for 4-bit chat; the "
            "default)",
        )
        p.add_argument("--rocm", type=version, help="installed ROCm version (default: detected)")
        p.add_argument(
            "--os", dest="os_name", type=os_name, help="linux or windows (default: this one)"
        )
        p.add_argument(
            "--python",
            dest="python_version",
            type=python_version,
            help="X.Y (default: the base Python)",
        )

    p_plan = sub.add_parser(
        "plan",
        help="show the build to install and the exact pip command",
        description="Show the PyTorch build for this GPU (or --gfx), what the install profile "
        "adds and why, the download size and the exact pip commands. Exit code 1 when there "
        "is no build to install.",
    )
    plan_inputs(p_plan)
    p_plan.add_argument("--json", action="store_true", help="print the plan as JSON")
    p_plan.set_defaults(func=run_plan)

    p_install = sub.add_parser(
        "install",
        help="install the planned build into a new environment",
        description="Install the planned build and the profile's packages into a new managed "
        "environment and make it the workload Python; a failed or cancelled install removes "
        "its folder and changes nothing else.",
    )
    plan_inputs(p_install)
    p_install.add_argument(
        "--env",
        dest="env_name",
        type=nonempty("the environment name"),
        help="environment name (default: the build)",
    )
    p_install.add_argument(
        "--index-url", type=index_url, help="use this index instead of the planned one"
    )
    p_install.add_argument("--no-activate", action="store_true", help="do not make it active")
    p_install.set_defaults(func=run_install)

    p_envs = sub.add_parser(
        "envs",
        help="list environments; activate or remove one",
        description="List the managed environments and registered interpreters (* marks the "
        "active one), or activate, register or remove one, or delete unfinished installs.",
    )
    group = p_envs.add_mutually_exclusive_group()
    group.add_argument(
        "--activate",
        metavar="NAME_OR_PYTHON",
        type=nonempty("the environment or interpreter", has_default=False),
        help="make it the workload Python",
    )
    group.add_argument(
        "--remove",
        metavar="NAME",
        type=nonempty("the environment name", has_default=False),
        help="delete a managed environment",
    )
    group.add_argument(
        "--register",
        metavar="PYTHON",
        type=nonempty("the interpreter", has_default=False),
        help="add an interpreter to the list",
    )
    group.add_argument(
        "--clean", action="store_true", help="delete folders of installs that never finished"
    )
    p_envs.add_argument("--yes", action="store_true", help="do not ask before removing")
    p_envs.add_argument(
        "--json", action="store_true", help="print the environments and interpreters as JSON"
    )
    p_envs.set_defaults(func=run_envs)

    p_val = sub.add_parser(
        "validate",
        help="run the validation suite in an environment",
        description="Run the validation suite in an environment, print each check with its "
        "likely cause and fix, and save the run to the history. Exit code 1 unless every "
        "check passes.",
    )
    which = p_val.add_mutually_exclusive_group()
    which.add_argument(
        "--python",
        type=nonempty("the interpreter"),
        help="interpreter to validate (default: the workload Python)",
    )
    which.add_argument(
        "--env",
        dest="env_name",
        type=nonempty("the environment name"),
        help="managed environment to validate",
    )
    p_val.add_argument(
        "--gfx", type=gfx_target, help="expected gfx target, e.g. gfx1100 (default: detected)"
    )
    p_val.add_argument("--quick", action="store_true", help="smaller sizes, faster")
    p_val.add_argument("--json", action="store_true", help="print the run as JSON")
    p_val.add_argument("--markdown", action="store_true", help="print the run as Markdown")
    add_gpus_option(p_val)
    p_val.set_defaults(func=run_validate)

    p_hist = sub.add_parser(
        "history",
        help="list saved validation runs, export or compare them",
        description="List the saved validation runs, print one as Markdown, or compare two.",
    )
    p_hist.add_argument("--export", type=run_id, metavar="ID", help="print run ID as Markdown")
    p_hist.add_argument(
        "--compare",
        type=run_id,
        nargs=2,
        metavar=("A", "B"),
        help="compare runs A and B, as Markdown",
    )
    p_hist.set_defaults(func=run_history)


def _fail(message: str, code: int = 2) -> int:
    print(f"rocmpanel torch: {message}", file=sys.stderr)
    return code


def _plan(args: argparse.Namespace, index_url: str | None = None) -> Any:
    from rocmpanel.base.settings import Settings
    from rocmpanel.knowledge.torch_builds import load_manifest
    from rocmpanel.pytorch import plan_inputs

    settings = Settings.load()
    # A CLI may block: it detects the GPU itself (the GUI reads the app's inventory).
    machine = (
        plan_inputs.Machine(plan_inputs.this_os(), None, None)
        if args.gfx
        else plan_inputs.detect_machine()
    )
    python_version = args.python_version or plan_inputs.python_version_of(
        plan_inputs.base_python(settings)
    )
    install_plan = plan_inputs.make_plan(
        settings,
        machine,
        python_version=python_version,
        manifest=load_manifest(),
        gfx=args.gfx,
        rocm=args.rocm,
        os_name=args.os_name,
        index_url=index_url,
        profile=args.profile,
    )
    return settings, machine, install_plan


def _profile_text(profile: str) -> str:
    """The profile as the PyTorch tab names it, with the --profile word: "PyTorch + local
    LLM (llm)"; the word alone when the profile data cannot be read."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.knowledge import install_profiles

    try:
        label = install_profiles.load().get(profile).label
    except PanelError:
        return profile
    return f"{label} ({profile})"


def _print_plan(install_plan: Any, machine: Any, action: str = "plan") -> None:
    """The plan as text; ``action`` ("plan" or "install") is the command a hint names."""
    from rocmpanel.base.units import format_download

    p = install_plan
    print(
        f"GPU: {p.gfx or 'none detected'}  OS: {p.os}  Python: {p.python_version or '?'}  "
        f"ROCm installed: {p.rocm_version or 'n/a'}"
    )
    if machine.note:
        print(f"note: {machine.note}")
    if not p.supported:
        from rocmpanel.pytorch.plan import NO_GPU_HINT

        if p.gfx is None and (p.refusal or "").endswith(NO_GPU_HINT):
            # Said once, as the command to type (the plan's own words name no command).
            print(f"No install: {p.refusal.removesuffix(NO_GPU_HINT)}")
            print(
                "To plan for a GPU anyway, give its gfx target: "
                f"rocmpanel torch {action} --gfx gfx1100 (for example)."
            )
        else:
            print(f"No install: {p.refusal}")
        return
    preview = " (preview)" if p.preview else ""
    print(f"Build: torch {p.torch_version} for ROCm {p.rocm_build}{preview}  [{p.build_id}]")
    print(f"Index: {p.index_url}")
    print(f"Wheels for Python: {', '.join(p.python_versions)}")
    print(
        f"Download: about {format_download(p.download_bytes)}; free disk needed: about "
        f"{format_download(p.free_disk_bytes)} (estimates)"
    )
    print(f"Profile: {_profile_text(p.profile)}")
    for line in p.extra_lines:
        print(f"  + {line}")
    if p.four_bit_note:
        print(p.four_bit_note)
    print(f"Command: {p.command}")
    for key, value in p.job_env.items():
        print(f"Job environment: {key}={value}")
    for warning in p.warnings:
        print(f"warning: {warning}")


def run_plan(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError

    try:
        _, machine, install_plan = _plan(args)
    except PanelError as exc:
        return _fail(exc.message)
    if args.json:
        data = install_plan.to_dict()
        data["detection_note"] = machine.note or None
        print(json.dumps(data, indent=2))
    else:
        _print_plan(install_plan, machine)
    return 0 if install_plan.supported else 1


def run_install(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.jobs import workload
    from rocmpanel.jobs.job_env import with_job_env
    from rocmpanel.jobs.process import JobProcess
    from rocmpanel.jobs.protocol import LogLine, Progress
    from rocmpanel.jobs.spec import prepare
    from rocmpanel.pytorch import environments

    try:
        settings, machine, p = _plan(args, index_url=args.index_url)
        _print_plan(p, machine, "install")
        if not p.supported:
            return 1
        if not p.python_ok:
            return _fail(
                "the base Python has no wheels for this build: set torch_base_python in the "
                "settings to a Python " + " / ".join(p.python_versions) + " interpreter"
            )
        name = args.env_name or environments.default_env_name(p)
        ticket, spec = environments.prepare_install(p, name, settings)
    except PanelError as exc:
        return _fail(str(exc))
    try:
        # As the panel's job manager does for every job: the "Panel jobs" variables.
        spec = with_job_env(spec)
    except PanelError as exc:
        environments.discard(ticket)
        return _fail(exc.message, 1)

    def on_event(event: object) -> None:
        if isinstance(event, Progress):
            pct = f"{event.fraction:4.0%}" if event.fraction is not None else "  ? "
            print(f"[{pct}] {event.step}", flush=True)
        elif isinstance(event, LogLine):
            print(f"       {event.message}", flush=True)
        # A worker's error event becomes the outcome's message, printed once below.

    job = JobProcess(prepare(spec), on_event, lambda o: None, grace_s=3.0)
    try:
        job.start()
        outcome = job.wait()
    except KeyboardInterrupt:
        job.cancel()
        job.wait(30)
        environments.discard(ticket)
        print("Cancelled; the partial environment was removed.")
        return 130
    except PanelError as exc:
        environments.discard(ticket)
        return _fail(exc.message)
    assert outcome is not None
    if not outcome.was_successful():
        environments.discard(ticket)
        print(
            f"Install failed: {outcome}\n"
            "The partial environment was removed; nothing else changed.",
            file=sys.stderr,
        )
        return 1
    try:
        env = environments.finish_install(ticket, outcome.result)
    except PanelError as exc:
        return _fail(exc.message, 1)
    print(
        f"Installed {name} at {env.path}: "
        + ", ".join(f"{k} {v}" for k, v in env.installed.items())
    )
    if not args.no_activate:
        workload.activate(settings, str(env.python))
        print(f"Active workload Python: {env.python}")
    return 0


def _is_executable(python: str) -> bool:
    """Whether ``python`` names an executable file (what registering an interpreter needs)."""
    import os
    from pathlib import Path

    path = Path(python).expanduser()
    return path.is_file() and os.access(path, os.X_OK)


def _inside(python: str, folder: Any) -> bool:
    """Whether the interpreter path ``python`` lies in ``folder``."""
    from pathlib import Path

    return bool(python) and Path(python).is_relative_to(folder)


def run_envs(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.jobs import workload
    from rocmpanel.pytorch import environments

    settings = Settings.load()
    active = settings.general.workload_python
    try:
        if args.clean:
            gone = environments.remove_partial()
            print("\n".join(f"Removed {p}" for p in gone) or "No unfinished installs found.")
            if any(_inside(active, p) for p in gone):
                workload.activate(settings, "")
                print(
                    f"The active workload Python {active} was in a removed folder: the "
                    "panel's own Python is used now."
                )
            return 0
        if args.register is not None:
            value, kept = workload.add_interpreter(args.register)
            if kept is not None:
                print(
                    f"The damaged list of registered interpreters was kept as {kept}; "
                    "a new list was started."
                )
            print(f"Registered {value}")
            return 0
        if args.activate is not None:
            damaged = environments.damaged_env(args.activate)
            if damaged is not None:
                return _fail(
                    f"the environment {damaged.name!r} cannot be used: its record "
                    f"{damaged.record} is damaged ({damaged.problem}). {damaged.cli_advice}",
                    1,
                )
            env = workload.find_env(args.activate)
            python = str(env.python) if env else args.activate
            if env is None and python not in workload.registered_interpreters():
                if not _is_executable(python):
                    name = args.activate
                    return _fail(
                        f"No managed environment is named {name}, and {name} is not a Python "
                        "interpreter. `rocmpanel torch envs` lists them."
                    )
                python = workload.register_interpreter(python)
            workload.activate(settings, python)
            print(f"Active workload Python: {python}")
            return 0
        if args.remove is not None:
            target = environments.find_removable(args.remove)
            if target is None:
                raise PanelError(f"No managed environment named {args.remove!r}.")
            if not args.yes:
                answer = input(f"Delete the environment {args.remove!r} and its files? [y/N] ")
                if answer.strip().lower() not in ("y", "yes"):
                    print("Nothing removed.")
                    return 1
            if _inside(active, target.path):
                # Before deleting: a removal cut short (killed, a file that will not go)
                # must not leave GPU jobs pointed at a half-deleted environment.
                workload.activate(settings, "")
                print("It was the active environment: the panel's own Python is used now.")
            removed = environments.remove_env(args.remove)
            print(f"Removed {removed.path}")
            return 0
    except PanelError as exc:
        return _fail(str(exc))
    damage = workload.interpreters_damage()
    if damage is not None:
        print(f"rocmpanel torch: {damage}", file=sys.stderr)
    broken = environments.damaged_envs()
    # An environment whose record is damaged is listed as such, never as usable.
    unusable = {str(d.python) for d in broken}
    items = [i for i in workload.interpreters() if not (i.managed and i.python in unusable)]
    if args.json:
        rows = [{**vars(i), "active": i.python == active, "damaged": False} for i in items]
        rows += [
            {
                "label": d.name,
                "python": str(d.python),
                "managed": True,
                "exists": d.python.exists(),
                "active": str(d.python) == active,
                "damaged": True,
                "record": str(d.record),
                "problem": d.problem,
                "fix": d.cli_advice,
            }
            for d in broken
        ]
        print(json.dumps(rows, indent=2))
        return 0
    if not items and not broken:
        print("No managed environments yet: `rocmpanel torch install` creates one.")
    for item in items:
        mark = "*" if item.python == active else " "
        kind = "missing" if not item.exists else ("managed" if item.managed else "registered")
        print(f"{mark} {item.label:40} {kind:10} {item.python}")
    for d in broken:
        mark = "*" if str(d.python) == active else "!"
        print(f"{mark} {d.name:40} {'damaged':10} {d.record}: {d.problem}.")
        print(f"  {'':40} {'':10} {d.cli_advice}")
    if not active:
        print(f"  (active: the panel's own Python, {own_python()})")
    elif not Path(active).exists():
        print(
            f"  (active: {active} (missing: no such file; GPU jobs cannot start until "
            "`rocmpanel torch envs --activate NAME_OR_PYTHON` picks another))"
        )
    elif not any(i.python == active for i in items) and active not in unusable:
        print(f"  (active: {active})")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    import sqlite3

    from rocmpanel.base.enums import CheckStatus
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.jobs.job_env import env_preset, with_job_env
    from rocmpanel.jobs.process import JobProcess
    from rocmpanel.jobs.spec import prepare
    from rocmpanel.knowledge.torch_builds import load_manifest
    from rocmpanel.pytorch import environments
    from rocmpanel.pytorch.plan_inputs import detect_machine
    from rocmpanel.pytorch.validation_job import (
        CheckCollector,
        resolve_target,
        run_from_outcome,
        validate_spec,
    )
    from rocmpanel.pytorch.validation_report import STATUS_MARK, counts_text, fix_for, to_markdown
    from rocmpanel.pytorch.validation_run import RunVerdict
    from rocmpanel.pytorch.validation_store import ValidationStore

    settings = Settings.load()
    quiet = args.json or args.markdown
    damaged = environments.damaged_env(args.env_name) if args.env_name else None
    if damaged is not None:
        return _fail(
            f"the environment {damaged.name!r} cannot be validated: its record "
            f"{damaged.record} is damaged ({damaged.problem}). {damaged.cli_advice}",
            1,
        )
    try:
        python, env_name, job_env = resolve_target(args.python, args.env_name, settings)
        machine = detect_machine() if not args.gfx else None
        gfx = args.gfx or (machine.gfx if machine else None)
        vram = machine.vram_bytes if machine else None
        spec = validate_spec(
            python, gfx=gfx, sysfs_vram_bytes=vram, job_env=job_env, quick=args.quick
        )
    except PanelError as exc:
        return _fail(str(exc))
    try:
        # As the panel's job manager does for every job: the "Panel jobs" variables.
        spec = with_job_env(dataclasses.replace(spec, gpus=args.gpus))
    except PanelError as exc:
        return _fail(exc.message, 1)
    say_where(spec.env, "rocmpanel torch validate")
    try:
        collector = CheckCollector()

        def on_event(event: object) -> None:
            check = collector.feed(event)
            if check is not None and not quiet:
                mark = STATUS_MARK[check.status].upper()
                print(f"  {mark:4}  {check.name}: {check.figure}", flush=True)

        job = JobProcess(prepare(spec), on_event, lambda o: None)
        job.start()
    except PanelError as exc:
        return _fail(str(exc))
    try:
        outcome = job.wait(900)
    except KeyboardInterrupt:
        job.cancel()
        outcome = job.wait(30)
    if outcome is None:
        job.cancel()
        outcome = job.wait(30)
        if outcome is None:
            return _fail("the validation did not finish", 1)
    run = run_from_outcome(
        outcome,
        collector,
        python=python,
        env_name=env_name,
        gfx=gfx,
        preset=env_preset(spec.env),
    )
    # The run is printed and decides the exit status whatever becomes of saving it: a
    # failed save is a warning on stderr, and only the history misses the run.
    save_error: str | None = None
    store = ValidationStore()
    try:
        run = store.save(run)
    except PanelError as exc:
        save_error = exc.message
    except (OSError, sqlite3.Error) as exc:  # not expected: connect() turns these into PanelErrors
        save_error = f"{type(exc).__name__}: {exc}"
    if store.notice:
        print(f"rocmpanel torch: {store.notice}", file=sys.stderr)
    if save_error is not None:
        print(
            f"rocmpanel torch: the run was not saved to the history: {save_error}",
            file=sys.stderr,
        )
    try:
        overrides = load_manifest().overrides
    except PanelError as exc:  # the fixes come from the data set; the run is shown without
        print(f"rocmpanel torch: {exc.message}", file=sys.stderr)
        overrides = {}
    if args.json:
        data = {
            **run.info,
            "id": run.id,
            "saved": save_error is None,
            "save_error": save_error,
            "verdict": run.verdict.value,
            "outcome": run.outcome,
            "checks": [],
        }
        for check in run.checks:
            fix = fix_for(run, check, overrides)
            data["checks"].append(
                {
                    **vars(check),
                    "status": check.status.value,
                    "cause": fix.cause if fix else None,
                    "fix": fix.fix if fix else None,
                }
            )
        print(json.dumps(data, indent=2, default=str))
    elif args.markdown:
        print(to_markdown(run, overrides), end="")
    else:
        for check in run.checks:
            fix = fix_for(run, check, overrides)
            if fix is not None:
                print(f"\n{check.name}: {check.figure}\n  cause: {fix.cause}\n  fix:   {fix.fix}")
        print(f"\nRun #{run.id or '-'}: {counts_text(run)} ({run.outcome}). Preset: {run.preset}.")
        if any(c.fix_id == "torch_missing" and c.status is CheckStatus.FAIL for c in run.checks):
            from rocmpanel.jobs.workload import NEXT_STEP_NO_TORCH

            print(NEXT_STEP_NO_TORCH)
    return 0 if run.verdict is RunVerdict.PASS else 1


def run_history(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.pytorch.validation_store import ValidationStore

    store = ValidationStore()
    try:
        return _history(args, store)
    except PanelError as exc:
        return _fail(exc.message, 1)
    finally:
        if store.notice:  # a damaged file was moved aside: say so, whatever else happened
            print(f"rocmpanel torch: {store.notice}", file=sys.stderr)


def _history(args: argparse.Namespace, store: Any) -> int:
    from rocmpanel.knowledge.torch_builds import load_manifest
    from rocmpanel.pytorch.validation_report import (
        compare_markdown,
        damaged_text,
        run_title,
        to_markdown,
    )

    if args.export is not None:
        run = store.get(args.export)
        if run is None:
            return _fail(
                f"no validation run #{args.export} (`rocmpanel torch history` lists them)", 1
            )
        if run.damaged is not None:
            return _fail(damaged_text(run), 1)
        print(to_markdown(run, load_manifest().overrides), end="")
        return 0
    if args.compare:
        a, b = store.get(args.compare[0]), store.get(args.compare[1])
        missing = [str(i) for i, r in zip(args.compare, (a, b), strict=True) if r is None]
        if missing:
            return _fail(
                f"no validation run #{', #'.join(missing)} (`rocmpanel torch history` lists them)",
                1,
            )
        bad = next((r for r in (a, b) if r is not None and r.damaged is not None), None)
        if bad is not None:
            return _fail(damaged_text(bad), 1)
        print(compare_markdown(a, b), end="")
        return 0
    runs = store.list_runs()
    if not runs:
        print("No validation runs saved yet: `rocmpanel torch validate` makes one.")
    for run in runs:
        print(run_title(run))
    return 0
