"""Start-up checks that turn Qt's aborts into messages."""

from __future__ import annotations

import ctypes
import sys

import pytest

from rocmpanel.shell.app import missing_xcb_library


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 plugin check is Linux-only")
def test_missing_xcb_library_is_named(monkeypatch) -> None:
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")

    def fail(path, mode=0):
        raise OSError(f"{path}: libxcb-cursor.so.0: cannot open shared object file: No such file")

    monkeypatch.setattr(ctypes, "CDLL", fail)
    assert missing_xcb_library() == "libxcb-cursor.so.0"


def test_no_check_off_x11(monkeypatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setattr(ctypes, "CDLL", lambda *a, **k: pytest.fail("must not load the plugin"))
    assert missing_xcb_library() is None
