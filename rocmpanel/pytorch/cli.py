"""``rocmpanel torch``: plan, install, list and validate PyTorch environments headless."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "torch", help="plan, install and validate the right PyTorch build for this GPU"
    )
    sub = parser.add_subparsers(dest="torch_command", metavar="ACTION", required=True)

    def plan_inputs(p: argparse.ArgumentParser) -> None:
        p.add_argument("--gfx", help="GPU target, e.g. gfx1100 (default: detected)")
        p.add_argument("--rocm", help="installed ROCm version (default: detected)")
        p.add_argument("--os", dest="os_name", help="linux or windows (default: this one)")
        p.add_argument("--python", dest="python_version", help="X.Y (default: the base Python)")

    p_plan = sub.add_parser("plan", help="show the build to install and the exact pip command")
    plan_inputs(p_plan)
    p_plan.add_argument("--json", action="store_true", help="print the plan as JSON")
    p_plan.set_defaults(func=run_plan)

    p_install = sub.add_parser("install", help="install the planned build into a new environment")
    plan_inputs(p_install)
    p_install.add_argument("--env", dest="env_name", help="environment name (default: the build)")
    p_install.add_argument("--index-url", help="use this index instead of the planned one")
    p_install.add_argument("--no-activate", action="store_true", help="do not make it active")
    p_install.set_defaults(func=run_install)

    p_envs = sub.add_parser("envs", help="list environments; activate or remove one")
    group = p_envs.add_mutually_exclusive_group()
    group.add_argument("--activate", metavar="NAME_OR_PYTHON", help="make it the workload Python")
    group.add_argument("--remove", metavar="NAME", help="delete a managed environment")
    group.add_argument("--register", metavar="PYTHON", help="add an interpreter to the list")
    group.add_argument(
        "--clean", action="store_true", help="delete folders of installs that never finished"
    )
    p_envs.add_argument("--yes", action="store_true", help="do not ask before removing")
    p_envs.add_argument("--json", action="store_true")
    p_envs.set_defaults(func=run_envs)

    p_val = sub.add_parser("validate", help="run the validation suite in an environment")
    which = p_val.add_mutually_exclusive_group()
    which.add_argument("--python", help="interpreter to validate (default: the workload Python)")
    which.add_argument("--env", dest="env_name", help="managed environment to validate")
    p_val.add_argument("--gfx", help="expected gfx target (default: detected)")
    p_val.add_argument("--quick", action="store_true", help="smaller sizes, faster")
    p_val.add_argument("--json", action="store_true", help="print the run as JSON")
    p_val.add_argument("--markdown", action="store_true", help="print the run as Markdown")
    p_val.set_defaults(func=run_validate)

    p_hist = sub.add_parser("history", help="list saved validation runs, export or compare them")
    p_hist.add_argument("--export", type=int, metavar="ID", help="print run ID as Markdown")
    p_hist.add_argument("--compare", type=int, nargs=2, metavar=("A", "B"))
    p_hist.set_defaults(func=run_history)


def _fail(message: str, code: int = 2) -> int:
    print(f"rocmpanel torch: {message}", file=sys.stderr)
    return code


def _plan(args: argparse.Namespace, index_url: str | None = None) -> Any:
    from rocmpanel.base.settings import Settings
    from rocmpanel.pytorch import operations as torch_jobs

    settings = Settings.load()
    machine = (
        torch_jobs.Machine(torch_jobs.this_os(), None, None)
        if args.gfx
        else torch_jobs.detect_machine()
    )
    install_plan = torch_jobs.make_plan(
        settings,
        machine,
        gfx=args.gfx,
        rocm=args.rocm,
        os_name=args.os_name,
        python_version=args.python_version,
        index_url=index_url,
    )
    return settings, machine, install_plan


def _print_plan(install_plan: Any, machine: Any) -> None:
    from rocmpanel.pytorch.plan import format_bytes

    p = install_plan
    print(
        f"GPU: {p.gfx or 'none detected'}  OS: {p.os}  Python: {p.python_version or '?'}  "
        f"ROCm installed: {p.rocm_version or 'n/a'}"
    )
    if machine.note:
        print(f"note: {machine.note}")
    if not p.supported:
        print(f"No install: {p.refusal}")
        return
    preview = " (preview)" if p.preview else ""
    print(f"Build: torch {p.torch_version} for ROCm {p.rocm_build}{preview}  [{p.build_id}]")
    print(f"Index: {p.index_url}")
    print(f"Wheels for Python: {', '.join(p.python_versions)}")
    print(
        f"Download: about {format_bytes(p.download_bytes)}; free disk needed: about "
        f"{format_bytes(p.free_disk_bytes)} (estimates)"
    )
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
    from rocmpanel.jobs.process import JobProcess
    from rocmpanel.jobs.protocol import LogLine, Progress, WorkerError
    from rocmpanel.jobs.spec import prepare
    from rocmpanel.pytorch import managed_envs
    from rocmpanel.pytorch import operations as torch_jobs

    try:
        settings, machine, p = _plan(args, index_url=args.index_url)
        _print_plan(p, machine)
        if not p.supported:
            return 1
        if not p.python_ok:
            return _fail(
                "the base Python has no wheels for this build: set torch_base_python in the "
                "settings to a Python " + " / ".join(p.python_versions) + " interpreter"
            )
        name = args.env_name or torch_jobs.default_env_name(p)
        ticket, spec = torch_jobs.prepare_install(p, name, settings)
    except PanelError as exc:
        return _fail(str(exc))

    def on_event(event: object) -> None:
        if isinstance(event, Progress):
            pct = f"{event.fraction:4.0%}" if event.fraction is not None else "  ? "
            print(f"[{pct}] {event.step}", flush=True)
        elif isinstance(event, LogLine):
            print(f"       {event.message}", flush=True)
        elif isinstance(event, WorkerError):
            print(f"error: {event.message}", flush=True)

    job = JobProcess(prepare(spec), on_event, lambda o: None, grace_s=3.0)
    try:
        job.start()
        outcome = job.wait()
    except KeyboardInterrupt:
        job.cancel()
        job.wait(30)
        managed_envs.discard(ticket)
        print("Cancelled; the partial environment was removed.")
        return 130
    except PanelError as exc:
        managed_envs.discard(ticket)
        return _fail(exc.message)
    assert outcome is not None
    if not outcome.was_successful():
        managed_envs.discard(ticket)
        print(
            f"Install failed: {outcome}\nThe partial environment was removed; nothing else changed."
        )
        return 1
    env = managed_envs.finish_install(ticket, outcome.result)
    print(
        f"Installed {name} at {env.path}: "
        + ", ".join(f"{k} {v}" for k, v in env.installed.items())
    )
    if not args.no_activate:
        managed_envs.activate(settings, str(env.python))
        print(f"Active workload Python: {env.python}")
    return 0


def run_envs(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.pytorch import managed_envs

    settings = Settings.load()
    try:
        if args.clean:
            gone = managed_envs.remove_partial()
            print("\n".join(f"Removed {p}" for p in gone) or "No unfinished installs found.")
            return 0
        if args.register:
            print(f"Registered {managed_envs.register_interpreter(args.register)}")
            return 0
        if args.activate:
            env = managed_envs.find_env(args.activate)
            python = str(env.python) if env else args.activate
            if env is None and python not in managed_envs.registered_interpreters():
                python = managed_envs.register_interpreter(python)
            managed_envs.activate(settings, python)
            print(f"Active workload Python: {python}")
            return 0
        if args.remove:
            if not args.yes:
                answer = input(f"Delete the environment {args.remove!r} and its files? [y/N] ")
                if answer.strip().lower() not in ("y", "yes"):
                    print("Nothing removed.")
                    return 1
            env = managed_envs.remove_env(args.remove)
            if settings.general.workload_python == str(env.python):
                managed_envs.activate(settings, "")
                print("It was the active environment: the panel's own Python is used now.")
            print(f"Removed {env.path}")
            return 0
    except PanelError as exc:
        return _fail(str(exc))
    active = settings.general.workload_python
    items = managed_envs.interpreters()
    if args.json:
        print(json.dumps([{**vars(i), "active": i.python == active} for i in items], indent=2))
        return 0
    if not items:
        print("No managed environments yet: `rocmpanel torch install` creates one.")
    for item in items:
        mark = "*" if item.python == active else " "
        kind = "managed" if item.managed else ("registered" if item.exists else "missing")
        print(f"{mark} {item.label:40} {kind:10} {item.python}")
    if not active:
        print(f"  (active: the panel's own Python, {sys.executable})")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.base.settings import Settings
    from rocmpanel.jobs.process import JobProcess
    from rocmpanel.jobs.protocol import Progress
    from rocmpanel.jobs.spec import prepare
    from rocmpanel.pytorch import operations as torch_jobs
    from rocmpanel.pytorch.manifest import load_manifest
    from rocmpanel.pytorch.validation_report import fix_for, to_markdown
    from rocmpanel.pytorch.validation_store import ValidationStore

    settings = Settings.load()
    quiet = args.json or args.markdown
    try:
        python, env_name, job_env = torch_jobs.resolve_target(args.python, args.env_name, settings)
        machine = torch_jobs.detect_machine() if not args.gfx else None
        gfx = args.gfx or (machine.gfx if machine else None)
        vram = machine.vram_bytes if machine else None
        spec = torch_jobs.validate_spec(
            python, gfx=gfx, sysfs_vram_bytes=vram, job_env=job_env, quick=args.quick
        )
        collector = torch_jobs.CheckCollector()

        def on_event(event: object) -> None:
            if collector.feed(event) and not quiet:
                check = collector.checks[-1]
                print(f"  {check['status'].upper():4}  {check['name']}: {check['figure']}")
            elif isinstance(event, Progress) and not quiet:
                pass

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
    run = torch_jobs.run_from_outcome(outcome, collector, python=python, env_name=env_name, gfx=gfx)
    run = ValidationStore().save(run)
    overrides = load_manifest().overrides
    if args.json:
        data = {
            **run.info,
            "id": run.id,
            "verdict": run.verdict,
            "outcome": run.outcome,
            "checks": [],
        }
        for check in run.checks:
            fix = fix_for(run, check, overrides)
            data["checks"].append(
                {
                    **vars(check),
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
        counts = run.counts
        print(
            f"\nRun #{run.id}: {counts['pass']} pass, {counts['fail']} fail, "
            f"{counts['skip']} skip ({run.outcome})."
        )
    return 0 if run.verdict == "pass" else 1


def run_history(args: argparse.Namespace) -> int:
    from rocmpanel.pytorch.manifest import load_manifest
    from rocmpanel.pytorch.validation_report import compare_markdown, run_title, to_markdown
    from rocmpanel.pytorch.validation_store import ValidationStore

    store = ValidationStore()
    if args.export is not None:
        run = store.get(args.export)
        if run is None:
            return _fail(f"no validation run #{args.export}")
        print(to_markdown(run, load_manifest().overrides), end="")
        return 0
    if args.compare:
        a, b = store.get(args.compare[0]), store.get(args.compare[1])
        if a is None or b is None:
            return _fail("no such run: " + ", ".join(str(i) for i in args.compare))
        print(compare_markdown(a, b), end="")
        return 0
    runs = store.list_runs()
    if not runs:
        print("No validation runs saved yet: `rocmpanel torch validate` makes one.")
    for run in runs:
        print(run_title(run))
    return 0
