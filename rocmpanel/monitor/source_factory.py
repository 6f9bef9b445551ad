"""Picks the telemetry sources for this platform, so nothing else branches on it.

- Windows, live: PDH counters for GPUs and processes (one shared query), the adapters
  named, filtered to AMD and given VRAM totals through DXGI (``pdh_source.named_adapters``);
  without pywin32 or PDH, no GPU source and no process list, and the note says why and
  what to do; without DXGI, every PDH adapter under its LUID, said in the note.
- Linux, any other OS, or a captured tree anywhere: amdgpu sysfs; when the live /sys
  shows no amdgpu device and amdsmi imports, amdsmi; processes from DRM fdinfo + KFD.
- No GPU found: the null source, whose reason the Monitor shows next to host telemetry.

``gpus``: the GPUs to read (the app's machine inventory, as identities), or None to find
them in the tree (``rocmpanel telemetry``, captured trees). A captured tree is never
mixed with the live machine's amdsmi or PDH.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmpanel.base.frozen import own_python
from rocmpanel.base.i18n import translate
from rocmpanel.jobs import spec
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.monitor.amdsmi_source import AmdSmiSource
from rocmpanel.monitor.dxgi import AdapterLister, list_adapters
from rocmpanel.monitor.fdinfo_source import FdinfoScanner
from rocmpanel.monitor.pdh_source import (
    NamedAdapter,
    PdhGpuSource,
    PdhProcessSource,
    PdhQuery,
    named_adapters,
    pdh_error_text,
)
from rocmpanel.monitor.sample import GpuIdentity
from rocmpanel.monitor.source import GpuSource, NullGpuSource, NullProcessSource, ProcessSource
from rocmpanel.monitor.sysfs_source import SysfsSource, discover_gpus, gpus_for

log = logging.getLogger(__name__)

LIVE_SYSFS = Path("/sys")


@dataclass(frozen=True)
class SourceSet:
    """The sources one collector reads; ``note`` says what is missing and why ("" if
    nothing is)."""

    gpus: GpuSource
    processes: ProcessSource
    note: str = ""


def identity_of(gpu: GpuInfo) -> GpuIdentity:
    """A GPU of the machine inventory as the Monitor names it (key: its PCI slot)."""
    return GpuIdentity(
        key=gpu.bdf or gpu.drm_card or gpu.name,
        card=gpu.drm_card,
        pci_slot=gpu.bdf,
        pci_id=gpu.pci_id,
        name=gpu.name,
        gfx=gpu.gfx,
    )


# The seams of the Windows sources (tests replace them): the PDH query and DXGI's adapters.
open_pdh_query: Callable[[], PdhQuery] = PdhQuery
dxgi_adapters: AdapterLister = list_adapters


def console_python(executable: str | None = None) -> str:
    """The interpreter a user can run pip with: python.exe, not the panel's pythonw.exe
    (which has no console to show pip's output)."""
    return spec.console_python(executable or own_python("win32"), "win32", must_exist=False)


def pdh_unavailable(exc: BaseException, executable: str | None = None) -> str:
    """Why the Windows GPU counters cannot be read, and what to do, for the Monitor."""
    python = console_python(executable)
    if isinstance(exc, ModuleNotFoundError):
        return translate(
            "source_factory",
            "Windows GPU counters need the pywin32 package, which is missing: run "
            "`{python} -m pip install pywin32` (or reinstall rocmpanel), then restart the "
            "panel.",
        ).format(python=python)
    if isinstance(exc, ImportError):  # installed but broken: "DLL load failed ..."
        return translate(
            "source_factory",
            "Windows GPU counters need the pywin32 package, which could not be loaded "
            "({error}): run `{python} -m pip install --force-reinstall pywin32`, then restart "
            "the panel.",
        ).format(error=exc, python=python)
    return translate(
        "source_factory",
        "Windows GPU counters (PDH) could not be opened: {error}. They need Windows 10 "
        "version 1709 or later and a WDDM 2.0 display driver: update Windows and the AMD "
        "graphics driver. If both are current, Windows' counter registry may be damaged: "
        "`lodctr /R` in an administrator terminal rebuilds it.",
    ).format(error=pdh_error_text(exc))


def open_pdh_source(gpus: Sequence[GpuIdentity] | None) -> tuple[GpuSource, str]:
    """The Windows GPU source: PDH counters, the adapters named through DXGI."""
    try:
        query = open_pdh_query()
    except Exception as exc:  # pywin32 missing, or PDH refused the counters
        log.info("no PDH GPU counters", exc_info=True)
        reason = pdh_unavailable(exc)
        return NullGpuSource(reason), reason
    try:
        adapters = dxgi_adapters()
    except Exception as exc:  # OSError from DXGI; ctypes errors on an odd system
        log.info("no DXGI adapter list", exc_info=True)
        note = translate(
            "source_factory",
            "GPU names and VRAM totals are not available (DXGI: {error}): every display "
            "adapter Windows lists is shown, named by its adapter id (LUID).",
        ).format(error=exc)
        return PdhGpuSource(query), note
    named, note = named_adapters(adapters, gpus or ())
    if not named:
        query.close()
        listed = ", ".join(a.description.strip() or a.pci_id for a in adapters) or translate(
            "source_factory", "none"
        )
        reason = translate(
            "source_factory", "No AMD GPU found: Windows lists these display adapters: {adapters}."
        ).format(adapters=listed)
        return NullGpuSource(reason), reason

    def relist() -> tuple[list[NamedAdapter], set[tuple[int, int]]]:
        again = dxgi_adapters()
        return named_adapters(again, gpus or ())[0], {a.luid for a in again}

    luids = {a.luid for a in adapters}
    return PdhGpuSource(query, named, listed=luids, relist=relist), note


def open_gpu_source(
    sysfs_root: Path,
    gpus: Sequence[GpuIdentity] | None,
    *,
    fallbacks: bool,
    platform: str,
) -> tuple[GpuSource, str]:
    """The GPU source and a note on what is missing."""
    if platform == "win32" and fallbacks:
        return open_pdh_source(gpus)
    note = ""
    if gpus is None:
        source = SysfsSource(discover_gpus(sysfs_root))
    else:
        found, missing = gpus_for(gpus, sysfs_root)
        source = SysfsSource(found)
        if missing:
            listed = ", ".join(g.name or g.key for g in missing)
            note = translate(
                "source_factory",
                "No amdgpu device in sysfs for {gpus} (is the amdgpu driver bound?).",
            ).format(gpus=listed)
    if source.gpus:
        return source, note
    if fallbacks:
        amdsmi = AmdSmiSource.create(gpus or ())
        if amdsmi is not None and amdsmi.identities():
            return amdsmi, ""
    if gpus is not None and not gpus:
        reason = translate("source_factory", "No AMD GPU found: the machine detection lists none.")
    else:
        reason = translate(
            "source_factory", "No AMD GPU found: no amdgpu device under {folder}."
        ).format(folder=sysfs_root / "class" / "drm")
    reason = f"{reason} {note}".strip()
    return NullGpuSource(reason), reason


def open_sources(
    sysfs_root: Path | str = LIVE_SYSFS,
    proc_root: Path | str = "/proc",
    *,
    gpus: Sequence[GpuIdentity] | None = None,
    processes: bool = True,
    fallbacks: bool | None = None,
    platform: str = sys.platform,
) -> SourceSet:
    """The sources for this platform; ``fallbacks`` (default: only for the live /sys)
    allows amdsmi and PDH."""
    root = Path(sysfs_root)
    if fallbacks is None:
        fallbacks = root == LIVE_SYSFS
    gpu_source, note = open_gpu_source(root, gpus, fallbacks=fallbacks, platform=platform)
    process_source: ProcessSource
    if not processes:
        process_source = NullProcessSource()
    elif isinstance(gpu_source, PdhGpuSource):
        process_source = PdhProcessSource(gpu_source.query, adapters=gpu_source.adapters)
    elif platform == "win32" and fallbacks:
        process_source = NullProcessSource()  # PDH failed: Windows has no /proc to scan
    else:
        process_source = FdinfoScanner(proc_root, root)
    return SourceSet(gpu_source, process_source, note)
