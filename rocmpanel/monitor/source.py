"""What every telemetry source provides, so the collector never asks which platform it is.

A :class:`GpuSource` knows its GPUs' identities, reads one :class:`GpuSample` per GPU per
call, says what it can report (:class:`Capabilities`) and releases what it holds on
``close``. A :class:`ProcessSource` lists the processes that use a GPU. The sources:

- Linux: amdgpu sysfs + hwmon (``sysfs_source``), or amdsmi (``amdsmi_source``) when
  sysfs shows no amdgpu device; processes from DRM fdinfo + KFD (``fdinfo_source``);
- Windows: PDH counters for GPUs and for processes (``pdh_source``);
- no GPU, or none readable: :class:`NullGpuSource` and :class:`NullProcessSource`.

:mod:`rocmpanel.monitor.source_factory` picks them. Sources never raise while reading: a
figure that cannot be read is None for that tick.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, ProcessSample


@dataclass(frozen=True)
class Capabilities:
    """What a source can report at all (one GPU may still lack a sensor).

    ``min_interval_s``: readings closer together than this are not meaningful (PDH rates
    need a second), so the collector reuses the last one in between.
    """

    source: str  # for people: "amdgpu sysfs", "amdsmi", "Windows PDH counters", "none"
    temperatures: bool = False
    power: bool = False
    clocks: bool = False
    fan: bool = False
    min_interval_s: float = 0.0


class GpuSource(Protocol):
    """GPU telemetry: identities once, one sample per GPU per ``read``."""

    @property
    def capabilities(self) -> Capabilities: ...

    def identities(self) -> tuple[GpuIdentity, ...]:
        """The GPUs this source reads (a source that learns them while reading, like PDH,
        returns those seen so far)."""
        ...

    def read(self) -> tuple[GpuSample, ...]: ...

    def close(self) -> None: ...


class ProcessSource(Protocol):
    """Per-process GPU use; ``scan`` is the dearest read, so the collector paces it."""

    @property
    def name(self) -> str: ...

    @property
    def min_interval_s(self) -> float: ...

    def scan(
        self, worker_pids: Mapping[int, str] | None = None, now: float | None = None
    ) -> tuple[ProcessSample, ...]:
        """Every process of ours that uses a GPU; ``worker_pids`` labels the panel's jobs."""
        ...

    def close(self) -> None: ...


NO_GPU = Capabilities(QT_TRANSLATE_NOOP("Capabilities", "none"))


def source_name(source: str) -> str:
    """A source's name (``Capabilities.source``) in the window's language."""
    return translate("Capabilities", source)


class NullGpuSource:
    """No GPU to read: the Monitor still samples the host and says why in ``reason``."""

    def __init__(self, reason: str | None = None) -> None:
        self.reason = translate("NullGpuSource", "No AMD GPU found.") if reason is None else reason

    @property
    def capabilities(self) -> Capabilities:
        return NO_GPU

    def identities(self) -> tuple[GpuIdentity, ...]:
        return ()

    def read(self) -> tuple[GpuSample, ...]:
        return ()

    def close(self) -> None:
        return None


class NullProcessSource:
    """No process list on this platform or in this configuration."""

    name = "none"
    min_interval_s = 0.0

    def scan(
        self, worker_pids: Mapping[int, str] | None = None, now: float | None = None
    ) -> tuple[ProcessSample, ...]:
        return ()

    def close(self) -> None:
        return None


@dataclass(frozen=True)
class FoundGpus:
    """What the sampler's sources found, sent once each time they are (re)built.

    ``note``: why there is no GPU, when there is none ("" otherwise).
    """

    identities: tuple[GpuIdentity, ...]
    capabilities: Capabilities
    note: str = ""
