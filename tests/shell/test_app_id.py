"""The taskbar identity on Windows: rocmpanel's AppUserModelID, set before any window through
an injectable shell32 function; failures are logged, never raised."""

from __future__ import annotations

import logging
import re

import pytest

from rocmpanel.shell import app
from rocmpanel.shell.app import APP_USER_MODEL_ID, set_app_user_model_id


class FakeShell32:
    """SetCurrentProcessExplicitAppUserModelID: records the ids, answers ``result``."""

    def __init__(self, result: int | BaseException = 0) -> None:
        self.result, self.ids = result, []

    def __call__(self, app_id: str) -> int:
        self.ids.append(app_id)
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


def test_the_id_follows_the_documented_form():
    # CompanyName.ProductName[.SubProduct...], at most 128 characters, no spaces
    assert APP_USER_MODEL_ID == "rocmpanel.rocmpanel.Panel"
    assert len(APP_USER_MODEL_ID) <= 128 and " " not in APP_USER_MODEL_ID
    assert re.fullmatch(r"[A-Za-z0-9]+(\.[A-Za-z0-9]+){1,3}", APP_USER_MODEL_ID)


def test_windows_sets_the_id(caplog):
    shell32 = FakeShell32(0)
    with caplog.at_level(logging.WARNING, logger="rocmpanel"):
        assert set_app_user_model_id("win32", shell32) is True
    assert shell32.ids == ["rocmpanel.rocmpanel.Panel"]
    assert caplog.messages == []


def test_a_failed_hresult_is_logged_in_hex(caplog):
    shell32 = FakeShell32(-2147024809)  # E_INVALIDARG, 0x80070057, as a signed long
    with caplog.at_level(logging.WARNING, logger="rocmpanel"):
        assert set_app_user_model_id("win32", shell32) is False
    assert shell32.ids == ["rocmpanel.rocmpanel.Panel"]
    assert caplog.messages == [
        "The taskbar id rocmpanel.rocmpanel.Panel could not be set: HRESULT 0x80070057"
    ]


def test_an_exception_is_logged_not_raised(caplog):
    shell32 = FakeShell32(OSError("shell32.dll not found"))
    with caplog.at_level(logging.WARNING, logger="rocmpanel"):
        assert set_app_user_model_id("win32", shell32) is False
    assert caplog.messages == [
        "The taskbar id rocmpanel.rocmpanel.Panel could not be set: shell32.dll not found"
    ]


def test_the_real_call_missing_off_windows_is_logged(caplog):
    # On Linux ctypes has no WinDLL: the real shell32 cannot be built, and that is logged.
    with caplog.at_level(logging.WARNING, logger="rocmpanel"):
        assert set_app_user_model_id("win32") is False
    assert len(caplog.messages) == 1
    assert caplog.messages[0].startswith(
        "The taskbar id rocmpanel.rocmpanel.Panel could not be set: "
    )


def test_nothing_happens_elsewhere():
    shell32 = FakeShell32(0)
    assert set_app_user_model_id("linux", shell32) is False
    assert shell32.ids == []


class _Stop(Exception):
    pass


def test_the_window_start_sets_it_before_qt_makes_the_application(monkeypatch, root_logger):
    """run_gui sets the id before QApplication exists (no window can have shown)."""
    import PySide6.QtCore
    import PySide6.QtWidgets

    order: list[str] = []

    class NoApplication:
        @staticmethod
        def instance():
            order.append("QApplication")

        def __init__(self, *args):
            order.append("QApplication()")

    def record_id() -> bool:
        order.append("app id")
        raise _Stop

    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setattr(app, "_no_display", lambda: False)
    monkeypatch.setattr(PySide6.QtCore, "qInstallMessageHandler", lambda h: order.append("log"))
    monkeypatch.setattr(PySide6.QtWidgets, "QApplication", NoApplication)
    monkeypatch.setattr(app, "set_app_user_model_id", record_id)
    with pytest.raises(_Stop):
        app.run_gui()
    assert order == ["log", "app id"]
