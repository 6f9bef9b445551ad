"""Compatibility verdicts: this GPU with this ROCm version on this OS.

A verdict is ``supported``, ``limited`` (supported with restrictions: some distros only,
deprecated, runtime-only on Windows, a card AMD does not list although its target is
supported, or a target AMD does not list that the PyTorch wheels carry kernels for),
``override`` (works only with HSA_OVERRIDE_GFX_VERSION, Linux only, community knowledge),
``unsupported`` or ``unknown``; with a one-sentence reason and its source.

Whether an unlisted GPU runs natively, with an override or not at all is never decided here:
:func:`rocmpanel.knowledge.kernels.decide` decides it, for the verdict, the checklist and the
install plan alike. A ROCm newer than the data is judged by the newest release the data knows,
and the verdict says so. The data is resources/compat.yaml; nothing here hard-codes a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum

from packaging.version import Version

from rocmpanel.base.i18n import translate
from rocmpanel.knowledge.compat_data import CompatData, load, version_key
from rocmpanel.knowledge.kernels import Advice, KernelDecision, KernelMode, decide
from rocmpanel.knowledge.torch_builds import TorchBuild, cached_manifest
from rocmpanel.machine import pci_ids
from rocmpanel.machine.gpu_model import GpuInfo


class VerdictStatus(str, Enum):
    SUPPORTED = "supported"
    LIMITED = "limited"
    OVERRIDE = "override"
    UNSUPPORTED = "unsupported"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Verdict:
    """How one GPU fares with one ROCm version on one OS, and why."""

    status: VerdictStatus
    reason: str
    source: str
    override: str | None = None  # HSA_OVERRIDE_GFX_VERSION value for status OVERRIDE
    knowledge: str = "official"  # "official" or "community"
    rocm_version: str | None = None  # the version judged (None: no ROCm and no data)
    kernels: KernelDecision | None = None  # how PyTorch runs this GPU (the one decision)
    advice: tuple[Advice, ...] = ()  # known-harmful combinations and other warnings
    #: The sources ``source`` joins, one by one (the GPU card lists them a line each).
    sources: tuple[str, ...] = field(default=(), compare=False)

    def as_dict(self) -> dict[str, object]:
        return {
            "status": self.status.value,
            "override": self.override,
            "reason": self.reason,
            "source": self.source,
            "knowledge": self.knowledge,
            "kernels": self.kernels.mode.value if self.kernels else None,
            "torch_build": self.kernels.build.id if self.kernels and self.kernels.build else None,
            "advice": [
                {"text": a.text, "source": a.source, "severity": a.severity} for a in self.advice
            ],
        }


_OS_LABEL = {"linux": "Linux", "windows": "Windows (HIP SDK)"}


def _os_label(os_name: str) -> str:
    """The OS as a verdict names it ("Windows (HIP SDK)" has a word to translate)."""
    if os_name == "windows":
        return translate("compat", "Windows (HIP SDK)")
    return _OS_LABEL.get(os_name, os_name)


def verdict_for(
    gpu: GpuInfo,
    os_name: str,
    rocm_version: str | None,
    data: CompatData | None = None,
    builds: tuple[TorchBuild, ...] | None = None,
) -> Verdict:
    """The verdict for ``gpu``; with no ROCm installed, against the newest known release,
    saying which releases would support it."""
    data = data or load()
    entry = pci_ids.lookup(gpu.pci_id)
    gfx = gpu.gfx or (entry.gfx if entry else None)
    if gfx is None:
        return Verdict(
            VerdictStatus.UNKNOWN,
            translate(
                "compat",
                "The GPU's gfx target is unknown (no rocminfo or KFD data, and its PCI id is not "
                "in the panel's table).",
            ),
            "",
        )
    rows = builds if builds is not None else cached_manifest().builds
    kernels = decide(gfx, os_name, rows, data.community, rocm_version=rocm_version)
    if rocm_version is None:
        latest = data.latest_known[os_name]
        verdict = _judge(gpu, gfx, os_name, latest, data, kernels)
        supporting = supporting_versions(gfx, os_name, data)
        if supporting:
            span = _span(supporting, os_name, data)
            where = translate("compat", "ROCm {span} on {os} would support {gfx}.").format(
                span=span, os=_os_label(os_name), gfx=gfx
            )
        else:
            where = translate(
                "compat", "No ROCm release in the panel's data supports {gfx} on {os}."
            ).format(gfx=gfx, os=_os_label(os_name))
        reason = translate("compat", "No ROCm installed or stated. {where} {reason}").format(
            where=where, reason=verdict.reason
        )
        return replace(verdict, reason=reason)
    return _judge(gpu, gfx, os_name, rocm_version, data, kernels)


def _span(series: list[str], os_name: str, data: CompatData) -> str:
    """ "6.0 to 7.2" for an unbroken run of the listed series, else "5.7, 6.0, 6.2"."""
    listed: list[str] = []
    for release in data.series_releases(os_name):
        if release.series not in listed:
            listed.append(release.series)
    listed.sort(key=Version)
    start = listed.index(series[0])  # the series come from the same releases
    if len(series) > 2 and listed[start : start + len(series)] == series:
        return translate("compat", "{first} to {last}").format(first=series[0], last=series[-1])
    return ", ".join(series)


def _judge(
    gpu: GpuInfo, gfx: str, os_name: str, version: str, data: CompatData, kernels: KernelDecision
) -> Verdict:
    judged = data.judge_release(os_name, version)
    if judged is None:
        return _no_release(gfx, os_name, version, data, kernels)
    label = _os_label(os_name)  # a release was found: the data has only Linux and Windows
    release = judged.release
    note = f" {judged.note}" if judged.note else ""
    where = translate("compat", "ROCm {version} on {os}").format(
        version=version if not judged.note else release.series, os=label
    )
    knowledge = release.status

    def verdict(
        status: VerdictStatus,
        reason: str,
        keys: tuple[str, ...] = release.sources,
        override: str | None = None,
        knowledge: str = knowledge,
    ) -> Verdict:
        return Verdict(
            status,
            reason + note,
            data.describe_sources(keys),
            override=override,
            rocm_version=version,
            kernels=kernels,
            knowledge=knowledge,
            advice=kernels.advice if status is VerdictStatus.OVERRIDE else (),
            sources=tuple(data.source_text.get(k, k) for k in keys),
        )

    if gfx in release.supported:
        if os_name == "linux":
            for group in data.unlisted:
                if gpu.pci_id and gpu.pci_id.split(":")[-1] in group.pci_ids:
                    return verdict(VerdictStatus.LIMITED, group.reason, group.sources)
        if gfx in release.limited:
            return verdict(VerdictStatus.LIMITED, release.limited[gfx])
        return verdict(
            VerdictStatus.SUPPORTED,
            translate("compat", "{gfx} is supported by {where}.").format(gfx=gfx, where=where),
        )
    if gfx in release.deprecated:
        return verdict(
            VerdictStatus.LIMITED,
            translate(
                "compat",
                "{gfx} is deprecated in {where}: it still works but later releases drop it.",
            ).format(gfx=gfx, where=where),
        )
    if gfx in release.runtime_only:
        return verdict(
            VerdictStatus.LIMITED,
            translate(
                "compat",
                "{where} ships only the HIP runtime for {gfx}, without the SDK libraries "
                "(rocBLAS, MIOpen and others).",
            ).format(gfx=gfx, where=where),
        )
    return _unlisted(gfx, os_name, where, kernels, data, verdict)


def _unlisted(
    gfx: str,
    os_name: str,
    where: str,
    kernels: KernelDecision,
    data: CompatData,
    verdict: Callable[..., Verdict],
) -> Verdict:
    """A target AMD does not list for the release: the kernel decision says what runs."""
    build = kernels.build
    if kernels.mode is KernelMode.NATIVE and build is not None:
        return verdict(
            VerdictStatus.LIMITED,
            translate(
                "compat",
                "{gfx} is not in AMD's list for {where}, but the PyTorch wheels ({build}) "
                "carry kernels for it, so no override is needed; AMD does not promise the "
                "libraries they bundle, so run the PyTorch tab's validation.",
            ).format(gfx=gfx, where=where, build=build.id),
        )
    rule = kernels.override  # set in KernelMode.OVERRIDE only
    if rule is not None:
        return verdict(
            VerdictStatus.OVERRIDE,
            translate(
                "compat",
                "{gfx} is not in AMD's list for {where}; users run it as {target} with "
                "HSA_OVERRIDE_GFX_VERSION={value} (community knowledge, not an AMD promise).",
            ).format(gfx=gfx, where=where, target=rule.target, value=rule.value),
            rule.sources,
            override=rule.value,
            knowledge=rule.status,
        )
    if os_name == "windows":
        return verdict(
            VerdictStatus.UNSUPPORTED,
            translate(
                "compat",
                "{gfx} is not supported by {where}; HSA_OVERRIDE_GFX_VERSION has no effect on "
                "Windows.",
            ).format(gfx=gfx, where=where),
        )
    return verdict(
        VerdictStatus.UNSUPPORTED,
        translate(
            "compat",
            "{gfx} is not supported by {where}, no PyTorch build in the panel's data has kernels "
            "for it, and no known override works.",
        ).format(gfx=gfx, where=where),
    )


def _no_release(
    gfx: str, os_name: str, version: str, data: CompatData, kernels: KernelDecision
) -> Verdict:
    wanted = version_key(version)
    if wanted is None:
        shown = version if len(version) <= 40 else version[:40] + "..."
        reason = translate(
            "compat", "'{version}' is not a ROCm version the panel can read."
        ).format(version=shown)
    else:
        reason = translate(
            "compat", "The panel has no {os} support table for ROCm {series}."
        ).format(os=_os_label(os_name), series=f"{wanted.major}.{wanted.minor}")
    supporting = supporting_versions(gfx, os_name, data)
    if supporting:
        reason += " " + translate("compat", "{gfx} is supported by ROCm {span}.").format(
            gfx=gfx, span=_span(supporting, os_name, data)
        )
    # What runs is still the one decision's: the same override the plan would set.
    return Verdict(
        VerdictStatus.UNKNOWN,
        reason,
        "",
        override=kernels.override_value,
        rocm_version=version,
        kernels=kernels,
        advice=kernels.advice if kernels.override_value else (),
    )


def supporting_versions(gfx: str, os_name: str, data: CompatData | None = None) -> list[str]:
    """The release series ("6.4") whose support (full or limited) covers ``gfx``."""
    data = data or load()
    series: list[str] = []
    for release in data.series_releases(os_name):
        if release.covers(gfx) and release.series not in series:
            series.append(release.series)
    return sorted(series, key=Version)


def verdicts_for(
    gpus: tuple[GpuInfo, ...],
    os_name: str,
    rocm_version: str | None,
    data: CompatData | None = None,
) -> tuple[Verdict, ...]:
    return tuple(verdict_for(g, os_name, rocm_version, data) for g in gpus)
