"""The all-reduce collective test, one process per GPU (or per CPU slot), under torchrun.

Usage: ``python -m torch.distributed.run --standalone --nproc-per-node=N allreduce.py
[--device gpu|cpu] [--min-bytes B] [--max-bytes B] [--factor 2] [--iters N] [--warmup N]
[--timeout-s S]``

Backend ``nccl`` (RCCL on a ROCm build) on GPUs, each rank on ``cuda:LOCAL_RANK``; ``gloo``
on the CPU. For every size from ``--min-bytes`` to ``--max-bytes`` (each ``--factor`` times
the last) a float32 tensor is filled with ``rank + 1`` and summed across ranks once, and
every rank checks it holds n(n+1)/2; then warm-up and timed all-reduces between barriers.
The time of a size is the slowest rank's (its elapsed time all-reduced with MAX), as
rccl-tests reports it, and the bandwidths follow rccl-tests' definitions
(ROCm/rccl-tests and NVIDIA/nccl-tests, doc/PERFORMANCE.md, "AllReduce"):

    algbw = S / t              (bytes per second of the operation)
    busbw = algbw * 2(n-1)/n   (an all-reduce moves 2(n-1) pieces per element over n links)

Only rank 0 speaks the panel's JSON-lines protocol on stdout (``_wire``): a progress event
per size, a ``check`` event per finished size (its figures, or ``skip`` with the reason)
and one result. The other ranks write nothing on stdout; their failures go to stderr,
which the panel keeps in the job's log. SIGTERM (cancel) ends every rank at once, and a
rank whose launcher has gone ends itself, so a cancelled run leaves no process behind.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import _wire

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
FLOAT32_BYTES = 4
#: rccl-tests' defaults (-w 5 -n 20); big sizes run fewer (see :func:`iterations`).
WARMUP = 5
ITERS = 20
#: About how long the timed loop of one size may take (seconds), GPU and CPU: a size is
#: measured at least once, so the whole 1 KiB..1 GiB range stays within a few minutes.
TARGET_S = {"gpu": 0.25, "cpu": 1.0}
#: Init (rendezvous) longer than this is an error event, not a hang.
TIMEOUT_S = 60.0
#: What one collective may take once the group is up (a 1 GiB gloo sum on a slow CPU).
OP_TIMEOUT_S = 600.0
#: Memory a size needs beyond its tensor: RCCL works in place; gloo keeps copies.
HEADROOM = {"gpu": 1.25, "cpu": 3.0}
GPU_RESERVE = 256 * MiB
#: Exit status for a cancelled run (128 + SIGTERM).
CANCELLED = 128 + signal.SIGTERM
#: Kinds of error events; rocmpanel.multigpu.collective maps them (and their texts) to
#: causes.
WRONG_DATA = "wrong_data"
MESSAGE_WRONG_DATA = "the collective returned wrong data"


class CollectiveFailure(Exception):
    """A failure with a message for the user and a ``kind`` for the panel."""

    def __init__(self, message: str, kind: str, detail: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.detail = detail


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="rocmpanel's all-reduce collective test.")
    parser.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--min-bytes", type=int, default=KiB)
    parser.add_argument("--max-bytes", type=int, default=GiB)
    parser.add_argument("--factor", type=int, default=2)
    parser.add_argument("--iters", type=int, default=ITERS)
    parser.add_argument("--warmup", type=int, default=WARMUP)
    parser.add_argument("--timeout-s", type=float, default=TIMEOUT_S)
    # Tests: this rank adds 1 to its share, so the check must catch the wrong sum.
    parser.add_argument("--corrupt-rank", type=int, default=-1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.min_bytes < FLOAT32_BYTES or args.max_bytes < args.min_bytes:
        parser.error("need 4 <= --min-bytes <= --max-bytes")
    if args.factor < 2 or args.iters < 1 or args.warmup < 0 or args.timeout_s <= 0:
        parser.error("need --factor >= 2, --iters >= 1, --warmup >= 0, --timeout-s > 0")
    return args


# -- pure parts (tested in-process) ---------------------------------------------------------
def sizes(min_bytes: int, max_bytes: int, factor: int = 2) -> list[int]:
    """Byte sizes from ``min_bytes`` to ``max_bytes``, each ``factor`` times the last,
    rounded down to whole float32 elements."""
    found = []
    size = min_bytes
    while size <= max_bytes:
        found.append(size - size % FLOAT32_BYTES)
        size *= factor
    return found


def bandwidths(size: int, seconds: float, world: int) -> tuple[float, float]:
    """(algbw, busbw) in GB/s (10**9 bytes, as rccl-tests prints them) for an all-reduce of
    ``size`` bytes that took ``seconds`` on ``world`` ranks."""
    algbw = size / seconds / 1e9
    return algbw, algbw * 2 * (world - 1) / world


def expected_sum(world: int) -> float:
    """What every element holds after summing ``rank + 1`` over ``world`` ranks."""
    return world * (world + 1) / 2


def wrong_elements(values: Any, expected: float) -> tuple[int, float | None]:
    """How many elements of a tensor differ from ``expected``, and the first such value."""
    bad = values != expected
    count = int(bad.sum().item())
    if not count:
        return 0, None
    return count, float(values[bad][0].item())


def iterations(once_s: float, device: str, iters: int) -> int:
    """Timed iterations for a size whose first all-reduce took ``once_s`` (the slowest
    rank's, so every rank picks the same count): ``iters``, fewer when that would pass
    :data:`TARGET_S`, never fewer than one."""
    return max(1, min(iters, int(TARGET_S[device] / max(once_s, 1e-9))))


def size_label(size: int) -> str:
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


# -- the run --------------------------------------------------------------------------------
class Say:
    """Rank 0 speaks the protocol; the others write plain lines on stderr (the job log)."""

    def __init__(self, rank: int) -> None:
        self.rank = rank

    def progress(self, fraction: float, step: str) -> None:
        if self.rank == 0:
            _wire.progress(fraction, step)

    def log(self, message: str) -> None:
        if self.rank == 0:
            _wire.log(message)

    def size(self, record: dict[str, Any]) -> None:
        if self.rank == 0:
            _wire.check(record)

    def error(self, message: str, kind: str, detail: str = "") -> None:
        if self.rank == 0:
            _wire.error(message, kind=kind, detail=detail)
        else:
            print(f"rank {self.rank}: {message}", file=sys.stderr, flush=True)


def watch_launcher(parent: int, poll_s: float = 0.5) -> None:
    """End this rank when its launcher (torchrun) is gone: killed before it could stop its
    workers, they would wait in a collective for minutes."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="launcher", daemon=True).start()


def on_sigterm(signum: int, frame: Any) -> None:
    # torchrun forwards the panel's cancel as SIGTERM to each rank. A rank may be inside a
    # collective that never returns once a peer has gone, so it exits at once: nothing is
    # left to write, and the launcher reports the cancel.
    os._exit(CANCELLED)


def loopback_name() -> str | None:
    """The loopback interface's name ("lo" on Linux), or None where it is not found."""
    import socket

    try:
        for _index, name in socket.if_nameindex():
            if name == "lo" or name.startswith("lo0"):
                return name
    except (OSError, AttributeError):
        pass
    return None


def keep_on_this_machine() -> str | None:
    """One machine, so the collective's own sockets stay on the loopback interface unless
    the user chose an interface (their NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME win)."""
    name = loopback_name()
    if name is None:
        return None
    for var in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"):
        os.environ.setdefault(var, name)
    return os.environ.get("GLOO_SOCKET_IFNAME")


def import_torch() -> Any:
    try:
        import torch
        import torch.distributed as dist
    except ImportError as exc:
        raise CollectiveFailure(
            f"torch cannot be imported in {sys.executable} ({exc}); install PyTorch in the "
            "PyTorch tab or pick another workload Python.",
            "no_torch",
        ) from None
    if not dist.is_available():
        raise CollectiveFailure(
            f"This torch ({torch.__version__}) was built without torch.distributed.",
            "no_distributed",
        )
    return torch


def init_group(torch: Any, args: argparse.Namespace, rank: int, say: Say) -> str:
    """Join the process group within ``--timeout-s``; returns the backend's name."""
    dist = torch.distributed
    if args.device == "gpu":
        if not torch.cuda.is_available():
            raise CollectiveFailure(
                f"No GPU is visible to torch {torch.__version__} in this Python; run the "
                "test on the CPU or pick a ROCm build.",
                "no_gpu",
            )
        local = int(os.environ.get("LOCAL_RANK", "0"))
        if local >= torch.cuda.device_count():
            raise CollectiveFailure(
                f"Rank {rank} needs GPU {local}, but torch sees {torch.cuda.device_count()}.",
                "too_few_gpus",
            )
        torch.cuda.set_device(local)
        backend = "nccl"
        if not dist.is_nccl_available():
            raise CollectiveFailure(
                f"This torch ({torch.__version__}) has no RCCL/NCCL backend.", "no_backend"
            )
    else:
        backend = "gloo"
        if not dist.is_gloo_available():
            raise CollectiveFailure(
                f"This torch ({torch.__version__}) has no gloo backend.", "no_backend"
            )

    def too_late() -> None:
        say.error(
            f"The {args.timeout_s:g} s rendezvous timeout passed before all "
            f"{os.environ.get('WORLD_SIZE', '?')} processes joined the collective.",
            "timeout",
        )
        os._exit(1)

    timer = threading.Timer(args.timeout_s, too_late)
    timer.daemon = True
    timer.start()
    try:
        dist.init_process_group(
            backend, timeout=timedelta(seconds=max(args.timeout_s, OP_TIMEOUT_S))
        )
        if backend == "nccl":  # the communicator is made lazily: make it within the timeout
            dist.barrier(device_ids=[torch.cuda.current_device()])
        else:
            dist.barrier()
    finally:
        timer.cancel()
    return backend


def free_bytes(torch: Any, device: str) -> int | None:
    """Memory free for a tensor: this rank's GPU, or the host's available memory shared by
    every rank (Linux /proc/meminfo; None elsewhere)."""
    if device == "gpu":
        free, _total = torch.cuda.mem_get_info()
        return int(free) - GPU_RESERVE
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def run_sizes(torch: Any, args: argparse.Namespace, rank: int, world: int, say: Say) -> Any:
    dist = torch.distributed
    device = torch.device("cuda", torch.cuda.current_device()) if args.device == "gpu" else "cpu"
    on_gpu = args.device == "gpu"

    def sync() -> None:
        if on_gpu:
            torch.cuda.synchronize()

    def barrier() -> None:
        if on_gpu:
            dist.barrier(device_ids=[torch.cuda.current_device()])
        else:
            dist.barrier()

    def agree(value: float, op: Any) -> float:
        tensor = torch.tensor([value], dtype=torch.float64, device=device)
        dist.all_reduce(tensor, op=op)
        return float(tensor.item())

    plan = sizes(args.min_bytes, args.max_bytes, args.factor)
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    expected = expected_sum(world)
    for index, size in enumerate(plan):
        label = size_label(size)
        say.progress(index / len(plan), f"all-reduce {label}")
        free = free_bytes(torch, args.device)
        sharers = 1 if on_gpu else world  # on the CPU every rank takes from the same memory
        need = int(size * HEADROOM[args.device] * sharers)
        fits = agree(1.0 if free is None or need <= free else 0.0, dist.ReduceOp.MIN)
        if fits < 1:
            where = "a GPU" if on_gpu else "this machine"
            reason = f"needs about {need / GiB:.2f} GiB, more than {where} has free"
            for later in plan[index:]:
                skipped.append({"bytes": later, "reason": reason})
                say.size(
                    {
                        "id": f"size-{later}",
                        "name": size_label(later),
                        "status": "skip",
                        "figure": reason,
                        "bytes": later,
                    }
                )
            say.log(f"Sizes from {label} on were skipped: {reason}.")
            break
        count = size // FLOAT32_BYTES
        data = torch.full((count,), float(rank + 1), dtype=torch.float32, device=device)
        if rank == args.corrupt_rank:
            data += 1
        barrier()
        sync()
        started = time.perf_counter()
        dist.all_reduce(data)
        sync()
        once = agree(time.perf_counter() - started, dist.ReduceOp.MAX)
        bad, first = wrong_elements(data, expected)
        wrong_ranks = agree(1.0 if bad else 0.0, dist.ReduceOp.SUM)
        if wrong_ranks:
            detail = (
                f"{label}: expected {expected:g} in every element; {int(wrong_ranks)} of "
                f"{world} ranks saw other values"
                + (f" (rank 0: {bad} elements, first {first:g})" if bad else "")
            )
            raise CollectiveFailure(f"{MESSAGE_WRONG_DATA} ({detail})", WRONG_DATA, detail)
        iters = iterations(once, args.device, args.iters)
        for _ in range(min(args.warmup, iters)):
            dist.all_reduce(data)
        barrier()
        sync()
        started = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(data)
        sync()
        elapsed = agree(time.perf_counter() - started, dist.ReduceOp.MAX)
        barrier()
        seconds = elapsed / iters
        algbw, busbw = bandwidths(size, seconds, world)
        row = {
            "bytes": size,
            "count": count,
            "time_us": seconds * 1e6,
            "algbw_gbs": algbw,
            "busbw_gbs": busbw,
            "iters": iters,
        }
        rows.append(row)
        say.size(
            {
                "id": f"size-{size}",
                "name": label,
                "status": "pass",
                "figure": f"{busbw:.3f} GB/s busbw",
                "value": busbw,
                "unit": "GB/s",
                **row,
            }
        )
        del data
    return rows, skipped


def describe(torch: Any, args: argparse.Namespace, backend: str, world: int) -> dict[str, Any]:
    version = getattr(torch, "version", None)
    info: dict[str, Any] = {
        "world_size": world,
        "backend": backend,
        "device": args.device,
        "torch_version": str(torch.__version__),
        "hip_version": getattr(version, "hip", None),
        "rccl_version": None,
        "devices": [],
        "socket_ifname": os.environ.get(
            "NCCL_SOCKET_IFNAME" if backend == "nccl" else "GLOO_SOCKET_IFNAME"
        ),
    }
    if args.device == "gpu":
        try:
            found = torch.cuda.nccl.version()
            info["rccl_version"] = (
                ".".join(str(p) for p in found) if isinstance(found, tuple) else str(found)
            )
        except Exception:  # an optional figure
            pass
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        info["devices"] = names[:world]
    else:
        info["devices"] = ["CPU"] * world
    return info


def measure(args: argparse.Namespace, say: Say, rank: int, world: int) -> dict[str, Any] | None:
    say.progress(0.0, "Importing torch")
    torch = import_torch()
    keep_on_this_machine()
    say.progress(0.0, f"Joining the {world} processes")
    backend = init_group(torch, args, rank, say)
    try:
        info = describe(torch, args, backend, world)
        rows, skipped = run_sizes(torch, args, rank, world, say)
    finally:
        dist: Any = torch.distributed
        dist.destroy_process_group()
    if rank != 0:
        return None
    say.progress(1.0, "Done")
    return {**info, "sizes": rows, "skipped": skipped, "corrupt_rank": args.corrupt_rank}


def ranks() -> tuple[int, int]:
    try:
        return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    except (KeyError, ValueError):
        raise CollectiveFailure(
            "This worker runs under torchrun (python -m torch.distributed.run), which sets "
            "RANK and WORLD_SIZE.",
            "no_launcher",
        ) from None


def main(argv: list[str] | None = None, run: Callable[..., Any] = measure) -> None:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    watch_launcher(os.getppid())
    rank = int(os.environ.get("RANK", "0"))
    say = Say(rank)
    try:
        rank, world = ranks()
        say = Say(rank)
        if world < 2:
            raise CollectiveFailure(
                "An all-reduce needs at least 2 processes; this run has 1.", "one_process"
            )
        data = run(args, say, rank, world)
    except CollectiveFailure as exc:
        say.error(str(exc), exc.kind, exc.detail)
        sys.exit(1)
    except Exception as exc:  # torch's own errors: the panel maps their texts to causes
        import traceback

        text = f"{type(exc).__name__}: {exc}"
        kind = "oom" if "out of memory" in text.lower() else "exception"
        say.error(text.splitlines()[0][:500] if text else kind, kind, traceback.format_exc())
        sys.exit(1)
    if data is not None:
        _wire.result(data)


if __name__ == "__main__":
    _wire.run_main(main)
