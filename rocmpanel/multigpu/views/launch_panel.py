"""Launch scripts for the user's own training script: choose the script and the kind,
see the script in a preview, copy or save it, and run the single-node one as a job.

The environment the scripts carry (active preset, Panel jobs variables, GPU choice, the
user's NCCL_*/RCCL_*/HSA_*/GLOO_* variables) is read in the background; rendering is
pure and quick, so the preview follows every edit. Saving goes through the background
pool too; Run starts a job through ``ctx.jobs`` (the jobs strip shows it and can cancel
it), and its output streams into the log below.
"""

from __future__ import annotations

import shlex
import socket
import sys
from pathlib import Path

from PySide6.QtCore import Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.log_view import LogText, format_log_line
from rocmpanel.gui.report import report
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.protocol import LogLine
from rocmpanel.jobs.runner import Job
from rocmpanel.multigpu import launch, launch_env
from rocmpanel.multigpu.launch import KIND_LABELS, KINDS, LaunchPlan
from rocmpanel.multigpu.launch_env import LaunchEnv

NO_GPU_NOTE = QT_TRANSLATE_NOOP(
    "LaunchPanel",
    "No AMD GPU is visible: the scripts are still generated (one process per node); run "
    "them where the GPUs are, or on CPU with the gloo backend.",
)
RUN_ONLY_SINGLE = QT_TRANSLATE_NOOP(
    "LaunchPanel", "Run starts the single-node kind only; the others run on your cluster."
)


class LaunchPanel(QWidget):
    """Script, kind, nodes, processes and endpoint; a preview; Copy, Save as… and Run."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.env: LaunchEnv | None = None
        self.job: Job | None = None
        self._procs_chosen = False

        self.script_edit = QLineEdit()
        self.script_edit.setPlaceholderText("/path/to/train.py")
        self.script_edit.setAccessibleName(translate("LaunchPanel", "Training script"))
        self.browse_button = QPushButton(translate("LaunchPanel", "&Browse…"))
        self.browse_button.setAccessibleName(translate("LaunchPanel", "Choose the training script"))
        self.browse_button.clicked.connect(self._on_browse_clicked)
        self.args_edit = QLineEdit()
        self.args_edit.setPlaceholderText("--epochs 3 --lr 1e-4")
        self.args_edit.setAccessibleName(translate("LaunchPanel", "Script arguments"))
        self.kind_combo = QComboBox()
        for kind in KINDS:
            self.kind_combo.addItem(translate("launch", KIND_LABELS[kind]), kind)
        self.kind_combo.setAccessibleName(translate("LaunchPanel", "Launch kind"))
        self.nodes_spin = QSpinBox()
        self.nodes_spin.setRange(1, 4096)
        self.nodes_spin.setAccessibleName(translate("LaunchPanel", "Nodes"))
        self.procs_spin = QSpinBox()
        self.procs_spin.setRange(1, launch.MAX_PROCS)
        self.procs_spin.setAccessibleName(translate("LaunchPanel", "Processes per node"))
        self.procs_spin.setToolTip(
            translate("LaunchPanel", "One process per GPU; the default is the chosen GPUs' count.")
        )
        self.endpoint_edit = QLineEdit(f"{socket.gethostname()}:{launch.DEFAULT_PORT}")
        self.endpoint_edit.setAccessibleName(translate("LaunchPanel", "Rendezvous endpoint"))
        self.endpoint_edit.setToolTip(
            translate(
                "LaunchPanel",
                "HOST:PORT of the c10d rendezvous, reachable from every node (Slurm uses the "
                "allocation's first node instead).",
            )
        )

        self.note_label = QLabel(translate("LaunchPanel", "Reading the environment jobs get…"))
        self.note_label.setWordWrap(True)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #b00020")
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.preview.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.preview.setAccessibleName(translate("LaunchPanel", "Launch script preview"))
        self.copy_button = QPushButton(translate("LaunchPanel", "&Copy"))
        self.copy_button.clicked.connect(self._on_copy_clicked)
        self.save_button = QPushButton(translate("LaunchPanel", "&Save as…"))
        self.save_button.clicked.connect(self._on_save_clicked)
        self.run_button = QPushButton(translate("LaunchPanel", "&Run"))
        self.run_button.setToolTip(
            translate("LaunchPanel", "Run the single-node command here as a job.")
        )
        self.run_button.clicked.connect(self._on_run_clicked)
        self.cancel_button = QPushButton(translate("LaunchPanel", "Cancel run"))
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        self.log = LogText(self, format_line=format_log_line)
        self.log.setAccessibleName(translate("LaunchPanel", "Run log"))
        self.log.setMaximumHeight(180)
        self.log.hide()  # until a run: the preview gets the room

        script_row = QHBoxLayout()
        script_row.addWidget(self.script_edit, 1)
        script_row.addWidget(self.browse_button)
        form = QFormLayout()
        for caption, field in (
            (translate("LaunchPanel", "Tra&ining script:"), script_row),
            (translate("LaunchPanel", "Ar&guments:"), self.args_edit),
            (translate("LaunchPanel", "&Kind:"), self.kind_combo),
            (translate("LaunchPanel", "&Nodes:"), self.nodes_spin),
            (translate("LaunchPanel", "&Processes per node:"), self.procs_spin),
            (translate("LaunchPanel", "Rendezvous &endpoint:"), self.endpoint_edit),
        ):
            label = QLabel(caption)
            if isinstance(field, QWidget):
                label.setBuddy(field)
            else:
                label.setBuddy(self.script_edit)
            form.addRow(label, field)
        buttons = QHBoxLayout()
        for button in (self.copy_button, self.save_button, self.run_button, self.cancel_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note_label)
        layout.addWidget(self.error_label)
        layout.addWidget(self.preview, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.status_label)
        layout.addWidget(self.log)

        for edit in (self.script_edit, self.args_edit, self.endpoint_edit):
            edit.textChanged.connect(self._update)
        for spin in (self.nodes_spin, self.procs_spin):
            spin.valueChanged.connect(self._update)
        self.procs_spin.editingFinished.connect(self._on_procs_edited)
        self.kind_combo.currentIndexChanged.connect(self._update)
        self.windows = sys.platform == "win32"
        if self.windows:
            self.note_label.setText(translate("launch", launch.WINDOWS_REFUSAL))
        else:
            python = ctx.workload_python()
            active = ctx.active_preset.ident
            run_in_background(
                lambda: launch_env.gather_env(python=python, active=active),
                self._on_env_read,
                owner=self,
                what="reading the launch environment",
            )
        self._update()

    # -- state -------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        return str(self.kind_combo.currentData())

    def plan(self) -> LaunchPlan:
        """The plan the fields describe; PanelError when they cannot make one."""
        try:
            args = tuple(shlex.split(self.args_edit.text()))
        except ValueError as exc:
            raise PanelError(
                translate(
                    "LaunchPanel", "The arguments cannot be read: {error} (a quote is not closed?)"
                ).format(error=exc)
            ) from None
        host, port = launch.parse_endpoint(self.endpoint_edit.text())
        return LaunchPlan(
            script=self.script_edit.text().strip(),
            args=args,
            nnodes=self.nodes_spin.value(),
            nproc_per_node=self.procs_spin.value(),
            rdzv_host=host,
            rdzv_port=port,
            python=self.ctx.workload_python() or "python3",
            env=self.env or LaunchEnv(),
        )

    def text(self) -> str:
        """The artefact for the current fields; PanelError says what is wrong."""
        launch.check_platform()
        return launch.render(self.plan(), self.kind, must_exist=False)

    @Slot()
    def _update(self) -> None:
        multi = self.kind in ("multinode", "slurm")
        needs_script = self.kind != "deepspeed"
        self.nodes_spin.setEnabled(multi)
        self.endpoint_edit.setEnabled(self.kind == "multinode")
        for widget in (self.script_edit, self.browse_button, self.args_edit, self.procs_spin):
            widget.setEnabled(needs_script and not self.windows)
        try:
            text = self.text()
        except PanelError as exc:
            self.error_label.setText(exc.message)
            self.preview.setPlainText("")
            ok = False
        else:
            self.error_label.setText("")
            self.preview.setPlainText(text)
            ok = True
        running = self.job is not None and self.job.running
        self.copy_button.setEnabled(ok)
        self.save_button.setEnabled(ok)
        self.run_button.setEnabled(ok and self.kind == "torchrun" and not running)
        self.run_button.setToolTip(
            translate("LaunchPanel", "Run the single-node command here as a job.")
            if self.kind == "torchrun"
            else translate("LaunchPanel", RUN_ONLY_SINGLE)
        )
        self.cancel_button.setEnabled(running)

    def _on_env_read(self, env: LaunchEnv | None, error: BaseException | None) -> None:
        if error is not None or env is None:
            if error is not None:
                report(
                    error,
                    translate("LaunchPanel", "Reading the environment for launch scripts"),
                    label=self.note_label,
                )
            return
        self.env = env
        notes = [translate("LaunchPanel", "GPUs: {gpus}.").format(gpus=env.gpu_label)]
        if env.preset_name:
            notes.append(translate("LaunchPanel", "Preset: {name}.").format(name=env.preset_name))
        if env.gpu_count == 0:
            notes.append(translate("LaunchPanel", NO_GPU_NOTE))
        if env.left_out:
            notes.append(
                translate("LaunchPanel", "Left out: {names}.").format(names="; ".join(env.left_out))
            )
        self.note_label.setText(" ".join(notes))
        if not self._procs_chosen:
            self.procs_spin.blockSignals(True)
            self.procs_spin.setValue(max(1, env.gpu_count))
            self.procs_spin.blockSignals(False)
        self._update()

    @Slot()
    def _on_procs_edited(self) -> None:
        self._procs_chosen = True

    # -- actions -------------------------------------------------------------------------
    @Slot()
    def _on_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            translate("LaunchPanel", "Choose the training script"),
            self.script_edit.text(),
            "Python (*.py)",
        )
        if path:
            self.script_edit.setText(path)

    @Slot()
    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.preview.toPlainText())
        self.ctx.notify(translate("LaunchPanel", "Launch script copied."))

    @Slot()
    def _on_save_clicked(self) -> None:
        suffix = "json" if self.kind == "deepspeed" else "sh"
        path, _ = QFileDialog.getSaveFileName(
            self,
            translate("LaunchPanel", "Save the launch script"),
            f"launch.{suffix}",
            f"*.{suffix}",
        )
        if path:
            self.save_to(Path(path))

    def save_to(self, path: Path) -> None:
        """Write the preview to ``path`` in the background (the dialog already asked
        before replacing a file: the old one is backed up)."""
        text, kind = self.preview.toPlainText(), self.kind
        run_in_background(
            lambda: launch.save(path, text, kind, force=True),
            lambda _backup, error: self._on_saved(path, error),
            owner=self,
            what="saving a launch script",
        )

    def _on_saved(self, path: Path, error: BaseException | None) -> None:
        if error is not None:
            report(
                error, translate("LaunchPanel", "Saving the launch script"), label=self.status_label
            )
        else:
            self.status_label.setText(
                translate("LaunchPanel", "Saved as {path}.").format(path=path)
            )
            self.ctx.notify(
                translate("LaunchPanel", "Launch script saved as {path}.").format(path=path)
            )

    @Slot()
    def _on_run_clicked(self) -> None:
        try:
            plan = self.plan()
            launch.validate(plan, "torchrun")
            spec = launch.run_spec(
                plan,
                None,
                python=self.ctx.workload_python(),
                cwd=str(Path(plan.script).parent),
            )
            self.job = self.ctx.jobs.start(spec)
        except PanelError as exc:
            report(exc, translate("LaunchPanel", "Starting the run"), label=self.status_label)
            return
        self.log.clear()
        self.log.show()
        command = " ".join(shlex.quote(a) for a in self.job.argv)
        self.status_label.setText(
            translate("LaunchPanel", "Running: {command}").format(command=command)
        )
        self.job.log_added.connect(self._on_job_log_added)
        self.job.finished.connect(self._on_job_finished)
        self._update()

    @Slot()
    def _on_cancel_clicked(self) -> None:
        if self.job is not None:
            self.job.cancel()

    @Slot(object)
    def _on_job_log_added(self, lines: list[LogLine]) -> None:
        self.log.append_lines(lines)

    @Slot(object)
    def _on_job_finished(self, outcome: JobOutcome) -> None:
        self.status_label.setText(launch.outcome_text(outcome))
        self._update()
