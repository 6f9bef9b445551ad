"""Help → About: versions, where things are kept, the machine's GPUs (from the shared
inventory) and the workload environment's probe."""

from __future__ import annotations

import platform

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, Slot, qVersion
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel import __version__
from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.base.frozen import own_python
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.units import format_memory
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.icons import app_icon
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.gui.report import report as report_error
from rocmpanel.gui.report import user_message
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.runner import Job
from rocmpanel.jobs.spec import JobSpec, resolve_python
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.setup.probe_report import ProbeReport
from rocmpanel.setup.views.probe_box import DEMO_NOT_PROBED

DETECTING = QT_TRANSLATE_NOOP("GpuBox", "Detecting…")
NO_AMD_GPU = QT_TRANSLATE_NOOP("GpuBox", "No AMD GPU was found.")


def gpu_line(gpu: GpuInfo) -> str:
    """One GPU in a line: name, gfx target, VRAM, PCI slot (what is known of them)."""
    parts = [gpu.name]
    if gpu.gfx:
        parts.append(gpu.gfx)
    if gpu.vram_bytes is not None:
        memory = format_memory(gpu.vram_bytes, digits=1)
        parts.append(translate("about", "{memory} VRAM").format(memory=memory))
    if gpu.integrated:
        parts.append(translate("about", "integrated"))
    if gpu.bdf:
        parts.append(gpu.bdf)
    return " · ".join(parts)


class GpuBox(QGroupBox):
    """The GPUs of the shared inventory; follows it as it is detected or refreshed."""

    def __init__(self, inventory: InventoryHolder, parent: QWidget | None = None) -> None:
        super().__init__(translate("GpuBox", "GPUs"), parent)
        self.inventory = inventory
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        QVBoxLayout(self).addWidget(self.text)
        inventory.changed.connect(self._on_inventory_changed)
        inventory.failed.connect(self._on_inventory_failed)
        if inventory.current is not None:
            self._show(inventory.current)
        elif inventory.error is not None and not inventory.busy:
            self._on_inventory_failed(inventory.error)
        else:
            self.text.setText(translate("GpuBox", DETECTING))
            inventory.ensure()  # normally already started after the window's first paint

    def _show(self, inventory: Inventory) -> None:
        if not inventory.has_amd_gpu:
            self.text.setText(translate("GpuBox", NO_AMD_GPU))
            return
        lines = [gpu_line(gpu) for gpu in inventory.discrete_first()]
        system = inventory.system
        if system.rocm_version:
            lines.append(f"ROCm {system.rocm_version}")
        self.text.setText("\n".join(lines))

    @Slot(object)
    def _on_inventory_changed(self, inventory: Inventory) -> None:
        self._show(inventory)

    @Slot(object)
    def _on_inventory_failed(self, error: BaseException | None) -> None:
        # The holder logged the failure with its traceback; say it in the user's words.
        if error is None:
            self.text.setText(translate("GpuBox", "The GPUs could not be detected."))
        else:
            self.text.setText(user_message(error, translate("GpuBox", "Detecting the GPUs")))


NOT_PROBED = QT_TRANSLATE_NOOP("WorkloadProbeBox", "Not probed yet.")


class WorkloadProbeBox(QGroupBox):
    """The workload Python's torch build and the GPUs torch sees: the probe Setup already
    ran (``ctx.probe_result``), else "Not probed yet."; Probe runs it again and shares the
    result with Setup's next look."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(translate("WorkloadProbeBox", "Workload environment"), parent)
        self.ctx = ctx
        self.job: Job | None = None
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        self.python_label = QLabel()
        self.python_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.python_label, 1)
        self.button = QPushButton(translate("WorkloadProbeBox", "&Probe"))
        self.button.setToolTip(
            translate(
                "WorkloadProbeBox", "Ask the workload Python which torch build and GPUs it has"
            )
        )
        self.button.clicked.connect(self.start_probe)
        row.addWidget(self.button)
        layout.addLayout(row)
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setPlaceholderText(translate("WorkloadProbeBox", NOT_PROBED))
        self.output.setMaximumHeight(130)
        layout.addWidget(self.output)
        self._show_python()
        ctx.probe_result.changed.connect(self._show_known)
        self._show_known()
        if ctx.demo:  # the demo's GPUs are recordings: a probe here would mix machines
            self.button.setEnabled(False)
            self.output.setPlaceholderText(translate("ProbeBox", DEMO_NOT_PROBED))

    @Slot()
    def _show_known(self) -> None:
        """Show the last probe the app has (Setup's, or this box's own), if any."""
        known = self.ctx.probe_result
        if known.data is None or (self.job is not None and self.job.running):
            return
        self.python_label.setText(
            translate("WorkloadProbeBox", "Interpreter: {python}").format(python=known.python)
        )
        lines = ProbeReport.from_dict(known.data).summary_lines()
        self.output.setPlainText("\n".join(lines))

    def _show_python(self) -> None:
        python = resolve_python(self.ctx.workload_python())
        self.python_label.setText(
            translate("WorkloadProbeBox", "Interpreter: {python}").format(python=python)
        )

    @Slot()
    def start_probe(self) -> None:
        if self.ctx.demo:
            return
        self._show_python()
        try:
            job = self.ctx.jobs.start(JobSpec("probe", "probe", python=self.ctx.workload_python()))
        except PanelError as exc:
            report_error(
                exc, translate("WorkloadProbeBox", "Starting the probe"), label=self.output
            )
            return
        self.job = job
        self.button.setEnabled(False)
        self.output.setPlainText(
            translate("WorkloadProbeBox", "Probing… (importing torch can take a few seconds)")
        )
        job.finished.connect(self._on_job_finished)

    @Slot(object)
    def _on_job_finished(self, outcome: JobOutcome) -> None:
        self.button.setEnabled(True)
        if outcome.was_successful() and outcome.result is not None:
            report = ProbeReport.from_dict(outcome.result)
            self.output.setPlainText("\n".join(report.summary_lines()))
            self.job = None
            self.ctx.probe_result.set(outcome.result, resolve_python(self.ctx.workload_python()))
        else:
            self.output.setPlainText(
                translate("WorkloadProbeBox", "The probe failed: {outcome}").format(outcome=outcome)
            )


class AboutDialog(QDialog):
    """Versions and paths, the machine's GPUs, and the workload environment's probe."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(translate("AboutDialog", "About rocmpanel"))
        layout = QVBoxLayout(self)
        head = QHBoxLayout()
        icon = QLabel()
        icon.setPixmap(app_icon().pixmap(72, 72))
        head.addWidget(icon)
        text = QLabel(
            "<h2>"
            + translate("AboutDialog", "rocmpanel {version}").format(version=__version__)
            + "</h2><p>"
            + translate(
                "AboutDialog", "A control panel for PyTorch and local LLMs on AMD GPUs with ROCm."
            )
            + f"</p><p>Python {platform.python_version()} · Qt {qVersion()} · "
            f"PySide6 {pyside_version} · {platform.system()} {platform.release()}</p>"
        )
        text.setWordWrap(True)
        head.addWidget(text, 1)
        layout.addLayout(head)
        where = QLabel(
            translate(
                "AboutDialog",
                "Settings: {settings}<br>Data: {data}<br>Log: {log}<br>Panel Python: {python}",
            ).format(
                settings=paths.settings_file(),
                data=paths.data_dir(),
                log=paths.log_dir() / "rocmpanel.log",
                python=own_python(),
            )
        )
        where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        where.setWordWrap(True)
        layout.addWidget(where)
        self.gpus = GpuBox(ctx.inventory)
        layout.addWidget(self.gpus)
        self.probe = WorkloadProbeBox(ctx)
        layout.addWidget(self.probe)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(620, 480)
