"""Finding a machine's GPUs: every source read, then merged into one record per GPU.

Linux sources, best first: rocminfo (what ROCm itself sees), KFD topology, DRM sysfs with
amdgpu's IP discovery table, and ``lspci -nn`` as a last resort; Windows: PowerShell CIM +
registry, and hipInfo. Records are matched by PCI slot (BDF), then KFD node, then PCI id or
gfx target, and last by a name that each side lists once (CIM knows the PCI id, hipInfo the
gfx target, and pasted CIM text has no slot); each field is taken from the source that
knows it best. A GPU no source names a target for gets its gfx target and family name from
the PCI id table (:mod:`rocmpanel.machine.pci_ids`).

:func:`rocmpanel.machine.inventory.detect_inventory` is the entry point that also gathers
the host facts; ``detect`` is the GPU part (live, or a captured /sys tree), and
``detect_system`` its stable short form for callers that need only the SystemInfo.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rocmpanel.base import subproc
from rocmpanel.machine import drm_sysfs, kfd_topology, pci_ids, rocm_version
from rocmpanel.machine.gpu_model import GpuInfo, SystemInfo
from rocmpanel.machine.parsers import lspci as lspci_parse
from rocmpanel.machine.parsers.rocminfo import RocminfoReport, gpus_from_rocminfo, parse_rocminfo
from rocmpanel.machine.sysfs import printable

if TYPE_CHECKING:
    from rocmpanel.machine.windows_gpu import WindowsGpuQuery

# For each field, the sources in the order they are trusted.
_NAME_ORDER = (
    "rocminfo",
    "amd-smi",
    "rocm-smi",
    "hipinfo",
    "collect_env",
    "cim",
    "drm",
    "lspci",
    "kfd",
)
_GFX_ORDER = ("rocminfo", "kfd", "ip_discovery", "hipinfo", "collect_env", "amd-smi", "rocm-smi")
# CIM's VRAM is the registry's exact byte count (or AdapterRAM below its cap); hipInfo's
# is rounded to 0.01 GiB.
_VRAM_ORDER = ("drm", "kfd", "rocm-smi", "amd-smi", "rocminfo", "cim", "hipinfo")
_PCI_ORDER = ("drm", "kfd", "lspci", "rocminfo", "rocm-smi", "amd-smi", "cim")
_BDF_ORDER = ("drm", "kfd", "lspci", "rocminfo", "rocm-smi", "amd-smi", "hipinfo", "cim")


@dataclass(frozen=True)
class Detection:
    """A detection run: the merged system, and what rocminfo said (errors included)."""

    system: SystemInfo
    rocminfo: RocminfoReport | None = None
    live: bool = True  # False when reading a captured tree or pasted text
    notes: tuple[str, ...] = field(default=())


def _rank(record: GpuInfo, order: tuple[str, ...]) -> int:
    source = record.sources[0] if record.sources else ""
    return order.index(source) if source in order else len(order)


def _pick(records: list[GpuInfo], attr: str, order: tuple[str, ...]) -> object:
    for record in sorted(records, key=lambda r: _rank(r, order)):
        value = getattr(record, attr)
        if value not in (None, ""):
            return value
    return None


def _domainless(record: GpuInfo) -> bool:
    """A CIM record's slot comes from LocationInformation, which has no PCI domain."""
    return record.sources[:1] == ("cim",)


def _name_key(record: GpuInfo) -> tuple[str, str]:
    return (record.sources[0] if record.sources else "", " ".join(record.name.lower().split()))


def _integrated(record: GpuInfo, table: pci_ids.PciTable) -> bool | None:
    if record.integrated is not None:
        return record.integrated
    entry = table.lookup(record.pci_id)
    return entry.integrated if entry else None


def _same_unique_name(
    group: list[GpuInfo],
    rec: GpuInfo,
    counts: Mapping[tuple[str, str], int],
    table: pci_ids.PciTable,
) -> bool:
    """The last resort: the same name, listed once by each source (two identical cards stay
    two), and never an integrated GPU with a discrete one."""
    key = _name_key(rec)
    if not key[1] or counts.get(key, 0) != 1:
        return False
    kinds = {_integrated(r, table) for r in [*group, rec]} - {None}
    if len(kinds) > 1:
        return False
    return all(_name_key(g)[1] == key[1] and counts.get(_name_key(g), 0) == 1 for g in group)


def _matches(
    group: list[GpuInfo],
    rec: GpuInfo,
    counts: Mapping[tuple[str, str], int] | None = None,
    table: pci_ids.PciTable | None = None,
) -> bool:
    if any(rec.sources[0] in g.sources for g in group if rec.sources):
        return False  # one source never reports the same GPU twice
    bdfs = {g.bdf for g in group if g.bdf}
    if rec.bdf and bdfs:
        if _domainless(rec) or any(_domainless(g) for g in group if g.bdf):
            return rec.bdf[-7:] in {b[-7:] for b in bdfs}  # bus:device.function
        return rec.bdf in bdfs
    nodes = {g.kfd_node for g in group if g.kfd_node is not None}
    if rec.kfd_node is not None and nodes:
        return rec.kfd_node in nodes
    ids = {g.pci_id for g in group if g.pci_id}
    if rec.pci_id and ids:
        return rec.pci_id in ids
    gfxs = {g.gfx for g in group if g.gfx}
    if rec.gfx and gfxs:
        return rec.gfx in gfxs
    if counts is None or table is None:
        return False
    return _same_unique_name(group, rec, counts, table)


def merge_gpus(
    records: Iterable[GpuInfo], table: pci_ids.PciTable | None = None
) -> tuple[GpuInfo, ...]:
    """One GpuInfo per physical GPU from single-source records, completed from the PCI table."""
    table = table or pci_ids.load_table()
    recs = [
        replace(
            rec,
            pci_id=rec.pci_id.lower() if rec.pci_id else None,
            bdf=rec.bdf.lower() if rec.bdf else None,
        )
        for rec in records
    ]
    counts = Counter(_name_key(rec) for rec in recs)
    groups: list[list[GpuInfo]] = []
    for rec in recs:
        for group in groups:
            if _matches(group, rec, counts, table):
                group.append(rec)
                break
        else:
            groups.append([rec])
    merged = [_merge_group(g, table) for g in groups]
    indexed = list(enumerate(merged))
    indexed.sort(key=lambda p: (p[1].kfd_node is None, p[1].kfd_node or 0, p[0]))
    return tuple(g for _, g in indexed)


def _merge_group(group: list[GpuInfo], table: pci_ids.PciTable) -> GpuInfo:
    sources: list[str] = []
    for rec in group:
        sources.extend(s for s in rec.sources if s not in sources)
    pci_id = _pick(group, "pci_id", _PCI_ORDER)
    entry = table.lookup(str(pci_id) if pci_id else None)
    name = _pick(group, "name", _NAME_ORDER) or (entry.name if entry else None)
    if entry is None and not _pick(group, "gfx", _GFX_ORDER):
        entry = table.entry_by_name(str(name) if name else None)
    gfx = _pick(group, "gfx", _GFX_ORDER) or (entry.gfx if entry else None)
    integrated = entry.integrated if entry else _pick(group, "integrated", _NAME_ORDER)
    if entry and "pci-table" not in sources and (not _pick(group, "gfx", _GFX_ORDER)):
        sources.append("pci-table")
    name = printable(str(name)) if name else None  # no control bytes from a tool or a file
    if not name:
        name = f"AMD GPU ({gfx or pci_id or 'unknown'})"
    return GpuInfo(
        name=name,
        gfx=str(gfx) if gfx else None,
        pci_id=str(pci_id) if pci_id else None,
        bdf=_pick(group, "bdf", _BDF_ORDER),  # type: ignore[arg-type]
        vram_bytes=_pick(group, "vram_bytes", _VRAM_ORDER),  # type: ignore[arg-type]
        integrated=integrated if isinstance(integrated, bool) else None,
        sources=tuple(sources),
        drm_card=_pick(group, "drm_card", ("drm",)),  # type: ignore[arg-type]
        kfd_node=_pick(group, "kfd_node", ("kfd", "rocminfo")),  # type: ignore[arg-type]
        hip_index=_pick(group, "hip_index", ("hipinfo",)),  # type: ignore[arg-type]
    )


def run_rocminfo(timeout: float = 30.0) -> str | None:
    """rocminfo's stdout and stderr together (its errors go to stdout or stderr), or None
    when the command does not exist."""
    exe = shutil.which("rocminfo") or (
        "/opt/rocm/bin/rocminfo" if Path("/opt/rocm/bin/rocminfo").is_file() else None
    )
    if exe is None:
        return None
    try:
        done = subproc.run(
            [exe],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            errors="replace",
        )
    except subprocess.TimeoutExpired:
        return f"rocminfo did not finish within {timeout:.0f} s"
    except OSError as exc:
        return f"rocminfo could not start: {exc}"
    return (done.stdout or "") + (done.stderr or "")


def _drm_devices(root: Path) -> list[drm_sysfs.DrmDevice]:
    """The DRM devices of a /sys-like root, a captured device directory, or a folder of
    captured device directories."""
    if (root / "class").is_dir():
        return drm_sysfs.scan_drm(root)
    if drm_sysfs.is_device_dir(root):
        dev = drm_sysfs.read_device_dir(root)
        return [dev] if dev else []
    try:
        subdirs = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return []
    found = (drm_sysfs.read_device_dir(p) for p in subdirs if drm_sysfs.is_device_dir(p))
    return [d for d in found if d is not None]


def detect(
    *,
    sysfs_root: Path | str = "/sys",
    rocminfo_text: str | None = None,
    lspci_text: str | None = None,
    os_name: str | None = None,
    env: Mapping[str, str] | None = None,
    opt_root: Path | str = "/opt",
    etc_root: Path | str = "/etc",
    run_tools: bool | None = None,
) -> Detection:
    """Detect GPUs, ROCm version, driver and OS. With a ``sysfs_root`` other than /sys
    (a captured tree) nothing of the live machine is read or run unless ``run_tools``."""
    root = Path(sysfs_root)
    live = root == Path("/sys")
    run = live if run_tools is None else run_tools
    env = os.environ if env is None else env
    os_name = os_name or ("windows" if platform.system() == "Windows" else "linux")
    if os_name == "windows" and live:
        return _detect_windows(env)
    records: list[GpuInfo] = []
    notes: list[str] = []
    if rocminfo_text is None and run:
        rocminfo_text = run_rocminfo()
    report = parse_rocminfo(rocminfo_text) if rocminfo_text is not None else None
    if report is not None:
        records.extend(gpus_from_rocminfo(report))
    records.extend(kfd_topology.gpus_from_kfd(kfd_topology.read_nodes(root)))
    drm_devices = _drm_devices(root)
    records.extend(drm_sysfs.gpus_from_drm(drm_devices))
    records.extend(drm_sysfs.gpus_from_ip_discovery(drm_devices))
    if not records:
        if lspci_text is None and run:
            lspci_text = lspci_parse.run_lspci()
        if lspci_text:
            records.extend(lspci_parse.parse_lspci(lspci_text))
            notes.append("GPUs listed by lspci only: the amdgpu driver may not be bound.")
    version = None
    driver = rocm_version.amdgpu_driver(root)
    if report is not None and report.rock_version and driver in (None, "amdgpu"):
        driver = f"amdgpu {report.rock_version}"
    if driver is None and any(d.driver == "amdgpu" for d in drm_devices):
        driver = "amdgpu"
    if live:
        version, _ = rocm_version.rocm_version_linux(env, opt_root)
    system = SystemInfo(
        os="linux",
        os_version=rocm_version.os_description(etc_root) if live else None,
        rocm_version=version,
        driver=driver,
        gpus=merge_gpus(records),
        notes=tuple(notes),
    )
    return Detection(system=system, rocminfo=report, live=live, notes=tuple(notes))


def _detect_windows(env: Mapping[str, str], query: WindowsGpuQuery | None = None) -> Detection:
    """The Windows sources: CIM + registry, then hipInfo (``query`` is a fake in tests)."""
    from rocmpanel.machine.windows_gpu import WindowsGpuQuery, parse_hipinfo

    query = query or WindowsGpuQuery(env=env)
    gpus, notes = query.controllers()
    hip_text = query.hipinfo()
    if hip_text:
        gpus.extend(parse_hipinfo(hip_text))
    system = SystemInfo(
        os="windows",
        os_version=rocm_version.os_description(),
        rocm_version=rocm_version.hip_sdk_version(env),
        driver=None,
        gpus=merge_gpus(gpus),
        notes=tuple(notes),
    )
    return Detection(system=system, notes=tuple(notes))


def detect_system(
    *,
    sysfs_root: Path | str = "/sys",
    rocminfo_text: str | None = None,
    lspci_text: str | None = None,
    os_name: str | None = None,
) -> SystemInfo:
    """This machine (or a captured one) as a SystemInfo. Stable signature: the PyTorch tab
    and others call it to learn each GPU's gfx target. Blocking (rocminfo can take a
    second): call it off the GUI thread."""
    return detect(
        sysfs_root=sysfs_root,
        rocminfo_text=rocminfo_text,
        lspci_text=lspci_text,
        os_name=os_name,
    ).system
