"""Known PyTorch/ROCm failures: error strings → likely cause and fix.

Workers report a ``fix_id`` for what they recognise themselves (a CPU build, no GPU, an arch
mismatch) and the raw error text of anything that raised; :func:`explain` turns either into
a :class:`Fix` whose text is specific to the GPU (e.g. the override value for its gfx).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rocmpanel.base.i18n import translate
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
        return translate(
            "explanations",
            "HSA_OVERRIDE_GFX_VERSION does nothing on Windows: use a build that supports this "
            "GPU (AMD's Windows wheels cover RDNA3, RDNA4 and Strix Halo).",
        )
    if override is not None and gfx:
        harms = community.load().harms_for(gfx, override.value)
        if harms:
            return translate(
                "explanations",
                "Install a build whose kernels include {gfx} (see the plan). The "
                "HSA_OVERRIDE_GFX_VERSION={value} workaround is known to harm this GPU: ",
            ).format(gfx=gfx, value=override.value) + " ".join(h.text for h in harms)
        return translate(
            "explanations",
            "On Linux, run jobs with HSA_OVERRIDE_GFX_VERSION={value} so {gfx} uses the "
            "{target} kernels (community knowledge, not an AMD promise), or install a build "
            "whose kernels include it.",
        ).format(value=override.value, gfx=gfx, target=override.target)
    if gfx:
        return translate(
            "explanations",
            "Install a build whose kernels include {gfx} (see the plan). No known same-family "
            "HSA_OVERRIDE_GFX_VERSION substitute exists for this GPU.",
        ).format(gfx=gfx)
    return translate(
        "explanations",
        "Install a build whose kernels include it (see the plan). No known same-family "
        "HSA_OVERRIDE_GFX_VERSION substitute exists for this GPU.",
    )


def _table(gfx: str | None, override: Override | None, os_name: str) -> dict[str, tuple[str, str]]:
    """Each known fix id's cause and fix, worded for this GPU."""
    gpu = gfx or translate("explanations", "this GPU")
    advice = _override_advice(gfx, override, os_name)
    extra = advice if override else ""
    return {
        "no_binary_for_gpu": (
            translate(
                "explanations", "The torch build has no compiled kernels (code object) for {gpu}."
            ).format(gpu=gpu),
            advice,
        ),
        "invalid_device_function": (
            translate(
                "explanations",
                "A kernel was launched on a device it was not built for: often an integrated "
                "GPU enumerated next to the discrete one.",
            ),
            translate(
                "explanations",
                "Hide the iGPU: set HIP_VISIBLE_DEVICES to the discrete GPU's index (e.g. "
                "HIP_VISIBLE_DEVICES=0) for jobs; if the GPU itself is unsupported, see the "
                "override advice. ",
            )
            + extra,
        ),
        "kfd_permission": (
            translate("explanations", "This user may not open /dev/kfd (and /dev/dri/renderD*)."),
            translate(
                "explanations",
                "Add the user to the 'render' group (and 'video' on some distributions): "
                "sudo usermod -aG render,video $USER, then log out and back in.",
            ),
        ),
        "cpu_build": (
            translate(
                "explanations",
                "A CPU-only torch is installed in this environment, so there is no GPU backend.",
            ),
            translate(
                "explanations",
                "Install the planned ROCm build of PyTorch into a managed environment and make "
                "it active.",
            ),
        ),
        "not_rocm_build": (
            translate(
                "explanations",
                "This torch is not a ROCm build (torch.version.hip is None): it is a CPU or "
                "CUDA build, which cannot use an AMD GPU.",
            ),
            translate(
                "explanations",
                "Install the planned ROCm build of PyTorch into a managed environment and make "
                "it active.",
            ),
        ),
        "hsa_out_of_resources": (
            translate(
                "explanations",
                "The ROCm runtime found no GPU it can use: no supported GPU, a wrong "
                "HSA_OVERRIDE_GFX_VERSION, or WSL without GPU support.",
            ),
            translate(
                "explanations",
                "Check that the amdgpu driver is loaded and /dev/kfd exists; unset a wrong "
                "HSA_OVERRIDE_GFX_VERSION (unset it, never leave it empty). ",
            )
            + extra,
        ),
        "override_invalid": (
            translate("explanations", "HSA_OVERRIDE_GFX_VERSION has a value the runtime rejects."),
            translate(
                "explanations",
                "Use the MAJOR.MINOR.STEP form (e.g. 10.3.0), or unset the variable.",
            ),
        ),
        "out_of_memory": (
            translate(
                "explanations",
                "The GPU ran out of memory (other programs, including the desktop, hold VRAM).",
            ),
            translate(
                "explanations",
                "Close other GPU programs or use smaller sizes; the Monitor tab shows VRAM users.",
            ),
        ),
        "torch_missing": (
            translate("explanations", "torch is not installed in this Python."),
            translate(
                "explanations",
                "Install the planned ROCm build of PyTorch, or pick another interpreter.",
            ),
        ),
        "no_gpu": (
            translate("explanations", "torch is a ROCm build but sees no GPU."),
            translate(
                "explanations",
                "Check /dev/kfd access (render group), that "
                "ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES are not set empty or to a missing "
                "index, and that the amdgpu driver is loaded.",
            ),
        ),
        "arch_mismatch": (
            translate(
                "explanations",
                "torch's device reports a different gfx target than the one detected: another "
                "GPU (e.g. an iGPU) is device 0, or an HSA_OVERRIDE_GFX_VERSION is in effect.",
            ),
            translate(
                "explanations",
                "Set HIP_VISIBLE_DEVICES to the GPU you mean, and check HSA_OVERRIDE_GFX_VERSION.",
            ),
        ),
        "wrong_results": (
            translate(
                "explanations",
                "GPU results disagree with the CPU: kernels for {gpu} are missing or broken even "
                "though torch.cuda.is_available() is True.",
            ).format(gpu=gpu),
            advice,
        ),
        "vram_mismatch": (
            translate(
                "explanations",
                "torch reports a different VRAM size than the driver (sysfs): another device is "
                "selected, or memory is reserved (APU carve-out).",
            ),
            translate(
                "explanations",
                "Check HIP_VISIBLE_DEVICES; on APUs the BIOS sets the VRAM carve-out.",
            ),
        ),
    }


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
    entry = _table(gfx, override, os_name).get(key)
    if entry is None:
        return None
    return Fix(key, entry[0], entry[1])
