"""StatusLine runs one slow call at a time off the GUI thread and reports its errors
through report(); report() also writes into text boxes and lets a window release its sink."""

from __future__ import annotations

import logging
import threading

import pytest
from PySide6.QtWidgets import QPlainTextEdit
from pytestqt.qtbot import QtBot

from rocmpanel.base.errors import PanelError
from rocmpanel.gui import report as report_module
from rocmpanel.gui.report import release_sink, report, set_sink
from rocmpanel.gui.status_line import StatusLine


@pytest.fixture
def line(qtbot: QtBot) -> StatusLine:
    widget = StatusLine()
    qtbot.addWidget(widget)
    return widget


def test_one_call_at_a_time_with_a_busy_bar(qtbot: QtBot, line: StatusLine) -> None:
    release = threading.Event()
    got: list[tuple[object, object]] = []
    try:
        assert line.run("Writing", lambda: release.wait(5) and 7, lambda r, e: got.append((r, e)))
        assert line.busy and line.doing == "Writing"
        assert line.text() == "Writing…" and not line.progress.isHidden()
        assert not line.run("Writing again", lambda: 0, lambda r, e: got.append((r, e)))
        with qtbot.waitSignal(line.busy_changed, timeout=5000) as blocker:
            release.set()
    finally:
        release.set()
    assert blocker.args == [False]
    assert got == [(7, None)]
    assert not line.busy and line.progress.isHidden() and line.text() == ""


def test_errors_show_here_and_their_detail_goes_to_the_log(
    qtbot: QtBot, line: StatusLine, caplog: pytest.LogCaptureFixture
) -> None:
    def fail() -> None:
        raise PanelError("Could not write ~/.profile.", "EROFS: read-only file system")

    errors: list[BaseException] = []

    def on_done(_result: object, error: BaseException | None) -> None:
        assert error is not None
        errors.append(error)
        line.show_error(error, "Applying the changes")

    with caplog.at_level(logging.WARNING, logger="rocmpanel.report"):
        with qtbot.waitSignal(line.busy_changed, timeout=5000):
            line.run("Applying the changes", fail, on_done)
        qtbot.waitUntil(lambda: not line.busy, timeout=5000)
    assert line.text() == "Could not write ~/.profile."
    assert "EROFS" in caplog.text
    assert "color" in line.message.styleSheet()


def test_plain_messages_also_reach_notify(qtbot: QtBot) -> None:
    seen: list[str] = []
    line = StatusLine(notify=seen.append)
    qtbot.addWidget(line)
    line.show_message("Wrote ~/.profile.")
    line.show_message("Not parsed.", error=True)
    assert seen == ["Wrote ~/.profile."]


def test_report_writes_into_a_text_box(qtbot: QtBot) -> None:
    box = QPlainTextEdit()
    qtbot.addWidget(box)
    report(PanelError("The workload Python does not exist."), "Probing", label=box)
    assert box.toPlainText() == "The workload Python does not exist."


def test_release_sink_keeps_another_windows_sink() -> None:
    first: list[str] = []
    second: list[str] = []
    report_module._pending.clear()
    set_sink(first.append)
    set_sink(second.append)
    release_sink(first.append)  # the first window closing after the second opened
    report(PanelError("still shown"))
    release_sink(second.append)
    report(PanelError("kept for later"))
    assert second == ["still shown"] and first == []
    assert report_module._pending == ["kept for later"]
    report_module._pending.clear()
