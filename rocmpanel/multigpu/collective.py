"""The all-reduce collective test, Qt-free: what to run, what came back, and why it failed.

:func:`collective_spec` builds the job: ``workers/allreduce.py`` under torchrun
(``python -m torch.distributed.run --standalone``: a local rendezvous on a free port), one
process per chosen GPU with RCCL, or ``procs`` processes with gloo on the CPU when no GPU
is chosen. :func:`run_from_outcome` turns the job's result (or the sizes it finished
before it failed) into a :class:`CollectiveRun`; :func:`explain` maps the known failure
texts of torch, RCCL/NCCL and gloo to a cause a user can act on.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.jobs.spec import JobSpec

WORKER = "allreduce"
KiB = 1024
GiB = 1024**3
DEFAULT_MIN_BYTES = KiB
DEFAULT_MAX_BYTES = GiB
DEFAULT_PROCS = 2
MAX_PROCS = 64
TIMEOUT_S = 60.0
#: How long a whole run may take before the CLI gives up on it.
RUN_TIMEOUT_S = 1800.0
CPU_NOTE = QT_TRANSLATE_NOOP(
    "CollectivePlan",
    "No AMD GPU: running on the CPU with gloo and {procs} processes (figures are the "
    "CPU's, not a GPU's)",
)
CPU_CHOSEN = QT_TRANSLATE_NOOP(
    "CollectivePlan",
    "On the CPU with gloo and {procs} processes, as asked (figures are the CPU's, not a GPU's)",
)
_UNITS = {"": 1, "k": KiB, "m": KiB**2, "g": GiB}
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([kmg]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes from ``1024``, ``1K``, ``64MiB``, ``1G`` (binary units); ValueError says why."""
    match = _SIZE_RE.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a size (give bytes, or 1K, 64M, 1G)")
    value = int(match.group(1)) * _UNITS[match.group(2).lower()]
    if value < 4:
        raise ValueError(f"{text!r} is below 4 bytes (one float32)")
    return value


def format_size(size: int) -> str:
    """``1 KiB``, ``64 MiB``, ``1 GiB``; bytes when not a whole unit."""
    for unit, scale in (("GiB", GiB), ("MiB", KiB**2), ("KiB", KiB)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


@dataclass(frozen=True)
class CollectivePlan:
    """What to run: on ``gpu_count`` GPUs (``gpus`` as the job's choice), or ``procs``
    processes on the CPU when ``gpu_count`` is 0."""

    gpu_count: int
    gpus: tuple[str, ...] | None = None
    procs: int = DEFAULT_PROCS
    min_bytes: int = DEFAULT_MIN_BYTES
    max_bytes: int = DEFAULT_MAX_BYTES
    python: str = ""
    timeout_s: float = TIMEOUT_S
    label: str = ""

    @property
    def device(self) -> str:
        return "gpu" if self.gpu_count else "cpu"

    @property
    def processes(self) -> int:
        return self.gpu_count or self.procs

    @property
    def where(self) -> str:
        """Where it runs, for the user."""
        if self.gpu_count:
            label = self.label or translate("CollectivePlan", "{count} GPUs").format(
                count=self.gpu_count
            )
            return translate("CollectivePlan", "{gpus}, RCCL, {count} processes").format(
                gpus=label, count=self.gpu_count
            )
        if self.label == "CPU":
            return translate("CollectivePlan", CPU_CHOSEN).format(procs=self.procs)
        return translate("CollectivePlan", CPU_NOTE).format(procs=self.procs)


def make_plan(
    gpu_count: int,
    *,
    gpus: tuple[str, ...] | None = None,
    cpu: bool = False,
    procs: int | None = None,
    min_bytes: int = DEFAULT_MIN_BYTES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    python: str = "",
    label: str = "",
) -> CollectivePlan:
    """Check the choice and build the plan; PanelError says what is wrong."""
    if min_bytes > max_bytes:
        raise PanelError(
            translate(
                "collective", "The smallest size ({smallest}) is above the largest ({largest})."
            ).format(smallest=format_size(min_bytes), largest=format_size(max_bytes))
        )
    if procs is not None and not cpu and gpu_count:
        raise PanelError(
            translate(
                "collective", "The number of processes is for the CPU: on GPUs it is one per GPU."
            )
        )
    if cpu or not gpu_count:
        count = DEFAULT_PROCS if procs is None else procs
        if not 2 <= count <= MAX_PROCS:
            raise PanelError(
                translate(
                    "collective", "An all-reduce on the CPU needs 2 to {most} processes."
                ).format(most=MAX_PROCS)
            )
        # Worded by cause: asked for (--cpu, the panel's box) or no GPU to run on.
        label = "CPU" if cpu else ""
        return CollectivePlan(0, None, count, min_bytes, max_bytes, python, label=label)
    if gpu_count < 2:
        raise PanelError(
            translate(
                "collective", "Only one GPU is chosen ({gpu}): an all-reduce needs at least 2."
            ).format(gpu=label or "GPU 0"),
            "Choose two or more GPUs (--gpus 0,1 or all), or test on the CPU with --cpu.",
        )
    return CollectivePlan(gpu_count, gpus, gpu_count, min_bytes, max_bytes, python, label=label)


def bandwidth_text(gbs: float) -> str:
    """GB/s with 3 decimals, or 3 significant digits below 0.1: a small size's figure on
    a slow CPU run reads 0.000412, not 0.000."""
    if gbs <= 0 or not math.isfinite(gbs):
        return f"{gbs:.3f}"
    return f"{gbs:.{max(3, 2 - math.floor(math.log10(gbs)))}f}"


def backend_name(backend: str) -> str:
    """The backend as users know it: torch calls RCCL ``nccl`` on ROCm."""
    return "RCCL" if backend.lower() == "nccl" else backend


def collective_spec(plan: CollectivePlan) -> JobSpec:
    """The job: torchrun with one process per GPU (or ``procs`` on the CPU)."""
    args = (
        "--device",
        plan.device,
        "--min-bytes",
        str(plan.min_bytes),
        "--max-bytes",
        str(plan.max_bytes),
        "--timeout-s",
        f"{plan.timeout_s:g}",
    )
    launcher = (
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={plan.processes}",
        # A failed rank ends the run; restarting the group would only repeat it.
        "--max-restarts=0",
    )
    # torchrun sets OMP_NUM_THREADS=1 per rank unless told: the panel says so itself.
    env = {"OMP_NUM_THREADS": "1"} if plan.device == "cpu" else {}
    return JobSpec(
        name="collective",
        worker=WORKER,
        args=args,
        python=plan.python,
        env=env,
        launcher=launcher,
        gpus=plan.gpus if plan.device == "gpu" else None,
    )


# -- results ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class SizeResult:
    """One size: bytes, float32 elements, time per all-reduce (slowest rank), GB/s."""

    bytes: int
    count: int
    time_us: float
    algbw_gbs: float
    busbw_gbs: float
    iters: int = 0


@dataclass(frozen=True)
class CollectiveRun:
    """A finished (or failed, or cancelled) run, as saved and shown."""

    created_at: float
    outcome: str  # "done" | "failed" | "cancelled"
    device: str
    world_size: int
    backend: str = ""
    torch_version: str | None = None
    hip_version: str | None = None
    rccl_version: str | None = None
    devices: tuple[str, ...] = ()
    where: str = ""
    python: str = ""
    min_bytes: int = DEFAULT_MIN_BYTES
    max_bytes: int = DEFAULT_MAX_BYTES
    sizes: tuple[SizeResult, ...] = ()
    skipped: tuple[tuple[int, str], ...] = ()
    error: str | None = None
    cause: str | None = None
    duration_s: float = 0.0
    id: int | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    def peak(self) -> SizeResult | None:
        """The size with the highest bus bandwidth."""
        return max(self.sizes, key=lambda s: s.busbw_gbs, default=None)


def _number(value: Any, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number")
    return kind(value)


def size_from(record: Mapping[str, Any]) -> SizeResult | None:
    """A size as the worker reported it (its result's ``sizes`` or a ``check`` event);
    None when it is not one (a skipped size, a garbled record)."""
    try:
        return SizeResult(
            bytes=_number(record["bytes"], int),
            count=_number(record["count"], int),
            time_us=_number(record["time_us"], float),
            algbw_gbs=_number(record["algbw_gbs"], float),
            busbw_gbs=_number(record["busbw_gbs"], float),
            iters=_number(record.get("iters", 0), int),
        )
    except (KeyError, ValueError, TypeError):
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def run_from_outcome(
    plan: CollectivePlan,
    outcome: Any,
    partial: Sequence[SizeResult] = (),
    *,
    created_at: float | None = None,
) -> CollectiveRun:
    """The run a finished job makes (``outcome``: a :class:`~rocmpanel.jobs.process.
    JobOutcome`); ``partial`` the sizes its check events brought before it ended."""
    from rocmpanel.jobs.process import JobState

    data: Mapping[str, Any] = outcome.result or {}
    sizes = tuple(s for s in (size_from(r) for r in data.get("sizes", ()) or ()) if s)
    skipped = tuple(
        (int(s["bytes"]), str(s.get("reason", "")))
        for s in data.get("skipped", ()) or ()
        if isinstance(s, Mapping) and isinstance(s.get("bytes"), int)
    )
    error: str | None = None
    cause: str | None = None
    if outcome.state is JobState.SUCCEEDED:
        state = "done"
    else:
        state = "cancelled" if outcome.state is JobState.CANCELLED else "failed"
        sizes = sizes or tuple(partial)
        if state == "failed":
            message = outcome.error.message if outcome.error is not None else outcome.message
            found = explain(
                message,
                outcome.stderr_tail,
                kind=outcome.error.kind if outcome.error is not None else "",
            )
            error = message
            cause = found.text() if found else None
    devices = data.get("devices", ())
    return CollectiveRun(
        created_at=time.time() if created_at is None else created_at,
        outcome=state,
        device=plan.device,
        world_size=int(data.get("world_size") or plan.processes),
        backend=str(data.get("backend") or ("nccl" if plan.device == "gpu" else "gloo")),
        torch_version=_text(data.get("torch_version")),
        hip_version=_text(data.get("hip_version")),
        rccl_version=_text(data.get("rccl_version")),
        devices=tuple(str(d) for d in devices) if isinstance(devices, list) else (),
        where=plan.where,
        python=plan.python,
        min_bytes=plan.min_bytes,
        max_bytes=plan.max_bytes,
        sizes=sizes,
        skipped=skipped,
        error=error,
        cause=cause,
        duration_s=float(getattr(outcome, "duration_s", 0.0) or 0.0),
    )


class SizeCollector:
    """Keeps the sizes a run finished, from its ``check`` events as they arrive."""

    def __init__(self) -> None:
        self.sizes: list[SizeResult] = []
        self.skipped: list[tuple[int, str]] = []

    def feed(self, event: object) -> SizeResult | None:
        from rocmpanel.jobs.protocol import CheckDone

        if not isinstance(event, CheckDone):
            return None
        record = event.record
        if record.get("status") == "skip" and isinstance(record.get("bytes"), int):
            self.skipped.append((int(record["bytes"]), str(record.get("figure", ""))))
            return None
        found = size_from(record)
        if found is not None:
            self.sizes.append(found)
        return found


# -- the failure map -------------------------------------------------------------------------
@dataclass(frozen=True)
class Cause:
    """A known failure: an id, what happened, and what to do."""

    id: str
    title: str
    advice: str

    def text(self) -> str:
        """English (saved with the run, printed by the CLI): :func:`cause_shown` translates."""
        return f"{self.title} {self.advice}"

    def shown(self) -> str:
        """:meth:`text` in the window's language."""
        return f"{translate('Cause', self.title)} {translate('Cause', self.advice)}"


# (id, kinds the worker reports, lower-case texts from torch, RCCL/NCCL, gloo and HIP,
# title, advice). The first match wins: the specific before the general.
_CAUSES: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str, str], ...] = (
    (
        "wrong_data",
        ("wrong_data",),
        ("the collective returned wrong data",),
        QT_TRANSLATE_NOOP(
            "Cause",
            "The all-reduce returned wrong data: the sum arrived damaged between the GPUs.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "This is a hardware or driver fault, not a setting: run it again; if it repeats, "
            "test the GPUs in pairs to find the one (or the link) at fault, and check dmesg "
            "for PCIe errors.",
        ),
    ),
    (
        "no_peer_access",
        (),
        (
            "peer access is not supported",
            "hiperrorpeeraccess",
            "hipipcgetmemhandle failed",
            "hipipcopenmemhandle failed",
            'missing "hsa_force_fine_grain_pcie=1"',
            'missing "iommu=pt"',
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "The GPUs cannot reach each other's memory directly (no peer access).",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Enable Above 4G decoding and Resizable BAR (large BAR) in the firmware setup; set "
            "the IOMMU to passthrough (kernel parameter iommu=pt) or turn it off; on ROCm "
            "before 5.7 set HSA_FORCE_FINE_GRAIN_PCIE=1 for the job. NCCL_P2P_DISABLE=1 runs "
            "without peer access, slower.",
        ),
    ),
    (
        "interface",
        (),
        (
            "unable to find address for",
            "no socket interface found",
            "no usable listening interface found",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "The network interface named for the collective does not exist on this machine.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Unset GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME in the panel's job variables, or "
            "name an interface `ip link` lists (on one machine: lo).",
        ),
    ),
    (
        "port_in_use",
        (),
        ("eaddrinuse", "address already in use"),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Another process holds the rendezvous port.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Close the other distributed job (an earlier torchrun still running?) or let "
            "torchrun pick a free port (--standalone, as rocmpanel does); check MASTER_PORT.",
        ),
    ),
    (
        "firewall",
        (),
        (
            "connection refused",
            "econnrefused",
            "failed to connect to any network address",
            "no route to host",
            "has timed out after",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "The processes could not reach the rendezvous port.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "A firewall blocks it, or MASTER_ADDR names another machine: allow local TCP "
            "connections (loopback) and unset MASTER_ADDR / MASTER_PORT for the panel's jobs.",
        ),
    ),
    (
        "timeout",
        ("timeout",),
        ("rendezvous timeout", "rendezvoustimeouterror", "timed out", "socket timeout"),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Not every process joined the collective in time.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "One failed to start or is stuck (see the job's log): check that every chosen GPU "
            "works on its own (PyTorch tab, Validate) and that no other job holds it.",
        ),
    ),
    (
        "oom",
        ("oom",),
        ("out of memory", "can't allocate memory", "hiperroroutofmemory", "bad_alloc"),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Out of memory during the all-reduce.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Lower the largest size (--max-size), or close other programs that use the GPU or "
            "the RAM.",
        ),
    ),
    (
        "one_process",
        ("one_process",),
        ("needs at least 2 processes",),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Only one process ran: an all-reduce needs at least 2.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Choose two or more GPUs, or run it on the CPU with 2 or more processes.",
        ),
    ),
    (
        "no_backend",
        ("no_backend",),
        ("doesn't have nccl built in", "has no rccl/nccl backend", "has no gloo backend"),
        QT_TRANSLATE_NOOP(
            "Cause",
            "This PyTorch has no RCCL backend.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Install a ROCm build of PyTorch in the PyTorch tab, or test on the CPU (gloo).",
        ),
    ),
    (
        "no_gpu",
        ("no_gpu", "too_few_gpus"),
        ("no gpus found", "no gpu is visible to torch", "invalid device ordinal"),
        QT_TRANSLATE_NOOP(
            "Cause",
            "torch in the workload Python does not see the chosen GPUs.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Validate the workload Python in the PyTorch tab (a ROCm build, /dev/kfd access), "
            "or test on the CPU.",
        ),
    ),
    (
        "no_distributed",
        ("no_distributed",),
        ("without torch.distributed", "torch.distributed is not available"),
        QT_TRANSLATE_NOOP(
            "Cause",
            "This PyTorch was built without torch.distributed.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Install an official PyTorch build (the PyTorch tab does) in the workload Python.",
        ),
    ),
    (
        "no_torch",
        ("no_torch",),
        (
            "no module named 'torch'",
            "no module named torch",
            "finding module specification for 'torch.distributed.run'",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "PyTorch is not installed in the workload Python.",
        ),
        QT_TRANSLATE_NOOP(
            "Cause",
            "Install it in the PyTorch tab, or pick another workload Python (--python).",
        ),
    ),
)

_CAUSE_BY_ID = {entry[0]: Cause(entry[0], entry[3], entry[4]) for entry in _CAUSES}
CAUSE_IDS = tuple(_CAUSE_BY_ID)


def cause(cause_id: str) -> Cause:
    return _CAUSE_BY_ID[cause_id]


def cause_shown(text: str) -> str:
    """A saved cause (:meth:`Cause.text`, English) in the window's language; a text that is
    not one of the known causes as it is."""
    for known in _CAUSE_BY_ID.values():
        if known.text() == text:
            return known.shown()
    return text


def explain(message: str, stderr_tail: Sequence[str] = (), kind: str = "") -> Cause | None:
    """The cause of a failure from the worker's error (``message``, ``kind``) and the
    job's last stderr lines; None when the text is not one rocmpanel knows."""
    text = "\n".join((message, *stderr_tail)).lower()
    for cause_id, kinds, _needles, _title, _advice in _CAUSES:
        if kind and kind in kinds:
            return _CAUSE_BY_ID[cause_id]
    for cause_id, _kinds, needles, _title, _advice in _CAUSES:
        if any(needle in text for needle in needles):
            return _CAUSE_BY_ID[cause_id]
    return None
