"""The Setup tab's "Workload Python" box: probes the torch build of the workload Python.

The probe is a job (``workers/probe.py`` in the workload Python, a child process that
imports torch), so nothing slow runs here; the box shows its progress and outcome and hands
each :class:`~rocmpanel.setup.probe_report.ProbeReport` to the tab through ``probed``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report

if TYPE_CHECKING:  # imported when the first probe ends, not at start-up
    from rocmpanel.setup.probe_report import ProbeReport

log = logging.getLogger(__name__)


DEMO_NOT_PROBED = QT_TRANSLATE_NOOP(
    "ProbeBox",
    "Not probed: the demo runs no jobs on this machine, and this machine's Python says "
    "nothing about the recorded GPUs.",
)


class ProbeBox(QGroupBox):
    """The probe's outcome, and a button to probe again."""

    probed = Signal(object)  # ProbeReport

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(translate("ProbeBox", "Workload Python (PyTorch)"), parent)
        self.ctx = ctx
        self._job: Any = None
        self.label = QLabel(translate("ProbeBox", "Not probed yet."))
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.button = QPushButton(translate("ProbeBox", "&Probe again"))
        self.button.clicked.connect(self.start)
        row = QHBoxLayout()
        row.addWidget(self.label, 1)
        row.addWidget(self.button, alignment=Qt.AlignmentFlag.AlignTop)
        QVBoxLayout(self).addLayout(row)

    @property
    def running(self) -> bool:
        return self._job is not None and bool(self._job.running)

    @Slot()
    def start(self) -> None:
        """Probe the workload Python (unless a probe runs already)."""
        if self.running:
            return
        if self.ctx.demo:  # the demo's GPUs are recordings: a probe here would mix machines
            self.label.setText(translate("ProbeBox", DEMO_NOT_PROBED))
            self.button.setEnabled(False)
            return
        from rocmpanel.jobs.spec import JobSpec  # with the first job, not at start-up

        self.label.setText(translate("ProbeBox", "Probing the workload Python…"))
        self.button.setEnabled(False)
        try:
            job = self.ctx.jobs.start(JobSpec("probe", "probe", python=self.ctx.workload_python()))
        except PanelError as exc:
            report(exc, translate("ProbeBox", "Starting the probe"), label=self.label)
            self.button.setEnabled(True)
            return
        self._job = job
        job.result_received.connect(self._on_job_result_received)
        job.finished.connect(self._on_job_finished)

    def show_probe(self, probe: ProbeReport, *, pasted: bool = False) -> None:
        """Show a probe's summary (``pasted``: one read from pasted collect_env output)."""
        prefix = (
            translate("ProbeBox", "From the pasted collect_env output:") + "\n" if pasted else ""
        )
        self.label.setText(prefix + "\n".join(probe.summary_lines()))

    def show_text(self, text: str) -> None:
        self.label.setText(text)

    def shutdown(self) -> None:
        """Cancel a running probe (the window is closing)."""
        if self.running:
            self._job.cancel()

    @Slot(object)
    def _on_job_result_received(self, result: Any) -> None:
        from rocmpanel.jobs.spec import resolve_python
        from rocmpanel.setup.probe_report import ProbeReport

        # Shared with About, which shows it instead of probing again.
        self.ctx.probe_result.set(result.data, resolve_python(self.ctx.workload_python()))
        self.probed.emit(ProbeReport.from_dict(result.data))

    @Slot(object)
    def _on_job_finished(self, outcome: Any) -> None:
        self.button.setEnabled(True)
        self._job = None
        if not outcome.was_successful() or outcome.result is None:
            log.warning("the probe failed: %s", outcome)
            self.label.setText(
                translate("ProbeBox", "The probe failed: {outcome}").format(outcome=outcome)
            )
