"""Compatibility verdicts: this GPU with this ROCm version on this OS.

A verdict is ``supported``, ``limited`` (supported with restrictions: some distros only,
deprecated, runtime-only on Windows, or a card AMD does not list although its target is
supported), ``override`` (works only with HSA_OVERRIDE_GFX_VERSION, Linux only, community
knowledge), ``unsupported`` or ``unknown``; with a one-sentence reason and its source.
The data is resources/compat.yaml; nothing here hard-codes a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from packaging.version import Version

from rocmpanel.machine import pci_ids
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.setup.compat_data import CompatData, Release, load, version_key


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

    def as_dict(self) -> dict[str, str | None]:
        return {
            "status": self.status.value,
            "override": self.override,
            "reason": self.reason,
            "source": self.source,
            "knowledge": self.knowledge,
        }


_OS_LABEL = {"linux": "Linux", "windows": "Windows (HIP SDK)"}


def verdict_for(
    gpu: GpuInfo, os_name: str, rocm_version: str | None, data: CompatData | None = None
) -> Verdict:
    """The verdict for ``gpu``; with no ROCm installed, against the newest known release,
    saying which releases would support it."""
    data = data or load()
    entry = pci_ids.lookup(gpu.pci_id)
    gfx = gpu.gfx or (entry.gfx if entry else None)
    if gfx is None:
        return Verdict(
            VerdictStatus.UNKNOWN,
            "The GPU's gfx target is unknown (no rocminfo or KFD data, and its PCI id is not "
            "in the panel's table).",
            "",
        )
    if rocm_version is None:
        latest = data.latest_known[os_name]
        verdict = _judge(gpu, gfx, os_name, latest, data)
        supporting = supporting_versions(gfx, os_name, data, gpu.pci_id)
        if supporting:
            span = _span(supporting, os_name, data)
            where = f"ROCm {span} on {_OS_LABEL[os_name]} would support {gfx}."
        else:
            where = f"No ROCm release in the panel's data supports {gfx} on {_OS_LABEL[os_name]}."
        return Verdict(
            verdict.status,
            f"No ROCm installed or stated. {where} {verdict.reason}",
            verdict.source,
            verdict.override,
            verdict.knowledge,
            latest,
        )
    return _judge(gpu, gfx, os_name, rocm_version, data)


def _span(series: list[str], os_name: str, data: CompatData) -> str:
    """ "6.0 to 7.2" for an unbroken run of the listed series, else "5.7, 6.0, 6.2"."""
    listed: list[str] = []
    for release in data.series_releases(os_name):
        if release.series not in listed:
            listed.append(release.series)
    listed.sort(key=Version)
    start = listed.index(series[0]) if series[0] in listed else -1
    if len(series) > 2 and listed[start : start + len(series)] == series:
        return f"{series[0]} to {series[-1]}"
    return ", ".join(series)


def _judge(gpu: GpuInfo, gfx: str, os_name: str, version: str, data: CompatData) -> Verdict:
    label = _OS_LABEL.get(os_name, os_name)
    release = data.release_for(os_name, version)
    if release is None:
        return _no_release(gfx, os_name, version, data)
    src = data.describe_sources(release.sources)
    where = f"ROCm {version} on {label}"
    if gfx in release.supported:
        if os_name == "linux":
            for group in data.unlisted:
                if gpu.pci_id and gpu.pci_id.split(":")[-1] in group.pci_ids:
                    return Verdict(
                        VerdictStatus.LIMITED,
                        group.reason,
                        data.describe_sources(group.sources),
                        rocm_version=version,
                    )
        if gfx in release.limited:
            return Verdict(VerdictStatus.LIMITED, release.limited[gfx], src, rocm_version=version)
        return Verdict(
            VerdictStatus.SUPPORTED, f"{gfx} is supported by {where}.", src, rocm_version=version
        )
    if gfx in release.deprecated:
        return Verdict(
            VerdictStatus.LIMITED,
            f"{gfx} is deprecated in {where}: it still works but later releases drop it.",
            src,
            rocm_version=version,
        )
    if gfx in release.runtime_only:
        return Verdict(
            VerdictStatus.LIMITED,
            f"{where} ships only the HIP runtime for {gfx}, without the SDK libraries "
            "(rocBLAS, MIOpen and others).",
            src,
            rocm_version=version,
        )
    if os_name == "windows":
        return Verdict(
            VerdictStatus.UNSUPPORTED,
            f"{gfx} is not supported by {where}; HSA_OVERRIDE_GFX_VERSION has no effect on "
            "Windows.",
            src,
            rocm_version=version,
        )
    return _override_or_unsupported(gfx, version, release, src, data)


def _override_or_unsupported(
    gfx: str, version: str, release: Release, src: str, data: CompatData
) -> Verdict:
    wanted = Version(version)
    for rule in data.overrides:
        if rule.gfx != gfx or (rule.until and wanted >= Version(rule.until)):
            continue
        rule_src = data.describe_sources(rule.sources)
        if rule.target in release.supported:
            return Verdict(
                VerdictStatus.OVERRIDE,
                f"{gfx} is not in the ROCm {version} Linux list; users run it as {rule.target} "
                f"with HSA_OVERRIDE_GFX_VERSION={rule.value} (community knowledge, not an AMD "
                "promise).",
                f"{src}; {rule_src}",
                override=rule.value,
                knowledge=rule.status,
                rocm_version=version,
            )
        return Verdict(
            VerdictStatus.UNSUPPORTED,
            f"{gfx} is not supported by ROCm {version} on Linux, and the community override "
            f"{rule.value} targets {rule.target}, which this release does not support either.",
            f"{src}; {rule_src}",
            rocm_version=version,
        )
    return Verdict(
        VerdictStatus.UNSUPPORTED,
        f"{gfx} is not supported by ROCm {version} on Linux and has no known override.",
        src,
        rocm_version=version,
    )


def _no_release(gfx: str, os_name: str, version: str, data: CompatData) -> Verdict:
    latest = data.latest_known[os_name]
    wanted, newest = version_key(version), version_key(latest)
    if wanted is not None and newest is not None and wanted > newest:
        reason = (
            f"ROCm {version} is newer than the panel's data (up to {latest}); check AMD's "
            "compatibility matrix."
        )
    elif wanted is None:
        reason = f"'{version}' is not a ROCm version the panel can read."
    else:
        reason = (
            f"The panel has no {_OS_LABEL.get(os_name, os_name)} support table for ROCm "
            f"{wanted.major}.{wanted.minor}."
        )
    supporting = supporting_versions(gfx, os_name, data)
    if supporting:
        reason += f" {gfx} is supported by ROCm {_span(supporting, os_name, data)}."
    return Verdict(VerdictStatus.UNKNOWN, reason, "", rocm_version=version)


def supporting_versions(
    gfx: str, os_name: str, data: CompatData | None = None, pci_id: str | None = None
) -> list[str]:
    """The release series ("6.4") whose support (full or limited) covers ``gfx``."""
    data = data or load()
    series: list[str] = []
    for release in data.series_releases(os_name):
        covered = gfx in release.supported or gfx in release.deprecated
        covered = covered or gfx in release.runtime_only
        if covered and release.series not in series:
            series.append(release.series)
    return sorted(series, key=Version)


def verdicts_for(
    gpus: tuple[GpuInfo, ...],
    os_name: str,
    rocm_version: str | None,
    data: CompatData | None = None,
) -> tuple[Verdict, ...]:
    return tuple(verdict_for(g, os_name, rocm_version, data) for g in gpus)
