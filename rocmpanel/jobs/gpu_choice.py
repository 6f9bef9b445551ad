"""Which GPUs a job runs on: chosen by identity (PCI address), given to the job as the
runtime's visibility variables.

The runtime numbers GPUs in the order of the KFD topology (``/sys/class/kfd/kfd/topology/
nodes``, CPU nodes skipped), which need not be the order of ``/dev/dri/card*`` that
``rocm-smi`` lists. The user picks GPUs by PCI address and name; a job gets the indices
that address them now, so a choice survives a card moving in the list:

- ``ROCR_VISIBLE_DEVICES`` (Linux): see :data:`MEANINGS`. Set but empty hides every GPU,
  so an empty choice never writes it.
- ``HIP_VISIBLE_DEVICES``: see :data:`MEANINGS`. On Linux the choice removes it (and
  ``CUDA_VISIBLE_DEVICES``, which HIP reads when HIP's is unset), because its indices
  would then count within the chosen GPUs and pick others than the user chose.

The saved choice (Settings ``general.job_gpus``) is "" (the default: the discrete GPUs,
so an integrated GPU next to a discrete one is left out), ``all`` (every GPU the runtime
sees), or PCI addresses separated by commas. A chosen GPU that is gone is dropped and
said; when none is left the default applies. A default choice yields to visibility
variables the user set; a choice the user made wins over them.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.kfd_topology import gpus_from_kfd, read_nodes

log = logging.getLogger(__name__)

ROCR = "ROCR_VISIBLE_DEVICES"
HIP = "HIP_VISIBLE_DEVICES"
CUDA = "CUDA_VISIBLE_DEVICES"
VISIBILITY_VARS = (ROCR, HIP, CUDA)
ALL = "all"
#: A recorded /sys tree to read instead of this machine's (as the inventory does).
SYSFS_ROOT_VARIABLE = "ROCMPANEL_SYSFS_ROOT"

#: One sentence each on what the variables mean, for the picker and the launch scripts.
MEANINGS: Mapping[str, str] = {
    ROCR: "ROCm's runtime shows a program only the GPUs listed, by their index in the KFD "
    "topology (or GPU-<uuid>); every ROCm program obeys it, and set but empty it hides "
    "every GPU.",
    HIP: "The HIP runtime's own filter, applied after ROCR_VISIBLE_DEVICES: its indices "
    "count within the GPUs ROCm's runtime still shows (on Windows, which has no ROCm "
    "runtime layer, it is the filter to use).",
    CUDA: "Read by HIP (and PyTorch) only when HIP_VISIBLE_DEVICES is unset, with the same "
    "meaning.",
}

_BDF_RE = re.compile(r"^(?:([0-9a-f]{4}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")


@dataclass(frozen=True)
class GpuChoice:
    """The GPUs a job runs on. ``gpus`` in the order the job numbers them (``cuda:0`` is
    the first); ``available`` every GPU the runtime sees, in its order; ``env`` what the
    job's environment gets (None removes a variable); ``notes`` what the user should
    know (a GPU left out, a chosen GPU that is gone)."""

    gpus: tuple[GpuInfo, ...]
    available: tuple[GpuInfo, ...]
    env: Mapping[str, str | None] = field(default_factory=dict)
    explicit: bool = False
    notes: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.gpus)

    @property
    def indices(self) -> tuple[int, ...]:
        """The runtime's index (before any filter) of each chosen GPU."""
        return tuple(self.available.index(gpu) for gpu in self.gpus)

    @property
    def label(self) -> str:
        """One line: which GPUs, by index, name and PCI address."""
        if not self.available:
            return translate("GpuChoice", "no AMD GPU")
        if len(self.gpus) == len(self.available) and len(self.gpus) > 1:
            return translate("GpuChoice", "all {count} GPUs").format(count=len(self.gpus))
        return ", ".join(gpu_text(i, gpu) for i, gpu in zip(self.indices, self.gpus, strict=True))


def gpu_text(index: int, gpu: GpuInfo) -> str:
    """``GPU 0 Radeon RX 7900 XTX (0000:03:00.0)``."""
    name = gpu.name or gpu.gfx or translate("gpu_choice", "AMD GPU")
    where = f" ({gpu.bdf})" if gpu.bdf else ""
    return translate("gpu_choice", "GPU {index} {name}{where}").format(
        index=index, name=name, where=where
    )


def normalize_bdf(text: str) -> str | None:
    """``0000:03:00.0`` from ``03:00.0`` or ``0000:03:00.0`` (any case); None otherwise."""
    match = _BDF_RE.match(text.strip().lower())
    if match is None:
        return None
    domain, bus, dev, fn = match.groups()
    return f"{domain or '0000'}:{bus}:{dev}.{fn}"


def _named(gpu: GpuInfo) -> GpuInfo:
    """``gpu`` with the PCI table's name and integrated flag (KFD knows neither)."""
    from rocmpanel.machine import pci_ids  # parses a data file: only when there is a GPU

    try:
        entry = pci_ids.lookup(gpu.pci_id)
    except PanelError as exc:  # a damaged data file: the GPU keeps its gfx name
        log.warning("GPU names unavailable: %s", exc.message)
        entry = None
    if entry is None:
        return gpu
    integrated = gpu.integrated if gpu.integrated is not None else entry.integrated
    return GpuInfo(
        name=gpu.name or entry.name,
        gfx=gpu.gfx or entry.gfx,
        pci_id=gpu.pci_id,
        bdf=gpu.bdf,
        vram_bytes=gpu.vram_bytes,
        integrated=integrated,
        sources=gpu.sources,
        kfd_node=gpu.kfd_node,
    )


def runtime_gpus(sysfs_root: Path | str | None = None) -> tuple[GpuInfo, ...]:
    """The GPUs ROCm's runtime sees, in its order (Linux: the KFD topology; a few small
    sysfs reads, no tool is run). ``sysfs_root`` None: ``$ROCMPANEL_SYSFS_ROOT`` or /sys."""
    root = sysfs_root or os.environ.get(SYSFS_ROOT_VARIABLE) or "/sys"
    return tuple(_named(gpu) for gpu in gpus_from_kfd(read_nodes(root)))


NO_HIPINFO = (
    "HIP's own GPU numbers are not known (hipInfo, from AMD's HIP SDK, was not found), so "
    "jobs see every GPU: install the HIP SDK to choose."
)


def hip_order(gpus: Sequence[GpuInfo]) -> tuple[GpuInfo, ...]:
    """Windows: the GPUs HIP numbers, in its order (hipInfo's ``device#N``). HIP_VISIBLE_
    DEVICES counts in that order, which need not be Windows' own list of video cards;
    without hipInfo there is no order to count in, so nothing."""
    listed = [gpu for gpu in gpus if gpu.hip_index is not None]
    return tuple(sorted(listed, key=lambda gpu: gpu.hip_index or 0))


def default_gpus(available: Sequence[GpuInfo]) -> tuple[GpuInfo, ...]:
    """The discrete GPUs when there are any, else all: an integrated GPU next to a
    discrete one is slower, shares system memory, and often is not supported."""
    discrete = tuple(gpu for gpu in available if not gpu.integrated)
    return discrete or tuple(available)


def saved_wanted(text: str) -> tuple[str, ...] | None:
    """The saved setting as a choice: None = default, () = all, else PCI addresses."""
    text = text.strip()
    if not text:
        return None
    if text.lower() == ALL:
        return ()
    found = [normalize_bdf(part) for part in text.split(",") if part.strip()]
    return tuple(bdf for bdf in found if bdf) or None


def saved_problem(text: str) -> str | None:
    """What in the saved setting is neither ``all`` nor a PCI address (ignored), or None."""
    text = text.strip()
    if not text or text.lower() == ALL:
        return None
    bad = [part.strip() for part in text.split(",") if part.strip() and not normalize_bdf(part)]
    if not bad:
        return None
    shown = ", ".join(repr(part[:40]) for part in bad[:3]) + (", …" if len(bad) > 3 else "")
    return translate(
        "gpu_choice",
        "The saved GPU choice has entries that are not PCI addresses ({shown}): ignored.",
    ).format(shown=shown)


def saved_text(wanted: tuple[str, ...] | None) -> str:
    """The setting's text for a choice (:func:`saved_wanted`'s inverse)."""
    if wanted is None:
        return ""
    return ",".join(wanted) if wanted else ALL


def choose(
    available: Sequence[GpuInfo],
    wanted: tuple[str, ...] | None,
    platform: str = sys.platform,
) -> GpuChoice:
    """The choice for ``wanted`` (None = default, () = all, else PCI addresses) among
    ``available`` (the runtime's GPUs, in its order)."""
    available = tuple(available)
    notes: list[str] = []
    explicit = wanted is not None
    if wanted is None:
        chosen = default_gpus(available)
    elif not wanted:
        chosen = available
    else:
        keys = {normalize_bdf(bdf) or bdf for bdf in wanted}
        chosen = tuple(gpu for gpu in available if gpu.bdf and gpu.bdf.lower() in keys)
        present = {gpu.bdf.lower() for gpu in available if gpu.bdf}
        gone = sorted(keys - present)
        if gone:
            notes.append(
                translate("gpu_choice", "Chosen GPU {gpus} is not on this machine now.").format(
                    gpus=", ".join(gone)
                )
            )
        if not chosen:
            chosen, explicit = default_gpus(available), False
            if available:
                notes.append(
                    translate(
                        "gpu_choice", "None of the chosen GPUs is here: jobs use the default."
                    )
                )
    left_out = [gpu for gpu in available if gpu not in chosen]
    if not explicit and left_out:
        names = ", ".join(gpu_text(available.index(g), g) for g in left_out)
        notes.append(
            translate("gpu_choice", "Left out by default (integrated): {names}.").format(
                names=names
            )
        )
    env: dict[str, str | None] = {}
    if available and chosen and (explicit or len(chosen) < len(available)):
        indices = ",".join(str(available.index(gpu)) for gpu in chosen)
        if platform == "win32":
            env = {HIP: indices, CUDA: None}
        else:
            env = {ROCR: indices, HIP: None, CUDA: None}
    return GpuChoice(chosen, available, env, explicit, tuple(notes))


def _saved_setting() -> str:
    from rocmpanel.base.settings import Settings

    try:
        return Settings.load(tell=False).general.job_gpus
    except Exception as exc:  # a job never fails for the settings file; it says why there
        log.warning("Could not read the GPU choice (%s); jobs use the default.", exc)
        return ""


def resolve(
    gpus: tuple[str, ...] | None = None,
    *,
    platform: str = sys.platform,
    known: Sequence[GpuInfo] | None = None,
    saved: str | None = None,
) -> GpuChoice:
    """The choice a job gets. ``gpus``: PCI addresses (() = all; None = the saved choice,
    ``saved`` when given, else read from the settings). ``known``: the GPUs when the caller
    has them (Linux: in the runtime's order; Windows: the inventory's, of which those
    hipInfo numbers count, in its order); else read from the KFD topology (Linux), or
    detected (Windows: blocking, for the CLI)."""
    unnumbered = False
    if platform == "win32":
        if known is None:
            from rocmpanel.machine.inventory import detect_inventory

            known = detect_inventory().gpus
        available: tuple[GpuInfo, ...] = hip_order(known)
        unnumbered = bool(known) and not available
    elif known is not None:
        available = tuple(known)
    else:
        available = runtime_gpus()
    if unnumbered:
        return GpuChoice((), (), notes=(NO_HIPINFO,))
    if gpus is None and saved is None and not available:
        return choose(available, None, platform)  # nothing to choose: no settings read
    if gpus is not None:
        return choose(available, gpus, platform)
    text = _saved_setting() if saved is None else saved
    choice = choose(available, saved_wanted(text), platform)
    problem = saved_problem(text)
    return dataclasses.replace(choice, notes=(problem, *choice.notes)) if problem else choice


def parse_gpus_option(text: str, available: Sequence[GpuInfo] | None = None) -> tuple[str, ...]:
    """A ``--gpus`` value as PCI addresses: ``all``, runtime indices (``0,1``, as
    ``rocmpanel topo`` and the picker number them) or PCI addresses. PanelError names
    what is not a GPU of this machine."""
    gpus = tuple(runtime_gpus() if available is None else available)
    text = text.strip()
    if text.lower() == ALL:
        return ()
    if not gpus:
        raise PanelError("--gpus: no AMD GPU is visible to ROCm on this machine.")
    chosen: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part.isdigit():
            index = int(part)
            if index >= len(gpus) or not gpus[index].bdf:
                raise PanelError(
                    f"--gpus: there is no GPU {index}; this machine has "
                    f"{len(gpus)} (0-{len(gpus) - 1}).",
                    "Run `rocmpanel topo` to see them.",
                )
            bdf = gpus[index].bdf
        else:
            bdf = normalize_bdf(part)
            if bdf is None or all((gpu.bdf or "").lower() != bdf for gpu in gpus):
                raise PanelError(
                    f"--gpus: {part!r} is not a GPU of this machine (give indices such as "
                    "0,1, PCI addresses such as 0000:03:00.0, or all).",
                    "Run `rocmpanel topo` to see them.",
                )
        if bdf and bdf not in chosen:
            chosen.append(bdf)
    if not chosen:
        raise PanelError("--gpus: name at least one GPU, or all.")
    return tuple(chosen)


GPUS_HELP = (
    "the GPUs the job runs on: indices as `rocmpanel topo` numbers them (0,1), PCI "
    "addresses (0000:03:00.0) or all (default: the choice saved in the panel, else the "
    "discrete GPUs)"
)


def gpus_type(text: str) -> tuple[str, ...]:
    """``argparse`` type of a ``--gpus`` option (:func:`parse_gpus_option`)."""
    try:
        return parse_gpus_option(text)
    except PanelError as exc:
        raise argparse.ArgumentTypeError(
            exc.message.removeprefix("--gpus: ") + (f" {exc.detail}" if exc.detail else "")
        ) from exc


def add_gpus_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--gpus LIST`` (None when not given: the saved choice)."""
    parser.add_argument("--gpus", type=gpus_type, default=None, metavar="LIST", help=GPUS_HELP)


def say_where(env: Mapping[str, str | None], prog: str) -> None:
    """Print on stderr which GPUs a command's job runs on, and what the user should know
    about the choice (a chosen GPU that is gone); nothing without a GPU."""
    from rocmpanel.jobs.spec import GPU_NOTES_VAR, GPUS_VAR

    where = env.get(GPUS_VAR)
    if where:
        notes = env.get(GPU_NOTES_VAR)
        print(f"{prog}: runs on {where}.", file=sys.stderr, flush=True)
        if notes:
            print(f"{prog}: {notes}", file=sys.stderr, flush=True)
