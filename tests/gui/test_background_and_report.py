"""run_in_background delivers on the GUI thread, drops deliveries to deleted owners;
report() shows the user's message and logs the detail."""

from __future__ import annotations

import logging
import threading

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QLabel, QWidget
from pytestqt.qtbot import QtBot

from rocmpanel.base.errors import PanelError
from rocmpanel.gui import report as report_module
from rocmpanel.gui.background import run_in_background, wait_for_background
from rocmpanel.gui.report import report, set_sink, user_message


def test_result_arrives_on_the_gui_thread(qtbot: QtBot) -> None:
    got: list[tuple[object, object, bool]] = []
    worker_threads: list[int] = []

    def slow() -> int:
        worker_threads.append(threading.get_ident())
        return 42

    run_in_background(slow, lambda r, e: got.append((r, e, QThread.currentThread().isMainThread())))
    qtbot.waitUntil(lambda: bool(got), timeout=5000)
    assert got == [(42, None, True)]
    assert worker_threads[0] != threading.get_ident()


def test_an_exception_arrives_as_the_error(qtbot: QtBot) -> None:
    got: list[tuple[object, object]] = []

    def broken() -> None:
        raise PanelError("Could not delete", "EACCES on /x")

    run_in_background(broken, lambda r, e: got.append((r, e)))
    qtbot.waitUntil(lambda: bool(got), timeout=5000)
    result, error = got[0]
    assert result is None and isinstance(error, PanelError) and error.detail == "EACCES on /x"


def test_a_deleted_owner_gets_nothing(qtbot: QtBot) -> None:
    owner = QWidget()
    release = threading.Event()
    got: list[object] = []
    call = run_in_background(lambda: release.wait(5), lambda r, e: got.append(r), owner=owner)
    owner.deleteLater()
    qtbot.wait(50)
    release.set()
    assert call.done.wait(5)
    qtbot.wait(100)
    assert got == []
    assert wait_for_background(2000)


def test_report_logs_the_detail_and_shows_the_message(
    qtbot: QtBot, caplog: pytest.LogCaptureFixture
) -> None:
    label = QLabel()
    with caplog.at_level(logging.WARNING, logger="rocmpanel.report"):
        shown = report(PanelError("Could not save", "ENOSPC: /home full"), "Saving", label=label)
    assert shown == label.text() == "Could not save"
    assert "ENOSPC: /home full" in caplog.text  # the detail reaches the log, not the user


def test_unexpected_errors_are_logged_with_their_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []
    set_sink(seen.append)
    try:
        try:
            raise KeyError("gfx")
        except KeyError as exc:
            with caplog.at_level(logging.ERROR, logger="rocmpanel.report"):
                report(exc, "Reading the inventory")
    finally:
        set_sink(None)
    assert seen == ["Reading the inventory failed: 'gfx'"]
    assert caplog.records[-1].exc_info is not None


def test_messages_before_the_window_exists_are_kept() -> None:
    report_module._pending.clear()
    report(PanelError("early"))
    seen: list[str] = []
    set_sink(seen.append)
    set_sink(None)
    assert seen == ["early"]
    assert user_message(ValueError("x"), "Loading") == "Loading failed: x"


def test_what_the_call_holds_is_released_on_the_gui_thread(qtbot: QtBot) -> None:
    """Freeing a Qt object on a pool thread crashes Qt: the function (and what it
    captures), the callback and the owner must all be released on the GUI thread."""
    import gc

    from PySide6.QtCore import QObject

    freed_on: list[int] = []

    class Tracked(QObject):
        def __del__(self) -> None:
            freed_on.append(threading.get_ident())

    captured = Tracked()
    owner = Tracked()
    got: list[object] = []
    call = run_in_background(
        lambda obj=captured: obj.objectName() or "ran",  # type: ignore[misc]
        lambda r, e, who=owner: got.append(r),  # type: ignore[misc]
        owner=owner,
    )
    del captured, owner
    assert call.done.wait(5)
    qtbot.waitUntil(lambda: bool(got), timeout=5000)
    gc.collect()
    assert got == ["ran"]
    assert freed_on and set(freed_on) == {threading.get_ident()}
