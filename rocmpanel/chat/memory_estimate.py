"""Will this model fit? Weights + KV cache + overhead, against the memory available.

The estimate is deliberately simple and errs on the large side: weights at the chosen
precision (bitsandbytes keeps embeddings and the output head in the compute dtype), the KV
cache for the chosen context (2 × layers × kv heads × head dim × tokens), and an overhead for
the runtime context, activations and allocator slack. What is available comes from
:mod:`rocmpanel.chat.free_memory` (the card's free VRAM, or free RAM).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.i18n import translate
from rocmpanel.base.units import GIB, format_memory
from rocmpanel.chat.model_check import ModelCheck, ModelShape

if TYPE_CHECKING:
    from rocmpanel.machine.gpu_model import GpuInfo

# What runs on a CPU-only torch, best first. fp16 matmuls on CPU work but are slow and
# some kernels are missing, so it is not offered there.
CPU_PRECISIONS = (Precision.BF16, Precision.FP32, Precision.NF4, Precision.INT8)
SMALLER = {
    Precision.FP32: Precision.BF16,
    Precision.BF16: Precision.INT8,
    Precision.FP16: Precision.INT8,
    Precision.INT8: Precision.NF4,
}
# The runtime context (HIP kernels, BLAS libraries) each GPU a model uses needs, and the
# share of weights and cache added for activations and allocator slack. The chat worker
# plans a spread with copies of these (rocmpanel/workers/_chat_devices.py; a test checks).
GPU_RUNTIME_BYTES = GIB // 2
CPU_RUNTIME_BYTES = int(0.4 * GIB)
OVERHEAD_SHARE = 0.08
# A GPU with less room than this after its runtime takes no share of a spread model.
MIN_SHARE_BYTES = GIB


class Fit(Enum):
    """The verdict of comparing the estimate with the free memory."""

    FITS = "fits"
    TIGHT = "tight"
    WONT_FIT = "won't fit"
    UNKNOWN = "unknown"
    SPREAD = "fits spread over GPUs"  # not on one of the chosen GPUs, on several together


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes needed for one model at one precision and context length."""

    precision: Precision
    context: int
    weights: int
    kv_cache: int
    overhead: int

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.overhead


@dataclass(frozen=True)
class FitVerdict:
    """The estimate against the memory available on the target device."""

    estimate: MemoryEstimate
    device: Device  # GPU or CPU
    available: int | None
    fit: Fit
    message: str
    spread_over: int = 0  # Fit.SPREAD: how many of the chosen GPUs the model will take


@dataclass(frozen=True)
class GpuRoom:
    """One chosen GPU's memory for the verdict: ``label`` ("GPU 1"), ``free`` VRAM when it
    was measured, its ``total`` when known."""

    label: str
    free: int | None
    total: int | None = None


def chosen_gpu_rooms(
    gpus: Sequence[GpuInfo],
    saved_choice: str,
    memory_of: Callable[[GpuInfo], tuple[int | None, int | None]],
) -> list[GpuRoom]:
    """The GPUs a chat job gets (the saved choice, Settings ``general.job_gpus``, among
    ``gpus``), labelled as the job numbers them ("GPU 0" is the first chosen, cuda:0),
    with their (free, total) memory from ``memory_of``. The runtime numbers GPUs in KFD
    topology order, so GPUs seen there are put in that order first."""
    from rocmpanel.jobs.gpu_choice import choose, saved_wanted

    ordered = sorted(gpus, key=lambda g: (g.kfd_node is None, g.kfd_node or 0))
    return rooms_for(choose(ordered, saved_wanted(saved_choice)).gpus, memory_of)


def rooms_for(
    chosen: Sequence[GpuInfo], memory_of: Callable[[GpuInfo], tuple[int | None, int | None]]
) -> list[GpuRoom]:
    """``chosen`` (in the job's order) as rooms labelled as the job numbers them ("GPU 0"
    is cuda:0), with their (free, total) memory from ``memory_of``."""
    return [GpuRoom(f"GPU {number}", *memory_of(gpu)) for number, gpu in enumerate(chosen)]


def and_list(items: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C`` (in the window's language)."""
    if len(items) < 2:
        return "".join(items)
    return translate("memory_estimate", "{first} and {last}").format(
        first=", ".join(items[:-1]), last=items[-1]
    )


def default_precision(device: Device, has_amd_gpu: bool) -> Precision:
    """NF4 where a load lands on an AMD GPU, bf16 on the CPU."""
    return Precision.NF4 if estimate_device(device, has_amd_gpu) is Device.GPU else Precision.BF16


def estimate_device(device: Device, has_amd_gpu: bool) -> Device:
    """Where a load will land (GPU or CPU), as far as the panel can tell without torch."""
    if device is Device.AUTO:
        return Device.GPU if has_amd_gpu else Device.CPU
    return device


def _non_quantized_params(shape: ModelShape) -> int:
    """Embeddings and output head, which bitsandbytes leaves in the compute dtype."""
    if not shape.vocab_size or not shape.hidden_size:
        return 0
    heads = 1 if shape.tied_embeddings else 2
    return shape.vocab_size * shape.hidden_size * heads


def estimate_memory(
    parameters: int,
    shape: ModelShape,
    precision: Precision,
    context: int,
    *,
    device: Device = Device.GPU,
) -> MemoryEstimate:
    """Bytes for ``parameters`` weights at ``precision`` plus a ``context``-token KV cache."""
    if parameters < 0 or context < 0:
        raise ValueError("parameters and context must not be negative")
    if precision.quantized:
        plain = min(parameters, _non_quantized_params(shape))
        weights = (parameters - plain) * precision.weight_bytes_per_param
        weights += plain * precision.compute_bytes
    else:
        weights = parameters * precision.weight_bytes_per_param
    kv = 0
    if shape.layers and shape.kv_heads and shape.head_dim:
        kv = 2 * shape.layers * shape.kv_heads * shape.head_dim * context
        kv *= precision.compute_bytes
    # Runtime context (HIP/CUDA kernels, or the interpreter with torch on CPU), plus
    # activations and allocator slack proportional to the model.
    fixed = CPU_RUNTIME_BYTES if device is Device.CPU else GPU_RUNTIME_BYTES
    overhead = fixed + int(OVERHEAD_SHARE * (weights + kv))
    return MemoryEstimate(precision, context, int(weights), int(kv), overhead)


def estimate_for(
    check: ModelCheck, precision: Precision, context: int, *, device: Device = Device.GPU
) -> MemoryEstimate | None:
    """The estimate for a checked folder, or None when its size is unknown."""
    if check.parameters is None:
        return None
    return estimate_memory(check.parameters, check.shape, precision, context, device=device)


def judge_fit(
    estimate: MemoryEstimate,
    device: Device,
    available: int | None,
    *,
    total: int | None = None,
    gpus: Sequence[GpuRoom] = (),
) -> FitVerdict:
    """Compare with what is free; above 90 % of it is tight, above 100 % won't fit.

    When the free memory is not known but the device's ``total`` is (a GPU the Monitor
    has not read yet), a need above the total still won't fit; below it, the verdict is
    unknown and says how much the device has in all.

    ``gpus``: every chosen GPU (``available``/``total`` are the first's). A model that will
    not fit on the first may fit on another alone, or spread over several (Fit.SPREAD),
    as the chat worker places it (``rocmpanel/workers/_chat_devices.py``).
    """
    verdict = _judge_one(estimate, device, available, total)
    if verdict.fit is Fit.WONT_FIT and device is Device.GPU and len(gpus) > 1:
        return _judge_several(verdict, gpus)
    return verdict


def _judge_several(one: FitVerdict, gpus: Sequence[GpuRoom]) -> FitVerdict:
    """The verdict over several GPUs: another one alone, the fewest together, or none.

    Each GPU a spread model uses pays its own runtime context; a GPU with less than
    MIN_SHARE_BYTES left after it takes no share. Free memory where it was measured, else
    the GPU's total (an upper bound: the words then say "in all")."""
    estimate = one.estimate
    need = estimate.total
    rooms = [(g, g.free if g.free is not None else g.total) for g in gpus]
    known = [(g, room) for g, room in rooms if room is not None]
    words = (
        translate("memory_estimate", "free")
        if all(g.free is not None for g, _ in known)
        else translate("memory_estimate", "free or in all")
    )
    alone = [(g, room) for g, room in known[1:] if room >= need]
    if alone:
        gpu, room = max(alone, key=lambda pair: pair[1])
        return FitVerdict(
            estimate,
            one.device,
            one.available,
            Fit.FITS,
            translate(
                "memory_estimate",
                "Needs about {need}: more than the first GPU has free, so it goes on {gpu} "
                "alone ({room} {words}).",
            ).format(
                need=format_memory(need), gpu=gpu.label, room=format_memory(room), words=words
            ),
        )
    usable = sorted(
        ((g, room) for g, room in known if room - GPU_RUNTIME_BYTES >= MIN_SHARE_BYTES),
        key=lambda pair: -pair[1],
    )
    for count in range(2, len(usable) + 1):
        chosen = usable[:count]
        if sum(room - GPU_RUNTIME_BYTES for _, room in chosen) < need - GPU_RUNTIME_BYTES:
            continue
        chosen.sort(key=lambda pair: gpus.index(pair[0]))
        names = and_list([g.label for g, _ in chosen])
        rooms_text = " + ".join(format_memory(room) for _, room in chosen)
        return FitVerdict(
            estimate,
            one.device,
            one.available,
            Fit.SPREAD,
            translate(
                "memory_estimate",
                "Needs about {need}, more than one GPU has free: it will be spread over "
                "{names} ({rooms} {words}).",
            ).format(need=format_memory(need), names=names, rooms=rooms_text, words=words),
            spread_over=count,
        )
    rooms_text = " + ".join(format_memory(room) for _, room in known) or translate(
        "memory_estimate", "unknown"
    )
    return FitVerdict(
        estimate,
        one.device,
        one.available,
        Fit.WONT_FIT,
        translate(
            "memory_estimate",
            "Needs about {need} but the {count} chosen GPUs have only {rooms} {words}: it will "
            "not fit, not even spread over them.",
        ).format(need=format_memory(need), count=len(gpus), rooms=rooms_text, words=words)
        + _smaller_hint(estimate),
    )


def _judge_one(
    estimate: MemoryEstimate, device: Device, available: int | None, total: int | None
) -> FitVerdict:
    """The verdict against one device's memory."""
    need = format_memory(estimate.total)
    where = device.memory_name
    if available is None:
        if total is not None and estimate.total > total:
            return FitVerdict(
                estimate,
                device,
                None,
                Fit.WONT_FIT,
                translate(
                    "memory_estimate",
                    "Needs about {need} but the device has only {total} of {where}: it will "
                    "not fit.",
                ).format(need=need, total=format_memory(total), where=where)
                + _smaller_hint(estimate),
            )
        if total is not None:
            message = translate(
                "memory_estimate",
                "Needs about {need}; free {where} is unknown (of {total} in all).",
            ).format(need=need, where=where, total=format_memory(total))
        else:
            message = translate(
                "memory_estimate", "Needs about {need}; free {where} is unknown."
            ).format(need=need, where=where)
        return FitVerdict(estimate, device, None, Fit.UNKNOWN, message)
    free = format_memory(available)
    if estimate.total > available:
        return FitVerdict(
            estimate,
            device,
            available,
            Fit.WONT_FIT,
            translate(
                "memory_estimate",
                "Needs about {need} but only {free} of {where} is free: it will not fit.",
            ).format(need=need, free=free, where=where)
            + _smaller_hint(estimate),
        )
    if estimate.total > 0.9 * available:
        return FitVerdict(
            estimate,
            device,
            available,
            Fit.TIGHT,
            translate(
                "memory_estimate",
                "Needs about {need} of {free} free {where}: tight, other programs may push it "
                "out of memory.",
            ).format(need=need, free=free, where=where),
        )
    message = translate("memory_estimate", "Needs about {need}; {free} of {where} is free.").format(
        need=need, free=free, where=where
    )
    return FitVerdict(estimate, device, available, Fit.FITS, message)


def _smaller_hint(estimate: MemoryEstimate) -> str:
    """The sentence after "it will not fit." (its leading space is the source's: a language
    that joins sentences without one translates it away)."""
    smaller = SMALLER.get(estimate.precision)
    if smaller is not None:
        label = translate("Precision", smaller.label)  # the label the Precision list shows
        return translate("memory_estimate", " Try {precision} or a shorter context.").format(
            precision=label
        )
    return translate("memory_estimate", " Try a shorter context or a smaller model.")
