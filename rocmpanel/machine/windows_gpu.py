"""Windows GPU discovery: Win32_VideoController via PowerShell CIM, each controller's
device and driver keys in the registry (PCI slot, exact VRAM), and ``hipInfo`` from the
HIP SDK.

``wmic`` is deprecated and absent on current Windows 11, so the panel asks PowerShell's
``Get-CimInstance`` for the controllers. CIM gives the PCI id (``PNPDeviceID``) but no bus
address, and its AdapterRAM is a 32-bit value that tops out just under 4 GiB. So for each
AMD controller the panel reads, through the ``reg`` seam (:mod:`rocmpanel.base.registry`:
winreg on Windows, a fake in tests), the device key
``HKLM\\SYSTEM\\CurrentControlSet\\Enum\\<PNPDeviceID>``: ``LocationInformation`` ("PCI bus 3,
device 0, function 0") gives the bus address that hipInfo also reports, and ``Driver``
("{4d36e968-...}\\0001") names the display-class subkey whose
``HardwareInformation.qwMemorySize`` is this card's VRAM (not that of another card with the
same device id, nor one removed earlier). Parsing is pure and tested on Linux with recorded
output; the processes start in :class:`WindowsGpuQuery` through :mod:`rocmpanel.base.subproc`
(no console window) with a runner tests replace.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmpanel.base import registry, subproc
from rocmpanel.base.registry import RegistryLike
from rocmpanel.machine.gfx import normalise_gfx
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.pci_ids import AMD_VENDOR_ID

# AdapterRAM is a uint32: values at or above this are the cap, not the card's memory.
ADAPTER_RAM_CAP = 0xFFF00000
_PNP_RE = re.compile(r"VEN_([0-9A-Fa-f]{4})&DEV_([0-9A-Fa-f]{4})")
_LIST_LINE_RE = re.compile(r"^(\S[^:]*?)\s*:\s?(.*)$")

ENUM_ROOT = "SYSTEM\\CurrentControlSet\\Enum"
CLASS_ROOT = "SYSTEM\\CurrentControlSet\\Control\\Class"
# The display adapter setup class (devguid.h GUID_DEVCLASS_DISPLAY).
DISPLAY_CLASS = "{4d36e968-e325-11ce-bfc1-08002be10318}"

# SPDRP_LOCATION_INFORMATION / DEVPKEY_Device_LocationInfo of a PCI device: bus, device
# and function in decimal (https://learn.microsoft.com/en-us/windows-hardware/drivers/install/
# devpkey-device-locationinfo). SetupAPI shows the PCI bus driver's text ("PCI bus 3, device
# 0, function 0", translated on other display languages), but the Enum key's value read
# directly is the indirect form: the message resource, its English template, then the
# numbers, "@System32\drivers\pci.sys,#65536;PCI bus %1, device %2, function %3;(3,0,0)".
# The trailing "(bus,device,function)" is read first (any language), the English text
# second. It carries no PCI segment (domain): the panel takes 0000, the only segment of a
# desktop PC.
_LOCATION_TUPLE_RE = re.compile(r";\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)\s*$")
_LOCATION_RE = re.compile(r"PCI bus (\d+), device (\d+), function (\d+)", re.IGNORECASE)
# DEVPKEY_Device_Driver / SPDRP_DRIVER: "<class GUID>\<4-digit instance>", the device's
# software key under Control\Class
# (https://learn.microsoft.com/en-us/windows-hardware/drivers/install/devpkey-device-driver).
_DRIVER_RE = re.compile(r"\{[0-9A-Fa-f-]{36}\}\\\d{4}")

# PowerShell writes to a pipe in [Console]::OutputEncoding, the OEM code page unless set;
# a UTF8Encoding without BOM makes adapter names in any language arrive intact (Windows
# PowerShell's [Text.Encoding]::UTF8 has a BOM preamble: PowerShell/PowerShell#7233, #7634).
POWERSHELL_SCRIPT = (
    "$ErrorActionPreference='SilentlyContinue';"
    "[Console]::OutputEncoding=New-Object System.Text.UTF8Encoding $false;"
    "$vc=@(Get-CimInstance -ClassName Win32_VideoController | "
    "Select-Object Name,AdapterRAM,PNPDeviceID,DriverVersion);"
    "[pscustomobject]@{controllers=$vc} | ConvertTo-Json -Depth 3 -Compress"
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


@dataclass(frozen=True)
class DeviceKeys:
    """What the registry says about one display device: ``found`` is False when its Enum
    key could not be read; ``bdf`` and ``vram_bytes`` are None when not known."""

    found: bool
    bdf: str | None = None
    vram_bytes: int | None = None


def bdf_from_location(text: object) -> str | None:
    """The PCI slot of a LocationInformation value: "PCI bus 3, device 0, function 0" and
    "@System32\\drivers\\pci.sys,#65536;PCI bus %1, device %2, function %3;(3,0,0)" are
    both "0000:03:00.0"; None for anything else."""
    if not isinstance(text, str):
        return None
    match = _LOCATION_TUPLE_RE.search(text) or _LOCATION_RE.fullmatch(text.strip())
    if not match:
        return None
    bus, dev, fn = (int(g) for g in match.groups())
    if bus > 255 or dev > 31 or fn > 7:
        return None
    return f"0000:{bus:02x}:{dev:02x}.{fn:x}"


def _number(data: object, sizes: tuple[int, ...]) -> int | None:
    """A REG_DWORD/REG_QWORD (an int in winreg) or a little-endian REG_BINARY of one of
    ``sizes`` bytes, as an int."""
    if isinstance(data, int) and not isinstance(data, bool):
        return data if data >= 0 else None
    if isinstance(data, (bytes, bytearray)) and len(data) in sizes:
        return int.from_bytes(data, "little")
    return None


def _value(values: Mapping[str, tuple[Any, int]], name: str) -> Any:
    """A value by name, ignoring case as Windows does."""
    found = registry.find_name(values, name)
    return values[found][0] if found is not None else None


def vram_from_driver_key(values: Mapping[str, tuple[Any, int]]) -> int | None:
    """VRAM in bytes from a display-class subkey's values, or None.

    ``HardwareInformation.qwMemorySize`` (REG_QWORD, bytes) first. Older drivers write only
    ``HardwareInformation.MemorySize``, a 32-bit ULONG; Microsoft documents it in megabytes
    (https://learn.microsoft.com/en-us/windows-hardware/drivers/display/registering-hardware-information)
    but drivers write bytes, some as a 4-byte REG_BINARY (System Informer's ExtendedTools
    GraphicsQueryInstalledMemory reads it so). A value under 1 MiB can only be megabytes; one
    at the 32-bit cap says only "4 GiB or more"."""
    qword = _number(_value(values, "HardwareInformation.qwMemorySize"), (8,))
    if qword:
        return qword
    dword = _number(_value(values, "HardwareInformation.MemorySize"), (4,))
    if not dword or dword >= ADAPTER_RAM_CAP:
        return None
    return dword * 2**20 if dword < 2**20 else dword


def read_device_keys(reg: RegistryLike, pnp_device_id: str) -> DeviceKeys:
    """The PCI slot and VRAM of the device ``pnp_device_id``, read from its Enum key and the
    display-class subkey its ``Driver`` value names. Never raises."""
    values = registry.read_values(reg, "HKLM", f"{ENUM_ROOT}\\{pnp_device_id}")
    if not values:
        return DeviceKeys(found=False)
    bdf = bdf_from_location(_value(values, "LocationInformation"))
    driver = _value(values, "Driver")
    vram = None
    if isinstance(driver, str) and _DRIVER_RE.fullmatch(driver.strip()):
        class_values = registry.read_values(reg, "HKLM", f"{CLASS_ROOT}\\{driver.strip()}")
        vram = vram_from_driver_key(class_values)
    return DeviceKeys(found=True, bdf=bdf, vram_bytes=vram)


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
    """A ConvertTo-Json value as a list of objects: one object (a single controller), a
    list, or the ``{"value": [...], "Count": n}`` wrapping Windows PowerShell 5.1 writes
    for some arrays held in a property."""
    if isinstance(value, dict) and isinstance(value.get("value"), list) and "Count" in value:
        value = value["value"]
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    return []


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_powershell_json(text: str) -> list[VideoController]:
    """The controllers in the JSON :data:`POWERSHELL_SCRIPT` prints (ValueError if not JSON)."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object with a 'controllers' list")
    return [
        VideoController(
            name=str(c.get("Name") or "Unknown display adapter"),
            adapter_ram=c["AdapterRAM"] if isinstance(c.get("AdapterRAM"), int) else None,
            pnp_device_id=_text(c.get("PNPDeviceID")),
            driver_version=_text(c.get("DriverVersion")),
        )
        for c in _as_list(data.get("controllers"))
    ]


def capped_note(name: str, adapter_ram: int) -> str:
    """The note for a card whose only memory figure is AdapterRAM at its 32-bit cap."""
    return (
        f"{name}: Windows lists {adapter_ram:,} bytes of video memory (AdapterRAM), a 32-bit "
        "value capped just under 4 GiB, and the exact size (registry value "
        "HardwareInformation.qwMemorySize) could not be read, so its VRAM is shown as unknown."
    )


def gpus_from_controllers(
    controllers: list[VideoController], reg: RegistryLike | None = None
) -> tuple[list[GpuInfo], list[str]]:
    """AMD controllers as GpuInfo, and notes (e.g. AdapterRAM capped).

    With a registry (``reg``: winreg live, a fake in tests) each controller's Enum key gives
    its PCI slot and the class subkey its ``Driver`` value names gives its VRAM; without one
    (pasted text), or where a key is missing or unreadable, AdapterRAM is used below its cap.
    """
    gpus, notes = [], []
    for ctl in controllers:
        pci_id = ctl.pci_id
        if not pci_id or not pci_id.startswith(f"{AMD_VENDOR_ID}:"):
            continue
        keys = DeviceKeys(found=False)
        if reg is not None and ctl.pnp_device_id:
            keys = read_device_keys(reg, ctl.pnp_device_id)
        vram = keys.vram_bytes
        if vram is None and ctl.adapter_ram:
            if ctl.adapter_ram >= ADAPTER_RAM_CAP:
                notes.append(capped_note(ctl.name, ctl.adapter_ram))
            else:
                vram = ctl.adapter_ram
        gpus.append(
            GpuInfo(name=ctl.name, pci_id=pci_id, bdf=keys.bdf, vram_bytes=vram, sources=("cim",))
        )
    return gpus, notes


def looks_like_hipinfo(text: str) -> bool:
    return bool(re.search(r"^device#\s*\d+", text, re.MULTILINE)) and "gcnArchName" in text


def parse_hipinfo(text: str) -> list[GpuInfo]:
    """``hipInfo`` output: one block per ``device#N`` with ``Name:``, ``gcnArchName:``,
    ``totalGlobalMem: 23.98 GB`` (GiB), ``pciBusID``/``pciDomainID`` and ``isIntegrated``."""
    gpus = []
    for block in re.split(r"^device#", text, flags=re.MULTILINE)[1:]:
        number = re.match(r"\s*(\d+)", block)
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
                hip_index=int(number.group(1)) if number else None,
            )
        )
    return gpus


def _hip_bdf(fields: dict[str, str]) -> str | None:
    """The PCI slot from hipInfo's fields. hipInfo prints hipDeviceProp_t's int members with
    ``cout`` in decimal (ROCm/hip-tests samples/1_Utils/hipInfo/hipInfo.cpp); pciBusID and
    pciDeviceID are the bus and device (slot) numbers (ROCm/clr hipamd/src/hip_device.cpp:
    deviceTopology_.pcie.bus/.device), and there is no function field: a GPU is function 0.
    Older HIP filled pciDomainID with the PCI function, also 0 for a GPU."""
    bus, dom = fields.get("pciBusID", ""), fields.get("pciDomainID", "0")
    dev = fields.get("pciDeviceID", "0")
    if not (bus.isdigit() and dom.isdigit() and dev.isdigit()):
        return None
    if int(bus) > 255 or int(dev) > 31 or int(dom) > 0xFFFF:
        return None
    return f"{int(dom):04x}:{int(bus):02x}:{int(dev):02x}.0"


def _hip_memory(text: str) -> int | None:
    match = re.match(r"([\d.]+)\s*(GB|MB|KB|B)?", text)
    if not match:
        return None
    scale = {"GB": 2**30, "MB": 2**20, "KB": 2**10}.get(match[2] or "B", 1)
    return int(float(match[1]) * scale)


def decode_output(data: bytes | str | None) -> str:
    """A tool's stdout as text: UTF-8 (what :data:`POWERSHELL_SCRIPT` asks PowerShell for;
    ``text=True`` would decode in the ANSI code page instead), bad bytes replaced, a leading
    BOM dropped."""
    if data is None:
        return ""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    return text.removeprefix("\ufeff")


Runner = Callable[..., Any]


class WindowsGpuQuery:
    """The live calls (Windows only): PowerShell CIM, the registry, and hipInfo.

    Every seam is a parameter: ``run`` (default :func:`rocmpanel.base.subproc.run`, which
    adds CREATE_NO_WINDOW), ``reg`` (default the real winreg on Windows), ``which``,
    ``env`` and ``platform``; tests pass fakes and run the whole path on Linux."""

    def __init__(
        self,
        timeout: float = 20.0,
        *,
        run: Runner | None = None,
        reg: RegistryLike | None = None,
        which: Callable[[str], str | None] | None = None,
        env: Mapping[str, str] | None = None,
        platform: str = sys.platform,
    ) -> None:
        self.timeout = timeout
        self._run = run or subproc.run
        self._reg = reg
        self._which = which
        self._env = env
        self.platform = platform

    def _find(self, name: str) -> str | None:
        return (self._which or shutil.which)(name)

    def _registry(self) -> RegistryLike | None:
        if self._reg is None:
            try:
                self._reg = registry.open_registry(self.platform)
            except ImportError:
                return None
        return self._reg

    def _stdout(self, argv: list[str]) -> str:
        done = self._run(
            argv,
            capture_output=True,
            timeout=self.timeout,
            check=False,
            platform=self.platform,
        )
        return decode_output(done.stdout)

    def controllers(self) -> tuple[list[GpuInfo], list[str]]:
        exe = self._find("powershell") or self._find("pwsh")
        if exe is None:
            return [], ["PowerShell was not found, so the video controllers were not listed."]
        argv = [exe, "-NoProfile", "-NonInteractive", "-Command", POWERSHELL_SCRIPT]
        try:
            controllers = parse_powershell_json(self._stdout(argv) or "{}")
        except subprocess.TimeoutExpired:
            return [], [
                f"PowerShell did not list the video controllers within {self.timeout:.0f} s, "
                "so the GPUs it would name are missing; run the detection again."
            ]
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            return [], [f"Listing video controllers through PowerShell failed: {exc}"]
        if not controllers:  # Windows always lists at least its basic display adapter
            return [], [
                "PowerShell listed no video controller at all, so Windows' device list (WMI) "
                "did not answer; `Get-CimInstance Win32_VideoController` in PowerShell shows "
                "its error."
            ]
        return gpus_from_controllers(controllers, self._registry())

    def hipinfo(self) -> str | None:
        env = os.environ if self._env is None else self._env
        hip_path = env.get("HIP_PATH")
        exe = Path(hip_path, "bin", "hipInfo.exe") if hip_path else None
        if exe is None or not exe.is_file():
            found = self._find("hipInfo")
            exe = Path(found) if found else None
        if exe is None:
            return None
        try:
            return self._stdout([str(exe)]) or None
        except (OSError, subprocess.SubprocessError):
            return None
