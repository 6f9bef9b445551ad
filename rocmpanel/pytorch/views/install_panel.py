"""One-click install of the planned build into a new managed environment: its name, Install
and Cancel, progress, the current step and pip's output.

Reserving the folder (name and free-disk checks), recording the finished environment and
removing a failed one's folder all touch the disk, so they run through
``run_in_background``; the install itself is a job (a child process) in ``ctx.jobs``.
``install_finished`` is emitted once that is all done.

Closing the window during an install cancels the job and leaves the waiting for it and the
removal of its folder to a background call; the application lets that call end before it
exits. Should the folder still stay (the panel was killed), the next build of this panel
removes it (``remove_partial``, also off the GUI thread).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.log_view import LogText, format_log_line
from rocmpanel.gui.report import report
from rocmpanel.jobs import workload
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.protocol import LogLine, Progress
from rocmpanel.jobs.runner import Job
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.jobs.workload import ManagedEnv
from rocmpanel.knowledge.install_profiles import DEFAULT_PROFILE, PROFILE_IDS
from rocmpanel.pytorch.environments import (
    InstallTicket,
    default_env_name,
    discard,
    finish_install,
    prepare_install,
    remove_partial,
    settle_install,
)
from rocmpanel.pytorch.plan import InstallPlan

log = logging.getLogger(__name__)

NO_WHEELS_TIP = QT_TRANSLATE_NOOP(
    "InstallPanel",
    "No wheels for this Python: set 'Base Python for new environments' in Settings",
)
DEMO_TIP = QT_TRANSLATE_NOOP(
    "InstallPanel", "This is a demo: it shows the plan for the demo GPUs but installs nothing."
)
PROFILE_LABELS = {
    "pytorch": QT_TRANSLATE_NOOP("InstallPanel", "PyTorch"),
    "llm": QT_TRANSLATE_NOOP("InstallPanel", "PyTorch + local LLM"),
}
PROFILE_TIPS = {
    "pytorch": QT_TRANSLATE_NOOP(
        "InstallPanel", "torch, torchvision and torchaudio: validation and your own scripts"
    ),
    "llm": QT_TRANSLATE_NOOP(
        "InstallPanel",
        "Also transformers, accelerate, safetensors, tokenizers and, where it works on this "
        "GPU, bitsandbytes for 4-bit models: what the Chat tab needs",
    ),
}
LOG_MIN_LINES = 10  # pip's output pane shows at least this many lines and grows with the tab
CLOSE_INSTALL_WAIT_S = 10.0  # how long the background call waits for a cancelled install


def settle_at_close(
    wait: Callable[[float | None], JobOutcome | None], ticket: InstallTicket
) -> ManagedEnv | None:
    """Wait (off the GUI thread) for an install cancelled at close, then record it if it
    had succeeded after all, else remove its folder."""
    return settle_install(ticket, wait(CLOSE_INSTALL_WAIT_S))


def _log_settled(env: ManagedEnv | None, error: BaseException | None) -> None:
    """How an install settled in the background ended (there may be no window left)."""
    if error is not None:
        report(error, translate("InstallPanel", "Removing the partial environment"))
    elif env is not None:
        log.info("install of %s ended as the window closed; it is recorded", env.name)


class InstallPanel(QWidget):
    """Environment name, Install, Cancel, progress bar, step and log. ``set_plan`` gives it
    the plan to install; a success makes the new environment the active workload Python."""

    install_finished = Signal(object)  # JobOutcome, once recorded or cleaned up
    profile_changed = Signal(str)  # the install profile chosen ("pytorch" or "llm")
    packages_finished = Signal(object)  # JobOutcome of adding packages to an environment
    job_started = Signal()  # an install or a packages job started: pip's output matters now

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.plan: InstallPlan | None = None
        self.install_job: Job | None = None
        self._ticket: InstallTicket | None = None
        self._preparing = False  # the install's folder is being reserved
        self._cancel_requested = False
        self._partials_checked = False  # unfinished installs' folders are removed first
        self.packages_job: Job | None = None  # adding a profile's packages to an environment

        # "PyTorch + local LLM" by default: most people install PyTorch here to chat, and
        # without transformers the Chat tab cannot load a model.
        self.profile_combo = QComboBox()
        for profile_id in PROFILE_IDS:
            self.profile_combo.addItem(
                translate("InstallPanel", PROFILE_LABELS[profile_id]), profile_id
            )
            index = self.profile_combo.count() - 1
            self.profile_combo.setItemData(
                index,
                translate("InstallPanel", PROFILE_TIPS[profile_id]),
                Qt.ItemDataRole.ToolTipRole,
            )
        self.profile_combo.setCurrentIndex(PROFILE_IDS.index(DEFAULT_PROFILE))
        self.profile_combo.setToolTip(
            translate("InstallPanel", "What the install puts next to torch")
        )
        self.profile_combo.currentIndexChanged.connect(self._on_profile_combo_changed)
        self.name_edit = QLineEdit()
        self.name_edit.setToolTip(
            translate("InstallPanel", "Name of the new environment (a new folder under envs/)")
        )
        self.install_button = QPushButton(translate("InstallPanel", "&Install"))
        self.install_button.setEnabled(False)
        self.install_button.clicked.connect(self.start_install)
        self.cancel_button = QPushButton(translate("InstallPanel", "&Cancel"))
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p%")
        self.step_label = QLabel(translate("InstallPanel", "Nothing is being installed."))
        self.step_label.setWordWrap(True)
        self.log_text = LogText()
        lines = self.log_text.fontMetrics().lineSpacing() * LOG_MIN_LINES
        frame = 2 * self.log_text.frameWidth() + 8  # the frame and the document margins
        self.log_text.setMinimumHeight(lines + frame)
        self.log_text.setPlaceholderText(
            translate("InstallPanel", "pip's output appears here during an install.")
        )
        self.demo_label = QLabel(translate("InstallPanel", DEMO_TIP))
        self.demo_label.setWordWrap(True)
        self.demo_label.setVisible(ctx.demo)

        row = QHBoxLayout()
        row.addWidget(QLabel(translate("InstallPanel", "Install:")))
        row.addWidget(self.profile_combo)
        row.addWidget(QLabel(translate("InstallPanel", "Environment:")))
        row.addWidget(self.name_edit, 1)
        row.addWidget(self.install_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.demo_label)
        layout.addWidget(self.progress)
        layout.addWidget(self.step_label)
        layout.addWidget(self.log_text, 1)
        run_in_background(
            remove_partial,
            self._on_partials_removed,
            owner=self,
            what="removing the folders of unfinished installs",
        )

    def _on_partials_removed(self, gone: list[Path] | None, error: BaseException | None) -> None:
        self._partials_checked = True
        if error is not None:
            report(error, translate("InstallPanel", "Removing the folders of unfinished installs"))
        for path in gone or []:
            log.info("removed %s, left by an install that never finished", path)
        plan, edit = self.plan, self.name_edit
        if plan is not None and plan.supported and (not edit.isModified() or not edit.text()):
            self._suggest_name(plan)  # deferred until now: a removed folder frees its name

    # -- the plan ----------------------------------------------------------------------
    @Slot(object)
    def set_plan(self, plan: InstallPlan | None) -> None:
        """Install ``plan`` next (None: nothing can be installed)."""
        self.plan = plan
        wants_name = not self.name_edit.isModified() or not self.name_edit.text()
        if plan is not None and plan.supported and wants_name:
            self._suggest_name(plan)
        self._update_install_button()

    def profile(self) -> str:
        """The install profile chosen ("pytorch" or "llm")."""
        return str(self.profile_combo.currentData())

    @Slot(int)
    def _on_profile_combo_changed(self, _index: int) -> None:
        self.profile_changed.emit(self.profile())

    def busy(self) -> bool:
        return (
            self._preparing
            or (self.install_job is not None and self.install_job.running)
            or (self.packages_job is not None and self.packages_job.running)
        )

    def _update_install_button(self) -> None:
        plan = self.plan
        ready = plan is not None and plan.supported and plan.python_ok and not self.ctx.demo
        self.install_button.setEnabled(ready and not self.busy())
        no_wheels = plan is not None and not plan.python_ok
        self.install_button.setToolTip(
            translate("InstallPanel", DEMO_TIP)
            if self.ctx.demo
            else translate("InstallPanel", NO_WHEELS_TIP)
            if no_wheels
            else ""
        )

    def _suggest_name(self, plan: InstallPlan) -> None:
        """Fill in a free environment name (which names are taken is read from the disk)."""
        if not self._partials_checked:
            return  # asked again once unfinished installs' folders are gone

        def done(name: str | None, error: BaseException | None) -> None:
            if error is not None:
                report(error, translate("InstallPanel", "Suggesting an environment name"))
            elif name and self.plan is plan and not self.name_edit.isModified():
                self.name_edit.setText(name)

        run_in_background(
            partial(default_env_name, plan), done, owner=self, what="picking a free env name"
        )

    # -- install -----------------------------------------------------------------------
    @Slot()
    def start_install(self) -> None:
        """Reserve the new environment's folder (checks the name and the free disk), then
        start the install job."""
        plan = self.plan
        if plan is None or not plan.supported or not plan.python_ok or self.busy():
            return
        if self.ctx.demo:  # a demo installs nothing (the button is disabled too)
            return
        name, settings = self.name_edit.text().strip(), self.ctx.settings
        self._preparing, self._cancel_requested = True, False
        self.log_text.clear()
        self.progress.setValue(0)
        self.step_label.setText(translate("InstallPanel", "Checking the name and the free disk…"))
        self.install_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        run_in_background(
            partial(prepare_install, plan, name, settings),
            self._on_install_prepared,
            owner=self,
            what=f"preparing the install of {name}",
        )

    def _on_install_prepared(
        self, prepared: tuple[InstallTicket, JobSpec] | None, error: BaseException | None
    ) -> None:
        self._preparing = False
        if error is not None or prepared is None or self._cancel_requested:
            self.cancel_button.setEnabled(False)
            if error is not None:
                self.step_label.setText(translate("InstallPanel", "Nothing is being installed."))
                report(
                    error, translate("InstallPanel", "Preparing the install"), dialog_parent=self
                )
            else:  # only the reservation was made: it goes
                self.step_label.setText(
                    translate("InstallPanel", "Cancelled before anything was installed.")
                )
                if prepared is not None:
                    self._drop_reservation(prepared[0])
            self._update_install_button()
            return
        ticket, spec = prepared
        try:
            job = self.ctx.jobs.start(spec)
        except PanelError as exc:
            self.cancel_button.setEnabled(False)
            self.step_label.setText(translate("InstallPanel", "Nothing is being installed."))
            report(exc, translate("InstallPanel", "Starting the install"), dialog_parent=self)
            self._update_install_button()
            self._drop_reservation(ticket)
            return
        self._ticket = ticket
        self.install_job = job
        self.step_label.setText(translate("InstallPanel", "Starting…"))
        job.progress_changed.connect(self._on_install_progress_changed)
        job.log_added.connect(self._on_install_log_added)
        job.finished.connect(self._on_install_finished)
        self.job_started.emit()

    def _drop_reservation(self, ticket: InstallTicket) -> None:
        """Forget an install that never started (no folder was created yet)."""
        run_in_background(
            partial(discard, ticket), _log_settled, what=f"dropping the install of {ticket.name}"
        )

    # -- adding packages to an existing environment ------------------------------------
    def follow_packages_job(self, job: Job, what: str) -> None:
        """Show the progress, pip's output and Cancel of ``job``, which adds ``what`` to an
        existing environment (the tab starts it; nothing else changes)."""
        self.packages_job = job
        self.log_text.clear()
        self.progress.setValue(0)
        self.step_label.setText(translate("InstallPanel", "Installing {what}…").format(what=what))
        self.cancel_button.setEnabled(True)
        self._update_install_button()
        job.progress_changed.connect(self._on_install_progress_changed)
        job.log_added.connect(self._on_install_log_added)
        job.finished.connect(self._on_packages_job_finished)
        self.job_started.emit()

    @Slot(object)
    def _on_packages_job_finished(self, outcome: JobOutcome) -> None:
        self.packages_job = None
        self.cancel_button.setEnabled(False)
        if outcome.was_successful():
            installed = (outcome.result or {}).get("installed") or {}
            versions = ", ".join(f"{k} {v}" for k, v in installed.items())
            self.step_label.setText(
                translate(
                    "InstallPanel", "Installed {versions} into the active environment."
                ).format(versions=versions)
            )
            self.progress.setValue(1000)
        elif outcome.state is JobState.CANCELLED:
            self.step_label.setText(
                translate(
                    "InstallPanel",
                    "Cancelled. Packages pip had already installed stay; run it again to finish.",
                )
            )
            self.progress.setValue(0)
        else:
            self.step_label.setText(
                translate("InstallPanel", "Install failed: {message}").format(
                    message=outcome.message
                )
            )
            self.progress.setValue(0)
        self._update_install_button()
        self.packages_finished.emit(outcome)

    @Slot()
    def _on_cancel_clicked(self) -> None:
        if self.packages_job is not None and self.packages_job.running:
            self.step_label.setText(translate("InstallPanel", "Cancelling…"))
            self.packages_job.cancel()
            return
        if self._preparing:
            self._cancel_requested = True
            self.step_label.setText(translate("InstallPanel", "Cancelling…"))
        elif self.install_job is not None and self.install_job.running:
            self.step_label.setText(translate("InstallPanel", "Cancelling…"))
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
            self.step_label.setText(translate("InstallPanel", "Recording the new environment…"))
            run_in_background(
                partial(finish_install, ticket, outcome.result),
                partial(self._on_install_recorded, outcome),
                owner=self,
                what=f"recording environment {ticket.name}",
            )
        else:
            self.step_label.setText(translate("InstallPanel", "Removing the partial environment…"))
            run_in_background(
                partial(discard, ticket),
                partial(self._on_install_discarded, outcome),
                owner=self,
                what=f"removing the partial environment {ticket.name}",
            )

    def _on_install_recorded(
        self, outcome: JobOutcome, env: ManagedEnv | None, error: BaseException | None
    ) -> None:
        if error is not None:
            message = report(error, translate("InstallPanel", "Recording the environment"))
            self.step_label.setText(
                translate("InstallPanel", "Install failed: {message}").format(message=message)
            )
        elif env is not None:
            try:
                workload.activate(self.ctx.settings, str(env.python))
            except PanelError as exc:  # the environment exists; only the setting failed
                report(
                    exc,
                    translate("InstallPanel", "Making the new environment active"),
                    label=self.step_label,
                )
            else:
                versions = ", ".join(f"{k} {v}" for k, v in env.installed.items())
                self.step_label.setText(
                    translate(
                        "InstallPanel", "Installed {name} ({versions}); it is now active."
                    ).format(name=env.name, versions=versions)
                )
                self.ctx.notify(
                    translate(
                        "InstallPanel", "PyTorch environment {name} installed and active."
                    ).format(name=env.name)
                )
            self.ctx.inventory.refresh()  # what the machine reports may have changed
        self._after_install(outcome)

    def _on_install_discarded(
        self, outcome: JobOutcome, _result: None, error: BaseException | None
    ) -> None:
        if error is not None:
            report(error, translate("InstallPanel", "Removing the partial environment"))
        # The worker's message is the cause in one sentence ("the package index could not
        # be reached (...). Check ..."), made to follow "Install failed: ".
        what = (
            translate("InstallPanel", "Cancelled.")
            if outcome.state is JobState.CANCELLED
            else translate("InstallPanel", "Install failed: {message}").format(
                message=outcome.message
            )
        )
        self.step_label.setText(
            translate(
                "InstallPanel",
                "{what} The partial environment was removed; the active environment is unchanged.",
            ).format(what=what)
        )
        self.progress.setValue(0)
        self._after_install(outcome)

    def _after_install(self, outcome: JobOutcome) -> None:
        self.name_edit.setModified(False)  # the next install gets a fresh suggestion
        self._update_install_button()
        self.install_finished.emit(outcome)

    def shutdown(self) -> None:
        """The window is closing: cancel a running install and hand the wait for it and the
        removal of its folder (gigabytes) to a background call; returns at once."""
        if self._preparing:
            self._cancel_requested = True  # the job will not be started
        job, ticket = self.install_job, self._ticket
        if job is None or ticket is None or not job.running:
            return
        self._ticket = None  # a late ``finished`` must not settle it a second time
        job.cancel()
        run_in_background(
            partial(settle_at_close, job.waiter(), ticket),
            _log_settled,
            what=f"removing the partial environment {ticket.name}",
        )
