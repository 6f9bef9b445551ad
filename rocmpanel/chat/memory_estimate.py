"""Will this model fit? Weights + KV cache + overhead, against the memory available.

The estimate is deliberately simple and errs on the large side: weights at the chosen
precision (bitsandbytes keeps embeddings and the output head in the compute dtype), the KV
cache for the chosen context (2 × layers × kv heads × head dim × tokens), and an overhead for
the runtime context, activations and allocator slack. What is available comes from
:mod:`rocmpanel.chat.free_memory` (the card's free VRAM, or free RAM).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.units import GIB, format_memory
from rocmpanel.chat.model_check import ModelCheck, ModelShape

# What runs on a CPU-only torch, best first. fp16 matmuls on CPU work but are slow and
# some kernels are missing, so it is not offered there.
CPU_PRECISIONS = (Precision.BF16, Precision.FP32, Precision.NF4, Precision.INT8)
SMALLER = {
    Precision.FP32: Precision.BF16,
    Precision.BF16: Precision.INT8,
    Precision.FP16: Precision.INT8,
    Precision.INT8: Precision.NF4,
}


class Fit(Enum):
    """The verdict of comparing the estimate with the free memory."""

    FITS = "fits"
    TIGHT = "tight"
    WONT_FIT = "won't fit"
    UNKNOWN = "unknown"


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
    fixed = int(0.4 * GIB) if device is Device.CPU else int(0.5 * GIB)
    overhead = fixed + int(0.08 * (weights + kv))
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
) -> FitVerdict:
    """Compare with what is free; above 90 % of it is tight, above 100 % won't fit.

    When the free memory is not known but the device's ``total`` is (a GPU the Monitor
    has not read yet), a need above the total still won't fit; below it, the verdict is
    unknown and says how much the device has in all.
    """
    need = format_memory(estimate.total)
    where = device.memory_name
    if available is None:
        if total is not None and estimate.total > total:
            return FitVerdict(
                estimate,
                device,
                None,
                Fit.WONT_FIT,
                f"Needs about {need} but the device has only {format_memory(total)} of {where}:"
                f" it will not fit.{_smaller_hint(estimate)}",
            )
        known = f" (of {format_memory(total)} in all)" if total is not None else ""
        return FitVerdict(
            estimate,
            device,
            None,
            Fit.UNKNOWN,
            f"Needs about {need}; free {where} is unknown{known}.",
        )
    free = format_memory(available)
    if estimate.total > available:
        return FitVerdict(
            estimate,
            device,
            available,
            Fit.WONT_FIT,
            f"Needs about {need} but only {free} of {where} is free: it will not fit."
            + _smaller_hint(estimate),
        )
    if estimate.total > 0.9 * available:
        return FitVerdict(
            estimate,
            device,
            available,
            Fit.TIGHT,
            f"Needs about {need} of {free} free {where}: tight, other programs may push it "
            "out of memory.",
        )
    return FitVerdict(
        estimate, device, available, Fit.FITS, f"Needs about {need}; {free} of {where} is free."
    )


def _smaller_hint(estimate: MemoryEstimate) -> str:
    smaller = SMALLER.get(estimate.precision)
    if smaller is not None:
        return f" Try {smaller.label} or a shorter context."
    return " Try a shorter context or a smaller model."
