"""Parsing ``rocminfo`` output (every format from ROCm 3.x to 7.x, native and WSL).

rocminfo prints system attributes, then one block per HSA agent (CPUs and GPUs) with
``  Key:   value`` lines indented by two spaces and nested pool/ISA blocks deeper. When the
runtime cannot start it prints a reason instead (no /dev/kfd access, out of resources);
those lines are kept as errors so the checklist can explain them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rocmpanel.machine.gfx import normalise_gfx
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.pci_ids import AMD_VENDOR_ID

_AGENT_RE = re.compile(r"^\*{3,}\s*\n\s*Agent\s+\d+\s*\n\*{3,}\s*$", re.MULTILINE)
_TOP_KEY_RE = re.compile(r"^  (\S[^:]*?):+\s*(.*?)\s*$")
_POOL_KEY_RE = re.compile(r"^\s{6}(Segment|Size):\s*(.*?)\s*$")
_NUM_HEX_RE = re.compile(r"^(\d+)\s*\(0x([0-9a-fA-F]+)\)")
_ROCK_RE = re.compile(r"ROCk module(?: version ([\w.\-]+))? is loaded")
_KFD_ERR_RE = re.compile(r"Unable to open /dev/kfd read-write:\s*(.+)")
_HSA_STATUS_RE = re.compile(r"(HSA_STATUS_ERROR_\w+)")
_NOT_MEMBER_RE = re.compile(r"(\S+) is not member of \"?(\w+)\"? group")


@dataclass(frozen=True)
class RocminfoAgent:
    """One HSA agent (CPU or GPU) as rocminfo printed it."""

    name: str
    marketing_name: str | None
    device_type: str | None
    uuid: str | None
    chip_id: int | None
    bdfid: int | None
    node: int | None
    compute_units: int | None
    vram_bytes: int | None
    isa: str | None


@dataclass(frozen=True)
class RocminfoReport:
    """What one rocminfo run said."""

    agents: tuple[RocminfoAgent, ...] = ()
    runtime_version: str | None = None
    rock_loaded: bool = False
    rock_version: str | None = None
    wsl: bool = False
    kfd_error: str | None = None  # "Permission denied" from "Unable to open /dev/kfd ..."
    hsa_status: str | None = None  # e.g. HSA_STATUS_ERROR_OUT_OF_RESOURCES
    not_member_of: tuple[str, ...] = ()
    errors: tuple[str, ...] = field(default=())

    @property
    def gpus(self) -> tuple[RocminfoAgent, ...]:
        return tuple(a for a in self.agents if (a.device_type or "").upper() == "GPU")


def looks_like_rocminfo(text: str) -> bool:
    return (
        "HSA System Attributes" in text
        or "HSA Agents" in text
        or bool(_ROCK_RE.search(text))
        or ("hsa api call failure" in text and "rocminfo" in text)
    )


def _number(value: str) -> int | None:
    match = _NUM_HEX_RE.match(value)
    if match:
        return int(match.group(1))
    head = value.split()[0] if value.split() else ""
    return int(head) if head.isdigit() else None


def _is_vram_pool(segment: str) -> bool:
    """The GPU's device-memory pool: GLOBAL, COARSE GRAINED (not the kernel-argument pool)."""
    return "GLOBAL" in segment and "COARSE GRAINED" in segment and "KERNARG" not in segment


def _parse_agent(block: str) -> RocminfoAgent | None:
    fields: dict[str, str] = {}
    vram: int | None = None
    isa: str | None = None
    segment = ""
    for line in block.splitlines():
        pool = _POOL_KEY_RE.match(line)
        if pool:
            key, value = pool.groups()
            if key == "Segment":
                segment = value
            elif key == "Size" and vram is None and _is_vram_pool(segment):
                kb = _number(value)
                vram = kb * 1024 if kb is not None else None
            continue
        stripped = line.strip()
        if stripped.startswith("Name:") and "amdgcn" in stripped and isa is None:
            isa = stripped.split(":", 1)[1].strip()
            continue
        top = _TOP_KEY_RE.match(line)
        if top and top.group(1) not in fields:
            fields[top.group(1)] = top.group(2)
    name = fields.get("Name")
    if not name:
        return None
    device_type = fields.get("Device Type") or None
    if device_type is None and normalise_gfx(name):
        device_type = "GPU"
    chip = _number(fields.get("Chip ID", ""))
    return RocminfoAgent(
        name=name,
        marketing_name=fields.get("Marketing Name") or None,
        device_type=device_type,
        uuid=fields.get("Uuid") or None,
        chip_id=chip if chip else None,
        bdfid=_number(fields["BDFID"]) if "BDFID" in fields else None,
        node=_number(fields.get("Node", "")),
        compute_units=_number(fields.get("Compute Unit", "")),
        vram_bytes=vram if device_type == "GPU" else None,
        isa=isa,
    )


def parse_rocminfo(text: str) -> RocminfoReport:
    """Parse a whole rocminfo output; never raises on odd input."""
    text = text.replace("\r\n", "\n").replace("\0", "")
    parts = _AGENT_RE.split(text)
    agents = tuple(a for a in (_parse_agent(p) for p in parts[1:]) if a is not None)
    runtime = re.search(r"^Runtime Version:\s*(\S+)", text, re.MULTILINE)
    rock = _ROCK_RE.search(text)
    kfd = _KFD_ERR_RE.search(text)
    status = _HSA_STATUS_RE.search(text)
    errors = tuple(
        line.strip()
        for line in text.splitlines()
        if "hsa api call failure" in line
        or line.startswith("Call returned")
        or "Unable to open /dev/kfd" in line
        or "Failed to get user name" in line
    )
    return RocminfoReport(
        agents=agents,
        runtime_version=runtime.group(1) if runtime else None,
        rock_loaded=rock is not None,
        rock_version=rock.group(1) if rock else None,
        wsl="WSL environment detected" in text,
        kfd_error=kfd.group(1).strip() if kfd else None,
        hsa_status=status.group(1) if status else None,
        not_member_of=tuple(m.group(2) for m in _NOT_MEMBER_RE.finditer(text)),
        errors=errors,
    )


def bdf_from_bdfid(bdfid: int | None) -> str | None:
    """rocminfo's BDFID (bus << 8 | device << 3 | function) as "0000:03:00.0"."""
    if not bdfid:
        return None
    domain = bdfid >> 16
    bus, device, function = (bdfid >> 8) & 0xFF, (bdfid >> 3) & 0x1F, bdfid & 0x7
    return f"{domain:04x}:{bus:02x}:{device:02x}.{function}"


def gpus_from_rocminfo(report: RocminfoReport) -> list[GpuInfo]:
    """One single-source GpuInfo per GPU agent."""
    gpus = []
    for agent in report.gpus:
        gpus.append(
            GpuInfo(
                name=agent.marketing_name or agent.name,
                gfx=normalise_gfx(agent.name) or normalise_gfx(agent.isa),
                pci_id=f"{AMD_VENDOR_ID}:{agent.chip_id:04x}" if agent.chip_id else None,
                bdf=bdf_from_bdfid(agent.bdfid),
                vram_bytes=agent.vram_bytes,
                sources=("rocminfo",),
                kfd_node=agent.node,
            )
        )
    return gpus
