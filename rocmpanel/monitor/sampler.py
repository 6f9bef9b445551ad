"""The telemetry sampler: a worker QObject on its own QThread (QtCore only, no widgets).

``TelemetrySampler`` lives in the thread; it builds the sources there (discovery probes the
files once), then reads them on a QTimer and emits ``sample_ready(Sample)``. Each tick also
publishes every GPU's VRAM into a :class:`~rocmpanel.machine.live.LiveGpuMemory`, from the
sampler thread, so other features (Chat) read fresh figures whether or not the Monitor is
drawn. The GUI owns a ``SamplerThread``, which starts and stops the thread and forwards
interval, visibility, GPU-list and worker-pid changes to the sampler through queued
signals. Nothing here touches a widget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

from rocmpanel.base.i18n import translate
from rocmpanel.machine.live import LiveGpuMemory
from rocmpanel.monitor.collector import TelemetryCollector, publish_vram
from rocmpanel.monitor.interval import MAX_INTERVAL_MS, MIN_INTERVAL_MS
from rocmpanel.monitor.sample import GpuIdentity
from rocmpanel.monitor.source import NO_GPU, FoundGpus

HIDDEN_INTERVAL_MS = 2000  # while the window is hidden or minimised


def effective_interval(interval_ms: int, hidden: bool) -> int:
    """The timer period: the setting clamped to its declared range (100 ms–5 s), slower
    while the window is hidden."""
    interval = max(MIN_INTERVAL_MS, min(MAX_INTERVAL_MS, int(interval_ms)))
    return max(interval, HIDDEN_INTERVAL_MS) if hidden else interval


class TelemetrySampler(QObject):
    """Reads every source on a timer in its own thread; emits one Sample per tick."""

    sample_ready = Signal(object)  # Sample
    gpus_found = Signal(object)  # FoundGpus, each time the sources are (re)built
    failed = Signal(object)  # the exception: sources turn read errors into None, so a bug

    def __init__(
        self,
        sysfs_root: Path | str,
        proc_root: Path | str,
        interval_ms: int,
        *,
        gpus: Sequence[GpuIdentity] | None = None,
        live_memory: LiveGpuMemory | None = None,
    ) -> None:
        super().__init__()
        self._roots = (Path(sysfs_root), Path(proc_root))
        self._interval_ms = interval_ms
        self._gpus = tuple(gpus) if gpus is not None else None
        self._live_memory = live_memory
        self._hidden = False
        self._collector: TelemetryCollector | None = None
        self._timer: QTimer | None = None
        self._workers: dict[int, str] = {}
        self._lock = threading.Lock()
        self.cpu_seconds = 0.0  # thread CPU time spent in ticks (for the benchmark)
        self.ticks = 0

    def set_workers(self, workers: Mapping[int, str]) -> None:
        """Called from any thread: the panel's own job pids and names."""
        with self._lock:
            self._workers = dict(workers)

    @Slot()
    def start(self) -> None:
        try:
            self._collector = TelemetryCollector(*self._roots, gpus=self._gpus)
        except Exception as exc:  # a broken tree must not kill the thread silently
            self.failed.emit(exc)
            self.gpus_found.emit(
                FoundGpus(
                    (),
                    NO_GPU,
                    translate("SamplerThread", "Telemetry could not start: {error}").format(
                        error=exc
                    ),
                )
            )
            return
        self.gpus_found.emit(self._collector.found())
        self._timer = QTimer(self)
        self._timer.setInterval(effective_interval(self._interval_ms, self._hidden))
        self._timer.timeout.connect(self._on_timer_timeout)
        self._timer.start()
        self._on_timer_timeout()

    @Slot(int)
    def set_interval(self, interval_ms: int) -> None:
        self._interval_ms = interval_ms
        self._apply_interval()

    @Slot(object)
    def set_gpus(self, gpus: Sequence[GpuIdentity] | None) -> None:
        """Read these GPUs from now on (None: find them in the tree); runs in the thread.
        Answered with one ``gpus_found``, like ``start``."""
        self._gpus = tuple(gpus) if gpus is not None else None
        if self._collector is None:  # not started yet (start answers again), or failed to
            self.gpus_found.emit(
                FoundGpus((), NO_GPU, translate("SamplerThread", "Telemetry is not running."))
            )
            return
        try:
            self._collector.set_gpus(self._gpus)
        except Exception as exc:  # keep sampling the host with no GPU source
            self.failed.emit(exc)
            self.gpus_found.emit(
                FoundGpus(
                    (),
                    NO_GPU,
                    translate("SamplerThread", "The GPUs could not be opened: {error}").format(
                        error=exc
                    ),
                )
            )
            return
        self.gpus_found.emit(self._collector.found())

    @Slot(int)
    def set_hidden(self, hidden: int) -> None:
        self._hidden = bool(hidden)
        self._apply_interval()

    def _apply_interval(self) -> None:
        if self._timer is not None:
            self._timer.setInterval(effective_interval(self._interval_ms, self._hidden))

    @Slot()
    def stop(self) -> None:
        """Runs in the sampler thread: the timer must be stopped and freed there."""
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.stop()
            timer.setParent(None)
            del timer
        self.close_sources()

    def close_sources(self) -> None:
        """Release the sources (no Qt calls: also safe after the thread has ended)."""
        collector, self._collector = self._collector, None
        if collector is not None:
            collector.close()

    @Slot()
    def _on_timer_timeout(self) -> None:
        if self._collector is None:
            return
        started = time.thread_time()
        with self._lock:
            workers = self._workers
        try:
            sample = self._collector.collect(workers)
        except Exception as exc:  # sources turn read errors into None; this is a bug
            self.failed.emit(exc)
            return
        if self._live_memory is not None:
            publish_vram(sample, self._live_memory)
        self.cpu_seconds += time.thread_time() - started
        self.ticks += 1
        self.sample_ready.emit(sample)


class SamplerThread(QObject):
    """GUI-side handle: owns the QThread and the sampler, and forwards requests to it."""

    sample_ready = Signal(object)  # Sample
    gpus_found = Signal(object)  # FoundGpus
    failed = Signal(object)  # Exception
    _start_requested = Signal()
    _interval_requested = Signal(int)
    _hidden_requested = Signal(int)
    _gpus_requested = Signal(object)
    _stop_requested = Signal()

    def __init__(
        self,
        sysfs_root: Path | str = "/sys",
        proc_root: Path | str = "/proc",
        interval_ms: int = 500,
        parent: QObject | None = None,
        *,
        gpus: Sequence[GpuIdentity] | None = None,
        live_memory: LiveGpuMemory | None = None,
    ) -> None:
        super().__init__(parent)
        self._thread = QThread()
        self._thread.setObjectName("telemetry-sampler")
        self.sampler = TelemetrySampler(
            sysfs_root, proc_root, interval_ms, gpus=gpus, live_memory=live_memory
        )
        self.sampler.moveToThread(self._thread)
        self._start_requested.connect(self.sampler.start)
        self._interval_requested.connect(self.sampler.set_interval)
        self._hidden_requested.connect(self.sampler.set_hidden)
        self._gpus_requested.connect(self.sampler.set_gpus)
        # Blocking: stop() must have run in the thread before the thread is told to quit.
        self._stop_requested.connect(self.sampler.stop, Qt.ConnectionType.BlockingQueuedConnection)
        self.sampler.sample_ready.connect(self.sample_ready)
        self.sampler.gpus_found.connect(self.gpus_found)
        self.sampler.failed.connect(self.failed)
        self._hidden: bool | None = None
        self._running = False

    def start(self) -> None:
        if self._running:
            return
        self._running = True
        self._thread.start()
        self._start_requested.emit()

    def set_interval(self, interval_ms: int) -> None:
        self._interval_requested.emit(int(interval_ms))

    def set_hidden(self, hidden: bool) -> None:
        if hidden != self._hidden:
            self._hidden = hidden
            self._hidden_requested.emit(int(hidden))

    def set_workers(self, workers: Mapping[int, str]) -> None:
        self.sampler.set_workers(workers)

    def set_gpus(self, gpus: Sequence[GpuIdentity] | None) -> None:
        """Sample these GPUs (None: find them in the tree); ``gpus_found`` follows."""
        self._gpus_requested.emit(tuple(gpus) if gpus is not None else None)

    def stop(self, timeout_ms: int = 5000) -> None:
        """Stop the timer in its thread, then end the thread and wait for it."""
        if not self._running:
            return
        self._running = False
        self._stop_requested.emit()
        self._thread.quit()
        if self._thread.wait(timeout_ms):
            self.sampler.close_sources()
