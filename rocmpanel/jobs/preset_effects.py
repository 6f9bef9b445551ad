"""What each item of a preset does on a machine (:func:`item_effects`), and that machine
(:func:`machine_target`).

Re-exported by :mod:`rocmpanel.jobs.presets` (import from there). The rules say when an
item does nothing (another platform, no GPU, a GPU without TF32, a torch that ignores it),
when it could not be checked (what it depends on is not known), and when it is harmful
(an HSA_OVERRIDE_GFX_VERSION naming another family).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rocmpanel.jobs.preset_schema import Effect, Item, Preset, Target
from rocmpanel.machine.gfx import arch_targets
from rocmpanel.machine.gpu_model import GpuInfo

#: gfx targets where allowing TF32 changes float32 GEMM results, every CDNA3 and CDNA4 target
#: of the family table (machine/gfx.py): MI300 (gfx940/gfx941/gfx942) has TF32 (xf32)
#: matrix instructions; on MI350 (gfx950) hipBLASLt emulates TF32 with bf16 instructions
#: (ROCm/hipBLASLt pull 1806), which still rounds like TF32. RDNA2/3/4 and CDNA1/2 have
#: no TF32 (FACTS.md section 5; knobs.md section 7).
TF32_GFX: tuple[str, ...] = arch_targets("cdna3") + arch_targets("cdna4")
#: Targets AOTriton never marked experimental in any release: flash/mem-efficient SDPA is on
#: there without TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL (pt_sdpa; ROCm/aotriton
#: v3src/util.cc isArchExperimentallySupported lists gfx1101-1103, gfx1150/1152/1153, gfx1200).
AOTRITON_NEVER_GATED: tuple[str, ...] = ("gfx90a", "gfx942")
#: Targets recent AOTriton marks experimental (ROCm/aotriton v3src/util.cc, commit
#: 05f26c2d): the variable is what turns flash/mem-efficient SDPA on there.
AOTRITON_EXPERIMENTAL: tuple[str, ...] = (
    "gfx1101",
    "gfx1102",
    "gfx1103",
    "gfx1150",
    "gfx1152",
    "gfx1153",
    "gfx1200",
)
#: gfx1100 is gated only in some torch releases: torch 2.5-2.6 gated it in its own
#: sdp_utils.cpp (pytorch pull 134498, AOTriton 0.7b); AOTriton 0.11b (about torch 2.9)
#: gated it again (pytorch pull 166397) and 0.11.1b restored it (pytorch pull 169696).
AOTRITON_GFX1100_GATED_TORCH: tuple[tuple[int, int], ...] = ((2, 5), (2, 6), (2, 9))
#: torch reads the variable from pytorch pull 134498 (AOTriton 0.7b, merged 2024-09): about
#: torch 2.5 (the release the pull first shipped in is not verified).
AOTRITON_VARIABLE_FROM = (2, 5)
#: Targets older AOTriton releases gated and recent ones support without the variable.
AOTRITON_ONCE_GATED: tuple[str, ...] = ("gfx1151", "gfx1201", "gfx950")
#: First upstream torch whose ROCm allocator honours expandable_segments, on ROCm >= 7.0
#: (build-time ROCM_VERSION): pytorch pulls 177974 (merged 2026-03-20) and 179930
#: (2026-04-10) landed after the 2.11 branch cut (2026-02-16..19) and before the 2.12 one
#: (2026-04-13..15; pytorch pull 171832). Upstream torch ignores it on ROCm through 2.11.
#: AMD's own ROCm/pytorch release/2.11 carries a backport (ROCm/pytorch pull 3106), and a
#: version string cannot tell an AMD build from an upstream one: 2.11 is "not checked".
EXPANDABLE_TORCH_FROM = (2, 12)
EXPANDABLE_BACKPORT_TORCH = (2, 11)
EXPANDABLE_HIP_FROM = (7, 0)
#: The note of an item whose effect depends on the GPU when none was detected (or the
#: caller did not say which): its effect is then not checked.
NO_GPU_DETECTED = "no AMD GPU detected"
#: HSA_OVERRIDE_GFX_VERSION naming another family than the GPU: every GPU then reports as
#: that target and runs kernels built for it (env catalogue sources thunk, override_harm:
#: ROCm issue 5238, an MI210 made to report gfx1030 faulted).
OVERRIDE_HARM = (
    "makes this {gfx} report as {named}, another family: kernels built for {named} may "
    "fault, hang or give wrong results on it; do not use this preset on this GPU"
)
#: RDNA3 targets with the large register file (1536 VGPRs per SIMD; the other gfx11 parts
#: have 1024): ROCm/rocm-libraries pull 9700 (tensilelite hardware_caps), and AMD in ROCm
#: issue 4557 (the catalogue's override_harm): gfx1102/gfx1103 made to report as gfx1100 or
#: gfx1101 run kernels tuned for more registers than they have.
BIG_VGPR_GFX: tuple[str, ...] = ("gfx1100", "gfx1101", "gfx1151")
OVERRIDE_FEWER_VGPRS = (
    "makes this {gfx} report as {named}, a chip of its family with more registers: kernels "
    "built for {named} may need more than {gfx} has and fault or hang (ROCm issue 4557)"
)
#: Env variables read only by the GPU stack: a CPU-only run ignores them; with no AMD GPU
#: detected their effect is not checked.
_GPU_PREFIXES = (
    "HSA_",
    "HIP_",
    "AMD_",
    "ROCR_",
    "MIOPEN_",
    "PYTORCH_TUNABLEOP_",
    "TORCH_ROCM_",
    "TORCH_BLAS_",
    "GPU_",
    "CUDA_",
    "NCCL_",
    "FLASH_ATTENTION_",
    "HIPBLASLT_",
)
#: Torch settings only the GPU stack uses. sdpa_backends is not here: the enable_*_sdp flags
#: are global and CPU attention honours them (checked in the torch 2.13.0 CPU wheel).
GPU_TORCH_SETTINGS = ("tunableop", "cudnn_benchmark", "memory_fraction", "alloc")
_NO_GPU = "no GPU: CPU runs ignore it"
#: sdpa_backends without math: torch raises "No viable backend" when no allowed kernel fits
#: (2.13.0 CPU wheel: only mem_efficient fails on CPU, only flash runs).
NO_MATH_SDPA = (
    "without math, attention fails where no flash or memory-efficient kernel exists (on CPU "
    "with only mem_efficient allowed, on GPUs without AOTriton kernels)"
)
#: float32_matmul_precision on CPU (torch 2.13.0 CPU wheel: "high" sets
#: torch.backends.mkldnn.matmul.fp32_precision to tf32, "medium" to bf16; aten/src/ATen/
#: native/mkldnn/Matmul.cpp uses TF32 only on x86-64 with AMX-FP16).
CPU_HIGH = (
    "on CPU it changes nothing unless the processor has AMX-FP16, where oneDNN may run "
    "float32 matmuls as TF32"
)
CPU_MEDIUM = "on CPU float32 matmuls may run in bf16 (oneDNN), which is less precise"
#: HIPBLASLT_ALLOW_TF32 on a GPU without TF32: the hipBLASLt heuristic may then return no
#: algorithm and torch warns NOT_SUPPORTED (pytorch pull 193345, open).
ALLOW_TF32_RISK = (
    "{gfx} has no TF32 hardware: nothing to allow, and hipBLASLt may find no algorithm for "
    "float32 GEMMs with it set (pytorch pull 193345)"
)


def _version(text: str | None) -> tuple[int, int] | None:
    from rocmpanel.envvars.catalogue import torch_minor

    return torch_minor(text) if text else None


def _cpu_only(target: Target) -> bool:
    """No AMD GPU: no gfx and a torch that is known and not a ROCm build."""
    return (
        target.gfx is None
        and target.torch_version is not None
        and ("rocm" not in target.torch_version)
    )


def _guess(item: Item, note: str) -> Effect:
    """An effect that could not be checked here: ``applies`` is a guess (True)."""
    return Effect(item, True, f"not checked: {note}", checked=False)


def _gpu_bound(item: Item) -> bool:
    """Whether the item's effect depends on the GPU (its target, or there being one)."""
    if item.kind == "env":
        return item.key.startswith(_GPU_PREFIXES)
    if item.key == "float32_matmul_precision":
        return bool(item.value != "highest")
    return item.key in GPU_TORCH_SETTINGS


def _override(item: Item, gfx: str) -> Effect:
    """HSA_OVERRIDE_GFX_VERSION on a known GPU: redundant when it names that very target, a
    same-family substitute otherwise, and harmful when it names another family (thunk,
    override_harm in the env catalogue)."""
    from rocmpanel.machine.gfx import parse_override, same_family

    named = parse_override(item.value)
    if named is None:
        return Effect(item, True)
    if named.name == gfx:
        return Effect(
            item,
            False,
            f"the GPU is {gfx}, already in the {named.name} family the override names: "
            "it changes nothing",
        )
    if same_family(named.name, gfx) and named.name in BIG_VGPR_GFX and gfx not in BIG_VGPR_GFX:
        return Effect(item, True, OVERRIDE_FEWER_VGPRS.format(gfx=gfx, named=named.name))
    if same_family(named.name, gfx):
        return Effect(
            item,
            True,
            f"makes this {gfx} report as {named.name}, a chip of its family: needed only when "
            f"the installed ROCm and PyTorch have no {gfx} kernels",
        )
    return Effect(item, True, OVERRIDE_HARM.format(gfx=gfx, named=named.name))


def _effect(item: Item, target: Target) -> Effect:
    from rocmpanel.envvars.catalogue import load_catalogue
    from rocmpanel.machine.gfx import normalise_gfx

    gfx = normalise_gfx(target.gfx)
    place = target.platform.capitalize()
    if target.platform not in item.platforms:
        only = " and ".join(p.capitalize() for p in item.platforms)
        return Effect(item, False, f"set on {only} only: a {place} job does not get it")
    if item.kind == "env":
        info = load_catalogue().lookup(item.key)
        if info is not None and target.platform not in info.platforms:
            only = " and ".join(p.capitalize() for p in info.platforms)
            return Effect(
                item, False, f"{item.key} is read on {only} only: it does nothing on {place}"
            )
    if _cpu_only(target) and _gpu_bound(item):
        if item.key == "float32_matmul_precision":
            return Effect(item, True, CPU_HIGH if item.value == "high" else CPU_MEDIUM)
        return Effect(item, False, _NO_GPU)
    if gfx is None and _gpu_bound(item):
        if item.key == "alloc" and target.platform == "windows":
            windows = _expandable(item, target) if item.value.get("expandable_segments") else None
            if windows is not None and not windows.applies:
                return windows
        return _guess(item, NO_GPU_DETECTED)
    if item.kind == "env":
        return _env_effect(item, target, gfx)
    if item.key == "sdpa_backends" and "math" not in item.value:
        return Effect(item, True, NO_MATH_SDPA)
    if _gpu_bound(item) and item.key == "float32_matmul_precision" and gfx not in TF32_GFX:
        return Effect(
            item,
            False,
            f"{gfx} has no TF32 hardware: float32 matmuls stay full float32",
        )
    if item.key == "alloc" and item.value.get("expandable_segments") is True:
        return _expandable(item, target)
    return Effect(item, True)


def _env_effect(item: Item, target: Target, gfx: str | None) -> Effect:
    """An env item past the platform and no-GPU checks (``gfx`` is known where it matters)."""
    if item.key == "HSA_OVERRIDE_GFX_VERSION" and gfx is not None:
        return _override(item, gfx)
    if item.key == "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL" and gfx is not None:
        if gfx in AOTRITON_NEVER_GATED:
            return Effect(
                item,
                False,
                f"AOTriton never marks {gfx} experimental: its fast attention is on without this",
            )
        return _aotriton(item, gfx, _version(target.torch_version))
    if item.key == "HIPBLASLT_ALLOW_TF32" and gfx is not None and gfx not in TF32_GFX:
        return Effect(item, False, ALLOW_TF32_RISK.format(gfx=gfx))
    return Effect(item, True)


def _aotriton(item: Item, gfx: str, torch: tuple[int, int] | None) -> Effect:
    """TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL on a known gfx that is not never-gated."""
    if torch is not None and torch < AOTRITON_VARIABLE_FROM:
        return Effect(
            item,
            True,
            f"may be unneeded: torch {torch[0]}.{torch[1]} predates the variable (read from "
            "about torch 2.5, pytorch pull 134498)",
        )
    if gfx in AOTRITON_EXPERIMENTAL:
        return Effect(item, True)
    if gfx == "gfx1100":
        if torch is None:
            return _guess(item, "gfx1100 needs it only in some torch releases (2.5-2.6, 2.9)")
        if torch in AOTRITON_GFX1100_GATED_TORCH:
            return Effect(item, True)
        return Effect(
            item,
            True,
            f"may be unneeded: torch {torch[0]}.{torch[1]}'s AOTriton supports gfx1100 "
            "without it (it was gated in torch 2.5-2.6 and 2.9)",
        )
    if gfx in AOTRITON_ONCE_GATED:
        return Effect(
            item,
            True,
            f"may be unneeded: recent AOTriton supports {gfx} without it; older releases gate it",
        )
    return Effect(item, True)


def _expandable(item: Item, target: Target) -> Effect:
    """expandable_segments: a no-op on Windows and, in upstream torch, before 2.12 and
    before ROCm 7.0; 2.11 is not checked (AMD's own 2.11 builds carry the backport)."""
    reason: str | None = None
    if target.platform == "windows":
        reason = "expandable_segments does nothing on Windows"
    else:
        torch = _version(target.torch_version)
        hip = _version(target.hip_version)
        if torch is None:
            return _guess(item, "the torch version is not known")
        if torch == EXPANDABLE_BACKPORT_TORCH:
            return _guess(
                item,
                "upstream torch 2.11 ignores expandable_segments on ROCm, AMD's own 2.11 "
                "builds honour it on ROCm 7.0 and later",
            )
        if torch < EXPANDABLE_TORCH_FROM:
            reason = (
                f"torch {torch[0]}.{torch[1]} ignores expandable_segments on ROCm (upstream "
                f"torch honours it from {EXPANDABLE_TORCH_FROM[0]}.{EXPANDABLE_TORCH_FROM[1]} "
                "with ROCm 7.0 and later)"
            )
        elif hip is None:
            return _guess(item, "the HIP version is not known")
        elif hip < EXPANDABLE_HIP_FROM:
            reason = f"ROCm {hip[0]}.{hip[1]} is too old for expandable_segments (needs 7.0)"
    if reason is None:
        return Effect(item, True)
    if len(item.value) > 1:
        return Effect(item, True, f"{reason}; the other allocator options apply")
    return Effect(item, False, reason)


def item_effects(preset: Preset, target: Target) -> list[Effect]:
    """Each item of ``preset`` and whether it does anything on ``target``."""
    return [_effect(item, target) for item in preset.items()]


def _platform_of(sys_platform: str) -> str:
    return "windows" if sys_platform == "win32" else "linux"


def _major_minor(version: str | None) -> str | None:
    """ "6.4.43482-0f2d60242" -> "6.4" (what Target.hip_version holds); None stays None."""
    if not version:
        return None
    return ".".join(str(version).split(".")[:2])


def machine_target(
    gpus: Sequence[GpuInfo],
    torch_version: str | None = None,
    hip_version: str | None = None,
    platform: str | None = None,
) -> Target:
    """The machine the effects are judged on, the same for the CLI and the views: the first
    discrete GPU with a known gfx (an integrated one only when there is no such discrete
    GPU: on an APU-only machine jobs run on it), the workload torch's version and HIP
    version (major.minor) when known, and ``platform`` ("linux" | "windows"; None: this
    one). ``gpus``: the machine inventory's GPU list (``Inventory.system.gpus``)."""
    known = [gpu for gpu in gpus if gpu.gfx]
    chosen = next((gpu for gpu in known if not gpu.integrated), None)
    if chosen is None:
        chosen = next(iter(known), None)
    return Target(
        platform=platform or _platform_of(sys.platform),
        gfx=chosen.gfx if chosen is not None else None,
        torch_version=torch_version or None,
        hip_version=_major_minor(hip_version),
    )
