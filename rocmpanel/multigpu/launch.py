"""Launch scripts for a user's own training script: torchrun on one node, torchrun with
c10d rendezvous on several, a Slurm batch script, and a DeepSpeed ZeRO-3 config skeleton.

The seed guide starts training with ``python -m torch.distributed.launch``, which PyTorch
deprecated in favour of ``torchrun`` (``python -m torch.distributed.run``): every command
here uses the latter, with the flags of torch 2.13's launcher (``--nnodes MIN:MAX``,
``--nproc-per-node``, ``--rdzv-backend=c10d``, ``--rdzv-endpoint``, ``--rdzv-id``,
``--max-restarts``, ``--standalone``). The guide's fault-recovery case is the multi-node
one: c10d rendezvous with restarts lets an elastic job carry on when a worker dies.

Every script carries the environment a panel job would get (managed environment, active
tuning preset, the "Panel jobs" variables, the GPU choice) plus the user's own
``NCCL_*``/``RCCL_*``/``HSA_*``/``GLOO_*`` variables, each with a one-line comment from the
variable catalogue. The panel's internal variables (``ROCMPANEL_*``: the preset settings
header workers read, the data folder) and anything that looks like a secret are left
out; the preset's torch runtime settings are listed instead, since only the panel's own
workers apply them. Every value and argument is quoted with :func:`shlex.quote`.

RCCL is Linux only: the Windows HIP SDK ships no communication library, so on Windows
nothing is generated and the reason is said (:func:`check_platform`). Qt-free.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.multigpu.launch_env import LaunchEnv, one_line

if TYPE_CHECKING:
    from rocmpanel.jobs.process import JobOutcome
    from rocmpanel.jobs.spec import JobSpec

KINDS: tuple[str, ...] = ("torchrun", "multinode", "slurm", "deepspeed")
# English in the scripts' comments; the window shows translate("launch", label).
KIND_LABELS: Mapping[str, str] = {
    "torchrun": QT_TRANSLATE_NOOP("launch", "Single node (torchrun)"),
    "multinode": QT_TRANSLATE_NOOP("launch", "Several nodes (torchrun, c10d rendezvous)"),
    "slurm": QT_TRANSLATE_NOOP("launch", "Slurm batch script (srun + torchrun)"),
    "deepspeed": QT_TRANSLATE_NOOP("launch", "DeepSpeed ZeRO-3 config (JSON)"),
}
DEFAULT_PORT = 29500  # torchrun's own default master port
DEFAULT_RESTARTS = 3
MAX_PROCS = 1024
_HOST_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\]")
_JOB_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_GRES_RE = re.compile(r"[A-Za-z0-9_:.-]{1,64}")
_TIME_RE = re.compile(r"[0-9][0-9:-]{0,15}")
WINDOWS_REFUSAL = QT_TRANSLATE_NOOP(
    "launch",
    "Multi-GPU launch scripts need RCCL, ROCm's communication library, which is Linux only: "
    "the Windows HIP SDK ships none, so torch's nccl backend cannot run there. Generate the "
    "script on (or for) a Linux machine.",
)


@dataclass(frozen=True)
class LaunchPlan:
    """Everything a launch script needs. ``max_nodes`` > ``nnodes`` makes the job elastic
    (``--nnodes MIN:MAX``); ``gres`` is the Slurm GPU request (``gpu:2``), empty on a
    CPU-only cluster; ``python`` the interpreter on the nodes."""

    script: str
    args: tuple[str, ...] = ()
    nnodes: int = 1
    nproc_per_node: int = 1
    rdzv_host: str = "127.0.0.1"
    rdzv_port: int = DEFAULT_PORT
    job_id: str = "rocmpanel-train"
    max_restarts: int = DEFAULT_RESTARTS
    max_nodes: int | None = None
    python: str = "python3"
    env: LaunchEnv = field(default_factory=LaunchEnv)
    gres: str = ""
    time_limit: str = ""


# ---- validation ------------------------------------------------------------------------


def check_platform(platform: str | None = None) -> None:
    """PanelError on Windows (``platform`` None: this one), where RCCL does not exist."""
    if (platform or sys.platform) == "win32":
        raise PanelError(translate("launch", WINDOWS_REFUSAL))


def parse_endpoint(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:29500`` for IPv6) as (host, port); PanelError when it is not."""
    host, sep, port_text = text.strip().rpartition(":")
    if not sep or not host:
        raise PanelError(
            translate(
                "launch", "The rendezvous endpoint {endpoint} is not HOST:PORT (e.g. node1:29500)."
            ).format(endpoint=repr(text))
        )
    if not port_text.isdigit():
        raise PanelError(
            translate("launch", "The rendezvous port {port} is not a number.").format(
                port=repr(port_text)
            )
        )
    check_host(host)
    port = int(port_text)
    check_port(port)
    return host, port


def check_host(host: str) -> None:
    if _HOST_RE.fullmatch(host) is None:
        raise PanelError(
            translate(
                "launch",
                "The rendezvous host {host} is not a host name or address (letters, digits, "
                "dots and dashes; an IPv6 address in brackets).",
            ).format(host=repr(host))
        )


def check_port(port: int) -> None:
    if not 1 <= port <= 65535:
        raise PanelError(
            translate("launch", "The rendezvous port {port} is outside 1-65535.").format(port=port)
        )


def validate(plan: LaunchPlan, kind: str, *, must_exist: bool = True) -> None:
    """PanelError with a clear sentence for anything that would make a broken script.
    ``must_exist``: the script must be a file here (else a ``.py`` path is enough)."""
    if kind not in KINDS:
        raise PanelError(
            translate("launch", "Unknown launch kind {kind}; use one of {kinds}.").format(
                kind=repr(kind), kinds=", ".join(KINDS)
            )
        )
    if kind == "deepspeed":
        check_counts(plan)
        return
    script = plan.script
    if not script.strip():
        raise PanelError(translate("launch", "Choose the training script to launch."))
    if script.startswith("-"):
        raise PanelError(
            translate(
                "launch", "The script path {path} starts with '-': give it as ./{script}."
            ).format(path=repr(script), script=script)
        )
    if "\0" in script or any("\0" in arg for arg in plan.args):
        raise PanelError(
            translate("launch", "The script path or an argument holds a NUL character.")
        )
    path = Path(script)
    if must_exist and not path.is_file():
        raise PanelError(
            translate(
                "launch", "The training script {script} does not exist (or is not a file)."
            ).format(script=script)
        )
    if not must_exist and path.suffix != ".py":
        raise PanelError(
            translate("launch", "The training script {script} is not a .py file.").format(
                script=script
            )
        )
    check_counts(plan)
    if kind != "torchrun":
        check_host(plan.rdzv_host)
        check_port(plan.rdzv_port)
        if _JOB_ID_RE.fullmatch(plan.job_id) is None:
            raise PanelError(
                translate(
                    "launch", "The job id {job_id} must be 1-64 letters, digits, '.', '_' or '-'."
                ).format(job_id=repr(plan.job_id))
            )
        if plan.max_restarts < 0:
            raise PanelError(translate("launch", "The number of restarts cannot be negative."))
    if kind == "slurm":
        if plan.gres and _GRES_RE.fullmatch(plan.gres) is None:
            raise PanelError(
                translate("launch", "The Slurm GPU request {gres} is not like gpu:2.").format(
                    gres=repr(plan.gres)
                )
            )
        if plan.time_limit and _TIME_RE.fullmatch(plan.time_limit) is None:
            raise PanelError(
                translate("launch", "The Slurm time limit {limit} is not like 02:00:00.").format(
                    limit=repr(plan.time_limit)
                )
            )


def check_counts(plan: LaunchPlan) -> None:
    if plan.nnodes < 1:
        raise PanelError(translate("launch", "The number of nodes must be at least 1."))
    if not 1 <= plan.nproc_per_node <= MAX_PROCS:
        raise PanelError(
            translate("launch", "The processes per node must be from 1 to {most}.").format(
                most=MAX_PROCS
            )
        )
    if plan.max_nodes is not None and plan.max_nodes < plan.nnodes:
        raise PanelError(
            translate("launch", "The largest number of nodes cannot be below the smallest.")
        )


# ---- rendering ---------------------------------------------------------------------------


def _q(text: str) -> str:
    return shlex.quote(text)


def env_lines(env: LaunchEnv, *, skip: tuple[str, ...] = ()) -> list[str]:
    """``# NAME: explanation`` then ``export NAME=value`` (or ``unset NAME``) per variable."""
    lines: list[str] = []
    for entry in env.entries:
        if entry.name in skip:
            continue
        origin = f" [{entry.origin}]" if entry.origin else ""
        lines.append(f"# {entry.name}: {entry.explanation}{origin}")
        if entry.value is None:
            lines.append(f"unset {entry.name}")
        else:
            lines.append(f"export {entry.name}={_q(entry.value)}")
    return lines


def _torch_notes(env: LaunchEnv) -> list[str]:
    if not env.torch_settings:
        return []
    lines = [
        f"# The preset {env.preset_name or ''} also has torch runtime settings. rocmpanel's own",
        "# workers apply them; your script does not read them: set them in your code:",
    ]
    lines += [f"#   {key} = {one_line(value)}" for key, value in env.torch_settings]
    return lines


def _header_lines(kind: str, plan: LaunchPlan) -> list[str]:
    from rocmpanel import __version__

    lines = [
        "#!/usr/bin/env bash",
        f"# {KIND_LABELS[kind]}, generated by rocmpanel {__version__}.",
        "# torchrun is `python -m torch.distributed.run` (torch.distributed.launch is deprecated).",
    ]
    if plan.env.gpu_label:
        lines.append(f"# GPUs chosen in rocmpanel: {one_line(plan.env.gpu_label)}")
    return lines


def torchrun_args(plan: LaunchPlan, kind: str) -> list[str]:
    """The launcher's arguments (after ``python``), without the script: the single-node
    form (``--standalone``) or the c10d rendezvous form."""
    args = ["-m", "torch.distributed.run"]
    if kind == "torchrun":
        return [*args, "--standalone", "--nnodes=1", f"--nproc-per-node={plan.nproc_per_node}"]
    nodes = str(plan.nnodes)
    if plan.max_nodes is not None and plan.max_nodes != plan.nnodes:
        nodes = f"{plan.nnodes}:{plan.max_nodes}"
    return [
        *args,
        f"--nnodes={nodes}",
        f"--nproc-per-node={plan.nproc_per_node}",
        "--rdzv-backend=c10d",
        f"--rdzv-endpoint={plan.rdzv_host}:{plan.rdzv_port}",
        f"--rdzv-id={plan.job_id}",
        f"--max-restarts={plan.max_restarts}",
    ]


def _command(plan: LaunchPlan, launcher: list[str]) -> str:
    words = [plan.python, *launcher, plan.script, *plan.args]
    return "exec " + " ".join(_q(word) for word in words)


def render(plan: LaunchPlan, kind: str, *, must_exist: bool = True) -> str:
    """The text of the ``kind`` artefact for ``plan`` (validated first)."""
    validate(plan, kind, must_exist=must_exist)
    if kind == "deepspeed":
        return json.dumps(deepspeed_config(plan), indent=2) + "\n"
    if kind == "slurm":
        return _slurm(plan)
    lines = _header_lines(kind, plan)
    if kind == "multinode":
        lines += [
            "# Run this same script on every node. Rendezvous is c10d on the endpoint below;",
            "# a worker that fails restarts the group up to --max-restarts times, and nodes",
            "# may join or leave within --nnodes MIN:MAX (fault recovery).",
            f"# The endpoint's port ({plan.rdzv_port}) must be open between the nodes.",
        ]
    lines += ["set -euo pipefail", *env_lines(plan.env), *_torch_notes(plan.env)]
    lines.append(_command(plan, torchrun_args(plan, kind)))
    return "\n".join(lines) + "\n"


def _slurm(plan: LaunchPlan) -> str:
    from rocmpanel.jobs.gpu_choice import VISIBILITY_VARS

    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name={plan.job_id}",
        f"#SBATCH --nodes={plan.nnodes}",
        "#SBATCH --ntasks-per-node=1",
    ]
    if plan.gres:
        lines.append(f"#SBATCH --gres={plan.gres}")
    if plan.time_limit:
        lines.append(f"#SBATCH --time={plan.time_limit}")
    lines += [
        f"# {KIND_LABELS['slurm']}, generated by rocmpanel: submit with sbatch.",
        "# One srun task per node starts torchrun, which starts the processes of that node.",
        "# Slurm picks each node's GPUs (--gres), so this machine's GPU choice is not set.",
        "set -euo pipefail",
        *env_lines(plan.env, skip=VISIBILITY_VARS),
        *_torch_notes(plan.env),
        "# The first node of the allocation hosts the c10d rendezvous.",
        'head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
    ]
    launcher = torchrun_args(plan, "multinode")
    launcher = [
        a for a in launcher if not a.startswith(("--nnodes=", "--rdzv-endpoint=", "--rdzv-id="))
    ]
    words = " ".join(_q(w) for w in [plan.python, *launcher])
    tail = " ".join(_q(w) for w in [plan.script, *plan.args])
    lines.append(
        "srun --ntasks-per-node=1 --kill-on-bad-exit=1 "
        f'{words} --nnodes="$SLURM_JOB_NUM_NODES" '
        f'--rdzv-endpoint="$head_node:{plan.rdzv_port}" --rdzv-id="$SLURM_JOB_ID" {tail}'
    )
    return "\n".join(lines) + "\n"


def deepspeed_config(
    plan: LaunchPlan,
    *,
    micro_batch: int = 1,
    grad_accum: int = 1,
    precision: str = "bf16",
    offload: bool = False,
) -> dict[str, Any]:
    """A ZeRO-3 skeleton (key names from deepspeed.ai/docs/config-json). ``train_batch_size``
    is left out: DeepSpeed infers it as micro batch x accumulation x GPUs, so the file stays
    right when the node count changes. bf16 by default: MI200/MI300 and RDNA3 have it."""
    if micro_batch < 1 or grad_accum < 1:
        raise PanelError("The micro batch and the accumulation steps must be at least 1.")
    if precision not in ("bf16", "fp16", "fp32"):
        raise PanelError(f"Unknown precision {precision!r}; use bf16, fp16 or fp32.")
    zero: dict[str, Any] = {
        "stage": 3,
        "overlap_comm": True,
        "contiguous_gradients": True,
        "stage3_gather_16bit_weights_on_model_save": True,
    }
    if offload:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
        zero["offload_param"] = {"device": "cpu", "pin_memory": True}
    return {
        "train_micro_batch_size_per_gpu": micro_batch,
        "gradient_accumulation_steps": grad_accum,
        "gradient_clipping": 1.0,
        "steps_per_print": 100,
        "bf16": {"enabled": precision == "bf16"},
        "fp16": {"enabled": precision == "fp16"},
        "optimizer": {
            "type": "AdamW",
            "params": {"lr": 1e-4, "betas": [0.9, 0.999], "weight_decay": 0.01},
        },
        "zero_optimization": zero,
    }


# ---- saving ------------------------------------------------------------------------------

BACKUPS_KEEP = 10


def save(path: Path, text: str, kind: str, *, force: bool = False) -> Path | None:
    """Write ``text`` to ``path`` atomically (a shell script executable, the JSON config
    not). An existing file is refused unless ``force``, and then backed up first; returns
    the backup (None when there was nothing to keep). PanelError says what failed."""
    from rocmpanel.base import paths
    from rocmpanel.base.atomic import backup_file, write_atomic

    backup = None
    if path.exists() or path.is_symlink():
        if path.is_dir():
            raise PanelError(
                translate("launch", "{path} is a folder; give a file name.").format(path=path)
            )
        if not force:
            raise PanelError(f"{path} exists; give --force to replace it (it is backed up first).")
        backup = backup_file(path, paths.backups_dir(), BACKUPS_KEEP)
    write_atomic(path, text.encode("utf-8"), mode=0o644 if kind == "deepspeed" else 0o755)
    return backup


# ---- running the single-node command -----------------------------------------------------


def run_spec(
    plan: LaunchPlan, gpus: tuple[str, ...] | None, *, python: str = "", cwd: str | None = None
) -> JobSpec:
    """The single-node command as a panel job: ``python -u -m torch.distributed.run
    --standalone ... SCRIPT ARGS`` on ``gpus`` (None: the saved choice). The job's
    environment (preset, session variables, GPU choice) is added where jobs start.

    ``interactive``: the user's script speaks no JSON-lines protocol and reports no result,
    so its outcome is its exit code alone (exit 0 succeeds), as for an interactive worker."""
    from rocmpanel.jobs.spec import JobSpec

    return JobSpec(
        name=f"torchrun {Path(plan.script).name}",
        worker=Path(plan.script),
        args=plan.args,
        python=python,
        launcher=tuple(torchrun_args(plan, "torchrun")),
        gpus=gpus,
        interactive=True,
        cwd=cwd,
    )


def outcome_text(outcome: JobOutcome | None) -> str:
    """One paragraph on how a run ended, with the last lines of its error output."""
    from rocmpanel.jobs.process import JobState

    if outcome is None:
        return translate("launch", "The run did not finish.")
    if outcome.state is JobState.CANCELLED:
        return translate("launch", "Cancelled.")
    if outcome.exit_code == 0 and outcome.error is None and not outcome.signal_name:
        return translate("launch", "Finished (exit code 0) in {seconds} s.").format(
            seconds=f"{outcome.duration_s:.1f}"
        )
    text = outcome.message
    if outcome.stderr_tail:
        last = translate("launch", "Last lines of its error output:")
        text += f"\n{last}\n" + "\n".join(outcome.stderr_tail[-8:])
    return text
