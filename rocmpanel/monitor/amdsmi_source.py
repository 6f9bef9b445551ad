"""Optional telemetry through AMD's ``amdsmi`` Python package, only when it imports.

The sysfs source is the primary one on Linux; amdsmi is used when sysfs shows no amdgpu
device (a container without /sys/class/drm, for instance). amdsmi reports unsupported
values as the string "N/A"; ``na`` turns those into None. Units: temperatures in °C,
VRAM in MiB, power in W, clocks in MHz. Only activity, VRAM and socket power are read
here: their keys and units are stable across amdsmi 6.x/7.x.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP
from rocmpanel.base.units import MIB
from rocmpanel.machine.sysfs import printable
from rocmpanel.monitor.sample import GpuIdentity, GpuSample
from rocmpanel.monitor.source import Capabilities

CAPABILITIES = Capabilities(QT_TRANSLATE_NOOP("Capabilities", "amdsmi"), power=True)


def na(value: Any) -> float | None:
    """amdsmi's value as a number; "N/A", None, sentinels and non-numbers become None."""
    if isinstance(value, Mapping):
        value = value.get("value")
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip().split(" ")[0]
        if not text or text.upper() == "N/A":
            return None
        try:
            value = float(text)
        except ValueError:
            return None
    if not isinstance(value, (int, float)):
        return None
    number = float(value)
    if not math.isfinite(number) or number in (0xFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF):
        return None
    return number


def _int(value: Any) -> int | None:
    number = na(value)
    return int(number) if number is not None else None


def _mib(value: Any) -> int | None:
    number = na(value)
    return int(number * MIB) if number is not None else None


def sample_from_metrics(identity: GpuIdentity, metrics: Mapping[str, Any]) -> GpuSample:
    """A GpuSample from the plain dict ``AmdSmiSource`` collects for one GPU."""
    return GpuSample(
        identity,
        asleep=False,
        busy_percent=na(metrics.get("gfx_activity")),
        mem_busy_percent=na(metrics.get("umc_activity")),
        vram_used_bytes=_mib(metrics.get("vram_used")),
        vram_total_bytes=_mib(metrics.get("vram_total")),
        temp_edge_c=na(metrics.get("temp_edge")),
        temp_junction_c=na(metrics.get("temp_hotspot")),
        temp_mem_c=na(metrics.get("temp_vram")),
        power_w=na(metrics.get("power")),
        power_cap_w=na(metrics.get("power_cap")),
        sclk_mhz=na(metrics.get("gfx_clk")),
        mclk_mhz=na(metrics.get("mem_clk")),
        fan_rpm=_int(metrics.get("fan_rpm")),
    )


class AmdSmiSource:
    """Reads every GPU amdsmi sees. Build it with ``create()``, which may return None."""

    def __init__(self, module: Any, known: Sequence[GpuIdentity] = ()) -> None:
        self._smi = module
        self._handles = list(module.amdsmi_get_processor_handles())
        by_slot = {k.pci_slot.lower(): k for k in known if k.pci_slot}
        self._identities = tuple(self._identity(i, h, by_slot) for i, h in enumerate(self._handles))

    @classmethod
    def create(cls, known: Sequence[GpuIdentity] = ()) -> AmdSmiSource | None:
        """amdsmi's GPUs (named as in ``known``, by PCI slot), or None without amdsmi."""
        try:
            import amdsmi

            amdsmi.amdsmi_init()
            return cls(amdsmi, known)
        except Exception:  # missing library, wrong ROCm version: no amdsmi source
            return None

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def identities(self) -> tuple[GpuIdentity, ...]:
        return self._identities

    def _call(self, name: str, *args: Any) -> Any:
        try:
            return getattr(self._smi, name)(*args)
        except Exception:  # amdsmi raises its own error types for unsupported queries
            return None

    def _identity(self, index: int, handle: Any, known: Mapping[str, GpuIdentity]) -> GpuIdentity:
        slot = self._call("amdsmi_get_gpu_device_bdf", handle)
        same = known.get(str(slot).lower()) if slot else None
        if same is not None:
            return same  # the inventory's name for the card in this slot
        asic = self._call("amdsmi_get_gpu_asic_info", handle) or {}
        name = printable(str(asic.get("market_name") or "")) or f"AMD GPU {index}"
        return GpuIdentity(str(slot or f"amdsmi{index}"), None, slot, None, name)

    def read(self) -> tuple[GpuSample, ...]:
        samples = []
        for identity, handle in zip(self._identities, self._handles, strict=True):
            activity = self._call("amdsmi_get_gpu_activity", handle) or {}
            vram = self._call("amdsmi_get_gpu_vram_usage", handle) or {}
            power = self._call("amdsmi_get_power_info", handle) or {}
            metrics = {
                "gfx_activity": activity.get("gfx_activity"),
                "umc_activity": activity.get("umc_activity"),
                "vram_used": vram.get("vram_used"),
                "vram_total": vram.get("vram_total"),
                "power": power.get("current_socket_power", power.get("average_socket_power")),
            }
            samples.append(sample_from_metrics(identity, metrics))
        return tuple(samples)

    def close(self) -> None:
        self._call("amdsmi_shut_down")
