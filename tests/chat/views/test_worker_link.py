"""Ending the chat worker never waits on the GUI thread; failures are reported, not shown raw."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from PySide6.QtCore import QObject

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.chat.views import worker_link
from rocmpanel.gui import report
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.runner import JobManager


class SlowJob(QObject):
    """A worker that takes ``exit`` but does not go: ``wait`` blocks like a busy process."""

    def __init__(self, goes: bool = False) -> None:
        super().__init__()
        self.running = True
        self.sent: list[str] = []
        self.cancelled = threading.Event()
        self._goes = goes

    def send(self, op: str, **fields: object) -> None:
        self.sent.append(op)

    def wait(self, timeout: float | None = None) -> JobOutcome | None:
        time.sleep(0.3 if self._goes else float(timeout or 0))
        if self._goes:
            self.running = False
            return JobOutcome(JobState.SUCCEEDED, 0, "done")
        return None

    def cancel(self) -> None:
        self.cancelled.set()
        self.running = False


def test_ending_the_worker_returns_at_once_and_cancels_it_later(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_link, "EXIT_WAIT_S", 0.5)
    job = SlowJob()
    started = time.perf_counter()
    worker_link.end_chat_worker(job)  # type: ignore[arg-type]
    assert time.perf_counter() - started < 0.1
    assert job.sent == ["exit"] and not job.cancelled.is_set()
    qtbot.waitUntil(job.cancelled.is_set, timeout=5000)


def test_a_worker_that_exits_in_time_is_not_cancelled(qtbot) -> None:
    job = SlowJob(goes=True)
    worker_link.end_chat_worker(job)  # type: ignore[arg-type]
    qtbot.waitUntil(lambda: not job.running, timeout=5000)
    qtbot.wait(100)
    assert not job.cancelled.is_set()


def test_errors_of_the_tab_go_through_report(qtbot, caplog: pytest.LogCaptureFixture) -> None:
    from rocmpanel.chat.views.tab import ChatTab

    shown: list[str] = []
    report.set_sink(shown.append)
    try:
        ctx = AppContext(Settings.load(), JobManager(grace_s=1.0), shown.append)
        tab = ChatTab(ctx)
        qtbot.addWidget(tab)
        with caplog.at_level(logging.WARNING, logger="rocmpanel.report"):
            tab.open_conversation(999)  # read off the GUI thread; the error comes back
            qtbot.waitUntil(lambda: "Conversation 999 does not exist." in shown)
        assert any("Opening the conversation" in r.getMessage() for r in caplog.records)
        banner = tab.banner
        banner.show_error(PanelError("The worker is gone.", "pipe closed"), "Asking", None, True)
        assert banner.label.text() == "The worker is gone." and banner.isVisibleTo(tab)
        tab.shutdown()
    finally:
        report.set_sink(None)
