"""The stack checklist: device access, groups, driver, ROCm, environment, torch build.

Pure: it judges facts gathered elsewhere (``rocmpanel.system.host_facts`` for this machine,
``rocmpanel.core.captured`` for pasted output). A fact that is not known gives ``skip``, never
a guess. Each failing item carries a fix: setting or unsetting a variable (the panel can do
that itself through the environment editor) or the exact command to run; the panel never
runs privileged commands itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from rocmpanel.core.compat import Verdict, VerdictStatus
from rocmpanel.core.compat_data import version_key
from rocmpanel.core.gfx import parse_override
from rocmpanel.core.gpu_model import SystemInfo
from rocmpanel.core.probe_report import ProbeReport


class CheckStatus(str, Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


class FixKind(str, Enum):
    ENV_SET = "env_set"
    ENV_UNSET = "env_unset"
    COMMAND = "command"  # shown and copied, never run by the panel
    ADVICE = "advice"


@dataclass(frozen=True)
class Fix:
    """How to fix an item. For env fixes ``name``/``value``; for commands ``text``."""

    kind: FixKind
    text: str
    name: str | None = None
    value: str | None = None


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    status: CheckStatus
    message: str
    fix: Fix | None = None


@dataclass(frozen=True)
class HostFacts:
    """What was found about the host; None = not known (captured text, other OS)."""

    kfd_present: bool | None = None
    kfd_rw: bool | None = None
    kfd_error: str | None = None  # e.g. "Permission denied" (rocminfo's words)
    render_nodes: tuple[str, ...] | None = None
    render_rw: bool | None = None
    user: str | None = None
    process_groups: frozenset[str] | None = None  # groups this login session has
    member_groups: frozenset[str] | None = None  # groups /etc/group lists the user in
    existing_groups: frozenset[str] = frozenset({"render", "video"})
    amdgpu_loaded: bool | None = None
    rocm_installs: tuple[str, ...] | None = None
    rocm_path_valid: bool | None = None
    wsl: bool = False
    hsa_status: str | None = None  # rocminfo's HSA_STATUS_ERROR_*, if any
    env: Mapping[str, str] = field(default_factory=dict)


_UNKNOWN = "Not known (not in the pasted output)."
USERMOD = "sudo usermod -aG render,video $USER"
_DEVICE_CHECKS = (
    ("amdgpu_driver", "amdgpu kernel driver"),
    ("kfd_access", "/dev/kfd access"),
    ("render_access", "/dev/dri render node access"),
    ("groups", "render / video groups"),
)


def run_checks(
    system: SystemInfo,
    verdicts: tuple[Verdict, ...],
    host: HostFacts,
    probe: ProbeReport | None = None,
) -> tuple[Check, ...]:
    """Every checklist item, in the order the tab shows them."""
    checks = [_gpu_found(system, verdicts)]
    if system.os == "linux" and not system.gpus:
        why = "No AMD GPU was found, so device access was not checked."
        checks += [Check(i, t, CheckStatus.SKIP, why) for i, t in _DEVICE_CHECKS]
    elif system.os == "linux":
        checks += [_amdgpu(system, host), _kfd(host), _render(host), _groups(host)]
    checks += [_rocm(system, host), _hsa_override(system, verdicts, host)]
    checks += [_visible_devices(system, host), _torch(system, probe)]
    return tuple(checks)


def _gpu_found(system: SystemInfo, verdicts: tuple[Verdict, ...]) -> Check:
    title = "AMD GPU"
    if not system.gpus:
        return Check("gpu_found", title, CheckStatus.FAIL, "No AMD GPU was found.")
    usable = [v for v in verdicts if v.status is not VerdictStatus.UNSUPPORTED]
    names = ", ".join(f"{g.name} ({g.gfx or 'gfx n/a'})" for g in system.gpus)
    if not usable:
        return Check(
            "gpu_found",
            title,
            CheckStatus.FAIL,
            f"Found {names}, but none is supported by this ROCm.",
        )
    return Check("gpu_found", title, CheckStatus.PASS, f"Found {names}.")


def _amdgpu(system: SystemInfo, host: HostFacts) -> Check:
    title = "amdgpu kernel driver"
    if host.wsl:
        return Check(
            "amdgpu_driver",
            title,
            CheckStatus.SKIP,
            "WSL: the Windows driver serves the GPU; there is no amdgpu module.",
        )
    loaded = host.amdgpu_loaded
    if loaded is None:
        loaded = True if system.driver else None
    if loaded is None:
        return Check("amdgpu_driver", title, CheckStatus.SKIP, _UNKNOWN)
    if loaded:
        return Check(
            "amdgpu_driver", title, CheckStatus.PASS, f"Loaded ({system.driver or 'amdgpu'})."
        )
    return Check(
        "amdgpu_driver",
        title,
        CheckStatus.FAIL,
        "The amdgpu module is not loaded.",
        Fix(FixKind.COMMAND, "sudo modprobe amdgpu"),
    )


def _kfd(host: HostFacts) -> Check:
    title = "/dev/kfd access"
    if host.wsl:
        return Check("kfd_access", title, CheckStatus.SKIP, "WSL uses /dev/dxg, not /dev/kfd.")
    if host.kfd_error:
        fix = Fix(FixKind.COMMAND, USERMOD) if "ermission" in host.kfd_error else None
        message = f"rocminfo could not open /dev/kfd read-write: {host.kfd_error}."
        if "allocate memory" in host.kfd_error:
            message += " The kernel's KFD does not support this GPU."
        return Check("kfd_access", title, CheckStatus.FAIL, message, fix)
    if host.kfd_present is None:
        return Check("kfd_access", title, CheckStatus.SKIP, _UNKNOWN)
    if not host.kfd_present:
        return Check(
            "kfd_access",
            title,
            CheckStatus.FAIL,
            "/dev/kfd does not exist: the amdgpu driver has no compute (KFD) support "
            "for this GPU or is not loaded.",
        )
    if host.kfd_rw:
        return Check("kfd_access", title, CheckStatus.PASS, "/dev/kfd is readable and writable.")
    return Check(
        "kfd_access",
        title,
        CheckStatus.FAIL,
        "/dev/kfd exists but this user cannot open it read-write.",
        Fix(FixKind.COMMAND, USERMOD),
    )


def _render(host: HostFacts) -> Check:
    title = "/dev/dri render node access"
    if host.wsl or host.render_nodes is None:
        return Check("render_access", title, CheckStatus.SKIP, _UNKNOWN)
    if not host.render_nodes:
        return Check("render_access", title, CheckStatus.FAIL, "No /dev/dri/renderD* node exists.")
    if host.render_rw:
        return Check(
            "render_access",
            title,
            CheckStatus.PASS,
            f"{', '.join(host.render_nodes)} readable and writable.",
        )
    return Check(
        "render_access",
        title,
        CheckStatus.FAIL,
        "This user cannot open the render nodes read-write.",
        Fix(FixKind.COMMAND, USERMOD),
    )


def _groups(host: HostFacts) -> Check:
    title = "render / video groups"
    if host.wsl or host.process_groups is None:
        return Check("groups", title, CheckStatus.SKIP, _UNKNOWN)
    if host.user == "root":
        return Check("groups", title, CheckStatus.SKIP, "Running as root: groups do not apply.")
    wanted = [g for g in ("render", "video") if g in host.existing_groups]
    missing = [g for g in wanted if g not in host.process_groups]
    if not missing:
        return Check("groups", title, CheckStatus.PASS, f"This session is in {', '.join(wanted)}.")
    listed = [g for g in missing if host.member_groups and g in host.member_groups]
    if listed and len(listed) == len(missing):
        return Check(
            "groups",
            title,
            CheckStatus.WARN,
            f"You were added to {', '.join(listed)} but this login session predates "
            "it: log out and back in (or reboot).",
            Fix(FixKind.ADVICE, "Log out and back in so the new groups apply."),
        )
    accessible = host.kfd_rw and host.render_rw
    status = CheckStatus.WARN if accessible else CheckStatus.FAIL
    note = " (device access works anyway, e.g. through udev rules)" if accessible else ""
    return Check(
        "groups",
        title,
        status,
        f"{host.user or 'This user'} is not in {', '.join(missing)}{note}.",
        Fix(FixKind.COMMAND, USERMOD + "   # then log out and back in"),
    )


def _rocm(system: SystemInfo, host: HostFacts) -> Check:
    title = "ROCm installation" if system.os == "linux" else "HIP SDK"
    rocm_path = host.env.get("ROCM_PATH")
    if system.os == "linux" and rocm_path and host.rocm_path_valid is False:
        return Check(
            "rocm_path",
            title,
            CheckStatus.WARN,
            f"ROCM_PATH is {rocm_path}, which holds no ROCm installation.",
            Fix(FixKind.ENV_UNSET, "Unset ROCM_PATH", "ROCM_PATH"),
        )
    if system.rocm_version:
        return Check("rocm_install", title, CheckStatus.PASS, f"ROCm {system.rocm_version} found.")
    if host.rocm_installs is None:
        return Check("rocm_install", title, CheckStatus.SKIP, "Not stated in the pasted output.")
    advice = (
        "Not needed for PyTorch (its ROCm wheels bundle the libraries; only the amdgpu driver "
        "is required). For the tools, install ROCm with your distribution's packages or "
        "amdgpu-install."
        if system.os == "linux"
        else "Install the AMD HIP SDK for Windows if you need hipInfo and the HIP libraries."
    )
    return Check("rocm_install", title, CheckStatus.WARN, "No ROCm installation found. " + advice)


def _needed_overrides(verdicts: tuple[Verdict, ...]) -> set[str]:
    return {v.override for v in verdicts if v.status is VerdictStatus.OVERRIDE and v.override}


def _hsa_override(system: SystemInfo, verdicts: tuple[Verdict, ...], host: HostFacts) -> Check:
    title = "HSA_OVERRIDE_GFX_VERSION"
    value = host.env.get("HSA_OVERRIDE_GFX_VERSION")
    unset = Fix(FixKind.ENV_UNSET, "Unset HSA_OVERRIDE_GFX_VERSION", "HSA_OVERRIDE_GFX_VERSION")
    if system.os == "windows":
        if value is not None:
            return Check(
                "hsa_override",
                title,
                CheckStatus.WARN,
                "Set, but it has no effect on Windows; remove it.",
                unset,
            )
        return Check(
            "hsa_override", title, CheckStatus.PASS, "Not set (it has no effect on Windows)."
        )
    # With a discrete GPU present, only discrete GPUs count: an override for an iGPU would
    # apply to the dGPU too, and the iGPU is better hidden (see visible_devices).
    pairs = list(zip(system.gpus, verdicts, strict=False))
    if any(g.integrated is False for g, _ in pairs):
        pairs = [(g, v) for g, v in pairs if g.integrated is False]
    needed = _needed_overrides(tuple(v for _, v in pairs))
    gfx_set = {g.gfx for g, _ in pairs if g.gfx}
    if value is not None and not value.strip():
        return Check(
            "hsa_override",
            title,
            CheckStatus.FAIL,
            "Set but empty: older runtimes take that as gfx000 and find no GPU. Unset it instead.",
            unset,
        )
    if value is not None and parse_override(value) is None:
        return Check(
            "hsa_override",
            title,
            CheckStatus.FAIL,
            f"'{value}' is not MAJOR.MINOR.STEP (e.g. 10.3.0): the runtime refuses it.",
            unset,
        )
    if value is None:
        if len(needed) == 1 and len(gfx_set) > 1:
            return Check(
                "hsa_override",
                title,
                CheckStatus.WARN,
                f"One GPU needs HSA_OVERRIDE_GFX_VERSION={next(iter(needed))}, but "
                "the variable applies to every GPU: use the per-node form "
                "HSA_OVERRIDE_GFX_VERSION_<node> (ROCm 6.2+) or hide the other GPUs "
                "with HIP_VISIBLE_DEVICES.",
            )
        if len(needed) == 1:
            want = next(iter(needed))
            return Check(
                "hsa_override",
                title,
                CheckStatus.WARN,
                f"Not set, but this GPU needs HSA_OVERRIDE_GFX_VERSION={want} "
                "(community workaround).",
                Fix(
                    FixKind.ENV_SET,
                    f"Set HSA_OVERRIDE_GFX_VERSION={want}",
                    "HSA_OVERRIDE_GFX_VERSION",
                    want,
                ),
            )
        if len(needed) > 1:
            return Check(
                "hsa_override",
                title,
                CheckStatus.WARN,
                "GPUs of different generations need different overrides: use the "
                "per-node form HSA_OVERRIDE_GFX_VERSION_<node> (ROCm 6.2+) or hide "
                "some GPUs with HIP_VISIBLE_DEVICES.",
            )
        return Check("hsa_override", title, CheckStatus.PASS, "Not set, and not needed.")
    target = parse_override(value)
    target_name = target.name if target else value
    if not needed:
        return Check(
            "hsa_override",
            title,
            CheckStatus.WARN,
            f"Set to {value} ({target_name}) but no GPU here needs it; it can break "
            "natively supported GPUs.",
            unset,
        )
    if len(gfx_set) > 1:
        return Check(
            "hsa_override",
            title,
            CheckStatus.WARN,
            f"Set to {value}, which applies to every GPU ({', '.join(sorted(gfx_set))}): "
            "use HSA_OVERRIDE_GFX_VERSION_<node> (ROCm 6.2+) or HIP_VISIBLE_DEVICES.",
            unset,
        )
    if value.strip() not in needed:
        want = next(iter(needed))
        return Check(
            "hsa_override",
            title,
            CheckStatus.WARN,
            f"Set to {value}, but this GPU is run with {want}.",
            Fix(
                FixKind.ENV_SET,
                f"Set HSA_OVERRIDE_GFX_VERSION={want}",
                "HSA_OVERRIDE_GFX_VERSION",
                want,
            ),
        )
    return Check(
        "hsa_override",
        title,
        CheckStatus.PASS,
        f"Set to {value} as this GPU needs (community workaround).",
    )


def _visible_devices(system: SystemInfo, host: HostFacts) -> Check:
    title = "GPU selection (iGPU next to dGPU)"
    rocr = host.env.get("ROCR_VISIBLE_DEVICES")
    if rocr is not None and rocr.strip() in ("", "-1"):
        return Check(
            "visible_devices",
            title,
            CheckStatus.FAIL,
            "ROCR_VISIBLE_DEVICES is empty or -1, which hides every GPU.",
            Fix(FixKind.ENV_UNSET, "Unset ROCR_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"),
        )
    igpus = [i for i, g in enumerate(system.gpus) if g.integrated]
    dgpus = [i for i, g in enumerate(system.gpus) if g.integrated is False]
    if not (igpus and dgpus):
        return Check(
            "visible_devices", title, CheckStatus.PASS, "No integrated GPU next to a discrete one."
        )
    if "HIP_VISIBLE_DEVICES" in host.env or rocr:
        return Check(
            "visible_devices",
            title,
            CheckStatus.PASS,
            "An integrated GPU sits next to the discrete one; HIP_VISIBLE_DEVICES="
            f"{host.env.get('HIP_VISIBLE_DEVICES', '')} / ROCR_VISIBLE_DEVICES="
            f"{rocr or ''} selects the GPUs.",
        )
    value = ",".join(str(i) for i in dgpus)
    return Check(
        "visible_devices",
        title,
        CheckStatus.WARN,
        "An integrated GPU is enumerated next to the discrete one; jobs may land on it "
        "('invalid device function'). Hide it with HIP_VISIBLE_DEVICES (indices as "
        "listed here, assuming HIP enumerates in the same order).",
        Fix(FixKind.ENV_SET, f"Set HIP_VISIBLE_DEVICES={value}", "HIP_VISIBLE_DEVICES", value),
    )


def _torch(system: SystemInfo, probe: ProbeReport | None) -> Check:
    title = "PyTorch in the workload Python"
    if probe is None:
        return Check("torch_build", title, CheckStatus.SKIP, "Not probed yet.")
    if not probe.torch_imported:
        return Check(
            "torch_build",
            title,
            CheckStatus.WARN,
            "torch is not installed there; the PyTorch tab installs the right build.",
        )
    if probe.build == "cpu":
        return Check(
            "torch_build",
            title,
            CheckStatus.FAIL,
            f"torch {probe.torch_version} is a CPU-only build; install a ROCm build.",
        )
    if probe.build == "cuda":
        return Check(
            "torch_build",
            title,
            CheckStatus.FAIL,
            f"torch {probe.torch_version} is a CUDA build, useless on AMD GPUs.",
        )
    if not probe.cuda_available:
        return Check(
            "torch_build",
            title,
            CheckStatus.FAIL,
            f"torch {probe.torch_version} (ROCm {probe.torch_hip}) sees no GPU.",
        )
    seen = {d.gfx for d in probe.devices if d.gfx}
    detected = {g.gfx for g in system.gpus if g.gfx}
    override = probe.env.get("HSA_OVERRIDE_GFX_VERSION")
    if detected and seen and not seen & detected and not override:
        return Check(
            "torch_build",
            title,
            CheckStatus.WARN,
            f"torch reports {', '.join(sorted(seen))}, detection found "
            f"{', '.join(sorted(detected))}.",
        )
    hip = version_key(probe.torch_hip or "")
    hip_text = f"ROCm {hip.major}.{hip.minor}" if hip else "ROCm"
    return Check(
        "torch_build",
        title,
        CheckStatus.PASS,
        f"torch {probe.torch_version} ({hip_text}) sees {', '.join(sorted(seen)) or 'the GPU'}.",
    )
