"""Diagnosing a system from pasted text: recognise the tools that printed it, parse them, and
build the same SystemInfo / HostFacts / probe data the live detection gives.

Known kinds: rocminfo, rocm-smi (plain and --json of any version), amd-smi (default table
and ``static --json``), hipInfo, ``python -m torch.utils.collect_env``, ``lspci`` (``-nn``,
``-n`` or plain, with ``-k`` driver lines) and PowerShell ``Get-CimInstance``/
``Get-WmiObject Win32_VideoController`` listings.

One input may hold several outputs (pasted one after another, with or without shell
prompts); each is cut out and recognised on its own. Outputs of one machine are merged.
Outputs that contradict each other (another GPU in the same PCI slot, a GPU that a full
listing lacks, another host name in the prompt, another installed ROCm or amdgpu version) come
from different machines: they are never merged, and :attr:`Captured.machines` holds one
diagnosis per machine, with notes that name what differs. An output that looks cut short
(rocminfo without its closing line, JSON that stops mid-document, ...) says so in the notes.
Unknown text raises a PanelError with a plain message; no input raises anything else.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.machine import pci_ids, windows_gpu
from rocmpanel.machine.detect import merge_gpus
from rocmpanel.machine.gfx import normalise_gfx, parse_gfx
from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo
from rocmpanel.machine.parsers import lspci as lspci_parse
from rocmpanel.machine.parsers import rocminfo as rocminfo_parse
from rocmpanel.machine.parsers import smi as smi_parse
from rocmpanel.setup.capture_input import (
    MAX_CAPTURE_CHARS,
    clean_text,
    looks_binary,
    split_input,
)
from rocmpanel.setup.probe_report import ProbeDevice, ProbeReport

MAX_CAPTURES = 32
"""At most this many tool outputs are read from one input."""
MAX_GPUS = 128
"""At most this many GPUs are read from one output (8 GPUs of 8 partitions each is 64)."""


class CapturedKind(str, Enum):
    ROCMINFO = "rocminfo"
    ROCM_SMI_JSON = "rocm-smi --json"
    ROCM_SMI_TEXT = "rocm-smi"
    AMD_SMI_JSON = "amd-smi --json"
    AMD_SMI_TEXT = "amd-smi"
    HIPINFO = "hipInfo"
    COLLECT_ENV = "torch collect_env"
    LSPCI = "lspci -nn"
    LSPCI_NUMERIC = "lspci -n"
    LSPCI_PLAIN = "lspci"
    WINDOWS_CIM = "Win32_VideoController listing"


KNOWN_KINDS_TEXT = QT_TRANSLATE_NOOP(
    "captured",
    "rocminfo, rocm-smi (plain or --json), amd-smi (plain or static --json), hipInfo, "
    "python -m torch.utils.collect_env, lspci -nn (or plain lspci), or Get-CimInstance "
    "Win32_VideoController",
)

_LSPCI_KINDS = (CapturedKind.LSPCI, CapturedKind.LSPCI_NUMERIC, CapturedKind.LSPCI_PLAIN)
_LSPCI_KIND_OF_FORM = {
    lspci_parse.FORM_NN: CapturedKind.LSPCI,
    lspci_parse.FORM_NUMERIC: CapturedKind.LSPCI_NUMERIC,
    lspci_parse.FORM_PLAIN: CapturedKind.LSPCI_PLAIN,
}
# How much of a machine's GPUs a kind lists: 2 = every AMD PCI display function (lspci, CIM),
# 1 = every GPU amdgpu drives (rocm-smi, amd-smi), 0 = what the runtime exposes (rocminfo,
# torch, hipInfo; filtered by *_VISIBLE_DEVICES and by what ROCm supports).
_COVERAGE = {
    **{k: 2 for k in (*_LSPCI_KINDS, CapturedKind.WINDOWS_CIM)},
    **{
        k: 1
        for k in (
            CapturedKind.ROCM_SMI_JSON,
            CapturedKind.ROCM_SMI_TEXT,
            CapturedKind.AMD_SMI_JSON,
            CapturedKind.AMD_SMI_TEXT,
        )
    },
}


@dataclass(frozen=True)
class Captured:
    """A pasted system, ready for verdicts and the checklist.

    When the captures come from more than one machine, ``machines`` holds one Captured per
    machine (each to be diagnosed on its own) and this one lists every GPU without merging
    across machines, with a note that names what differs."""

    system: SystemInfo
    host: HostFacts
    kinds: tuple[CapturedKind, ...]
    probe: ProbeReport | None = None
    notes: tuple[str, ...] = field(default=())
    machines: tuple[Captured, ...] = ()
    labels: tuple[str, ...] = ()  # the captures used, e.g. ("text 1 (rocminfo)",)

    @property
    def parts(self) -> tuple[Captured, ...]:
        """The systems to diagnose: one per machine."""
        return self.machines or (self,)


# ---- JSON, whole or cut -----------------------------------------------------------------

_JSON_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*(?P<closed>")?|[\[\]{}]', re.DOTALL)
_CLOSER = {"{": "}", "[": "]"}


def _salvage_json(text: str) -> Any:
    """What is left of a JSON document that was cut short: the text up to one of the last
    complete strings or closing brackets, closed and parsed; None when nothing parses."""
    stack: list[str] = []
    cuts: deque[tuple[int, str]] = deque(maxlen=16)
    for match in _JSON_TOKEN_RE.finditer(text):
        token = match.group()
        if token in _CLOSER:
            stack.append(token)
            continue
        if token in ("}", "]"):
            if not stack or _CLOSER[stack.pop()] != token:
                return None
        elif match.group("closed") is None:
            continue  # a string that never closes
        if stack:
            cuts.append((match.end(), "".join(_CLOSER[s] for s in reversed(stack))))
    for end, closers in reversed(cuts):
        try:
            return json.loads(text[:end] + closers)
        except (ValueError, RecursionError):
            continue
    return None


@lru_cache(maxsize=8)
def _json(text: str) -> tuple[Any, bool]:
    """(data, cut): the JSON document ``text`` starts with (text after it is ignored), or what
    is left of one that was cut short (cut=True); (None, False) when it is not JSON."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None, False
    try:
        return json.JSONDecoder().raw_decode(stripped)[0], False
    except RecursionError:
        return None, False
    except ValueError as exc:
        if not _is_truncation(exc):
            return None, False
    return _salvage_json(stripped), True


def _is_truncation(exc: ValueError) -> bool:
    """Whether a JSON error says the document stops early: a string that never closes, or an
    error in the last few characters."""
    pos, doc = getattr(exc, "pos", None), getattr(exc, "doc", None)
    if not isinstance(pos, int) or not isinstance(doc, str):
        return False
    return "Unterminated string" in str(exc) or pos >= len(doc.rstrip()) - 16


def _json_kind(data: Any) -> CapturedKind | None:
    if smi_parse.is_rocm_smi_json(data):
        return CapturedKind.ROCM_SMI_JSON
    if smi_parse.is_amd_smi_json(data):
        return CapturedKind.AMD_SMI_JSON
    return None


def detect_kind(text: str) -> CapturedKind | None:
    """The tool that printed ``text``, or None."""
    data, _cut = _json(text)
    if data is not None:
        return _json_kind(data)
    if re.search(r"^PyTorch version:", text, re.M) and re.search(
        r"Is CUDA available|ROCM used|Is debug build|Collecting environment information", text
    ):
        return CapturedKind.COLLECT_ENV
    if rocminfo_parse.looks_like_rocminfo(text) or text.lstrip().startswith(
        "WSL environment detected"
    ):
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
        return _LSPCI_KIND_OF_FORM.get(lspci_parse.lspci_form(text) or "", CapturedKind.LSPCI)
    return None


# ---- parsing one capture -----------------------------------------------------------------


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
    # Facts that tell machines apart (None = this capture does not say).
    host_name: str | None = None
    installed_rocm: str | None = None  # the "ROCm version" amd-smi reports
    runtime: str | None = None  # rocminfo's HSA "Runtime Version"
    driver_version: str | None = None  # amdgpu's own version (DKMS), when printed


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


def _gfx_from_name(name: str, table: pci_ids.PciTable) -> str | None:
    """The gfx target a pci.ids-style name stands for when the table agrees on one: the
    whole name, else the first product in its brackets ("Navi 31 [Radeon RX 7900 XT/...]")."""
    entry = table.entry_by_name(name)
    if entry is None:
        bracket = re.search(r"\[([^\[\]]+)\]\s*$", name)
        first = bracket.group(1).split("/")[0].strip() if bracket else ""
        entry = table.entry_by_name(first) if first else None
    return entry.gfx if entry else None


def _lspci(text: str, acc: _Acc) -> None:
    table = pci_ids.load_table()
    devices = lspci_parse.parse_devices(text)
    for dev in devices:
        gfx = None if dev.device_id or not dev.name else _gfx_from_name(dev.name, table)
        sources = ("lspci", "pci-table") if gfx else ("lspci",)
        acc.gpus.append(
            GpuInfo(name=dev.name, gfx=gfx, pci_id=dev.pci_id, bdf=dev.slot, sources=sources)
        )
        if dev.driver == "amdgpu":
            acc.driver = acc.driver or "amdgpu"
        elif dev.driver:
            acc.notes.append(
                translate(
                    "captured",
                    "lspci -k: the GPU at {slot} is bound to the {driver} driver, not "
                    "amdgpu; ROCm can only use GPUs that amdgpu drives.",
                ).format(slot=dev.slot, driver=dev.driver)
            )
    if any(d.form == lspci_parse.FORM_PLAIN and not d.device_id for d in devices):
        acc.notes.append(
            translate(
                "captured",
                "lspci was run without -nn, so it shows names but not PCI ids (the gfx target "
                "is taken from the name where the table knows it). `lspci -nn` shows the ids, "
                "`lspci -nnk` also the kernel driver in use.",
            )
        )
    elif any(d.form == lspci_parse.FORM_PLAIN for d in devices):
        acc.notes.append(
            translate(
                "captured",
                "lspci was run without -nn; `lspci -nn` shows names with PCI ids, `lspci -nnk` "
                "also the kernel driver in use.",
            )
        )


def _parse_one(kind: CapturedKind, text: str, acc: _Acc, data: Any = None) -> None:
    if kind is CapturedKind.ROCMINFO:
        report = rocminfo_parse.parse_rocminfo(text)
        acc.gpus.extend(rocminfo_parse.gpus_from_rocminfo(report))
        acc.kfd_error = acc.kfd_error or report.kfd_error
        acc.hsa_status = acc.hsa_status or report.hsa_status
        acc.wsl = acc.wsl or report.wsl
        acc.runtime = report.runtime_version
        acc.driver_version = report.rock_version
        if report.rock_loaded and acc.driver is None:
            acc.driver = f"amdgpu {report.rock_version}" if report.rock_version else "amdgpu"
        acc.notes.extend(f"rocminfo: {e}" for e in report.errors)
    elif kind in (CapturedKind.ROCM_SMI_JSON, CapturedKind.AMD_SMI_JSON):
        smi = (
            smi_parse.parse_rocm_smi_json(data)
            if kind is CapturedKind.ROCM_SMI_JSON
            else smi_parse.parse_amd_smi_json(data)
        )
        _add_smi(smi, acc)
    elif kind is CapturedKind.ROCM_SMI_TEXT:
        _add_smi(smi_parse.parse_rocm_smi_text(text), acc)
    elif kind is CapturedKind.AMD_SMI_TEXT:
        smi = smi_parse.parse_amd_smi_text(text)
        _add_smi(smi, acc)
        acc.installed_rocm = smi.rocm_version
    elif kind is CapturedKind.HIPINFO:
        acc.gpus.extend(windows_gpu.parse_hipinfo(text))
        acc.os = acc.os or "windows"
    elif kind is CapturedKind.WINDOWS_CIM:
        gpus, notes = windows_gpu.gpus_from_controllers(windows_gpu.parse_cim_listing(text))
        acc.gpus.extend(gpus)
        acc.notes.extend(notes)
        acc.os = acc.os or "windows"
        name = re.search(r"^(?:PSComputerName|__SERVER|SystemName)\s*:\s*(\S+)\s*$", text, re.M)
        acc.host_name = acc.host_name or (name.group(1) if name else None)
    elif kind in _LSPCI_KINDS:
        _lspci(text, acc)
    elif kind is CapturedKind.COLLECT_ENV:
        _collect_env(text, acc)


def _add_smi(smi: smi_parse.SmiResult, acc: _Acc) -> None:
    acc.gpus.extend(smi.gpus)
    acc.driver = acc.driver or smi.driver
    acc.rocm_version = acc.rocm_version or smi.rocm_version
    if smi.driver:
        acc.driver_version = smi.driver.removeprefix("amdgpu ").strip() or None


# ---- does it look cut? -------------------------------------------------------------------


def _rocminfo_cut(text: str) -> str | None:
    if "*** Done ***" in text:
        return None
    report = rocminfo_parse.parse_rocminfo(text)
    if report.errors or report.kfd_error or report.hsa_status:
        return None  # an error output has no agent list by design
    if report.agents:
        return translate(
            "captured",
            "it stops after {count} agent(s) without rocminfo's closing "
            "'*** Done ***' line, so the agent list is incomplete",
        ).format(count=len(report.agents))
    if "HSA System Attributes" in text or "HSA Agents" in text:
        return translate(
            "captured",
            "it stops before the agent list (no agents and no closing '*** Done ***' line)",
        )
    return translate("captured", "it has rocminfo's first line and nothing after it")


def _amd_smi_cut(text: str) -> str | None:
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    table = [line for line in lines if line.startswith(("|", "+"))]
    if not re.search(r"^\|\s*\d{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d", text, re.M):
        return translate("captured", "its table stops before the first GPU row")
    if table and not re.match(r"^\+[-=+]+\+$", table[-1]):
        return translate("captured", "its table stops without the closing border line")
    return None


def _looks_cut(kind: CapturedKind, text: str, json_cut: bool) -> str | None:
    """Why ``text`` looks cut short, or None when it looks whole."""
    if json_cut:
        return translate("captured", "its JSON stops before the document is complete")
    if kind is CapturedKind.ROCMINFO:
        return _rocminfo_cut(text)
    if kind is CapturedKind.ROCM_SMI_TEXT:
        if "ROCm System Management Interface" in text and "End of ROCm SMI Log" not in text:
            return translate(
                "captured", "it stops before rocm-smi's closing 'End of ROCm SMI Log' line"
            )
        return None
    if kind is CapturedKind.AMD_SMI_TEXT:
        return _amd_smi_cut(text)
    if kind is CapturedKind.COLLECT_ENV:
        # Pastes are often trimmed after the GPU part; only a missing GPU part counts.
        for line in ("GPU models and configuration", "HIP runtime version"):
            if f"{line}:" not in text:
                return translate("captured", "it stops before collect_env's '{line}' line").format(
                    line=line
                )
        return None
    if kind in _LSPCI_KINDS:
        cut = lspci_parse.last_line_cut(text)
        if not cut:
            return None
        return translate("captured", "its last line stops mid-line ({text})").format(
            text=repr(cut[:60])
        )
    return None


def _drop_partial_last_line(text: str) -> str:
    """Text without its last line (the input stopped inside it)."""
    return text[: text.rindex("\n") + 1] if "\n" in text.rstrip("\n") else text


# ---- telling machines apart --------------------------------------------------------------


@dataclass(frozen=True)
class _Part:
    label: str  # "text 2 (amd-smi)"
    kind: CapturedKind
    acc: _Acc
    cut: str | None


@dataclass(frozen=True)
class _Gpu:
    """One GPU as one capture saw it, with what the PCI table adds for comparing."""

    gpu: GpuInfo
    pci_id: str | None
    gfx: frozenset[str]
    integrated: bool | None
    label: str  # "Radeon RX 7900 XTX (gfx1100)"


def _gpu(gpu: GpuInfo, table: pci_ids.PciTable) -> _Gpu:
    gfx: set[str] = {gpu.gfx} if gpu.gfx else set()
    entry = table.lookup(gpu.pci_id)
    if entry is None and gpu.pci_id is None and gpu.name:
        entry = table.entry_by_name(gpu.name)
    if entry and entry.gfx:
        gfx.add(entry.gfx)
    integrated = gpu.integrated
    if integrated is None and entry is not None:
        integrated = entry.integrated
    name = gpu.name.lstrip(".").strip() or (entry.name if entry else "")
    name = name or translate("captured", "a GPU")
    what = ", ".join(sorted(gfx)) or gpu.pci_id or translate("captured", "model unknown")
    return _Gpu(gpu, gpu.pci_id, frozenset(gfx), integrated, f"{name} ({what})")


def _slot(gpu: _Gpu) -> str | None:
    """The PCI slot without its domain ("03:00.0"): rocminfo's BDFID carries no domain."""
    return gpu.gpu.bdf[-7:].lower() if gpu.gpu.bdf else None


def _major(gfx: str) -> int | None:
    version = parse_gfx(gfx)
    return version.major if version else None


def _agree(a: _Gpu, b: _Gpu) -> bool | None:
    """True: the same GPU model; False: surely two different ones; None: cannot tell (also
    when the gfx targets differ within one generation: HSA_OVERRIDE_GFX_VERSION changes what
    rocminfo and torch report)."""
    if a.pci_id and b.pci_id:
        return a.pci_id == b.pci_id
    if a.gfx and b.gfx:
        if a.gfx & b.gfx:
            return True
        if {_major(g) for g in a.gfx} & {_major(g) for g in b.gfx}:
            return None
        return False
    return None


def _listed(gpus: Iterable[_Gpu]) -> str:
    counts: dict[str, int] = {}
    for g in gpus:
        counts[g.label] = counts.get(g.label, 0) + 1
    return ", ".join(f"{n}x {label}" if n > 1 else label for label, n in counts.items())


def _same_version(a: str, b: str) -> bool:
    pa, pb = a.split("."), b.split(".")
    n = min(len(pa), len(pb))
    return pa[:n] == pb[:n]


_DKMS_RE = re.compile(r"^\d+\.\d+\.\d+$")


def _fact_differences(p: _Part, q: _Part) -> list[str]:
    a, b = p.acc, q.acc
    found = []
    if a.host_name and b.host_name and a.host_name.lower() != b.host_name.lower():
        found.append(
            translate("captured", "host name {a} in {p}, {b} in {q}").format(
                a=a.host_name, p=p.label, b=b.host_name, q=q.label
            )
        )
    rocm_a, rocm_b = a.installed_rocm, b.installed_rocm
    if rocm_a and rocm_b and not _same_version(rocm_a, rocm_b):
        found.append(
            translate("captured", "ROCm {a} in {p}, {b} in {q}").format(
                a=rocm_a, p=p.label, b=rocm_b, q=q.label
            )
        )
    if a.runtime and b.runtime and a.runtime != b.runtime:
        found.append(
            translate("captured", "HSA runtime {a} in {p}, {b} in {q}").format(
                a=a.runtime, p=p.label, b=b.runtime, q=q.label
            )
        )
    da, db = a.driver_version or "", b.driver_version or ""
    if _DKMS_RE.match(da) and _DKMS_RE.match(db) and da != db:
        found.append(
            translate("captured", "amdgpu driver {a} in {p}, {b} in {q}").format(
                a=da, p=p.label, b=db, q=q.label
            )
        )
    return found


def _missing_from(xs: list[_Gpu], ys: list[_Gpu]) -> list[_Gpu]:
    """The GPUs of ``xs`` (a capture) that ``ys`` (a full listing) cannot be showing: none of
    ys is the same model, or, when every GPU of ys has its PCI slot, none in that slot is."""
    slotted = all(_slot(y) for y in ys)
    missing = []
    for x in xs:
        if x.integrated is True:
            continue  # not every tool lists integrated GPUs
        same_slot = [y for y in ys if _slot(y) == _slot(x)]
        candidates = same_slot if _slot(x) and slotted else ys
        if all(_agree(x, y) is False for y in candidates):
            at = translate("captured", "{gpu} at {slot}").format(gpu=x.label, slot=x.gpu.bdf)
            missing.append(replace(x, label=at) if x.gpu.bdf else x)
    return missing


def _gpu_differences(p: _Part, q: _Part, table: pci_ids.PciTable) -> list[str]:
    gp = [_gpu(g, table) for g in p.acc.gpus]
    gq = [_gpu(g, table) for g in q.acc.gpus]
    found = []
    by_slot = {_slot(g): g for g in gq if _slot(g)}
    for g in gp:
        h = by_slot.get(_slot(g)) if _slot(g) else None
        if h is not None and _agree(g, h) is False:
            found.append(
                translate("captured", "PCI slot {slot} holds {a} in {p} but {b} in {q}").format(
                    slot=g.gpu.bdf, a=g.label, p=p.label, b=h.label, q=q.label
                )
            )
    if found:
        return found
    level_p, level_q = _COVERAGE.get(p.kind, 0), _COVERAGE.get(q.kind, 0)
    sides = (((p, gp, level_p), (q, gq, level_q)), ((q, gq, level_q), (p, gp, level_p)))
    for (x, xs, lx), (y, ys, ly) in sides:
        if ly == 0 or ly < lx or y.cut or not ys:
            continue
        missing = _missing_from(xs, ys)
        if missing:
            found.append(
                translate("captured", "{x} shows {gpus}, which the full list of {y} lacks").format(
                    x=x.label, gpus=_listed(missing), y=y.label
                )
            )
    if found:
        return found
    if level_p == level_q >= 1 and not p.cut and not q.cut:
        # Two full listings of the same scope list the same number of discrete GPUs.
        np_ = sum(1 for g in gp if g.integrated is False)
        nq = sum(1 for g in gq if g.integrated is False)
        if np_ and nq and np_ != nq:
            found.append(
                translate(
                    "captured", "{p} lists {np} discrete GPU(s), {q} lists {nq}: {a} against {b}"
                ).format(
                    p=p.label,
                    np=np_,
                    q=q.label,
                    nq=nq,
                    a=_listed(g for g in gp if g.integrated is False),
                    b=_listed(g for g in gq if g.integrated is False),
                )
            )
            return found
    discrete_p = [g for g in gp if g.integrated is not True]
    discrete_q = [g for g in gq if g.integrated is not True]
    if (
        discrete_p
        and discrete_q
        and all(_agree(g, h) is False for g in discrete_p for h in discrete_q)
    ):
        found.append(
            translate("captured", "{p} shows {a} and {q} shows {b}: no GPU in common").format(
                p=p.label, a=_listed(discrete_p), q=q.label, b=_listed(discrete_q)
            )
        )
    return found


def _differences(p: _Part, q: _Part, table: pci_ids.PciTable) -> list[str]:
    return _fact_differences(p, q) + _gpu_differences(p, q, table)


def _group(parts: list[_Part], table: pci_ids.PciTable) -> tuple[list[list[_Part]], list[str]]:
    """Parts grouped by machine (a part joins the first group it contradicts in nothing), and
    the differences that kept groups apart."""
    groups: list[list[_Part]] = []
    reasons: list[str] = []
    for part in parts:
        found: list[str] = []
        for group in groups:
            diffs = [d for other in group for d in _differences(other, part, table)]
            if not diffs:
                group.append(part)
                break
            found.extend(d for d in diffs if d not in found)
        else:
            groups.append([part])
            reasons.extend(d for d in found if d not in reasons)
    return groups, reasons


# ---- putting it together -----------------------------------------------------------------


def _fold(accs: Iterable[_Acc]) -> _Acc:
    out = _Acc()
    for acc in accs:
        out.gpus.extend(acc.gpus)
        out.notes.extend(n for n in acc.notes if n not in out.notes)
        out.os = out.os or acc.os
        out.os_version = out.os_version or acc.os_version
        out.rocm_version = out.rocm_version or acc.rocm_version
        out.driver = out.driver or acc.driver
        out.kfd_error = out.kfd_error or acc.kfd_error
        out.hsa_status = out.hsa_status or acc.hsa_status
        out.wsl = out.wsl or acc.wsl
        out.probe = out.probe or acc.probe
    return out


def _machine(
    parts: list[_Part], rocm_version: str | None, os_name: str | None, extra: Sequence[str] = ()
) -> Captured:
    acc = _fold(p.acc for p in parts)
    notes = [*extra, *acc.notes]
    if acc.wsl:
        notes.append(
            translate("captured", "WSL2: the GPU is reached through the Windows driver (/dev/dxg).")
        )
    system = SystemInfo(
        os=os_name or acc.os or "linux",
        os_version=acc.os_version,
        rocm_version=rocm_version or acc.rocm_version,
        driver=acc.driver,
        gpus=merge_gpus(acc.gpus),
        notes=tuple(notes),
    )
    host = HostFacts(kfd_error=acc.kfd_error, hsa_status=acc.hsa_status, wsl=acc.wsl)
    kinds = tuple(p.kind for p in parts)
    return Captured(system, host, kinds, acc.probe, tuple(notes), (), tuple(p.label for p in parts))


def _common(values: Iterable[str | None]) -> str | None:
    """The value when every machine has the same one (an unknown counts as different)."""
    found = set(values)
    return found.pop() if len(found) == 1 else None


def _label(index: int, total: int, labels: Sequence[str] | None) -> str:
    if labels is not None and index <= len(labels) and labels[index - 1]:
        return labels[index - 1]
    if total > 1:
        return translate("captured", "text {index}").format(index=index)
    return translate("captured", "the pasted text")


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _parts_of(text: str, base: str) -> list[_Part]:
    """The recognised captures in one input (notes about the input go with the first); a
    PanelError when none is recognised."""
    notes: list[str] = []
    if len(text) > MAX_CAPTURE_CHARS:
        text = text[:MAX_CAPTURE_CHARS]
        notes.append(
            translate(
                "captured", "{input} is larger than {mib} MiB; only its first {mib} MiB were read."
            ).format(input=_capitalised(base), mib=MAX_CAPTURE_CHARS // 2**20)
        )
    text = clean_text(text)
    if looks_binary(text):
        raise PanelError(
            translate(
                "captured",
                "{input} is not output rocmpanel recognises: it looks like binary "
                "data, not text. Paste the output of {tools}.",
            ).format(input=_capitalised(base), tools=translate("captured", KNOWN_KINDS_TEXT)),
            repr(text[:200]),
        )
    pieces = split_input(text) or [(text, None)]
    ends_mid_line = bool(text) and not text.endswith("\n")
    found: list[tuple[CapturedKind, str, str | None, Any, bool, bool]] = []
    skipped = 0
    for n, (piece, host) in enumerate(pieces, 1):
        if len(found) >= MAX_CAPTURES or n > 8 * MAX_CAPTURES:
            notes.append(
                translate(
                    "captured",
                    "{input} holds more than {count} outputs; only the first ones were read.",
                ).format(input=_capitalised(base), count=MAX_CAPTURES)
            )
            break
        data, json_cut = _json(piece)
        kind = _json_kind(data) if data is not None else detect_kind(piece)
        if kind is None:
            skipped += sum(1 for line in piece.splitlines() if line.strip())
            continue
        found.append((kind, piece, host, data, json_cut, ends_mid_line and n == len(pieces)))
    if not found:
        hint = ""
        if _json(text)[1]:
            hint = " " + translate("captured", "It looks like JSON that was cut short.")
        elif lspci_parse.last_line_cut(text):
            hint = " " + translate(
                "captured", "Its last line looks like an lspci line that was cut short."
            )
        raise PanelError(
            translate(
                "captured",
                "{input} is not output rocmpanel recognises.{hint} Paste the output of {tools}.",
            ).format(
                input=_capitalised(base), hint=hint, tools=translate("captured", KNOWN_KINDS_TEXT)
            ),
            text[:200],
        )
    if skipped >= 3:
        notes.append(
            translate(
                "captured", "{input}: {count} lines that no known tool printed were skipped."
            ).format(input=_capitalised(base), count=skipped)
        )
    parts: list[_Part] = []
    for k, (kind, piece, host, data, json_cut, last_cut) in enumerate(found, 1):
        if sum(len(p.acc.gpus) for p in parts) > 4 * MAX_GPUS:
            parts[-1].acc.notes.append(
                translate(
                    "captured",
                    "{input} lists more than {count} GPUs; the outputs after part {part} were "
                    "not read.",
                ).format(input=_capitalised(base), count=4 * MAX_GPUS, part=k - 1)
            )
            break
        label = (
            translate("captured", "{input}, part {part} ({kind})").format(
                input=base, part=k, kind=kind.value
            )
            if len(found) > 1
            else f"{base} ({kind.value})"
        )
        cut = _looks_cut(kind, piece, json_cut)
        acc = _Acc(host_name=host)
        acc.notes.extend(notes if k == 1 else ())
        # A line cut in the middle ("Name: gfx11") would give wrong values: leave it out.
        parsed = _drop_partial_last_line(piece) if cut and last_cut and not json_cut else piece
        _parse_one(kind, parsed, acc, data)
        if len(acc.gpus) > MAX_GPUS:
            acc.notes.append(
                translate(
                    "captured", "{input} lists {count} GPUs; only the first {most} were read."
                ).format(input=_capitalised(label), count=len(acc.gpus), most=MAX_GPUS)
            )
            del acc.gpus[MAX_GPUS:]
        if cut:
            acc.notes.append(
                translate(
                    "captured",
                    "{input} looks cut short: {why}. What it shows is used, but "
                    "GPUs or values may be missing; paste the whole output.",
                ).format(input=_capitalised(label), why=cut)
            )
        parts.append(_Part(label, kind, acc, cut))
    return parts


def analyse_texts(
    texts: Sequence[str],
    rocm_version: str | None = None,
    os_name: str | None = None,
    labels: Sequence[str] | None = None,
) -> Captured:
    """Recognise and parse each text (and each tool output inside one), merge those of one
    machine, and keep different machines apart (see :class:`Captured`).

    ``labels`` names the inputs in notes (e.g. the file names); default "text N"."""
    parts: list[_Part] = []
    for index, text in enumerate(texts, 1):
        if sum(len(p.acc.gpus) for p in parts) > 4 * MAX_GPUS:
            parts[-1].acc.notes.append(
                translate(
                    "captured",
                    "More than {count} GPUs were listed; inputs from {input} on were not read.",
                ).format(count=4 * MAX_GPUS, input=_label(index, len(texts), labels))
            )
            break
        parts.extend(_parts_of(text, _label(index, len(texts), labels)))
    table = pci_ids.load_table()
    groups, reasons = _group(parts, table)
    if len(groups) == 1:
        return _machine(groups[0], rocm_version, os_name)
    summary = "; ".join(reasons[:6]) + ("; ..." if len(reasons) > 6 else "")
    listing = "; ".join(
        translate("captured", "machine {number}: {inputs}").format(
            number=i, inputs=", ".join(p.label for p in group)
        )
        for i, group in enumerate(groups, 1)
    )
    warning = translate(
        "captured",
        "These captures come from {count} different machines (or from one machine at "
        "different times), so they are not merged and each is diagnosed on its own: "
        "{summary}. ({listing}.)",
    ).format(count=len(groups), summary=summary, listing=listing)
    machines = tuple(
        _machine(
            group,
            rocm_version,
            os_name,
            [
                translate(
                    "captured",
                    "Machine {number} of {count}: diagnosed from {inputs} only; {others} "
                    "come from a different machine.",
                ).format(
                    number=i,
                    count=len(groups),
                    inputs=", ".join(p.label for p in group),
                    others=", ".join(p.label for p in parts if all(p is not q for q in group)),
                )
            ],
        )
        for i, group in enumerate(groups, 1)
    )
    every = _fold(p.acc for p in parts)
    notes = [warning]
    for i, machine in enumerate(machines, 1):
        notes.extend(
            translate("captured", "Machine {number}: {note}").format(number=i, note=n)
            for n in machine.notes[1:]
        )
    system = SystemInfo(
        os=os_name or _common(m.system.os for m in machines) or machines[0].system.os,
        os_version=_common(m.system.os_version for m in machines),
        rocm_version=rocm_version or _common(m.system.rocm_version for m in machines),
        driver=_common(m.system.driver for m in machines),
        gpus=tuple(g for m in machines for g in m.system.gpus),
        notes=tuple(notes),
    )
    host = HostFacts(kfd_error=every.kfd_error, hsa_status=every.hsa_status, wsl=every.wsl)
    kinds = tuple(p.kind for p in parts)
    return Captured(
        system, host, kinds, every.probe, tuple(notes), machines, tuple(p.label for p in parts)
    )
