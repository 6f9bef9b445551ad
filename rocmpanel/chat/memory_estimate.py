"""Will this model fit? Weights + KV cache + overhead, against free VRAM or RAM.

The estimate is deliberately simple and errs on the large side: weights at the chosen
precision (bitsandbytes keeps embeddings and the output head in the compute dtype), the KV
cache for the chosen context (2 × layers × kv heads × head dim × tokens), and an overhead for
the runtime context, activations and allocator slack. Free VRAM comes from amdgpu sysfs,
which counts graphics allocations that ``torch.cuda.mem_get_info`` ignores.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from rocmpanel.base.enums import Precision
from rocmpanel.chat.model_check import ModelCheck, ModelShape, format_bytes
from rocmpanel.machine.sysfs import read_int, read_text

GIB = 1024**3
AMD_VENDOR = "0x1002"


# What runs on a CPU-only torch, best first. fp16 matmuls on CPU work but are slow and
# some kernels are missing, so it is not offered there.
CPU_PRECISIONS = (Precision.BF16, Precision.FP32, Precision.NF4, Precision.INT8)
GPU_PRECISIONS = (Precision.NF4, Precision.INT8, Precision.FP16, Precision.BF16, Precision.FP32)
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
    device: str  # "gpu" or "cpu"
    available: int | None
    fit: Fit
    message: str


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
    device: str = "gpu",
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
    fixed = int(0.5 * GIB) if device == "gpu" else int(0.4 * GIB)
    overhead = fixed + int(0.08 * (weights + kv))
    return MemoryEstimate(precision, context, int(weights), int(kv), overhead)


def estimate_for(
    check: ModelCheck, precision: Precision, context: int, *, device: str = "gpu"
) -> MemoryEstimate | None:
    """The estimate for a checked folder, or None when its size is unknown."""
    if check.parameters is None:
        return None
    return estimate_memory(check.parameters, check.shape, precision, context, device=device)


def judge_fit(estimate: MemoryEstimate, device: str, available: int | None) -> FitVerdict:
    """Compare with what is free; above 90 % of it is tight, above 100 % won't fit."""
    need = format_bytes(estimate.total)
    where = "VRAM" if device == "gpu" else "RAM"
    if available is None:
        return FitVerdict(
            estimate, device, None, Fit.UNKNOWN, f"Needs about {need}; free {where} is unknown."
        )
    free = format_bytes(available)
    if estimate.total > available:
        smaller = SMALLER.get(estimate.precision)
        hint = (
            f" Try {smaller.label} or a shorter context."
            if smaller
            else (" Try a shorter context or a smaller model.")
        )
        return FitVerdict(
            estimate,
            device,
            available,
            Fit.WONT_FIT,
            f"Needs about {need} but only {free} of {where} is free: it will not fit.{hint}",
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


@dataclass(frozen=True)
class VramReading:
    """One AMD card's VRAM from sysfs (bytes)."""

    card: str
    total: int
    used: int

    @property
    def free(self) -> int:
        return max(0, self.total - self.used)


def read_amd_vram(drm_root: Path | str = "/sys/class/drm") -> list[VramReading]:
    """VRAM of every AMD card under ``drm_root``; cards without the files are skipped."""
    root = Path(drm_root)
    readings: list[VramReading] = []
    try:
        cards = sorted(p for p in root.iterdir() if p.name.startswith("card") and "-" not in p.name)
    except OSError:
        return readings
    for card in cards:
        reading = read_device_vram(card / "device", card.name)
        if reading is not None:
            readings.append(reading)
    return readings


def read_device_vram(device: Path, card: str) -> VramReading | None:
    """One ``cardN/device`` folder's VRAM, or None (not AMD, or the files are missing)."""
    if read_text(device / "vendor") != AMD_VENDOR:
        return None
    total = read_int(device / "mem_info_vram_total")
    used = read_int(device / "mem_info_vram_used")
    if total is None or used is None or total <= 0:
        return None
    return VramReading(card, total, used)


def free_vram(drm_root: Path | str = "/sys/class/drm") -> int | None:
    """Free VRAM of the AMD card with the most of it, or None when none reports."""
    readings = read_amd_vram(drm_root)
    return max((r.free for r in readings), default=None)


def free_ram() -> int | None:
    """Available system memory (psutil), or None when it cannot be read."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a dependency
        return None
    try:
        return int(psutil.virtual_memory().available)
    except OSError:  # pragma: no cover - only on exotic platforms
        return None


def judge_device(
    estimate: MemoryEstimate, device: str, drm_root: Path | str = "/sys/class/drm"
) -> FitVerdict:
    """``judge_fit`` with the free memory read from this machine."""
    available = free_vram(drm_root) if device == "gpu" else free_ram()
    return judge_fit(estimate, device, available)
