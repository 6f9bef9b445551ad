"""Live figures of the GPUs as the Monitor's sampler last read them, for other features.

The sampler (``rocmpanel.monitor``) publishes into a :class:`LiveGpuMemory`; Chat reads the
VRAM of the card its worker uses from it instead of reading sysfs on the GUI thread. It
is a plain thread-safe store: the sampler writes from its thread, readers read from any.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryReading:
    """VRAM of one GPU at one moment (bytes; None: the GPU does not report it)."""

    bdf: str
    used_bytes: int | None
    total_bytes: int | None
    at: float

    @property
    def free_bytes(self) -> int | None:
        if self.used_bytes is None or self.total_bytes is None:
            return None
        return max(0, self.total_bytes - self.used_bytes)


class LiveGpuMemory:
    """The newest VRAM reading of each GPU, by PCI slot (lower-case "0000:03:00.0")."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._readings: dict[str, MemoryReading] = {}

    def publish(self, bdf: str, used_bytes: int | None, total_bytes: int | None) -> None:
        reading = MemoryReading(bdf.lower(), used_bytes, total_bytes, time.monotonic())
        with self._lock:
            self._readings[reading.bdf] = reading

    def reading(self, bdf: str | None, max_age_s: float = 10.0) -> MemoryReading | None:
        """The newest reading of ``bdf`` if it is at most ``max_age_s`` old, else None."""
        if not bdf:
            return None
        with self._lock:
            found = self._readings.get(bdf.lower())
        if found is None or time.monotonic() - found.at > max_age_s:
            return None
        return found

    def all(self) -> tuple[MemoryReading, ...]:
        with self._lock:
            return tuple(self._readings.values())
