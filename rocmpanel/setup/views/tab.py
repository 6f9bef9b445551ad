"""The Setup tab: GPUs with compatibility verdicts, the stack checklist with fixes, the
workload Python's torch build, pasted-output analysis and a Markdown report.

Detection (which runs rocminfo) happens in a worker object on a QThread; the probe runs as
a job in the workload Python. Fixes that set or unset a variable are emitted as
``env_change_requested`` for the environment editor; fixes that need privileges are shown
and copied, never run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QThread, Signal, Slot
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.machine.gpu_model import HostFacts, SystemInfo
from rocmpanel.setup.checklist import Check, FixKind
from rocmpanel.setup.probe_report import ProbeReport
from rocmpanel.setup.report import DoctorReport, build_report
from rocmpanel.setup.views.checklist_box import ChecklistBox, clear_grid
from rocmpanel.setup.views.detect_worker import DetectWorker, default_detector
from rocmpanel.setup.views.gpu_card import GpuCard

log = logging.getLogger(__name__)


class SetupTab(QWidget):
    """GPUs, verdicts, checklist, probe; other pages (the env editor) via :meth:`add_page`."""

    title = "Setup"
    env_change_requested = Signal(str, object)  # name, value (None = unset)
    report_changed = Signal(object)  # DoctorReport, whenever the shown report changes

    #: What Refresh runs off the GUI thread; tests replace it.
    detector: Callable[[], tuple[SystemInfo, HostFacts]] = staticmethod(default_detector)
    #: Whether Refresh also probes the workload Python (a child process importing torch).
    probe_on_refresh = True

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.report: DoctorReport | None = None
        self._system: SystemInfo | None = None
        self._host = HostFacts()
        self._probe: ProbeReport | None = None
        self._probe_job: Any = None
        self._captured: tuple[str, ...] = ()
        self._thread: QThread | None = None
        self._worker: DetectWorker | None = None
        self._build()
        self._add_env_editor()
        refresh_key = QShortcut(QKeySequence(QKeySequence.StandardKey.Refresh), self)
        refresh_key.activated.connect(self.refresh)
        self._shown_once = False

    def showEvent(self, event: QShowEvent) -> None:
        """Detect when first shown, so building the window stays cheap."""
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            self.refresh()

    # ---- layout -------------------------------------------------------------------------

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.pages = QTabWidget()
        outer.addWidget(self.pages)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        overview = QWidget()
        scroll.setWidget(overview)
        self.pages.addTab(scroll, "Overview")
        layout = QVBoxLayout(overview)

        bar = QHBoxLayout()
        self.heading = QLabel("<b>This machine</b>")
        bar.addWidget(self.heading)
        bar.addStretch(1)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(160)
        self.busy.setFormat("")
        self.busy_label = QLabel("")
        bar.addWidget(self.busy_label)
        bar.addWidget(self.busy)
        self.back_button = QPushButton("&Back to this machine")
        self.back_button.clicked.connect(self._on_back_clicked)
        self.refresh_button = QPushButton("&Refresh")
        self.refresh_button.setToolTip("Detect again (F5)")
        self.refresh_button.clicked.connect(self.refresh)
        self.paste_button = QPushButton("&Analyse pasted output…")
        self.paste_button.clicked.connect(self._on_paste_clicked)
        self.copy_button = QPushButton("&Copy report")
        self.copy_button.setToolTip("Copy a Markdown report for a forum post")
        self.copy_button.clicked.connect(self.copy_report)
        for button in (self.back_button, self.refresh_button, self.paste_button, self.copy_button):
            bar.addWidget(button)
        layout.addLayout(bar)

        self.system_label = QLabel("")
        self.system_label.setWordWrap(True)
        self.system_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.system_label)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #b71c1c;")
        layout.addWidget(self.error_label)

        self.gpu_box = QGroupBox("GPUs")
        self.gpu_grid = QGridLayout(self.gpu_box)
        self.gpu_grid.setColumnStretch(3, 1)
        layout.addWidget(self.gpu_box)

        self.check_box = ChecklistBox()
        self.check_box.fix_clicked.connect(self._apply_fix)
        self.check_grid = self.check_box.grid
        layout.addWidget(self.check_box)

        probe_box = QGroupBox("Workload Python (PyTorch)")
        probe_layout = QVBoxLayout(probe_box)
        self.probe_label = QLabel("Not probed yet.")
        self.probe_label.setWordWrap(True)
        self.probe_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        probe_row = QHBoxLayout()
        probe_row.addWidget(self.probe_label, 1)
        self.probe_button = QPushButton("&Probe again")
        self.probe_button.clicked.connect(self.start_probe)
        probe_row.addWidget(self.probe_button, alignment=Qt.AlignmentFlag.AlignTop)
        probe_layout.addLayout(probe_row)
        layout.addWidget(probe_box)

        self.notes_label = QLabel("")
        self.notes_label.setWordWrap(True)
        layout.addWidget(self.notes_label)
        layout.addStretch(1)
        self._set_busy(None)

    def add_page(self, widget: QWidget, title: str) -> None:
        """Add a page (e.g. the environment-variable editor) after Overview."""
        self.pages.addTab(widget, title)

    def _add_env_editor(self) -> None:
        """The Environment page; the checklist's env fixes are staged there for review.

        The editor itself is built when the page is first opened (or a fix is sent to it):
        it reads the catalogue and every store, which start-up need not wait for.
        """
        self._env_page = QWidget()
        QVBoxLayout(self._env_page).setContentsMargins(0, 0, 0, 0)
        self._env_editor: Any = None
        self.add_page(self._env_page, "Environment")
        self.pages.currentChanged.connect(self._on_pages_current_changed)
        self.env_change_requested.connect(self._on_env_change_requested)

    @property
    def env_editor(self) -> Any:
        """The EnvEditor of the Environment page (built on first use)."""
        if self._env_editor is None:
            from rocmpanel.envvars.views.editor import EnvEditor

            self._env_editor = EnvEditor(self.ctx)
            self._env_editor.applied.connect(self.refresh)
            self._env_page.layout().addWidget(self._env_editor)
        return self._env_editor

    @Slot(int)
    def _on_pages_current_changed(self, _index: int) -> None:
        if self.pages.currentWidget() is self._env_page:
            self.env_editor  # noqa: B018 (builds it)

    @Slot(str, object)
    def _on_env_change_requested(self, name: str, value: str | None) -> None:
        self.env_editor.propose(name, value)
        self.pages.setCurrentWidget(self._env_page)

    # ---- detection ----------------------------------------------------------------------

    @Slot()
    def refresh(self) -> None:
        """Detect this machine again (off the GUI thread) and probe the workload Python."""
        if self._thread is not None:
            return
        self._captured = ()
        self._set_busy("Detecting GPUs…")
        self.error_label.setText("")
        self._thread = QThread(self)
        self._worker = DetectWorker(type(self).detector)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.finished.connect(self._on_worker_finished)
        self._thread.start()
        if self.probe_on_refresh:
            self.start_probe()

    @Slot(object, object)
    def _on_worker_finished(self, result: object, error: object) -> None:
        thread, worker = self._thread, self._worker
        self._thread = self._worker = None
        if thread is not None:
            thread.quit()
            thread.wait()
        if worker is not None:
            worker.deleteLater()
        self._set_busy(None)
        if error is not None or not isinstance(result, tuple):
            message = error.message if isinstance(error, PanelError) else str(error)
            self.error_label.setText(f"Detection failed: {message}")
            return
        if self._captured:
            return  # the user switched to pasted output meanwhile
        self._system, self._host = result
        self._rebuild()

    def _set_busy(self, text: str | None) -> None:
        self.busy.setVisible(text is not None)
        self.busy_label.setText(text or "")
        self.refresh_button.setEnabled(text is None)
        self.back_button.setVisible(bool(self._captured))

    # ---- probe --------------------------------------------------------------------------

    @Slot()
    def start_probe(self) -> None:
        if self._probe_job is not None and self._probe_job.running:
            return
        self.probe_label.setText("Probing the workload Python…")
        self.probe_button.setEnabled(False)
        try:
            job = self.ctx.jobs.start(JobSpec("probe", "probe", python=self.ctx.workload_python()))
        except PanelError as exc:
            self.probe_label.setText(f"The probe could not start: {exc.message}")
            self.probe_button.setEnabled(True)
            return
        self._probe_job = job
        job.result_received.connect(self._on_probe_result)
        job.finished.connect(self._on_probe_finished)

    @Slot(object)
    def _on_probe_result(self, result: Any) -> None:
        self._probe = ProbeReport.from_dict(result.data)
        if not self._captured:
            self._rebuild()

    @Slot(object)
    def _on_probe_finished(self, outcome: Any) -> None:
        self.probe_button.setEnabled(True)
        self._probe_job = None
        if not outcome.was_successful() or outcome.result is None:
            self.probe_label.setText(f"The probe failed: {outcome}")
        else:
            self._show_probe()

    def _show_probe(self) -> None:
        probe = self.report.probe if self.report else self._probe
        if probe is None:
            return
        prefix = "From the pasted collect_env output:\n" if self._captured else ""
        self.probe_label.setText(prefix + "\n".join(probe.summary_lines()))

    # ---- pasted output ------------------------------------------------------------------

    def analyse_texts(
        self, texts: list[str], rocm_version: str | None = None, os_name: str | None = None
    ) -> bool:
        """Show the system that pasted outputs describe; False (with a message) when the
        text is not recognised."""
        from rocmpanel.setup.captured import analyse_texts

        try:
            captured = analyse_texts(texts, rocm_version, os_name)
        except PanelError as exc:
            self.error_label.setText(exc.message)
            return False
        self._captured = tuple(k.value for k in captured.kinds)
        self.error_label.setText("")
        self._set_busy(None)
        self.report = build_report(captured.system, captured.host, captured.probe, self._captured)
        self._render()
        return True

    @Slot()
    def _on_paste_clicked(self) -> None:
        from rocmpanel.setup.views.paste_dialog import PasteDialog

        dialog = PasteDialog(self)
        if not dialog.exec():
            return
        texts = dialog.texts()
        if not texts:
            QMessageBox.information(self, "Analyse pasted output", "Nothing was pasted.")
            return
        if not self.analyse_texts(texts, dialog.rocm_version_value(), dialog.os_value()):
            QMessageBox.warning(self, "Analyse pasted output", self.error_label.text())

    @Slot()
    def _on_back_clicked(self) -> None:
        self._captured = ()
        self._rebuild()

    # ---- rendering ----------------------------------------------------------------------

    def _rebuild(self) -> None:
        if self._system is None:
            return
        self.report = build_report(self._system, self._host, self._probe)
        self._render()

    def _render(self) -> None:
        report = self.report
        if report is None:
            return
        self._set_busy(self.busy_label.text() or None)
        system = report.system
        if self._captured:
            self.heading.setText(f"<b>Pasted output</b> ({', '.join(self._captured)})")
        else:
            self.heading.setText("<b>This machine</b>")
        self.system_label.setText(
            f"OS: {system.os}{f' ({system.os_version})' if system.os_version else ''} · "
            f"ROCm: {system.rocm_version or 'not found'} · Driver: {system.driver or 'n/a'}"
        )
        clear_grid(self.gpu_grid)
        if not system.gpus:
            none = QLabel("No AMD GPU was found. The checklist below still applies.")
            none.setWordWrap(True)
            self.gpu_grid.addWidget(none, 0, 0, 1, 4)
        for i, (gpu, verdict) in enumerate(report.gpu_rows()):
            self.gpu_grid.addWidget(GpuCard(gpu, verdict, i), i // 3, i % 3)
        self.check_box.show_checks(report.checks)
        if report.probe is not None:
            self._show_probe()
        elif self._captured:
            self.probe_label.setText("The pasted output says nothing about PyTorch.")
        self.notes_label.setText("\n".join(f"Note: {n}" for n in system.notes))
        self.report_changed.emit(report)

    @Slot(object)
    def _apply_fix(self, check: Check) -> None:
        fix = check.fix
        if fix is None:
            return
        if fix.kind in (FixKind.ENV_SET, FixKind.ENV_UNSET) and fix.name:
            value = fix.value if fix.kind is FixKind.ENV_SET else None
            self.env_change_requested.emit(fix.name, value)
            self.ctx.notify(f"{fix.text}: sent to the environment editor.")
            return
        QGuiApplication.clipboard().setText(fix.text)
        self.ctx.notify(f"Copied: {fix.text}")

    @Slot()
    def copy_report(self) -> None:
        if self.report is None:
            self.ctx.notify("No report yet: detection is still running.")
            return
        QGuiApplication.clipboard().setText(self.report.to_markdown())
        self.ctx.notify("Report copied as Markdown.")

    def shutdown(self) -> None:
        if self._probe_job is not None and self._probe_job.running:
            self._probe_job.cancel()
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait(5000)
