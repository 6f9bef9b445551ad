"""Windows GPU discovery: Win32_VideoController via PowerShell CIM, the display-class
registry key for real VRAM, and ``hipInfo`` from the HIP SDK.

``wmic`` is deprecated and absent on current Windows 11, so the panel asks PowerShell's
``Get-CimInstance``. Win32_VideoController.AdapterRAM is a 32-bit value that tops out just
under 4 GiB; the registry value ``HardwareInformation.qwMemorySize`` has the real size.
Parsing is pure (tested on Linux with recorded output); the calls sit in
:class:`WindowsGpuQuery`, used only on Windows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmpanel.machine.gfx import normalise_gfx
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.pci_ids import AMD_VENDOR_ID

# AdapterRAM is a uint32: values at or above this are the cap, not the card's memory.
ADAPTER_RAM_CAP = 0xFFF00000
_PNP_RE = re.compile(r"VEN_([0-9A-Fa-f]{4})&DEV_([0-9A-Fa-f]{4})")
_LIST_LINE_RE = re.compile(r"^(\S[^:]*?)\s*:\s?(.*)$")

POWERSHELL_SCRIPT = (
    "$ErrorActionPreference='SilentlyContinue';"
    "$vc=@(Get-CimInstance -ClassName Win32_VideoController | "
    "Select-Object Name,AdapterRAM,PNPDeviceID,DriverVersion);"
    "$reg=@(Get-ItemProperty -Path 'HKLM:\\SYSTEM\\CurrentControlSet\\Control\\Class\\"
    "{4d36e968-e325-11ce-bfc1-08002be10318}\\0*' | "
    "Select-Object DriverDesc,MatchingDeviceId,'HardwareInformation.qwMemorySize');"
    "[pscustomobject]@{controllers=$vc;registry=$reg} | ConvertTo-Json -Depth 3 -Compress"
)


@dataclass(frozen=True)
class VideoController:
    """One Win32_VideoController instance, as listed."""

    name: str
    adapter_ram: int | None
    pnp_device_id: str | None
    driver_version: str | None

    @property
    def pci_id(self) -> str | None:
        match = _PNP_RE.search(self.pnp_device_id or "")
        return f"{match[1]}:{match[2]}".lower() if match else None


def looks_like_cim_listing(text: str) -> bool:
    return "Win32_VideoController" in text or bool(
        re.search(r"^(AdapterRAM|PNPDeviceID|VideoProcessor)\s*:", text, re.MULTILINE)
    )


def parse_cim_listing(text: str) -> list[VideoController]:
    """``Get-CimInstance``/``Get-WmiObject Win32_VideoController`` list output (any locale:
    property names are never translated, only some values are)."""
    records: list[dict[str, str]] = []
    current: dict[str, str] = {}
    last_key: str | None = None
    for raw in text.replace("\r\n", "\n").split("\n"):
        if not raw.strip():
            if current:
                records.append(current)
            current, last_key = {}, None
            continue
        if raw[0].isspace() and last_key is not None:
            current[last_key] += raw.strip()  # a wrapped long value continues here
            continue
        match = _LIST_LINE_RE.match(raw.rstrip())
        if match:
            last_key = match[1].strip()
            current[last_key] = match[2].strip()
    if current:
        records.append(current)
    controllers = []
    for rec in records:
        name = rec.get("Name") or rec.get("Caption") or rec.get("Description")
        if not name or not ("PNPDeviceID" in rec or "AdapterRAM" in rec):
            continue
        ram = rec.get("AdapterRAM", "")
        controllers.append(
            VideoController(
                name=name,
                adapter_ram=int(ram) if ram.isdigit() else None,
                pnp_device_id=rec.get("PNPDeviceID") or None,
                driver_version=rec.get("DriverVersion") or None,
            )
        )
    return controllers


def _as_list(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    return []


def parse_powershell_json(text: str) -> tuple[list[VideoController], dict[str, int]]:
    """The JSON :data:`POWERSHELL_SCRIPT` prints: controllers, and registry VRAM by pci id."""
    data = json.loads(text)
    controllers = [
        VideoController(
            name=str(c.get("Name") or "Unknown display adapter"),
            adapter_ram=c["AdapterRAM"] if isinstance(c.get("AdapterRAM"), int) else None,
            pnp_device_id=c.get("PNPDeviceID"),
            driver_version=c.get("DriverVersion"),
        )
        for c in _as_list(data.get("controllers"))
    ]
    vram: dict[str, int] = {}
    for entry in _as_list(data.get("registry")):
        size = entry.get("HardwareInformation.qwMemorySize")
        match = _PNP_RE.search(str(entry.get("MatchingDeviceId") or "").upper())
        if isinstance(size, int) and size > 0 and match:
            vram.setdefault(f"{match[1]}:{match[2]}".lower(), size)
    return controllers, vram


def gpus_from_controllers(
    controllers: list[VideoController], registry_vram: dict[str, int] | None = None
) -> tuple[list[GpuInfo], list[str]]:
    """AMD controllers as GpuInfo, and notes (e.g. AdapterRAM capped)."""
    gpus, notes = [], []
    for ctl in controllers:
        pci_id = ctl.pci_id
        if not pci_id or not pci_id.startswith(f"{AMD_VENDOR_ID}:"):
            continue
        vram = (registry_vram or {}).get(pci_id)
        if vram is None and ctl.adapter_ram:
            if ctl.adapter_ram >= ADAPTER_RAM_CAP:
                notes.append(
                    f"{ctl.name}: AdapterRAM ({ctl.adapter_ram}) is a 32-bit value capped "
                    "near 4 GiB; the real VRAM is in the registry (HardwareInformation."
                    "qwMemorySize)."
                )
            else:
                vram = ctl.adapter_ram
        gpus.append(GpuInfo(name=ctl.name, pci_id=pci_id, vram_bytes=vram, sources=("cim",)))
    return gpus, notes


def looks_like_hipinfo(text: str) -> bool:
    return bool(re.search(r"^device#\s*\d+", text, re.MULTILINE)) and "gcnArchName" in text


def parse_hipinfo(text: str) -> list[GpuInfo]:
    """``hipInfo`` output: one block per ``device#N`` with ``Name:``, ``gcnArchName:``,
    ``totalGlobalMem: 23.98 GB`` (GiB), ``pciBusID``/``pciDomainID`` and ``isIntegrated``."""
    gpus = []
    for block in re.split(r"^device#", text, flags=re.MULTILINE)[1:]:
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() and key.strip() not in fields:
                fields[key.strip()] = value.strip()
        name = fields.get("Name")
        if not name:
            continue
        gpus.append(
            GpuInfo(
                name=name,
                gfx=normalise_gfx(fields.get("gcnArchName")),
                bdf=_hip_bdf(fields),
                vram_bytes=_hip_memory(fields.get("totalGlobalMem", "")),
                integrated=fields.get("isIntegrated") == "1" if "isIntegrated" in fields else None,
                sources=("hipinfo",),
            )
        )
    return gpus


def _hip_bdf(fields: dict[str, str]) -> str | None:
    bus, dom = fields.get("pciBusID", ""), fields.get("pciDomainID", "0")
    dev = fields.get("pciDeviceID", "0")
    if not (bus.isdigit() and dom.isdigit() and dev.isdigit()):
        return None
    return f"{int(dom):04x}:{int(bus):02x}:{int(dev):02x}.0"


def _hip_memory(text: str) -> int | None:
    match = re.match(r"([\d.]+)\s*(GB|MB|KB|B)?", text)
    if not match:
        return None
    scale = {"GB": 2**30, "MB": 2**20, "KB": 2**10}.get(match[2] or "B", 1)
    return int(float(match[1]) * scale)


class WindowsGpuQuery:
    """The live calls (Windows only): PowerShell CIM + registry, and hipInfo."""

    def __init__(self, timeout: float = 20.0) -> None:
        self.timeout = timeout

    def controllers(self) -> tuple[list[GpuInfo], list[str]]:
        exe = shutil.which("powershell") or shutil.which("pwsh")
        if exe is None:
            return [], ["PowerShell was not found, so the video controllers were not listed."]
        try:
            done = subprocess.run(
                [exe, "-NoProfile", "-NonInteractive", "-Command", POWERSHELL_SCRIPT],
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
            controllers, vram = parse_powershell_json(done.stdout or "{}")
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            return [], [f"Listing video controllers through PowerShell failed: {exc}"]
        return gpus_from_controllers(controllers, vram)

    def hipinfo(self) -> str | None:
        hip_path = os.environ.get("HIP_PATH")
        exe = Path(hip_path, "bin", "hipInfo.exe") if hip_path else None
        if exe is None or not exe.is_file():
            found = shutil.which("hipInfo")
            exe = Path(found) if found else None
        if exe is None:
            return None
        try:
            done = subprocess.run(
                [str(exe)], capture_output=True, text=True, timeout=self.timeout, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout or None
