"""Parsing rocm-smi (plain and --json, every version in the wild) and amd-smi output.

rocm-smi's JSON values are all strings and its keys changed across releases ("GPU ID" then
"Device ID"; "Card series" that old versions filled with the vendor id); its plain output has
had two "Concise Info" layouts and the ``-a`` key/value form. amd-smi prints an 80-column
table by default and nested objects with ``--json``. These parsers are for diagnosing pasted
output, never for sampling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocmpanel.machine.gfx import normalise_gfx
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.pci_ids import AMD_VENDOR_ID

_HEX_ID_RE = re.compile(r"^0x([0-9a-fA-F]{1,4})$")


@dataclass(frozen=True)
class SmiResult:
    """GPUs and system facts from one smi output."""

    gpus: tuple[GpuInfo, ...]
    driver: str | None = None
    rocm_version: str | None = None


def _device_id(value: object) -> str | None:
    match = _HEX_ID_RE.match(str(value or "").strip())
    return f"{AMD_VENDOR_ID}:{match.group(1).lower().zfill(4)}" if match else None


def _int(value: object) -> int | None:
    text = str(value or "").strip()
    return int(text) if text.isdigit() else None


def _real_name(*values: object) -> str | None:
    """The first value that is a name (old rocm-smi put the vendor id "0x1002" there)."""
    for value in values:
        text = str(value or "").strip()
        if text and text != "N/A" and not _HEX_ID_RE.match(text):
            return text
    return None


def parse_rocm_smi_json(data: Mapping[str, Any]) -> SmiResult:
    gpus = []
    for key in sorted((k for k in data if re.fullmatch(r"card\d+", k)), key=lambda k: int(k[4:])):
        card = data[key]
        if not isinstance(card, Mapping):
            continue
        pci_id = _device_id(card.get("Device ID") or card.get("GPU ID"))
        bus = str(card.get("PCI Bus") or "").strip().lower() or None
        gpus.append(
            GpuInfo(
                name=_real_name(
                    card.get("Card Series"),
                    card.get("Card series"),
                    card.get("Device Name"),
                    card.get("Card model"),
                )
                or "",
                gfx=normalise_gfx(str(card.get("GFX Version") or "")),
                pci_id=pci_id,
                bdf=bus if bus and bus != "n/a" else None,
                vram_bytes=_int(card.get("VRAM Total Memory (B)")),
                sources=("rocm-smi",),
            )
        )
    system = data.get("system")
    driver = None
    if isinstance(system, Mapping) and system.get("Driver version"):
        driver = f"amdgpu {system['Driver version']}"
    return SmiResult(tuple(gpus), driver=driver)


def parse_rocm_smi_text(text: str) -> SmiResult:
    """Concise Info (both layouts) and ``rocm-smi -a`` (``GPU[n] : key: value``)."""
    per_gpu: dict[int, dict[str, str]] = {}
    for match in re.finditer(r"^GPU\[(\d+)\]\s*:\s*([^:\n]+?):\s*(.*?)\s*$", text, re.MULTILINE):
        per_gpu.setdefault(int(match[1]), {}).setdefault(match[2].strip(), match[3])
    driver = re.search(r"Driver version:\s*(\S+)", text)
    if per_gpu:
        gpus = tuple(
            GpuInfo(
                name=_real_name(f.get("Card Series"), f.get("Card series"), f.get("Device Name"))
                or "",
                gfx=normalise_gfx(f.get("GFX Version")),
                pci_id=_device_id(f.get("Device ID") or f.get("GPU ID")),
                bdf=(f.get("PCI Bus") or "").lower() or None,
                vram_bytes=_int(f.get("VRAM Total Memory (B)")),
                sources=("rocm-smi",),
            )
            for _, f in sorted(per_gpu.items())
        )
        return SmiResult(gpus, driver=f"amdgpu {driver[1]}" if driver else None)
    return SmiResult(_concise_rows(text), driver=f"amdgpu {driver[1]}" if driver else None)


def _concise_rows(text: str) -> tuple[GpuInfo, ...]:
    lines = text.splitlines()
    gpus: list[GpuInfo] = []
    for i, line in enumerate(lines):
        old = re.match(r"^(\d+)\s+\[(0x[0-9a-fA-F]+)\s*:\s*0x[0-9a-fA-F]+\]", line)
        new = re.match(r"^(\d+)\s+(\d+)\s+(0x[0-9a-fA-F]+),", line)
        if old:
            name = ""
            if i + 1 < len(lines) and re.match(r"^\s{4,}\S", lines[i + 1]):
                name = lines[i + 1].strip()
            gpus.append(GpuInfo(name=name, pci_id=_device_id(old[2]), sources=("rocm-smi",)))
        elif new:
            gpus.append(
                GpuInfo(
                    name="", pci_id=_device_id(new[3]), kfd_node=int(new[2]), sources=("rocm-smi",)
                )
            )
    return tuple(gpus)


def parse_amd_smi_text(text: str) -> SmiResult:
    """The default ``amd-smi`` table: header versions, then two lines per GPU."""
    rocm = re.search(r"ROCm version:\s*([\d.]+)", text)
    driver = re.search(r"amdgpu version:\s*([\w.\-]+)", text)
    gpus = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        row = re.match(
            r"^\|\s*([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)\s+(.*?)\s*\|", line
        )
        if not row:
            continue
        vram = None
        if i + 1 < len(lines):
            mem = re.search(r"(\d+)/(\d+)\s*MB\s*\|\s*$", lines[i + 1])
            vram = int(mem[2]) * 2**20 if mem else None
        gpus.append(
            GpuInfo(
                name=row[2].lstrip(".").strip(),
                bdf=row[1].lower(),
                vram_bytes=vram,
                sources=("amd-smi",),
            )
        )
    return SmiResult(
        tuple(gpus),
        driver=f"amdgpu {driver[1]}" if driver else None,
        rocm_version=rocm[1] if rocm else None,
    )


def _mib(value: object) -> int | None:
    """amd-smi sizes: {"value": 196288, "unit": "MB"}, "196288 MB", or a bare MB number."""
    if isinstance(value, Mapping):
        number, unit = value.get("value"), str(value.get("unit") or "MB")
    else:
        match = re.match(r"\s*(\d+)\s*([KMG]?B)?", str(value or ""))
        if not match:
            return None
        number, unit = match[1], match[2] or "MB"
    if not str(number).isdigit():
        return None
    return int(str(number)) * {"KB": 2**10, "MB": 2**20, "GB": 2**30}.get(unit.upper(), 2**20)


def _section(item: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = item.get(key)
    return value if isinstance(value, Mapping) else {}


def parse_amd_smi_json(data: Any) -> SmiResult:
    """``amd-smi static --json``: a list of GPUs (or ``{"gpu_data": [...]}``) with ``asic``,
    ``bus``, ``vram`` objects."""
    items = data.get("gpu_data", []) if isinstance(data, Mapping) else data
    gpus = []
    driver = None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        asic, bus = _section(item, "asic"), _section(item, "bus")
        vram, drv = _section(item, "vram"), _section(item, "driver")
        if drv.get("version") and driver is None:
            driver = f"{drv.get('name') or 'amdgpu'} {drv['version']}"
        gpus.append(
            GpuInfo(
                name=_real_name(asic.get("market_name")) or "",
                gfx=normalise_gfx(str(asic.get("target_graphics_version") or "")),
                pci_id=_device_id(asic.get("device_id")),
                bdf=str(bus.get("bdf") or item.get("bdf") or "").lower() or None,
                vram_bytes=_mib(vram.get("size")),
                sources=("amd-smi",),
            )
        )
    return SmiResult(tuple(gpus), driver=driver)


def is_rocm_smi_json(data: Any) -> bool:
    return isinstance(data, Mapping) and any(re.fullmatch(r"card\d+", str(k)) for k in data)


def is_amd_smi_json(data: Any) -> bool:
    items = data.get("gpu_data") if isinstance(data, Mapping) else data
    return isinstance(items, list) and any(
        isinstance(i, Mapping) and ("asic" in i or "gpu" in i) for i in items
    )
