"""The chat worker as the Chat tab sees it: its process, and a banner when it fails.

The worker is one persistent interactive job in the workload Python. The banner is shown
for worker errors (a refused folder, an out-of-memory) and when the process ends on its
own; after an out-of-memory or a crash it offers to reload the last model, as it was or
with a smaller setting.
"""

from __future__ import annotations

import contextlib

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from rocmpanel.base.errors import PanelError
from rocmpanel.chat.protocol import ALLOW_HUB_ARG, WORKER, LoadRequest, smaller_setting
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.process import JobOutcome, JobState
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
    """Ask a running worker to exit; cancel it when it has not gone in EXIT_WAIT_S."""
    if not job.running:
        return
    with contextlib.suppress(PanelError):
        job.send("exit")
    if job.wait(EXIT_WAIT_S) is None:
        job.cancel()


def describe_exit(outcome: JobOutcome) -> str:
    """Why the worker went, in a sentence (its last error line when it crashed)."""
    if outcome.state is JobState.CANCELLED:
        return "it was cancelled."
    if outcome.signal_name == "SIGKILL":
        return (
            "it was killed (SIGKILL; when nobody ended it on purpose, the system usually "
            "ran out of memory)."
        )
    if outcome.signal_name:
        return f"it was killed by {outcome.signal_name}."
    if outcome.exit_code not in (None, 0):
        last = ""
        for line in reversed(outcome.stderr_tail):
            # Progress bars redraw with carriage returns; keep only their final state.
            text = line.rsplit("\r", 1)[-1].strip()
            if text:
                last = text if len(text) <= 200 else text[:199] + "…"
                break
        return f"it exited with code {outcome.exit_code}." + (
            f" Last error: {last}" if last else ""
        )
    return outcome.message


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
        self.reload_button = QPushButton("Reload")
        self.reload_button.clicked.connect(lambda: self.reload_requested.emit(False))
        self.reload_smaller_button = QPushButton("Reload smaller")
        self.reload_smaller_button.clicked.connect(lambda: self.reload_requested.emit(True))
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.clicked.connect(self.hide)
        for button in (self.reload_button, self.reload_smaller_button, self.dismiss_button):
            row.addWidget(button)
        self.hide()

    def show_message(self, text: str, retry: LoadRequest | None, offer_reload: bool) -> None:
        """Show ``text``; the reload buttons only when asked and there is a load to retry."""
        self.label.setText(text)
        self.reload_button.setVisible(offer_reload and retry is not None)
        self.reload_smaller_button.setVisible(offer_reload and retry is not None)
        if retry is not None:
            precision, context = smaller_setting(retry.precision, retry.context_length)
            self.reload_smaller_button.setText(f"Reload with {precision.value}, context {context}")
        self.show()

    def show_worker_exit(
        self, outcome: JobOutcome, retry: LoadRequest | None, offer_reload: bool
    ) -> None:
        """Say that the worker process ended on its own, and why."""
        self.show_message(
            f"The chat worker stopped: {describe_exit(outcome)} The model is no longer loaded.",
            retry,
            offer_reload,
        )
