"""Checklist items about the environment: HSA_OVERRIDE_GFX_VERSION, GPU selection
(an iGPU next to a dGPU, ROCR_VISIBLE_DEVICES), the workload Python's torch build and, on
Windows, whether long paths are on."""

from __future__ import annotations

from rocmpanel.base.enums import CheckStatus
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.knowledge import community
from rocmpanel.knowledge.compat_data import version_key
from rocmpanel.knowledge.kernels import KernelMode, harm_advice
from rocmpanel.machine.gfx import parse_override
from rocmpanel.machine.gpu_model import HostFacts, SystemInfo
from rocmpanel.machine.long_paths import (
    ENABLE_LONG_PATHS,
    LONG_PATHS_KEY,
    LONG_PATHS_VALUE,
    REG_DWORD,
    LongPaths,
)
from rocmpanel.setup.checklist import Check, Fix, FixKind, set_fix, unset_fix
from rocmpanel.setup.compat import Verdict, VerdictStatus
from rocmpanel.setup.probe_report import ProbeReport


def _needed_overrides(verdicts: tuple[Verdict, ...]) -> set[str]:
    """The override values the one kernel decision says these GPUs need."""
    found = {v.kernels.override_value for v in verdicts if v.kernels is not None}
    found |= {v.override for v in verdicts if v.status is VerdictStatus.OVERRIDE and v.override}
    return {value for value in found if value}


def _harmful(value: str, gfx_set: set[str]) -> str:
    """The known harms of ``value`` on these GPUs, with their sources, or ""."""
    known = community.load()
    found = [a for gfx in sorted(gfx_set) for a in harm_advice(gfx, value, known)]
    return " ".join(
        translate("checklist_env", "{text} (Source: {source}.)").format(
            text=a.text, source=a.source
        )
        for a in found
    )


def hsa_override_check(system: SystemInfo, verdicts: tuple[Verdict, ...], host: HostFacts) -> Check:
    title = "HSA_OVERRIDE_GFX_VERSION"
    value = host.env.get("HSA_OVERRIDE_GFX_VERSION")
    unset = unset_fix("HSA_OVERRIDE_GFX_VERSION")
    if system.os == "windows":
        if value is not None:
            return Check(
                "hsa_override",
                title,
                CheckStatus.WARN,
                translate("checklist_env", "Set, but it has no effect on Windows; remove it."),
                unset,
            )
        return Check(
            "hsa_override",
            title,
            CheckStatus.PASS,
            translate("checklist_env", "Not set (it has no effect on Windows)."),
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
            translate(
                "checklist_env",
                "Set but empty: older runtimes take that as gfx000 and find no GPU. Unset it "
                "instead.",
            ),
            unset,
        )
    if value is not None and parse_override(value) is None:
        return Check(
            "hsa_override",
            title,
            CheckStatus.FAIL,
            translate(
                "checklist_env",
                "'{value}' is not MAJOR.MINOR.STEP (e.g. 10.3.0): the runtime refuses it.",
            ).format(value=value),
            unset,
        )
    if value is not None:
        harmful = _harmful(value, gfx_set)
        if harmful:
            return Check("hsa_override", title, CheckStatus.FAIL, harmful, unset)
        native = sorted(
            {
                g.gfx
                for g, v in pairs
                if g.gfx and v.kernels is not None and v.kernels.mode is KernelMode.NATIVE
            }
        )
        own = parse_override(value)
        if own is not None and gfx_set and all(g == own.name for g in gfx_set):
            return Check(
                "hsa_override",
                title,
                CheckStatus.WARN,
                translate(
                    "checklist_env",
                    "Set to {value}, which names the GPU's own target ({target}): it changes "
                    "nothing. Unset it, so a later GPU or build is not affected.",
                ).format(value=value, target=own.name),
                unset,
            )
        if native and not needed:
            build = next(
                (v.kernels.build.id for _, v in pairs if v.kernels and v.kernels.build),
                translate("checklist_env", "it"),
            )
            return Check(
                "hsa_override",
                title,
                CheckStatus.FAIL,
                translate(
                    "checklist_env",
                    "Set to {value}, but PyTorch ({build}) has native kernels for "
                    "{targets}: the override makes the runtime load another target's "
                    "code instead. Unset it.",
                ).format(value=value, build=build, targets=", ".join(native)),
                unset,
            )
    if value is None:
        if len(needed) == 1 and len(gfx_set) > 1:
            return Check(
                "hsa_override",
                title,
                CheckStatus.WARN,
                translate(
                    "checklist_env",
                    "One GPU needs HSA_OVERRIDE_GFX_VERSION={value}, but "
                    "the variable applies to every GPU: use the per-node form "
                    "HSA_OVERRIDE_GFX_VERSION_<node> (ROCm 6.2+) or hide the other GPUs "
                    "with HIP_VISIBLE_DEVICES.",
                ).format(value=next(iter(needed))),
            )
        if len(needed) == 1:
            want = next(iter(needed))
            danger = _harmful(want, gfx_set)
            return Check(
                "hsa_override",
                title,
                CheckStatus.WARN,
                translate(
                    "checklist_env",
                    "Not set, but this GPU needs HSA_OVERRIDE_GFX_VERSION={value} "
                    "(community workaround).",
                ).format(value=want)
                + (
                    " " + translate("checklist_env", "Beware: {harm}").format(harm=danger)
                    if danger
                    else ""
                ),
                set_fix("HSA_OVERRIDE_GFX_VERSION", want),
            )
        if len(needed) > 1:
            return Check(
                "hsa_override",
                title,
                CheckStatus.WARN,
                translate(
                    "checklist_env",
                    "GPUs of different generations need different overrides: use the "
                    "per-node form HSA_OVERRIDE_GFX_VERSION_<node> (ROCm 6.2+) or hide "
                    "some GPUs with HIP_VISIBLE_DEVICES.",
                ),
            )
        return Check(
            "hsa_override",
            title,
            CheckStatus.PASS,
            translate("checklist_env", "Not set, and not needed."),
        )
    target = parse_override(value)
    target_name = target.name if target else value
    if not needed:
        return Check(
            "hsa_override",
            title,
            CheckStatus.WARN,
            translate(
                "checklist_env",
                "Set to {value} ({target}) but no GPU here needs it; it can break "
                "natively supported GPUs.",
            ).format(value=value, target=target_name),
            unset,
        )
    if len(gfx_set) > 1:
        return Check(
            "hsa_override",
            title,
            CheckStatus.WARN,
            translate(
                "checklist_env",
                "Set to {value}, which applies to every GPU ({targets}): "
                "use HSA_OVERRIDE_GFX_VERSION_<node> (ROCm 6.2+) or HIP_VISIBLE_DEVICES.",
            ).format(value=value, targets=", ".join(sorted(gfx_set))),
            unset,
        )
    if value.strip() not in needed:
        want = next(iter(needed))
        return Check(
            "hsa_override",
            title,
            CheckStatus.WARN,
            translate("checklist_env", "Set to {value}, but this GPU is run with {want}.").format(
                value=value, want=want
            ),
            set_fix("HSA_OVERRIDE_GFX_VERSION", want),
        )
    return Check(
        "hsa_override",
        title,
        CheckStatus.PASS,
        translate(
            "checklist_env", "Set to {value} as this GPU needs (community workaround)."
        ).format(value=value),
    )


def visible_devices_check(system: SystemInfo, host: HostFacts) -> Check:
    title = translate("checklist_env", "GPU selection (iGPU next to dGPU)")
    rocr = host.env.get("ROCR_VISIBLE_DEVICES")
    if rocr is not None and rocr.strip() in ("", "-1"):
        return Check(
            "visible_devices",
            title,
            CheckStatus.FAIL,
            translate(
                "checklist_env", "ROCR_VISIBLE_DEVICES is empty or -1, which hides every GPU."
            ),
            unset_fix("ROCR_VISIBLE_DEVICES"),
        )
    igpus = [i for i, g in enumerate(system.gpus) if g.integrated]
    dgpus = [i for i, g in enumerate(system.gpus) if g.integrated is False]
    if not (igpus and dgpus):
        return Check(
            "visible_devices",
            title,
            CheckStatus.PASS,
            translate("checklist_env", "No integrated GPU next to a discrete one."),
        )
    if "HIP_VISIBLE_DEVICES" in host.env or rocr:
        return Check(
            "visible_devices",
            title,
            CheckStatus.PASS,
            translate(
                "checklist_env",
                "An integrated GPU sits next to the discrete one; HIP_VISIBLE_DEVICES={hip} / "
                "ROCR_VISIBLE_DEVICES={rocr} selects the GPUs.",
            ).format(hip=host.env.get("HIP_VISIBLE_DEVICES", ""), rocr=rocr or ""),
        )
    value = ",".join(str(i) for i in dgpus)
    return Check(
        "visible_devices",
        title,
        CheckStatus.WARN,
        translate(
            "checklist_env",
            "An integrated GPU is enumerated next to the discrete one; jobs may land on it "
            "('invalid device function'). Hide it with HIP_VISIBLE_DEVICES (indices as "
            "listed here, assuming HIP enumerates in the same order).",
        ),
        set_fix("HIP_VISIBLE_DEVICES", value),
    )


def torch_check(system: SystemInfo, probe: ProbeReport | None) -> Check:
    title = translate("checklist_env", "PyTorch in the workload Python")
    if probe is None:
        return Check(
            "torch_build",
            title,
            CheckStatus.SKIP,
            translate(
                "checklist_env",
                "Not checked: the workload Python was not probed. Probe it, or analyse the "
                "output of python -m torch.utils.collect_env run there.",
            ),
        )
    if not probe.torch_imported:
        return Check(
            "torch_build",
            title,
            CheckStatus.WARN,
            translate(
                "checklist_env",
                "torch is not installed there; the PyTorch tab installs the right build.",
            ),
        )
    if probe.build == "cpu":
        return Check(
            "torch_build",
            title,
            CheckStatus.FAIL,
            translate(
                "checklist_env", "torch {version} is a CPU-only build; install a ROCm build."
            ).format(version=probe.torch_version),
        )
    if probe.build == "cuda":
        return Check(
            "torch_build",
            title,
            CheckStatus.FAIL,
            translate(
                "checklist_env", "torch {version} is a CUDA build, useless on AMD GPUs."
            ).format(version=probe.torch_version),
        )
    if not probe.cuda_available:
        return Check(
            "torch_build",
            title,
            CheckStatus.FAIL,
            translate("checklist_env", "torch {version} (ROCm {hip}) sees no GPU.").format(
                version=probe.torch_version, hip=probe.torch_hip
            ),
        )
    seen = {d.gfx for d in probe.devices if d.gfx}
    detected = {g.gfx for g in system.gpus if g.gfx}
    override = probe.env.get("HSA_OVERRIDE_GFX_VERSION")
    if detected and seen and not seen & detected and not override:
        return Check(
            "torch_build",
            title,
            CheckStatus.WARN,
            translate("checklist_env", "torch reports {seen}, detection found {detected}.").format(
                seen=", ".join(sorted(seen)), detected=", ".join(sorted(detected))
            ),
        )
    hip = version_key(probe.torch_hip or "")
    hip_text = f"ROCm {hip.major}.{hip.minor}" if hip else "ROCm"
    return Check(
        "torch_build",
        title,
        CheckStatus.PASS,
        translate("checklist_env", "torch {version} ({hip}) sees {gpus}.").format(
            version=probe.torch_version,
            hip=hip_text,
            gpus=", ".join(sorted(seen)) or translate("checklist_env", "the GPU"),
        ),
    )


# -- Windows long paths -------------------------------------------------------------------
_LONG_PATHS_TITLE = QT_TRANSLATE_NOOP("checklist_env", "Windows long paths")


def long_paths_check(facts: LongPaths | None) -> Check:
    """Windows only: whether PyTorch can be installed into deep folders."""
    title = translate("checklist_env", _LONG_PATHS_TITLE)
    if facts is None:
        return Check(
            "long_paths",
            title,
            CheckStatus.SKIP,
            translate("checklist_env", "Not known (not part of the pasted or recorded output)."),
        )
    where = (
        " "
        + translate(
            "checklist_env", "The environments folder, {path}, is {length} characters long."
        ).format(path=facts.envs_path, length=len(facts.envs_path))
        if facts.envs_path
        else ""
    )
    if not facts.readable:
        return Check(
            "long_paths",
            title,
            CheckStatus.SKIP,
            translate(
                "checklist_env",
                "HKLM\\{key} could not be read, so whether long paths are on is not "
                'known. PowerShell shows it: Get-ItemProperty "HKLM:\\{key}" -Name {value}.',
            ).format(key=LONG_PATHS_KEY, value=LONG_PATHS_VALUE)
            + where,
        )
    if facts.enabled:
        return Check(
            "long_paths",
            title,
            CheckStatus.PASS,
            translate(
                "checklist_env",
                "On (LongPathsEnabled is 1): Python and pip may use paths over 260 characters.",
            ),
        )
    if facts.kind is None:
        state = translate(
            "checklist_env", "Off (LongPathsEnabled is not set; Windows' default is off)"
        )
    elif facts.kind != REG_DWORD:
        state = translate(
            "checklist_env", "Off (LongPathsEnabled is {data}, but Windows reads only a REG_DWORD)"
        ).format(data=repr(facts.data))
    else:
        state = translate("checklist_env", "Off (LongPathsEnabled is {data})").format(
            data=repr(facts.data)
        )
    # torch wheels hold paths over 180 characters below site-packages (torch-<version>.dist-info/
    # licenses/third_party/kineto/...: 171 on torch 2.13.0+cpu, more with a ROCm version).
    return Check(
        "long_paths",
        title,
        CheckStatus.WARN,
        translate(
            "checklist_env",
            "{state}: Windows refuses paths of 260 characters or more, and PyTorch's wheels hold "
            "files over 180 characters deep, so installs into deep folders fail (pip: Errno 2 or "
            "WinError 206). rocmpanel gives new environments short folder names to fit; turning "
            "long paths on lifts the limit: run the command in an elevated PowerShell (or enable "
            "the Group Policy Computer Configuration > Administrative Templates > System > "
            "Filesystem > Enable Win32 long paths), then restart rocmpanel.",
        ).format(state=state)
        + where,
        Fix(FixKind.COMMAND, ENABLE_LONG_PATHS),
    )
