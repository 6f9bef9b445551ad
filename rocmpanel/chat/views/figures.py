"""The live line under the conversation: tokens, TTFT, tok/s and memory while generating.

Counted on the panel side from the token events as they arrive (the worker reports the
exact figures when the reply ends). Memory is the VRAM used on the worker's card, as the
Monitor's sampler last read it, when the model is on a GPU; else the worker process's
resident memory; "n/a" when neither is known. The line ends with the tuning preset the
loaded model runs under (:meth:`LiveFigures.set_preset`), so figures can be compared.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QWidget

from rocmpanel.base.i18n import translate
from rocmpanel.base.units import format_memory
from rocmpanel.machine.live import LiveGpuMemory

LIVE_INTERVAL_MS = 250


def vram_text(live: LiveGpuMemory, bdf: str | None) -> str:
    """VRAM used on card ``bdf`` from the sampler's newest reading (no sysfs read here)."""
    reading = live.reading(bdf)
    if reading is None or reading.used_bytes is None:
        return translate("figures", "VRAM n/a")
    return translate("figures", "VRAM used {memory}").format(
        memory=format_memory(reading.used_bytes)
    )


def vram_text_over(live: LiveGpuMemory, bdfs: tuple[str, ...]) -> str:
    """VRAM used on each card of a model spread over several (``VRAM used 9.10 GiB +
    8.70 GiB``), from the sampler's newest readings; one card reads as :func:`vram_text`."""
    if len(bdfs) < 2:
        return vram_text(live, bdfs[0] if bdfs else None)
    used = [live.reading(bdf) for bdf in bdfs]
    parts = [
        format_memory(r.used_bytes) if r is not None and r.used_bytes is not None else "n/a"
        for r in used
    ]
    if set(parts) == {"n/a"}:
        return translate("figures", "VRAM n/a")
    return translate("figures", "VRAM used {memory}").format(memory=" + ".join(parts))


def rss_text(pid: int | None) -> str:
    """The worker process's resident memory (one small /proc read)."""
    if pid is None:
        return translate("figures", "memory n/a")
    try:
        import psutil

        rss = psutil.Process(pid).memory_info().rss
    except Exception:  # the process may be gone between two ticks
        return translate("figures", "memory n/a")
    return translate("figures", "worker RSS {memory}").format(memory=format_memory(rss))


class LiveFigures(QLabel):
    """A status line that ticks while a reply streams."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(translate("LiveFigures", "No model loaded."), parent)
        self.setStyleSheet("color:#555555;")
        self.tokens = 0
        self._sent_at = 0.0
        self._first_at: float | None = None
        self._memory: Callable[[], str] = lambda: translate("figures", "memory n/a")
        self.preset: str | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(LIVE_INTERVAL_MS)
        self._timer.timeout.connect(self.update_text)

    @property
    def running(self) -> bool:
        return self._timer.isActive()

    def start(self, memory: Callable[[], str]) -> None:
        """A request was just sent."""
        self._memory = memory
        self._sent_at = time.perf_counter()
        self._first_at = None
        self.tokens = 0
        self._timer.start()
        self.update_text()

    def add_tokens(self, count: int) -> None:
        if self._first_at is None:
            self._first_at = time.perf_counter()
            self.tokens += count
            self.update_text()  # show the time to first token at once
        else:
            self.tokens += count

    def set_preset(self, name: str | None) -> None:
        """The preset the loaded model runs under (None: no preset, or no model)."""
        self.preset = name

    def with_preset(self, text: str) -> str:
        """``text`` with the preset it ran under; "" stays "" (nothing to show)."""
        if not text:
            return text
        preset = self.preset or translate("LiveFigures", "none")
        return translate("LiveFigures", "{text} · preset: {preset}").format(
            text=text, preset=preset
        )

    def stop(self, text: str) -> None:
        self._timer.stop()
        self.setText(self.with_preset(text))

    def update_text(self) -> None:
        now = time.perf_counter()
        generating = (
            translate("LiveFigures", "Generating… {count} token")
            if self.tokens == 1
            else translate("LiveFigures", "Generating… {count} tokens")
        )
        parts = [generating.format(count=self.tokens)]
        if self._first_at is None:
            waited = f"{(now - self._sent_at) * 1000:.0f}"
            parts.append(
                translate("LiveFigures", "waiting for the first token ({ms} ms)").format(ms=waited)
            )
        else:
            ttft = f"{(self._first_at - self._sent_at) * 1000:.0f}"
            parts.append(translate("LiveFigures", "TTFT {ms} ms").format(ms=ttft))
            elapsed = now - self._first_at
            if self.tokens > 1 and elapsed > 0:
                rate = f"{(self.tokens - 1) / elapsed:.1f}"
                parts.append(translate("LiveFigures", "{rate} tok/s").format(rate=rate))
        parts.append(self._memory())
        self.setText(self.with_preset(" · ".join(parts)))
