"""Parsing ``lspci -nn``: the last-resort GPU list when neither KFD nor DRM answers.

Lines look like ``03:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc.
[AMD/ATI] Navi 21 [Radeon RX 6800/6800 XT / 6900 XT] [1002:73bf] (rev c1)``. Instinct cards
enumerate as ``Display controller [0380]`` or ``Processing accelerators [1200]``, so the
class code, not the word "VGA", decides.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.pci_ids import AMD_VENDOR_ID, is_amd_vendor

_LINE_RE = re.compile(
    r"^(?P<slot>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
    r"(?P<cls>[^\[]+?)\s*\[(?P<code>[0-9a-fA-F]{4})\]:\s*(?P<desc>.*?)\s*"
    r"\[(?P<vendor>[0-9a-fA-F]{4}):(?P<device>[0-9a-fA-F]{4})\](?:\s*\(rev [0-9a-fA-F]+\))?\s*$"
)
_GPU_CLASSES = ("0300", "0302", "0380", "1200")


def looks_like_lspci(text: str) -> bool:
    return any(_LINE_RE.match(line.strip()) for line in text.splitlines())


def parse_lspci(text: str) -> list[GpuInfo]:
    """AMD display/accelerator devices in ``lspci -nn`` output."""
    gpus = []
    for raw in text.splitlines():
        match = _LINE_RE.match(raw.strip())
        if not match or not is_amd_vendor(match["vendor"]):
            continue
        if match["code"] not in _GPU_CLASSES:
            continue
        slot = match["slot"].lower()
        if slot.count(":") == 1:
            slot = "0000:" + slot
        desc = match["desc"]
        desc = desc.replace("Advanced Micro Devices, Inc. [AMD/ATI]", "").strip() or desc
        gpus.append(
            GpuInfo(
                name=desc,
                pci_id=f"{AMD_VENDOR_ID}:{match['device'].lower()}",
                bdf=slot,
                sources=("lspci",),
            )
        )
    return gpus


def run_lspci(timeout: float = 5.0) -> str | None:
    """``lspci -nn`` output, or None when lspci is missing or fails."""
    exe = shutil.which("lspci")
    if exe is None:
        return None
    try:
        done = subprocess.run(
            [exe, "-nn"], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None
