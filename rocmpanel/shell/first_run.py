"""The first-run guide: a panel at the top of the window with the three steps from a new
machine to a working PyTorch (check the system, install PyTorch, validate it).

Each step is a button that takes the user to the place where it is done (it does not do
it: an install is minutes and gigabytes, the user starts it). A step is ticked when the
window can tell it is done without slow work on the GUI thread: the machine was checked
(the inventory is in), a managed environment exists, a validation run passed (both read
in the background). "Don't show again" keeps it closed (a setting); × closes it for this
session; Help → First-run guide opens it again. Not shown in demo mode or the smoke test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.background import run_in_background

if TYPE_CHECKING:
    from rocmpanel.gui.context import AppContext

# The steps: (button text, what it does), in order. Context "FirstRunGuide".
STEPS = (
    (
        QT_TRANSLATE_NOOP("FirstRunGuide", "1  Check this machine"),
        QT_TRANSLATE_NOOP(
            "FirstRunGuide",
            "The Setup tab: the verdict for your GPUs and the checklist of the ROCm stack, "
            "with a Fix next to each failing check.",
        ),
    ),
    (
        QT_TRANSLATE_NOOP("FirstRunGuide", "2  Install PyTorch"),
        QT_TRANSLATE_NOOP(
            "FirstRunGuide",
            "The PyTorch tab: the right build for your GPU into an environment of its own "
            "(Install).",
        ),
    ),
    (
        QT_TRANSLATE_NOOP("FirstRunGuide", "3  Validate it"),
        QT_TRANSLATE_NOOP(
            "FirstRunGuide",
            "The PyTorch tab: Validate active Python runs the checks on the GPU and shows "
            "pass or fail with measured figures.",
        ),
    ),
)
CHECK, INSTALL, VALIDATE = range(3)
DONE_MARK = "✓"


@dataclass(frozen=True)
class GuideProgress:
    """What is done of the steps the disk tells about."""

    installed: bool = False  # a managed PyTorch environment exists
    validated: bool = False  # the newest validation runs include one that passed


def read_progress() -> GuideProgress:
    """The install and validate steps as the disk has them (slow: run in the background)."""
    from rocmpanel.jobs.workload import list_envs
    from rocmpanel.pytorch.validation_run import RunVerdict
    from rocmpanel.pytorch.validation_store import ValidationStore

    installed = bool(list_envs())
    runs = ValidationStore().list_runs(limit=20)
    validated = any(run.verdict is RunVerdict.PASS for run in runs)
    return GuideProgress(installed, validated)


class FirstRunGuide(QFrame):
    """The guide's panel; ``step_requested(step)`` asks the window to go to a step,
    ``dismissed`` is "Don't show again"."""

    step_requested = Signal(int)
    dismissed = Signal()

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setObjectName("firstRunGuide")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 6, 6, 8)
        head = QHBoxLayout()
        title = QLabel(
            "<b>"
            + translate("FirstRunGuide", "Getting started")
            + "</b> — "
            + translate("FirstRunGuide", "three steps to PyTorch on your AMD GPU")
        )
        head.addWidget(title, 1)
        self.dismiss_button = QPushButton(translate("FirstRunGuide", "Don't show again"))
        self.dismiss_button.setToolTip(
            translate("FirstRunGuide", "Help → First-run guide shows it again.")
        )
        self.dismiss_button.clicked.connect(self._on_dismiss_clicked)
        head.addWidget(self.dismiss_button)
        self.close_button = QToolButton()
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip(translate("FirstRunGuide", "Close the guide until next start"))
        self.close_button.setAccessibleName(translate("FirstRunGuide", "Close the guide"))
        self.close_button.clicked.connect(self.hide)
        head.addWidget(self.close_button)
        outer.addLayout(head)
        row = QHBoxLayout()
        self.step_buttons: list[QPushButton] = []
        self.done_labels: list[QLabel] = []
        for index, (text, help_text) in enumerate(STEPS):
            button = QPushButton(translate("FirstRunGuide", text))
            button.setToolTip(translate("FirstRunGuide", help_text))
            button.clicked.connect(lambda _=False, i=index: self.step_requested.emit(i))
            done = QLabel()
            done.setMinimumWidth(self.fontMetrics().horizontalAdvance(DONE_MARK) + 4)
            self.step_buttons.append(button)
            self.done_labels.append(done)
            row.addWidget(button)
            row.addWidget(done)
            if index < len(STEPS) - 1:
                arrow = QLabel("→")
                arrow.setEnabled(False)
                row.addWidget(arrow)
        row.addStretch(1)
        outer.addLayout(row)
        self.progress = GuideProgress()
        ctx.inventory.changed.connect(self._on_inventory_changed)
        ctx.jobs.job_finished.connect(self._on_job_finished)
        self._show_done()

    def is_done(self, step: int) -> bool:
        if step == CHECK:
            return self.ctx.inventory.current is not None
        if step == INSTALL:
            return self.progress.installed
        return self.progress.validated

    def refresh(self) -> None:
        """Read the install and validate steps again (in the background)."""
        self._show_done()
        run_in_background(
            read_progress, self._on_progress_read, owner=self, what="reading the guide's steps"
        )

    def _on_progress_read(
        self, progress: GuideProgress | None, error: BaseException | None
    ) -> None:
        if progress is not None:  # unreadable: no tick (the tabs say what is wrong)
            self.progress = progress
        self._show_done()

    def _show_done(self) -> None:
        for step, label in enumerate(self.done_labels):
            done = self.is_done(step)
            label.setText(DONE_MARK if done else "")
            label.setToolTip(translate("FirstRunGuide", "Done") if done else "")
            self.step_buttons[step].setAccessibleDescription(
                translate("FirstRunGuide", "Done") if done else ""
            )

    @Slot(object)
    def _on_inventory_changed(self, _inventory: object) -> None:
        self._show_done()

    @Slot(object)
    def _on_job_finished(self, _job: object) -> None:
        if self.isVisible():  # an install or a validation may have finished
            self.refresh()

    @Slot()
    def _on_dismiss_clicked(self) -> None:
        self.hide()
        self.dismissed.emit()

    def focus_first_step(self) -> None:
        """Keyboard users start at the first step not done (else the first)."""
        todo = next((i for i in range(len(STEPS)) if not self.is_done(i)), 0)
        self.step_buttons[todo].setFocus(Qt.FocusReason.OtherFocusReason)
