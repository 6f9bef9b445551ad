"""Known PyTorch/ROCm failures: error strings → likely cause and fix.

Workers report a ``fix_id`` for what they recognise themselves (a CPU build, no GPU, an arch
mismatch) and the raw error text of anything that raised; :func:`explain` turns either into
a :class:`Fix` whose text is specific to the GPU (e.g. the override value for its gfx).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rocmpanel.knowledge import community
from rocmpanel.knowledge.torch_builds import Override


@dataclass(frozen=True)
class Fix:
    """A likely cause and what to do about it."""

    id: str
    cause: str
    fix: str


@dataclass(frozen=True)
class _Pattern:
    fix_id: str
    regex: re.Pattern[str]


# Ordered: the first match wins (the most specific strings first).
_PATTERNS: tuple[_Pattern, ...] = tuple(
    _Pattern(fix_id, re.compile(regex, re.IGNORECASE))
    for fix_id, regex in (
        (
            "no_binary_for_gpu",
            r"hipErrorNoBinaryForGpu|no binary for gpu|"
            r"no kernel image is available",
        ),
        ("invalid_device_function", r"invalid device function|hipErrorInvalidDeviceFunction"),
        (
            "kfd_permission",
            r"/dev/kfd.*permission denied|permission denied.*/dev/kfd|"
            r"unable to open /dev/kfd",
        ),
        ("cpu_build", r"Torch not compiled with CUDA enabled"),
        ("hsa_out_of_resources", r"HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
        ("override_invalid", r"HSA_OVERRIDE_GFX_VERSION \S* ?is invalid"),
        ("out_of_memory", r"out of memory|hipErrorOutOfMemory|OutOfMemoryError"),
        ("torch_missing", r"No module named ['\"]?torch"),
        (
            "no_gpu",
            r"No HIP GPUs are available|no ROCm-capable device|"
            r"hipErrorNoDevice|Found no NVIDIA driver",
        ),
    )
)


def match(text: str) -> str | None:
    """The fix id of the first known error string in ``text``, or None."""
    for pattern in _PATTERNS:
        if pattern.regex.search(text):
            return pattern.fix_id
    return None


def _override_advice(gfx: str | None, override: Override | None, os_name: str) -> str:
    if os_name == "windows":
        return (
            "HSA_OVERRIDE_GFX_VERSION does nothing on Windows: use a build that supports this "
            "GPU (AMD's Windows wheels cover RDNA3, RDNA4 and Strix Halo)."
        )
    if override is not None and gfx:
        harms = community.load().harms_for(gfx, override.value)
        if harms:
            return (
                f"Install a build whose kernels include {gfx} (see the plan). The "
                f"HSA_OVERRIDE_GFX_VERSION={override.value} workaround is known to harm this GPU: "
                + " ".join(h.text for h in harms)
            )
        return (
            f"On Linux, run jobs with HSA_OVERRIDE_GFX_VERSION={override.value} so {gfx} uses "
            f"the {override.target} kernels (community knowledge, not an AMD promise), or install "
            "a build whose kernels include it."
        )
    target = f" {gfx}" if gfx else ""
    return (
        f"Install a build whose kernels include{target} (see the plan). No known same-family "
        "HSA_OVERRIDE_GFX_VERSION substitute exists for this GPU."
    )


def explain(
    fix_id: str | None = None,
    text: str = "",
    *,
    gfx: str | None = None,
    override: Override | None = None,
    os_name: str = "linux",
) -> Fix | None:
    """The cause and fix for ``fix_id`` or, when it is None, for the first error in ``text``."""
    key = fix_id or (match(text) if text else None)
    if key is None:
        return None
    gpu = gfx or "this GPU"
    table: dict[str, tuple[str, str]] = {
        "no_binary_for_gpu": (
            f"The torch build has no compiled kernels (code object) for {gpu}.",
            _override_advice(gfx, override, os_name),
        ),
        "invalid_device_function": (
            "A kernel was launched on a device it was not built for: often an integrated GPU "
            "enumerated next to the discrete one.",
            "Hide the iGPU: set HIP_VISIBLE_DEVICES to the discrete GPU's index (e.g. "
            "HIP_VISIBLE_DEVICES=0) for jobs; if the GPU itself is unsupported, see the override "
            "advice. " + (_override_advice(gfx, override, os_name) if override else ""),
        ),
        "kfd_permission": (
            "This user may not open /dev/kfd (and /dev/dri/renderD*).",
            "Add the user to the 'render' group (and 'video' on some distributions): "
            "sudo usermod -aG render,video $USER, then log out and back in.",
        ),
        "cpu_build": (
            "A CPU-only torch is installed in this environment, so there is no GPU backend.",
            "Install the planned ROCm build of PyTorch into a managed environment and make "
            "it active.",
        ),
        "not_rocm_build": (
            "This torch is not a ROCm build (torch.version.hip is None): it is a CPU or CUDA "
            "build, which cannot use an AMD GPU.",
            "Install the planned ROCm build of PyTorch into a managed environment and make "
            "it active.",
        ),
        "hsa_out_of_resources": (
            "The ROCm runtime found no GPU it can use: no supported GPU, a wrong "
            "HSA_OVERRIDE_GFX_VERSION, or WSL without GPU support.",
            "Check that the amdgpu driver is loaded and /dev/kfd exists; unset a wrong "
            "HSA_OVERRIDE_GFX_VERSION (unset it, never leave it empty). "
            + (_override_advice(gfx, override, os_name) if override else ""),
        ),
        "override_invalid": (
            "HSA_OVERRIDE_GFX_VERSION has a value the runtime rejects.",
            "Use the MAJOR.MINOR.STEP form (e.g. 10.3.0), or unset the variable.",
        ),
        "out_of_memory": (
            "The GPU ran out of memory (other programs, including the desktop, hold VRAM).",
            "Close other GPU programs or use smaller sizes; the Monitor tab shows VRAM users.",
        ),
        "torch_missing": (
            "torch is not installed in this Python.",
            "Install the planned ROCm build of PyTorch, or pick another interpreter.",
        ),
        "no_gpu": (
            "torch is a ROCm build but sees no GPU.",
            "Check /dev/kfd access (render group), that ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES "
            "are not set empty or to a missing index, and that the amdgpu driver is loaded.",
        ),
        "arch_mismatch": (
            "torch's device reports a different gfx target than the one detected: another GPU "
            "(e.g. an iGPU) is device 0, or an HSA_OVERRIDE_GFX_VERSION is in effect.",
            "Set HIP_VISIBLE_DEVICES to the GPU you mean, and check HSA_OVERRIDE_GFX_VERSION.",
        ),
        "wrong_results": (
            f"GPU results disagree with the CPU: kernels for {gpu} are missing or broken even "
            "though torch.cuda.is_available() is True.",
            _override_advice(gfx, override, os_name),
        ),
        "vram_mismatch": (
            "torch reports a different VRAM size than the driver (sysfs): another device is "
            "selected, or memory is reserved (APU carve-out).",
            "Check HIP_VISIBLE_DEVICES; on APUs the BIOS sets the VRAM carve-out.",
        ),
    }
    entry = table.get(key)
    if entry is None:
        return None
    return Fix(key, entry[0], entry[1])
