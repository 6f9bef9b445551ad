"""``rocmpanel launch``: print (or write) a launch script for a user's training script, or
run the single-node one as a job.

Exit codes: 0 done; 1 the script could not be written, or the run failed; 2 wrong
arguments (a missing script, a bad endpoint, Windows); 130 the run was cancelled with
Ctrl+C (its processes are ended).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmpanel.base.cliargs import integer
from rocmpanel.jobs.gpu_choice import add_gpus_option

if TYPE_CHECKING:
    from rocmpanel.multigpu.launch import LaunchPlan
    from rocmpanel.multigpu.launch_env import LaunchEnv

KINDS = ("torchrun", "multinode", "slurm", "deepspeed")  # launch.KINDS, without importing it


def nodes(text: str) -> tuple[int, int | None]:
    """``--nnodes``: ``N`` or ``MIN:MAX`` (an elastic job), each at least 1."""
    low, sep, high = text.partition(":")
    try:
        first = int(low)
        last = int(high) if sep else None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not N or MIN:MAX (e.g. 2 or 2:4)") from None
    if first < 1 or (last is not None and last < first):
        raise argparse.ArgumentTypeError(f"{text!r}: at least 1 node, and MAX not below MIN")
    return first, last


def register(subparsers: Any) -> None:
    """``rocmpanel launch``."""
    parser = subparsers.add_parser(
        "launch",
        help="launch scripts for your training script (torchrun, Slurm, DeepSpeed)",
        description="Generate a launch script for your own training script: torchrun on "
        "this node (torchrun), torchrun on several nodes with c10d rendezvous and restarts "
        "(multinode), a Slurm batch script (slurm), or a DeepSpeed ZeRO-3 config "
        "(deepspeed, JSON). Each script sets the environment rocmpanel's jobs get (the "
        "active tuning preset, the Panel jobs variables, the GPU choice) and your own "
        "NCCL_*/RCCL_*/HSA_*/GLOO_* variables, each explained. Linux only: RCCL does not "
        "exist on Windows. Arguments after -- go to your script.",
    )
    parser.add_argument("kind", choices=KINDS, help="what to generate")
    _take_script_and_args(parser)
    parser.add_argument(
        "--nnodes", type=nodes, default=(1, None), metavar="N|MIN:MAX", help="nodes (default 1)"
    )
    parser.add_argument(
        "--nproc-per-node",
        type=integer(1, 1024),
        default=None,
        metavar="N",
        help="processes per node (default: the chosen GPUs' count, or 1 without a GPU)",
    )
    parser.add_argument(
        "--rdzv-endpoint",
        default=None,
        metavar="HOST:PORT",
        help="multinode/slurm: the c10d rendezvous (default: this machine's name, port "
        "29500; slurm always uses the allocation's first node)",
    )
    parser.add_argument("--rdzv-id", default="rocmpanel-train", metavar="ID", help="job id")
    parser.add_argument(
        "--max-restarts", type=integer(0, 1000), default=3, metavar="N", help="default 3"
    )
    add_gpus_option(parser)
    parser.add_argument(
        "--python",
        default=None,
        metavar="PATH",
        help="the Python on the nodes (default: the active workload Python, else python3)",
    )
    parser.add_argument(
        "--gres", default="", metavar="GRES", help="slurm: GPU request such as gpu:8 (none)"
    )
    parser.add_argument("--time", default="", metavar="LIMIT", help="slurm: time limit")
    parser.add_argument("--micro-batch", type=integer(1), default=1, help="deepspeed: per GPU")
    parser.add_argument("--grad-accum", type=integer(1), default=1, help="deepspeed: steps")
    parser.add_argument(
        "--precision", choices=("bf16", "fp16", "fp32"), default="bf16", help="deepspeed"
    )
    parser.add_argument(
        "--offload", action="store_true", help="deepspeed: offload optimizer and params to CPU"
    )
    parser.add_argument("--out", type=Path, default=None, metavar="FILE", help="write to FILE")
    parser.add_argument(
        "--force", action="store_true", help="replace --out FILE (it is backed up first)"
    )
    parser.add_argument(
        "--run",
        action="store_true",
        help="torchrun only: run it now as a job (Ctrl+C cancels) instead of printing it",
    )
    parser.set_defaults(func=run_launch)


def _take_script_and_args(parser: argparse.ArgumentParser) -> None:
    """SCRIPT and ``-- ARGS``, wherever the options are. argparse's own optional positionals
    are consumed (empty) by the first positional chunk, so ``launch torchrun --python P x.py``
    or ``x.py --run -- a`` would fail: the parser reads the options, and of what is left the
    first word before ``--`` is the script and everything after ``--`` its arguments."""
    parser.usage = "rocmpanel launch KIND [SCRIPT] [options] [-- ARGS ...]"
    known = parser.parse_known_args

    def split(args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = known(args, namespace)
        rest: list[str] = []
        if "--" in extras:
            cut = extras.index("--")
            extras, rest = extras[:cut], extras[cut + 1 :]
        script = next((w for w in extras if not w.startswith("-")), None)
        if script is not None:
            extras.remove(script)
        parsed.script, parsed.script_args = script, rest
        return parsed, extras

    parser.parse_known_args = split  # type: ignore[method-assign,assignment]


def fail(message: str, code: int) -> int:
    print(f"rocmpanel launch: {message}", file=sys.stderr)
    return code


def run_launch(args: argparse.Namespace) -> int:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.multigpu import launch

    try:
        launch.check_platform()
        plan, env = _plan(args)
    except PanelError as exc:
        return fail(exc.message, 2)
    if args.run:
        if args.kind != "torchrun":
            return fail("--run runs the single-node kind (torchrun) only.", 2)
        return _run(plan, args)
    try:
        if args.kind == "deepspeed":
            config = launch.deepspeed_config(
                plan,
                micro_batch=args.micro_batch,
                grad_accum=args.grad_accum,
                precision=args.precision,
                offload=args.offload,
            )
            import json

            text = json.dumps(config, indent=2) + "\n"
        else:
            text = launch.render(plan, args.kind)
    except PanelError as exc:
        return fail(exc.message, 2)
    for note in env.left_out:
        print(f"rocmpanel launch: left out {note}", file=sys.stderr)
    if args.kind == "deepspeed":
        print(
            "rocmpanel launch: a DeepSpeed config holds no environment: launch it with the "
            "torchrun, multinode or slurm script, which sets the variables.",
            file=sys.stderr,
        )
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        backup = launch.save(args.out, text, args.kind, force=args.force)
    except PanelError as exc:
        return fail(exc.message, 1)
    kept = f" (the old one is kept as {backup})" if backup else ""
    print(f"Written to {args.out}{kept}.", file=sys.stderr)
    return 0


def _python(args: argparse.Namespace) -> str:
    if args.python:
        return str(args.python)
    from rocmpanel.base.settings import Settings

    try:
        return Settings.load(tell=False).general.workload_python or "python3"
    except Exception:  # a generated script never fails for the settings file
        return "python3"


def _plan(args: argparse.Namespace) -> tuple[LaunchPlan, LaunchEnv]:
    """The plan the arguments describe; PanelError when they cannot make one."""
    import socket

    from rocmpanel.base.errors import PanelError
    from rocmpanel.jobs import gpu_choice
    from rocmpanel.multigpu import launch, launch_env

    if args.kind != "deepspeed" and not args.script:
        raise PanelError(f"{args.kind} needs your training script (SCRIPT).")
    gpus = plan_gpus(args)
    choice = gpu_choice.resolve(gpus)
    python = _python(args)
    env = launch_env.gather_env(gpus=gpus, python=python, choice=choice)
    host, port = socket.gethostname(), launch.DEFAULT_PORT
    if args.rdzv_endpoint is not None:
        host, port = launch.parse_endpoint(args.rdzv_endpoint)
    script = str(Path(args.script).resolve()) if args.script else ""
    first, last = args.nnodes
    plan = launch.LaunchPlan(
        script=script,
        args=tuple(args.script_args),
        nnodes=first,
        max_nodes=last,
        nproc_per_node=args.nproc_per_node or max(1, choice.count),
        rdzv_host=host,
        rdzv_port=port,
        job_id=args.rdzv_id,
        max_restarts=args.max_restarts,
        python=python,
        env=env,
        gres=args.gres,
        time_limit=args.time,
    )
    return plan, env


def _run(plan: LaunchPlan, args: argparse.Namespace) -> int:
    """Run the single-node command as a job, its output printed as it comes."""
    from rocmpanel.base.errors import PanelError
    from rocmpanel.jobs.job_env import with_job_env
    from rocmpanel.jobs.process import JobProcess, JobState
    from rocmpanel.jobs.protocol import LogLine
    from rocmpanel.jobs.spec import prepare
    from rocmpanel.multigpu import launch

    try:
        launch.validate(plan, "torchrun")
        spec = launch.run_spec(plan, plan_gpus(args), python=_python(args))
        prepared = prepare(with_job_env(spec))
    except PanelError as exc:
        return fail(exc.message, 2)

    def on_event(event: object) -> None:
        if isinstance(event, LogLine):
            stream = sys.stderr if event.stream == "stderr" else sys.stdout
            print(event.message, file=stream, flush=True)

    job = JobProcess(prepared, on_event, lambda _o: None)
    try:
        job.start()
    except PanelError as exc:
        return fail(exc.message, 1)
    try:
        outcome = job.wait()
    except KeyboardInterrupt:
        job.cancel()
        job.wait(30)
        print("rocmpanel launch: cancelled; its processes were ended.", file=sys.stderr)
        return 130
    if outcome is None or outcome.state is not JobState.SUCCEEDED:
        return fail(launch.outcome_text(outcome), 1)
    print(f"rocmpanel launch: finished in {outcome.duration_s:.1f} s.", file=sys.stderr)
    return 0


def plan_gpus(args: argparse.Namespace) -> tuple[str, ...] | None:
    """``--gpus`` as PCI addresses (parsed by argparse; None: the saved choice)."""
    gpus: tuple[str, ...] | None = args.gpus
    return gpus
