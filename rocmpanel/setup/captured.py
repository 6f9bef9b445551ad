"""Diagnosing a system from pasted text: recognise the tool that printed it, parse it, and
build the same SystemInfo / HostFacts / probe data the live detection gives.

Known kinds: rocminfo, rocm-smi (plain and --json of any version), amd-smi (default table
and ``static --json``), hipInfo, ``python -m torch.utils.collect_env``, ``lspci -nn`` and
PowerShell ``Get-CimInstance``/``Get-WmiObject Win32_VideoController`` listings. Several
texts (one machine) are merged. Unknown text raises a PanelError with a plain message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.machine import windows_gpu
from rocmpanel.machine.detect import merge_gpus
from rocmpanel.machine.gfx import normalise_gfx
from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo
from rocmpanel.machine.parsers import lspci as lspci_parse
from rocmpanel.machine.parsers import rocminfo as rocminfo_parse
from rocmpanel.machine.parsers import smi as smi_parse
from rocmpanel.setup.probe_report import ProbeDevice, ProbeReport


class CapturedKind(str, Enum):
    ROCMINFO = "rocminfo"
    ROCM_SMI_JSON = "rocm-smi --json"
    ROCM_SMI_TEXT = "rocm-smi"
    AMD_SMI_JSON = "amd-smi --json"
    AMD_SMI_TEXT = "amd-smi"
    HIPINFO = "hipInfo"
    COLLECT_ENV = "torch collect_env"
    LSPCI = "lspci -nn"
    WINDOWS_CIM = "Win32_VideoController listing"


KNOWN_KINDS_TEXT = (
    "rocminfo, rocm-smi (plain or --json), amd-smi (plain or static --json), hipInfo, "
    "python -m torch.utils.collect_env, lspci -nn, or Get-CimInstance Win32_VideoController"
)


@dataclass(frozen=True)
class Captured:
    """A pasted system, ready for verdicts and the checklist."""

    system: SystemInfo
    host: HostFacts
    kinds: tuple[CapturedKind, ...]
    probe: ProbeReport | None = None
    notes: tuple[str, ...] = field(default=())


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def detect_kind(text: str) -> CapturedKind | None:
    """The tool that printed ``text``, or None."""
    data = _json(text)
    if data is not None:
        if smi_parse.is_rocm_smi_json(data):
            return CapturedKind.ROCM_SMI_JSON
        if smi_parse.is_amd_smi_json(data):
            return CapturedKind.AMD_SMI_JSON
        return None
    if "PyTorch version:" in text and ("Is CUDA available" in text or "ROCM used" in text):
        return CapturedKind.COLLECT_ENV
    if rocminfo_parse.looks_like_rocminfo(text):
        return CapturedKind.ROCMINFO
    if "ROCm System Management Interface" in text or re.search(r"^GPU\[\d+\]\s*:", text, re.M):
        return CapturedKind.ROCM_SMI_TEXT
    if re.search(r"AMD-SMI \d", text):
        return CapturedKind.AMD_SMI_TEXT
    if windows_gpu.looks_like_hipinfo(text):
        return CapturedKind.HIPINFO
    if windows_gpu.looks_like_cim_listing(text):
        return CapturedKind.WINDOWS_CIM
    if lspci_parse.looks_like_lspci(text):
        return CapturedKind.LSPCI
    return None


@dataclass
class _Acc:
    gpus: list[GpuInfo] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    os: str | None = None
    os_version: str | None = None
    rocm_version: str | None = None
    driver: str | None = None
    kfd_error: str | None = None
    hsa_status: str | None = None
    wsl: bool = False
    probe: ProbeReport | None = None


def _collect_env(text: str, acc: _Acc) -> None:
    def field_of(name: str) -> str | None:
        match = re.search(rf"^{re.escape(name)}:\s*(.*?)\s*$", text, re.MULTILINE)
        value = match.group(1) if match else None
        return None if value in (None, "", "N/A", "Could not collect") else value

    torch_version = field_of("PyTorch version")
    rocm_build, cuda_build = (
        field_of("ROCM used to build PyTorch"),
        field_of("CUDA used to build PyTorch"),
    )
    hip_runtime = field_of("HIP runtime version")
    platform_line = field_of("Python platform") or ""
    acc.wsl = acc.wsl or "microsoft" in platform_line.lower()
    acc.os_version = acc.os_version or field_of("OS")
    if hip_runtime and acc.rocm_version is None:
        parts = hip_runtime.split(".")
        acc.rocm_version = ".".join(parts[:2]) if len(parts) >= 2 else None
    gpu_lines: list[str] = []
    first = field_of("GPU models and configuration")
    if first:
        gpu_lines.append(first)
        start = text.find(first)
        for line in text[start + len(first) :].splitlines()[1:]:
            if not re.match(r"^GPU \d+:", line.strip()):
                break
            gpu_lines.append(line.strip())
    devices = []
    for i, line in enumerate(gpu_lines):
        line = re.sub(r"^GPU \d+:\s*", "", line)
        gfx = normalise_gfx(line)
        name = re.sub(r"\s*\(gfx[^)]*\)\s*$", "", line).strip()
        devices.append(ProbeDevice(i, name, None, gfx, gfx))
        acc.gpus.append(GpuInfo(name=name, gfx=gfx, sources=("collect_env",)))
    build = "rocm" if rocm_build else "cuda" if cuda_build else "cpu"
    acc.probe = ProbeReport(
        python_version=(field_of("Python version") or "?").split(" ")[0],
        python_executable="(pasted collect_env output)",
        system=platform_line,
        torch_imported=torch_version is not None,
        torch_version=torch_version,
        torch_hip=rocm_build,
        torch_cuda=cuda_build,
        build=build if torch_version else None,
        cuda_available=field_of("Is CUDA available") == "True",
        devices=tuple(devices),
    )


def _parse_one(kind: CapturedKind, text: str, acc: _Acc) -> None:
    if kind is CapturedKind.ROCMINFO:
        report = rocminfo_parse.parse_rocminfo(text)
        acc.gpus.extend(rocminfo_parse.gpus_from_rocminfo(report))
        acc.kfd_error = acc.kfd_error or report.kfd_error
        acc.hsa_status = acc.hsa_status or report.hsa_status
        acc.wsl = acc.wsl or report.wsl
        if report.rock_loaded and acc.driver is None:
            acc.driver = f"amdgpu {report.rock_version}" if report.rock_version else "amdgpu"
        acc.notes.extend(f"rocminfo: {e}" for e in report.errors)
    elif kind in (CapturedKind.ROCM_SMI_JSON, CapturedKind.AMD_SMI_JSON):
        data = json.loads(text)
        smi = (
            smi_parse.parse_rocm_smi_json(data)
            if kind is CapturedKind.ROCM_SMI_JSON
            else smi_parse.parse_amd_smi_json(data)
        )
        _add_smi(smi, acc)
    elif kind is CapturedKind.ROCM_SMI_TEXT:
        _add_smi(smi_parse.parse_rocm_smi_text(text), acc)
    elif kind is CapturedKind.AMD_SMI_TEXT:
        _add_smi(smi_parse.parse_amd_smi_text(text), acc)
    elif kind is CapturedKind.HIPINFO:
        acc.gpus.extend(windows_gpu.parse_hipinfo(text))
        acc.os = acc.os or "windows"
    elif kind is CapturedKind.WINDOWS_CIM:
        gpus, notes = windows_gpu.gpus_from_controllers(windows_gpu.parse_cim_listing(text))
        acc.gpus.extend(gpus)
        acc.notes.extend(notes)
        acc.os = acc.os or "windows"
    elif kind is CapturedKind.LSPCI:
        acc.gpus.extend(lspci_parse.parse_lspci(text))
    elif kind is CapturedKind.COLLECT_ENV:
        _collect_env(text, acc)


def _add_smi(smi: smi_parse.SmiResult, acc: _Acc) -> None:
    acc.gpus.extend(smi.gpus)
    acc.driver = acc.driver or smi.driver
    acc.rocm_version = acc.rocm_version or smi.rocm_version


def analyse_texts(
    texts: Sequence[str], rocm_version: str | None = None, os_name: str | None = None
) -> Captured:
    """Recognise and parse each text (all from one machine) and merge them."""
    acc = _Acc()
    kinds: list[CapturedKind] = []
    for index, text in enumerate(texts, 1):
        kind = detect_kind(text)
        if kind is None:
            label = f"Text {index}" if len(texts) > 1 else "The pasted text"
            raise PanelError(
                f"{label} is not output rocmpanel recognises. Paste the output of "
                f"{KNOWN_KINDS_TEXT}.",
                text[:200],
            )
        kinds.append(kind)
        _parse_one(kind, text, acc)
    if acc.wsl:
        acc.notes.append("WSL2: the GPU is reached through the Windows driver (/dev/dxg).")
    target_os = os_name or acc.os or "linux"
    system = SystemInfo(
        os=target_os,
        os_version=acc.os_version,
        rocm_version=rocm_version or acc.rocm_version,
        driver=acc.driver,
        gpus=merge_gpus(acc.gpus),
        notes=tuple(acc.notes),
    )
    host = HostFacts(kfd_error=acc.kfd_error, hsa_status=acc.hsa_status, wsl=acc.wsl)
    return Captured(system, host, tuple(kinds), acc.probe, tuple(acc.notes))
