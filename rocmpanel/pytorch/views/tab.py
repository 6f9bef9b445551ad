"""The PyTorch tab: the install plan for the detected GPU, one-click install into a new managed
environment (progress, current step, log, cancel), the environment list, and validation.

Each part is a panel of its own; the tab lays them out and connects them: a new plan goes
to the installer, a finished install refreshes the environment list and the plan.
"""

from __future__ import annotations

from functools import partial
from typing import ClassVar

from PySide6.QtCore import QPoint, Qt, QTimer, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QFrame, QGroupBox, QScrollArea, QSplitter, QVBoxLayout, QWidget

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.knowledge.install_profiles import DEFAULT_PROFILE
from rocmpanel.pytorch.add_packages import (
    NoTorch,
    PackagesPlan,
    packages_job_spec,
    plan_packages,
)
from rocmpanel.pytorch.plan_inputs import mirrors_from
from rocmpanel.pytorch.views.envs_panel import TorchEnvsPanel
from rocmpanel.pytorch.views.install_panel import InstallPanel
from rocmpanel.pytorch.views.plan_panel import InstallPlanPanel
from rocmpanel.pytorch.views.validation_panel import TorchValidationPanel

NO_TORCH_YET = QT_TRANSLATE_NOOP(
    "PyTorchTab",
    "The workload Python has no PyTorch yet. Install (profile “PyTorch + local LLM”) makes a "
    "new environment with the PyTorch build planned above and the chat's packages, and makes "
    "it the workload Python.",
)


class PyTorchTab(QWidget):
    """Plan → Install → pick the environment → Validate."""

    title: ClassVar[str] = "PyTorch"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.planner = InstallPlanPanel(ctx)
        self.installer = InstallPanel(ctx)
        self.planner.plan_changed.connect(self.installer.set_plan)
        self.planner.set_profile(self.installer.profile())
        self.installer.profile_changed.connect(self.planner.set_profile)
        self.installer.set_plan(self.planner.plan)
        self.installer.install_finished.connect(self._on_install_finished)
        self.installer.packages_finished.connect(self._on_install_finished)
        # The plan scrolls rather than squeezing its wrapped lines out of sight.
        plan_inner = QWidget()
        plan_layout = QVBoxLayout(plan_inner)
        plan_layout.setContentsMargins(0, 0, 0, 0)
        plan_layout.addWidget(self.planner)
        plan_layout.addWidget(self.installer, 1)
        self.plan_scroll = QScrollArea()
        self.plan_scroll.setWidgetResizable(True)
        self.plan_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.plan_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.plan_scroll.setWidget(plan_inner)
        self._plan_inner = plan_inner
        # When an install starts, bring pip's output into view (the plan above it scrolls).
        self.installer.job_started.connect(self._show_pip_output)
        plan_box = QGroupBox(translate("PyTorchTab", "Install plan"))
        QVBoxLayout(plan_box).addWidget(self.plan_scroll)

        self.envs = TorchEnvsPanel(ctx)
        envs_box = QGroupBox(translate("PyTorchTab", "Environments"))
        QVBoxLayout(envs_box).addWidget(self.envs)

        self.validation = TorchValidationPanel(
            ctx, self.planner.validation_target, self.planner.overrides
        )
        validation_box = QGroupBox(translate("PyTorchTab", "Validation"))
        QVBoxLayout(validation_box).addWidget(self.validation)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(plan_box)
        top.addWidget(envs_box)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(top)
        outer.addWidget(validation_box)
        # The plan and pip's output need more room than the validation table's first rows.
        outer.setStretchFactor(0, 3)
        outer.setStretchFactor(1, 2)
        self._outer = outer
        self._sized = False
        layout = QVBoxLayout(self)
        layout.addWidget(outer)

    @Slot()
    def _show_pip_output(self) -> None:
        # After the layout has taken in the new texts, or the positions are stale.
        QTimer.singleShot(0, self, self._scroll_to_pip_output)

    @Slot()
    def _scroll_to_pip_output(self) -> None:
        log = self.installer.log_text
        top = log.mapTo(self._plan_inner, QPoint(0, 0)).y()
        bar = self.plan_scroll.verticalScrollBar()
        # Its first lines at least: the top of pip's output, or as far as the room allows.
        bar.setValue(min(top, max(bar.value(), top + log.minimumHeight() - bar.pageStep())))

    def showEvent(self, event: QShowEvent) -> None:
        """On the first show, give the plan 60 % of the height (the splitter's own start
        halves it, which cuts the plan's lines and pip's output)."""
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            height = max(self._outer.height(), self.height())
            self._outer.setSizes([height * 3 // 5, height - height * 3 // 5])

    @Slot(object)
    def _on_install_finished(self, _outcome: JobOutcome) -> None:
        self.envs.refresh()
        self.planner.replan()  # a new plan suggests a name not taken yet

    def install_packages(self, profile: str) -> None:
        """Install ``profile``'s packages that the ACTIVE workload environment lacks into it,
        as a job with progress and cancel (shown in the install panel and the jobs strip);
        nothing else changes. The main window gives this to ``ctx.install_packages``."""
        if self.ctx.demo:
            self.ctx.notify(translate("PyTorchTab", "This is a demo: it installs nothing."))
            return
        if self.installer.busy():
            self.ctx.notify(
                translate(
                    "PyTorchTab", "An install is running already: wait for it or cancel it first."
                )
            )
            return
        python = self.ctx.workload_python()
        machine = self.planner.machine
        gfx = self.planner.validation_target()[0]
        os_name = machine.os if machine is not None else "linux"
        self.installer.step_label.setText(
            translate("PyTorchTab", "Checking which packages the environment has…")
        )
        run_in_background(
            partial(
                plan_packages,
                python,
                profile,
                os_name=os_name,
                gfx=gfx,
                mirrors=mirrors_from(self.ctx.settings),
            ),
            self._on_packages_planned,
            owner=self,
            what="checking the active environment's packages",
        )

    def _on_packages_planned(
        self, packages: PackagesPlan | None, error: BaseException | None
    ) -> None:
        if isinstance(error, NoTorch):  # the chat's way in: the plan below installs it all
            self.installer.profile_combo.setCurrentIndex(
                self.installer.profile_combo.findData(DEFAULT_PROFILE)
            )
            self.installer.step_label.setText(translate("PyTorchTab", NO_TORCH_YET))
            self.installer.install_button.setFocus()
            return
        if error is not None or packages is None:
            self.installer.step_label.setText(
                translate("PyTorchTab", "Nothing is being installed.")
            )
            if error is not None:
                report(
                    error,
                    translate("PyTorchTab", "Adding packages to the active environment"),
                    dialog_parent=self,
                )
            return
        if not packages.missing:
            self.installer.step_label.setText(
                translate(
                    "PyTorchTab",
                    "The active environment has every package of this profile already.",
                )
            )
            return
        try:
            spec = packages_job_spec(
                packages, isolate_pip_config=not self.ctx.settings.pytorch.use_pip_config
            )
            job = self.ctx.jobs.start(spec)
        except PanelError as exc:
            self.installer.step_label.setText(
                translate("PyTorchTab", "Nothing is being installed.")
            )
            report(exc, translate("PyTorchTab", "Starting the install"), dialog_parent=self)
            return
        self.installer.follow_packages_job(job, ", ".join(packages.missing))
        if packages.note:
            self.ctx.notify(packages.note)

    def shutdown(self) -> None:
        """Stop a running install (removing its partial folder) and a running validation."""
        self.installer.shutdown()
        self.validation.shutdown()
