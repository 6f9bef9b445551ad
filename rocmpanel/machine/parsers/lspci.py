"""Parsing ``lspci``: the last-resort GPU list when neither KFD nor DRM answers.

Three spellings of the same device line are read (pciutils prints them from one format:
slot, class, then vendor and device, then ``(rev xx)`` and, with ``-v``, ``(prog-if xx)``):

- ``lspci -nn``: ``03:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc.
  [AMD/ATI] Navi 21 [Radeon RX 6800/6800 XT / 6900 XT] [1002:73bf] (rev c1)``;
- plain ``lspci``: ``03:00.0 VGA compatible controller: Advanced Micro Devices, Inc.
  [AMD/ATI] Device 7551 (rev c0)`` when pci.ids lacks the device (the id is then in the
  text), or the pci.ids name without any id when it has it;
- ``lspci -n``: ``03:00.0 0300: 1002:744c (rev c8)``.

``lspci -k`` adds indented ``Kernel driver in use:`` lines under a device. Instinct cards
enumerate as ``Display controller`` or ``Processing accelerators``, so the class, not the
word "VGA", decides. A PCI id is only ever taken from the text, never guessed from a name.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, replace

from rocmpanel.base import subproc
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.pci_ids import AMD_VENDOR_ID, is_amd_vendor

_SLOT = r"(?P<slot>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
_TAIL = r"(?:\s*\(rev [0-9a-fA-F]+\))?(?:\s*\(prog-if [0-9a-fA-F]+(?: \[[^\]]*\])?\))?\s*$"
_NN_RE = re.compile(
    rf"^{_SLOT}\s+(?P<cls>[^\[\n]+?)\s*\[(?P<code>[0-9a-fA-F]{{4}})\]:\s*(?P<desc>.*?)\s*"
    rf"\[(?P<vendor>[0-9a-fA-F]{{4}}):(?P<device>[0-9a-fA-F]{{4}})\]{_TAIL}"
)
_NUMERIC_RE = re.compile(
    rf"^{_SLOT}\s+(?P<code>[0-9a-fA-F]{{4}}):\s+"
    rf"(?P<vendor>[0-9a-fA-F]{{4}}):(?P<device>[0-9a-fA-F]{{4}}){_TAIL}"
)
_PLAIN_RE = re.compile(rf"^{_SLOT}\s+(?P<cls>[^:\[\n]+?):\s+(?P<desc>.+?){_TAIL}")
_DRIVER_RE = re.compile(r"^\s+Kernel driver in use:\s*(\S+)")
_SLOT_START_RE = re.compile(rf"^{_SLOT}\s")

# PCI classes a GPU enumerates as: VGA 0300, 3D 0302, display 0380, processing accelerator 1200
# (class names as pci.ids spells them, which plain lspci prints).
_GPU_CLASSES = ("0300", "0302", "0380", "1200")
_GPU_CLASS_NAMES = {
    "vga compatible controller": "0300",
    "3d controller": "0302",
    "display controller": "0380",
    "processing accelerators": "1200",
}
# pci.ids' name of vendor 1002 (current, and before AMD's rename); 1022 "[AMD]" is the CPU side.
_AMD_GPU_VENDOR_NAMES = ("Advanced Micro Devices, Inc. [AMD/ATI]", "ATI Technologies Inc")
_UNKNOWN_DEVICE_RE = re.compile(r"^Device ([0-9a-fA-F]{4})$")

FORM_NN = "lspci -nn"
FORM_NUMERIC = "lspci -n"
FORM_PLAIN = "lspci"


@dataclass(frozen=True)
class LspciDevice:
    """One AMD display or accelerator function as one lspci line described it."""

    slot: str  # "0000:03:00.0"
    class_code: str  # "0300"
    name: str  # the device part of the description ("" when lspci printed none)
    device_id: str | None  # "744c", only when the text shows it
    form: str  # FORM_NN, FORM_NUMERIC or FORM_PLAIN
    driver: str | None = None  # from an ``lspci -k`` "Kernel driver in use:" line

    @property
    def pci_id(self) -> str | None:
        return f"{AMD_VENDOR_ID}:{self.device_id}" if self.device_id else None


def _slot(text: str) -> str:
    slot = text.lower()
    return "0000:" + slot if slot.count(":") == 1 else slot


def _strip_vendor(desc: str) -> str | None:
    """The device part of a plain description, or None when the vendor is not AMD's GPU one."""
    for vendor in _AMD_GPU_VENDOR_NAMES:
        if desc.startswith(vendor):
            return desc[len(vendor) :].strip()
    return None


def _device(line: str) -> LspciDevice | None:
    """The AMD GPU one line describes, or None (another vendor or class, or not lspci)."""
    match = _NN_RE.match(line)
    if match:
        if not is_amd_vendor(match["vendor"]) or match["code"].lower() not in _GPU_CLASSES:
            return None
        name = _strip_vendor(match["desc"])
        name = match["desc"] if name is None else name
        return LspciDevice(
            slot=_slot(match["slot"]),
            class_code=match["code"].lower(),
            name="" if name == "Device" else name,  # unknown to pci.ids: "Device [1002:xxxx]"
            device_id=match["device"].lower(),
            form=FORM_NN,
        )
    match = _NUMERIC_RE.match(line)
    if match:
        if not is_amd_vendor(match["vendor"]) or match["code"].lower() not in _GPU_CLASSES:
            return None
        return LspciDevice(
            _slot(match["slot"]), match["code"].lower(), "", match["device"].lower(), FORM_NUMERIC
        )
    match = _PLAIN_RE.match(line)
    if match:
        code = _GPU_CLASS_NAMES.get(match["cls"].strip().lower())
        name = _strip_vendor(match["desc"])
        if code is None or name is None:
            return None
        unknown = _UNKNOWN_DEVICE_RE.match(name)
        return LspciDevice(
            slot=_slot(match["slot"]),
            class_code=code,
            name="" if unknown else name,
            device_id=unknown.group(1).lower() if unknown else None,
            form=FORM_PLAIN,
        )
    return None


def is_lspci_line(line: str) -> bool:
    """Whether ``line`` is a device line of any lspci form (any vendor)."""
    line = line.strip()
    if _NN_RE.match(line) or _NUMERIC_RE.match(line):
        return True
    match = _PLAIN_RE.match(line)
    return bool(match and not match["cls"].strip()[:1].isdigit())


_SLOT_LINE_RE = re.compile(rf"^[ \t]*{_SLOT}\s[^\n]*", re.MULTILINE)


def looks_like_lspci(text: str) -> bool:
    return any(is_lspci_line(m.group()) for m in _SLOT_LINE_RE.finditer(text))


def parse_devices(text: str) -> list[LspciDevice]:
    """The AMD GPUs of an lspci listing in any form, one per slot (a slot listed twice, e.g.
    by ``lspci`` and ``lspci -nn`` pasted together, keeps the line that shows the id)."""
    found: dict[str, LspciDevice] = {}
    last: str | None = None
    for raw in text.splitlines():
        driver = _DRIVER_RE.match(raw)
        if driver:
            if last is not None:
                found[last] = replace(found[last], driver=driver.group(1))
            continue
        if not raw[:1].isspace():
            last = None
        device = _device(raw.strip())
        if device is None:
            continue
        old = found.get(device.slot)
        if old is None:
            found[device.slot] = device
        elif device.device_id and not old.device_id:
            found[device.slot] = replace(device, name=device.name or old.name, driver=old.driver)
        elif device.name and not old.name:
            found[device.slot] = replace(old, name=device.name)
        last = device.slot
    return list(found.values())


def parse_lspci(text: str) -> list[GpuInfo]:
    """AMD display/accelerator devices in ``lspci``, ``lspci -nn`` or ``lspci -n`` output."""
    return [
        GpuInfo(name=d.name, pci_id=d.pci_id, bdf=d.slot, sources=("lspci",))
        for d in parse_devices(text)
    ]


def lspci_form(text: str) -> str | None:
    """The most informative form of the AMD GPU lines in ``text``: FORM_NN when any shows
    names and ids, FORM_NUMERIC for ids only, FORM_PLAIN for plain lines; None without any."""
    forms = {d.form for d in parse_devices(text)}
    for form in (FORM_NN, FORM_NUMERIC, FORM_PLAIN):
        if form in forms:
            return form
    return None


def last_line_cut(text: str) -> str | None:
    """The last non-empty line when the listing looks cut inside it: it starts like a device
    line but is not one, or (plain form) it stops inside the vendor name or a bracket."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    last = lines[-1].strip()
    if not _SLOT_START_RE.match(last):
        return None
    if not is_lspci_line(last):
        return last
    plain = None if _NN_RE.match(last) or _NUMERIC_RE.match(last) else _PLAIN_RE.match(last)
    if plain is None:
        return None
    desc = plain["desc"]
    vendor_cut = any(v != desc and v.startswith(desc) for v in _AMD_GPU_VENDOR_NAMES)
    unbalanced = desc.count("[") > desc.count("]") or desc.count("(") > desc.count(")")
    return last if vendor_cut or unbalanced else None


def run_lspci(timeout: float = 5.0) -> str | None:
    """``lspci -nn`` output, or None when lspci is missing or fails."""
    exe = shutil.which("lspci")
    if exe is None:
        return None
    try:
        done = subproc.run(
            [exe, "-nn"], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None
