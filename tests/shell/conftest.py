"""The shell's tests: a window that finishes start-up freezes the heap (rocmpanel.shell.heap);
each test gets the collector back as it found it."""

from __future__ import annotations

import gc
import logging

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
