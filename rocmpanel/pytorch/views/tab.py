"""The PyTorch tab: the install plan for the detected GPU, one-click install into a new managed
environment (progress, current step, log, cancel), the environment list, and validation.

Each part is a panel of its own; the tab lays them out and connects them: a new plan goes
to the installer, a finished install refreshes the environment list and the plan.
"""

from __future__ import annotations

from typing import ClassVar

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QGroupBox, QSplitter, QVBoxLayout, QWidget

from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.pytorch.views.envs_panel import TorchEnvsPanel
from rocmpanel.pytorch.views.install_panel import InstallPanel
from rocmpanel.pytorch.views.plan_panel import InstallPlanPanel
from rocmpanel.pytorch.views.validation_panel import TorchValidationPanel


class PyTorchTab(QWidget):
    """Plan → Install → pick the environment → Validate."""

    title: ClassVar[str] = "PyTorch"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.planner = InstallPlanPanel(ctx)
        self.installer = InstallPanel(ctx)
        self.planner.plan_changed.connect(self.installer.set_plan)
        self.installer.set_plan(self.planner.plan)
        self.installer.install_finished.connect(self._on_install_finished)
        plan_box = QGroupBox("Install plan")
        plan_layout = QVBoxLayout(plan_box)
        plan_layout.addWidget(self.planner)
        plan_layout.addWidget(self.installer)

        self.envs = TorchEnvsPanel(ctx)
        envs_box = QGroupBox("Environments")
        QVBoxLayout(envs_box).addWidget(self.envs)

        self.validation = TorchValidationPanel(
            ctx, self.planner.validation_target, self.planner.overrides
        )
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

    @Slot(object)
    def _on_install_finished(self, _outcome: JobOutcome) -> None:
        self.envs.refresh()
        self.planner.replan()  # a new plan suggests a name not taken yet

    def shutdown(self) -> None:
        """Stop a running install (removing its partial folder) and a running validation."""
        self.installer.shutdown()
        self.validation.shutdown()
