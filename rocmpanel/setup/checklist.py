"""The stack checklist: device access, groups, driver, ROCm, environment, torch build.

Pure: it judges facts gathered elsewhere (``rocmpanel.machine.inventory`` for this machine,
``rocmpanel.setup.captured`` for pasted output). A fact that is not known gives ``skip``, never
a guess. Each failing item carries a fix: setting or unsetting a variable (the panel can do
that itself through the environment editor) or the exact command to run; the panel never
runs privileged commands itself. The status of an item is the shared
:class:`~rocmpanel.base.enums.CheckStatus`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rocmpanel.base.enums import CheckStatus
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.machine.gpu_model import HostFacts, SystemInfo
from rocmpanel.setup.compat import Verdict, VerdictStatus
from rocmpanel.setup.probe_report import ProbeReport


class FixKind(str, Enum):
    """What a fix does: the panel can set or unset a variable itself; commands and advice
    are only shown."""

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
    """One checklist item: its stable id, what it judged and the verdict, with a fix when
    one is known."""

    id: str
    title: str
    status: CheckStatus
    message: str
    fix: Fix | None = None


USERMOD = "sudo usermod -aG render,video $USER"

# Marked here, translated where a Check is made (``translate("checklist", ...)``).
_UNKNOWN = QT_TRANSLATE_NOOP("checklist", "Not known (not part of the pasted or recorded output).")
_DEVICE_CHECKS = (
    ("amdgpu_driver", QT_TRANSLATE_NOOP("checklist", "amdgpu kernel driver")),
    ("kfd_access", QT_TRANSLATE_NOOP("checklist", "/dev/kfd access")),
    ("render_access", QT_TRANSLATE_NOOP("checklist", "/dev/dri render node access")),
    ("groups", QT_TRANSLATE_NOOP("checklist", "render / video groups")),
)


def run_checks(
    system: SystemInfo,
    verdicts: tuple[Verdict, ...],
    host: HostFacts,
    probe: ProbeReport | None = None,
) -> tuple[Check, ...]:
    """Every checklist item, in the order the tab shows them."""
    # The environment items (checklist_env) build this module's records; importing them
    # when called keeps the two modules free of an import cycle.
    from rocmpanel.setup.checklist_env import (
        hsa_override_check,
        long_paths_check,
        torch_check,
        visible_devices_check,
    )

    checks = [_gpu_found(system, verdicts, host)]
    if system.os == "linux" and not system.gpus:
        why = translate("checklist", "No AMD GPU was found, so device access was not checked.")
        checks += [
            _kfd(host)
            if i == "kfd_access" and host.kfd_error
            else Check(i, translate("checklist", t), CheckStatus.SKIP, why)
            for i, t in _DEVICE_CHECKS
        ]
    elif system.os == "linux":
        checks += [_amdgpu(system, host), _kfd(host), _render(host), _groups(host)]
    checks.append(_rocm(system, host))
    if system.os == "windows":
        checks.append(long_paths_check(host.long_paths))
    checks.append(hsa_override_check(system, verdicts, host))
    checks += [visible_devices_check(system, host), torch_check(system, probe)]
    return tuple(checks)


def _gpu_found(system: SystemInfo, verdicts: tuple[Verdict, ...], host: HostFacts) -> Check:
    title = translate("checklist", "AMD GPU")
    if not system.gpus:
        message = translate("checklist", "No AMD GPU was found.")
        if host.hsa_status == "HSA_STATUS_ERROR_OUT_OF_RESOURCES":
            message += " " + translate(
                "checklist",
                "The ROCm runtime reported HSA_STATUS_ERROR_OUT_OF_RESOURCES: it found no GPU "
                "it can use (an unsupported GPU, no /dev/kfd access, a wrong "
                "HSA_OVERRIDE_GFX_VERSION, or WSL without ROCm support for this GPU).",
            )
        return Check("gpu_found", title, CheckStatus.FAIL, message)
    usable = [v for v in verdicts if v.status is not VerdictStatus.UNSUPPORTED]
    names = ", ".join(f"{g.name} ({g.gfx or 'gfx n/a'})" for g in system.gpus)
    if not usable:
        return Check(
            "gpu_found",
            title,
            CheckStatus.FAIL,
            translate("checklist", "Found {gpus}, but none is supported by this ROCm.").format(
                gpus=names
            ),
        )
    return Check(
        "gpu_found",
        title,
        CheckStatus.PASS,
        translate("checklist", "Found {gpus}.").format(gpus=names),
    )


def _amdgpu(system: SystemInfo, host: HostFacts) -> Check:
    title = translate("checklist", "amdgpu kernel driver")
    if host.wsl:
        return Check(
            "amdgpu_driver",
            title,
            CheckStatus.SKIP,
            translate(
                "checklist", "WSL: the Windows driver serves the GPU; there is no amdgpu module."
            ),
        )
    loaded = host.amdgpu_loaded
    if loaded is None:
        loaded = True if system.driver else None
    if loaded is None:
        return Check("amdgpu_driver", title, CheckStatus.SKIP, translate("checklist", _UNKNOWN))
    if loaded:
        return Check(
            "amdgpu_driver",
            title,
            CheckStatus.PASS,
            translate("checklist", "Loaded ({driver}).").format(driver=system.driver or "amdgpu"),
        )
    return Check(
        "amdgpu_driver",
        title,
        CheckStatus.FAIL,
        translate("checklist", "The amdgpu module is not loaded."),
        Fix(FixKind.COMMAND, "sudo modprobe amdgpu"),
    )


def _kfd(host: HostFacts) -> Check:
    title = translate("checklist", "/dev/kfd access")
    if host.wsl:
        return Check(
            "kfd_access",
            title,
            CheckStatus.SKIP,
            translate("checklist", "WSL uses /dev/dxg, not /dev/kfd."),
        )
    if host.kfd_error:
        fix = Fix(FixKind.COMMAND, USERMOD) if "ermission" in host.kfd_error else None
        message = translate("checklist", "rocminfo could not open /dev/kfd read-write: {error}.")
        message = message.format(error=host.kfd_error)
        if "allocate memory" in host.kfd_error:
            message += " " + translate("checklist", "The kernel's KFD does not support this GPU.")
        return Check("kfd_access", title, CheckStatus.FAIL, message, fix)
    if host.kfd_present is None:
        return Check("kfd_access", title, CheckStatus.SKIP, translate("checklist", _UNKNOWN))
    if not host.kfd_present:
        return Check(
            "kfd_access",
            title,
            CheckStatus.FAIL,
            translate(
                "checklist",
                "/dev/kfd does not exist: the amdgpu driver has no compute (KFD) support "
                "for this GPU or is not loaded.",
            ),
        )
    if host.kfd_rw:
        return Check(
            "kfd_access",
            title,
            CheckStatus.PASS,
            translate("checklist", "/dev/kfd is readable and writable."),
        )
    return Check(
        "kfd_access",
        title,
        CheckStatus.FAIL,
        translate("checklist", "/dev/kfd exists but this user cannot open it read-write."),
        Fix(FixKind.COMMAND, USERMOD),
    )


def _render(host: HostFacts) -> Check:
    title = translate("checklist", "/dev/dri render node access")
    if host.wsl or host.render_nodes is None:
        return Check("render_access", title, CheckStatus.SKIP, translate("checklist", _UNKNOWN))
    if not host.render_nodes:
        return Check(
            "render_access",
            title,
            CheckStatus.FAIL,
            translate("checklist", "No /dev/dri/renderD* node exists."),
        )
    if host.render_rw:
        return Check(
            "render_access",
            title,
            CheckStatus.PASS,
            translate("checklist", "{nodes} readable and writable.").format(
                nodes=", ".join(host.render_nodes)
            ),
        )
    return Check(
        "render_access",
        title,
        CheckStatus.FAIL,
        translate("checklist", "This user cannot open the render nodes read-write."),
        Fix(FixKind.COMMAND, USERMOD),
    )


def _groups(host: HostFacts) -> Check:
    title = translate("checklist", "render / video groups")
    if host.wsl or host.process_groups is None:
        return Check("groups", title, CheckStatus.SKIP, translate("checklist", _UNKNOWN))
    if host.user == "root":
        return Check(
            "groups",
            title,
            CheckStatus.SKIP,
            translate("checklist", "Running as root: groups do not apply."),
        )
    wanted = [g for g in ("render", "video") if g in host.existing_groups]
    missing = [g for g in wanted if g not in host.process_groups]
    if not missing:
        return Check(
            "groups",
            title,
            CheckStatus.PASS,
            translate("checklist", "This session is in {groups}.").format(groups=", ".join(wanted)),
        )
    listed = [g for g in missing if host.member_groups and g in host.member_groups]
    if listed and len(listed) == len(missing):
        return Check(
            "groups",
            title,
            CheckStatus.WARN,
            translate(
                "checklist",
                "You were added to {groups} but this login session predates "
                "it: log out and back in (or reboot).",
            ).format(groups=", ".join(listed)),
            Fix(
                FixKind.ADVICE,
                translate("checklist", "Log out and back in so the new groups apply."),
            ),
        )
    accessible = host.kfd_rw and host.render_rw
    status = CheckStatus.WARN if accessible else CheckStatus.FAIL
    message = (
        translate(
            "checklist",
            "{user} is not in {groups} (device access works anyway, e.g. through udev rules).",
        )
        if accessible
        else translate("checklist", "{user} is not in {groups}.")
    )
    user = host.user or translate("checklist", "This user")
    return Check(
        "groups",
        title,
        status,
        message.format(user=user, groups=", ".join(missing)),
        Fix(FixKind.COMMAND, USERMOD + "   # then log out and back in"),
    )


def _rocm(system: SystemInfo, host: HostFacts) -> Check:
    title = translate("checklist", "ROCm installation") if system.os == "linux" else "HIP SDK"
    rocm_path = host.env.get("ROCM_PATH")
    if system.os == "linux" and rocm_path and host.rocm_path_valid is False:
        return Check(
            "rocm_path",
            title,
            CheckStatus.WARN,
            translate("checklist", "ROCM_PATH is {path}, which holds no ROCm installation.").format(
                path=rocm_path
            ),
            unset_fix("ROCM_PATH"),
        )
    if system.rocm_version:
        return Check(
            "rocm_install",
            title,
            CheckStatus.PASS,
            translate("checklist", "ROCm {version} found.").format(version=system.rocm_version),
        )
    if host.rocm_installs is None:
        return Check(
            "rocm_install",
            title,
            CheckStatus.SKIP,
            translate("checklist", "Not stated in the pasted output."),
        )
    advice = (
        translate(
            "checklist",
            "Not needed for PyTorch (its ROCm wheels bundle the libraries; only the amdgpu driver "
            "is required). For the tools, install ROCm with your distribution's packages or "
            "amdgpu-install.",
        )
        if system.os == "linux"
        else translate(
            "checklist",
            "Install the AMD HIP SDK for Windows if you need hipInfo and the HIP libraries.",
        )
    )
    return Check(
        "rocm_install",
        title,
        CheckStatus.WARN,
        translate("checklist", "No ROCm installation found.") + " " + advice,
    )


def unset_fix(name: str) -> Fix:
    """The fix that unsets ``name`` (its button reads "Unset NAME")."""
    return Fix(FixKind.ENV_UNSET, translate("checklist", "Unset {name}").format(name=name), name)


def set_fix(name: str, value: str) -> Fix:
    """The fix that sets ``name`` to ``value`` (its button reads "Set NAME=VALUE")."""
    text = translate("checklist", "Set {name}={value}").format(name=name, value=value)
    return Fix(FixKind.ENV_SET, text, name, value)
