"""The shell's tests: a window that finishes start-up freezes the heap (rocmpanel.shell.heap);
each test gets the collector back as it found it."""

from __future__ import annotations

import gc
import logging
from pathlib import Path

import pytest

from rocmpanel.shell import heap


@pytest.fixture(autouse=True)
def _collector_restored():
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    heap._paused = False
    if enabled:
        gc.enable()
    else:
        gc.disable()


@pytest.fixture
def root_logger():
    """The root logger's handlers and level, restored (and ours closed) afterwards."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    yield root
    for handler in root.handlers:
        if handler not in saved[0]:
            handler.close()
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


@pytest.fixture
def demo_window(qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The window of ``rocmpanel --demo`` (recorded GPUs, a temporary home), shown at
    1280x820, sampling every 100 ms; closed, and the demo's folder removed, afterwards."""
    from rocmpanel.base.settings import Settings
    from rocmpanel.machine import demo
    from rocmpanel.shell import app

    session = demo.DemoSession(base=tmp_path)
    for name, value in session.environ().items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    settings.monitor.interval_ms = 100
    win = app.demo_window(settings, session)
    win.save_on_close = False
    qtbot.addWidget(win)
    win.resize(1280, 820)
    win.show()
    yield win
    win.close()
    session.close()
