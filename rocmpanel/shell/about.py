"""Help → About: versions, where things are kept, and the workload environment's probe."""

from __future__ import annotations

import platform
import sys

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
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.icons import app_icon
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.spec import JobSpec, resolve_python
from rocmpanel.setup.probe_report import ProbeReport


class WorkloadProbeBox(QGroupBox):
    """Runs the probe worker in the workload Python and shows what it found."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__("Workload environment", parent)
        self.ctx = ctx
        self.job = None
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        self.python_label = QLabel()
        self.python_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.python_label, 1)
        self.button = QPushButton("&Probe")
        self.button.setToolTip("Ask the workload Python which torch build and GPUs it has")
        self.button.clicked.connect(self.start_probe)
        row.addWidget(self.button)
        layout.addLayout(row)
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setPlaceholderText("Not probed yet.")
        self.output.setMaximumHeight(130)
        layout.addWidget(self.output)
        self._show_python()

    def _show_python(self) -> None:
        python = resolve_python(self.ctx.workload_python())
        self.python_label.setText(f"Interpreter: {python}")

    @Slot()
    def start_probe(self) -> None:
        self._show_python()
        try:
            self.job = self.ctx.jobs.start(
                JobSpec("probe", "probe", python=self.ctx.workload_python())
            )
        except PanelError as exc:
            self.output.setPlainText(exc.message)
            return
        self.button.setEnabled(False)
        self.output.setPlainText("Probing… (importing torch can take a few seconds)")
        self.job.finished.connect(self._on_job_finished)

    @Slot(object)
    def _on_job_finished(self, outcome: JobOutcome) -> None:
        self.button.setEnabled(True)
        if outcome.was_successful() and outcome.result is not None:
            report = ProbeReport.from_dict(outcome.result)
            self.output.setPlainText("\n".join(report.summary_lines()))
        else:
            self.output.setPlainText(f"The probe failed: {outcome}")


class AboutDialog(QDialog):
    """Versions and paths, plus the workload environment's probe."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About rocmpanel")
        layout = QVBoxLayout(self)
        head = QHBoxLayout()
        icon = QLabel()
        icon.setPixmap(app_icon().pixmap(72, 72))
        head.addWidget(icon)
        text = QLabel(
            f"<h2>rocmpanel {__version__}</h2>"
            "<p>A control panel for PyTorch and local LLMs on AMD GPUs with ROCm.</p>"
            f"<p>Python {platform.python_version()} · Qt {qVersion()} · "
            f"PySide6 {pyside_version} · {platform.system()} {platform.release()}</p>"
        )
        text.setWordWrap(True)
        head.addWidget(text, 1)
        layout.addLayout(head)
        where = QLabel(
            f"Settings: {paths.settings_file()}<br>Data: {paths.data_dir()}<br>"
            f"Log: {paths.log_dir() / 'rocmpanel.log'}<br>Panel Python: {sys.executable}"
        )
        where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        where.setWordWrap(True)
        layout.addWidget(where)
        self.probe = WorkloadProbeBox(ctx)
        layout.addWidget(self.probe)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(620, 420)
