"""The telemetry sampler runs on its own QThread and stops cleanly."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import Qt

from rocmpanel.monitor.sampler import SamplerThread


def test_sampler_thread_samples_off_the_calling_thread(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sampler = SamplerThread(tmp_path, tmp_path, 100)
    threads: list[int] = []
    sampler.sampler.sample_ready.connect(
        lambda _s: threads.append(threading.get_ident()), Qt.ConnectionType.DirectConnection
    )
    with qtbot.waitSignal(sampler.gpus_found, timeout=5000) as found:
        sampler.start()
    assert found.args[0].identities == ()
    assert "No AMD GPU found" in found.args[0].note
    with qtbot.waitSignals([sampler.sample_ready, sampler.sample_ready], timeout=5000):
        pass
    sampler.set_hidden(True)
    sampler.set_interval(200)
    sampler.stop()
    assert threads and threading.get_ident() not in threads
    assert sampler.sampler.ticks >= 2
