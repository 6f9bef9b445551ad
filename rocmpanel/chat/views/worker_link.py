"""The chat worker as the Chat tab sees it: starting and ending it, and a banner when it fails.

The worker is one persistent interactive job in the workload Python. Ending it asks it to
exit and waits for that off the GUI thread; one that has not gone after ``EXIT_WAIT_S`` is
cancelled. The banner is shown for worker errors (a refused folder, an out-of-memory) and
when the process ends on its own; after an out-of-memory or a crash it offers to reload
the last model, as it was or with a smaller setting.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.chat.protocol import ALLOW_HUB_ARG, WORKER, LoadRequest
from rocmpanel.chat.session import Failure
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.runner import Job
from rocmpanel.jobs.spec import JobSpec

EXIT_WAIT_S = 3.0


def start_chat_worker(ctx: AppContext, allow_hub: bool) -> Job:
    """Start the chat worker in the workload Python; hub downloads only with ``allow_hub``."""
    spec = JobSpec(
        "chat",
        WORKER,
        args=(ALLOW_HUB_ARG,) if allow_hub else (),
        python=ctx.workload_python(),
        interactive=True,
    )
    return ctx.jobs.start(spec)


def end_chat_worker(job: Job) -> None:
    """Ask a running worker to exit and return at once; the wait for it runs in the
    background, and a worker still there after EXIT_WAIT_S is cancelled."""
    if not job.running:
        return
    try:
        job.send("exit")
    except PanelError as exc:  # it went between the check and the send
        report(exc, translate("worker_link", "Ending the chat worker"))
        return

    def cancel_if_still_running(outcome: JobOutcome | None, error: BaseException | None) -> None:
        if outcome is None and job.running:
            job.cancel()

    run_in_background(
        lambda: job.wait(EXIT_WAIT_S),
        cancel_if_still_running,
        owner=job,
        what="waiting for the chat worker to exit",
    )


class WorkerBanner(QFrame):
    """A message about the worker with Reload, Reload smaller and Dismiss buttons."""

    reload_requested = Signal(bool)  # smaller

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(
            "QFrame { background-color:#fdecea; border:1px solid #e0a0a0; border-radius:4px; }"
            "QLabel { border:none; color:#7a1010; }"
        )
        row = QHBoxLayout(self)
        self.label = QLabel()
        self.label.setWordWrap(True)
        row.addWidget(self.label, 1)
        self.reload_button = QPushButton(translate("WorkerBanner", "Reload"))
        self.reload_button.clicked.connect(lambda: self.reload_requested.emit(False))
        self.reload_smaller_button = QPushButton(translate("WorkerBanner", "Reload smaller"))
        self.reload_smaller_button.clicked.connect(lambda: self.reload_requested.emit(True))
        self.dismiss_button = QPushButton(translate("WorkerBanner", "Dismiss"))
        self.dismiss_button.clicked.connect(self.hide)
        for button in (self.reload_button, self.reload_smaller_button, self.dismiss_button):
            row.addWidget(button)
        self.hide()

    def show_message(self, text: str, retry: LoadRequest | None, offer_reload: bool) -> None:
        """Show ``text``; the reload buttons only when asked and there is a load to retry."""
        self.label.setText(text)
        self._offer(retry, offer_reload)

    def show_failure(self, failure: Failure, retry: LoadRequest | None) -> None:
        """A worker error or exit, as the session judged it."""
        self.show_message(failure.message, retry, failure.offer_reload)

    def show_error(
        self, error: PanelError, doing: str, retry: LoadRequest | None, offer_reload: bool
    ) -> None:
        """A failure to talk to the worker: reported (message here, detail in the log)."""
        report(error, doing, label=self.label)
        self._offer(retry, offer_reload)

    def _offer(self, retry: LoadRequest | None, offer_reload: bool) -> None:
        self.reload_button.setVisible(offer_reload and retry is not None)
        self.reload_smaller_button.setVisible(offer_reload and retry is not None)
        if retry is not None:
            smaller = retry.smaller()
            self.reload_smaller_button.setText(
                translate("WorkerBanner", "Reload with {precision}, context {context}").format(
                    precision=smaller.precision.value, context=smaller.context_length
                )
            )
        self.show()
