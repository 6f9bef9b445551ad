"""The PyTorch tab: the install plan for the detected GPU, one-click install into a new managed
environment (progress, current step, log, cancel), the environment list, and validation.

GPU detection runs on a plain thread and comes back through a signal; installs and
validation run as jobs (child processes) through ``ctx.jobs``.
"""

from __future__ import annotations

import contextlib
import html
import logging
import threading
from collections.abc import Callable, Mapping

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFontDatabase, QShowEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.log_view import LogText, format_log_line
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.protocol import LogLine, Progress
from rocmpanel.jobs.runner import Job
from rocmpanel.pytorch import managed_envs
from rocmpanel.pytorch import operations as torch_jobs
from rocmpanel.pytorch.manifest import Manifest, Override, load_manifest
from rocmpanel.pytorch.operations import Machine
from rocmpanel.pytorch.plan import InstallPlan, format_bytes
from rocmpanel.pytorch.views.envs_panel import TorchEnvsPanel
from rocmpanel.pytorch.views.validation_panel import TorchValidationPanel

log = logging.getLogger(__name__)


class PyTorchTab(QWidget):
    """Plan → Install → pick the environment → Validate."""

    title = "PyTorch"
    machine_detected = Signal(object, object)  # Machine, python version (str | None)
    plan_changed = Signal(object)  # InstallPlan
    install_finished = Signal(object)  # JobOutcome

    def __init__(
        self,
        ctx: AppContext,
        parent: QWidget | None = None,
        *,
        detect: Callable[[], Machine] | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self._detect = detect or torch_jobs.detect_machine
        self.machine: Machine | None = None
        self.python_version: str | None = None
        self.plan: InstallPlan | None = None
        self.install_job: Job | None = None
        self._ticket: managed_envs.InstallTicket | None = None
        self._manifest: Manifest | None = None
        self._build_ui()
        self.machine_detected.connect(self._on_machine_detected)
        self._detected_once = False

    def showEvent(self, event: QShowEvent) -> None:
        """Detect when first shown, so building the window stays cheap."""
        super().showEvent(event)
        if not self._detected_once:
            self._detected_once = True
            self.redetect()

    # -- layout ------------------------------------------------------------------------
    def _build_ui(self) -> None:
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.gpu_label = QLabel("Detecting the GPU…")
        self.gpu_label.setWordWrap(True)
        self.gfx_edit = QLineEdit()
        self.gfx_edit.setPlaceholderText("detected")
        self.gfx_edit.setToolTip("Plan for another GPU target, e.g. gfx1100")
        self.gfx_edit.setMaximumWidth(140)
        self.gfx_edit.editingFinished.connect(self.replan)
        self.index_edit = QLineEdit()
        self.index_edit.setPlaceholderText("planned index (or set a mirror in Settings)")
        self.index_edit.setToolTip("Install from this index instead, e.g. your own mirror of it")
        self.index_edit.editingFinished.connect(self.replan)
        self.redetect_button = QPushButton("Re&detect")
        self.redetect_button.clicked.connect(self.redetect)

        self.build_label = QLabel()
        self.build_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.build_label.setWordWrap(True)
        self.command_edit = QLineEdit()
        self.command_edit.setReadOnly(True)
        self.command_edit.setFont(mono)
        self.command_edit.setToolTip("The exact pip command the install runs in the new env")
        self.size_label = QLabel()
        self.warnings_label = QLabel()
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setTextFormat(Qt.TextFormat.RichText)

        self.name_edit = QLineEdit()
        self.name_edit.setToolTip("Name of the new environment (a new folder under envs/)")
        self.install_button = QPushButton("&Install")
        self.install_button.clicked.connect(self.start_install)
        self.cancel_button = QPushButton("&Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p%")
        self.step_label = QLabel("Nothing is being installed.")
        self.step_label.setWordWrap(True)
        self.log_text = LogText()
        self.log_text.setMaximumHeight(110)
        self.log_text.setPlaceholderText("pip's output appears here during an install.")

        target_row = QHBoxLayout()
        target_row.addWidget(self.gpu_label, 1)
        target_row.addWidget(QLabel("gfx:"))
        target_row.addWidget(self.gfx_edit)
        target_row.addWidget(self.redetect_button)
        form = QFormLayout()
        form.addRow("Build:", self.build_label)
        form.addRow("Command:", self.command_edit)
        form.addRow("Size:", self.size_label)
        form.addRow("Index:", self.index_edit)
        install_row = QHBoxLayout()
        install_row.addWidget(QLabel("Environment:"))
        install_row.addWidget(self.name_edit, 1)
        install_row.addWidget(self.install_button)
        install_row.addWidget(self.cancel_button)
        plan_box = QGroupBox("Install plan")
        plan_layout = QVBoxLayout(plan_box)
        plan_layout.addLayout(target_row)
        plan_layout.addLayout(form)
        plan_layout.addWidget(self.warnings_label)
        plan_layout.addLayout(install_row)
        plan_layout.addWidget(self.progress)
        plan_layout.addWidget(self.step_label)
        plan_layout.addWidget(self.log_text)

        self.envs = TorchEnvsPanel(self.ctx)
        envs_box = QGroupBox("Environments")
        QVBoxLayout(envs_box).addWidget(self.envs)

        self.validation = TorchValidationPanel(self.ctx, self._validation_target, self._overrides)
        validation_box = QGroupBox("Validation")
        QVBoxLayout(validation_box).addWidget(self.validation)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(plan_box)
        top.addWidget(envs_box)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(top)
        outer.addWidget(validation_box)
        outer.setStretchFactor(0, 1)
        outer.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(outer)
        self._show_plan(None)

    # -- detection and plan ------------------------------------------------------------
    @Slot()
    def redetect(self) -> None:
        self.redetect_button.setEnabled(False)
        self.gpu_label.setText("Detecting the GPU…")
        base = torch_jobs.base_python(self.ctx.settings)

        def work() -> None:
            machine = self._detect()
            version = torch_jobs.python_version_of(base)
            # The tab may have been closed while detection ran.
            with contextlib.suppress(RuntimeError):
                self.machine_detected.emit(machine, version)

        threading.Thread(target=work, name="torch-detect", daemon=True).start()

    @Slot(object, object)
    def _on_machine_detected(self, machine: Machine, python_version: str | None) -> None:
        self.machine = machine
        self.python_version = python_version
        self.redetect_button.setEnabled(True)
        if machine.gfx:
            vram = f", {machine.vram_bytes / 2**30:.0f} GiB" if machine.vram_bytes else ""
            rocm = f"; ROCm {machine.rocm_version}" if machine.rocm_version else ""
            text = f"GPU: <b>{html.escape(machine.gpu_name or '?')}</b> ({machine.gfx}{vram}){rocm}"
        else:
            text = f"<b>No AMD GPU detected.</b> {html.escape(machine.note)}"
        base = torch_jobs.base_python(self.ctx.settings)
        text += f"<br>Base Python {python_version or '?'} ({html.escape(base)})"
        self.gpu_label.setText(text)
        self.replan()

    def _manifest_or_error(self) -> Manifest | None:
        try:
            self._manifest = load_manifest()
        except PanelError as exc:
            self.warnings_label.setText(
                f"<span style='color:#c62828'>{html.escape(str(exc))}</span>"
            )
            return None
        return self._manifest

    def _overrides(self) -> Mapping[str, Override]:
        return self._manifest.overrides if self._manifest else {}

    @Slot()
    def replan(self) -> None:
        if self.machine is None:
            return
        manifest = self._manifest_or_error()
        if manifest is None:
            self._show_plan(None)
            return
        plan = torch_jobs.make_plan(
            self.ctx.settings,
            self.machine,
            gfx=self.gfx_edit.text().strip() or None,
            python_version=self.python_version,
            index_url=self.index_edit.text().strip() or None,
            manifest=manifest,
        )
        self._show_plan(plan)
        for problem in manifest.problems:
            self.ctx.notify(problem)

    def _show_plan(self, plan: InstallPlan | None) -> None:
        self.plan = plan
        installing = self.install_job is not None and self.install_job.running
        if plan is None:
            self.build_label.setText("—")
            self.command_edit.clear()
            self.size_label.setText("—")
            self.install_button.setEnabled(False)
            return
        if not plan.supported:
            self.build_label.setText(
                f"<span style='color:#c62828'><b>No install:</b> "
                f"{html.escape(plan.refusal or '')}</span>"
            )
            self.command_edit.clear()
            self.size_label.setText("—")
            self.warnings_label.setText("")
        else:
            preview = " — <b>preview</b>" if plan.preview else ""
            pythons = ", ".join(plan.python_versions)
            self.build_label.setText(
                f"<b>torch {plan.torch_version}</b> for ROCm {plan.rocm_build} "
                f"({plan.index_kind}: {html.escape(plan.index_url or '')}){preview}<br>"
                f"Wheels for Python {pythons}"
            )
            self.command_edit.setText(plan.command)
            self.command_edit.setCursorPosition(0)
            self.size_label.setText(
                f"download ≈ {format_bytes(plan.download_bytes)}, free disk needed ≈ "
                f"{format_bytes(plan.free_disk_bytes)} (estimates)"
            )
            items = "".join(f"<li>{html.escape(w)}</li>" for w in plan.warnings)
            self.warnings_label.setText(
                f"<ul style='margin:0; color:#8d5b00'>{items}</ul>" if items else ""
            )
            if not self.name_edit.isModified() or not self.name_edit.text():
                self.name_edit.setText(torch_jobs.default_env_name(plan))
        self.plan_changed.emit(plan)
        self.install_button.setEnabled(plan.supported and plan.python_ok and not installing)
        self.install_button.setToolTip(
            ""
            if plan.python_ok
            else "No wheels for this Python: set 'Base Python for new environments' in Settings"
        )

    # -- install -----------------------------------------------------------------------
    @Slot()
    def start_install(self) -> None:
        plan = self.plan
        busy = self.install_job is not None and self.install_job.running
        if plan is None or not plan.supported or not plan.python_ok or busy:
            return
        settings = self.ctx.settings
        try:
            ticket, spec = torch_jobs.prepare_install(plan, self.name_edit.text().strip(), settings)
            job = self.ctx.jobs.start(spec)
        except PanelError as exc:
            QMessageBox.warning(self, "Cannot install", str(exc))
            return
        self._ticket = ticket
        self.install_job = job
        self.log_text.clear()
        self.progress.setValue(0)
        self.step_label.setText("Starting…")
        self.install_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        job.progress_changed.connect(self._on_install_progress_changed)
        job.log_added.connect(self._on_install_log_added)
        job.finished.connect(self._on_install_finished)

    @Slot()
    def _on_cancel_clicked(self) -> None:
        if self.install_job is not None and self.install_job.running:
            self.step_label.setText("Cancelling…")
            self.install_job.cancel()

    @Slot(object)
    def _on_install_progress_changed(self, progress: Progress) -> None:
        if progress.fraction is not None:
            self.progress.setValue(int(progress.fraction * 1000))
        self.step_label.setText(progress.step)

    @Slot(list)
    def _on_install_log_added(self, lines: list[LogLine]) -> None:
        self.log_text.append_lines([format_log_line(line) for line in lines])

    @Slot(object)
    def _on_install_finished(self, outcome: JobOutcome) -> None:
        ticket, self._ticket = self._ticket, None
        self.install_job = None
        self.cancel_button.setEnabled(False)
        if ticket is None:
            return
        if outcome.was_successful():
            try:
                env = managed_envs.finish_install(ticket, outcome.result)
                managed_envs.activate(self.ctx.settings, str(env.python))
            except PanelError as exc:
                self.step_label.setText(f"Install failed: {exc.message}")
            else:
                versions = ", ".join(f"{k} {v}" for k, v in env.installed.items())
                self.step_label.setText(f"Installed {env.name} ({versions}); it is now active.")
                self.ctx.notify(f"PyTorch environment {env.name} installed and active.")
        else:
            managed_envs.discard(ticket)
            what = "Cancelled" if outcome.state.value == "cancelled" else "Install failed"
            self.step_label.setText(
                f"{what}: {outcome.message} The partial environment was removed; the active "
                "environment is unchanged."
            )
            self.progress.setValue(0)
        self.envs.refresh()
        self.name_edit.setModified(False)
        self.replan()
        self.install_finished.emit(outcome)

    # -- validation --------------------------------------------------------------------
    def _validation_target(self) -> tuple[str | None, int | None]:
        machine = self.machine
        gfx = self.gfx_edit.text().strip() or (machine.gfx if machine else None)
        return gfx, machine.vram_bytes if machine else None

    def shutdown(self) -> None:
        if self.install_job is not None and self.install_job.running:
            self.install_job.cancel()
            self.install_job.wait(10)
            if self._ticket is not None:
                managed_envs.discard(self._ticket)
        self.validation.shutdown()
