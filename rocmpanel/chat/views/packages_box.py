"""What the workload Python lacks for the chat, in plain words, with a one-click install.

:class:`PackagesBox` runs ``workers/packages.py`` in the workload Python off the GUI thread
(:func:`rocmpanel.chat.installed.read_installed`) and compares what it found with
:data:`rocmpanel.chat.requirements.REQUIREMENTS` for the chosen precision and device. The
"Install missing packages" button calls the app's ``install_packages("llm")`` hook (hidden
without one); torch is never installed from here: its build must match the GPU, so the
text sends the user to the PyTorch tab's plan.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QPushButton, QWidget

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.chat.installed import Installed, read_installed
from rocmpanel.chat.requirements import (
    INSTALL_PROFILE,
    TORCH,
    Missing,
    describe_missing,
    missing_for,
)
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import Job

INSTALL_TEXT = QT_TRANSLATE_NOOP("PackagesBox", "Install missing packages")
INSTALL_WITHOUT_TORCH_TEXT = QT_TRANSLATE_NOOP(
    "PackagesBox", "Install PyTorch and the chat's packages…"
)
WARN_STYLE = "color:#8a5a00;"
ERROR_STYLE = "color:#b00020;"


class PackagesBox(QWidget):
    """The check and its two widgets, ``label`` and ``install_button``. Emits
    ``checked(bool)`` after every check of the workload Python: True when it has everything
    the chosen precision and device need (the load waits for it)."""

    checked = Signal(bool)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.installed: Installed | None = None
        self.error = ""  # why the last check failed ("" when it did not)
        self.checked_python: str | None = None  # the interpreter setting last checked
        self._number = 0
        self._precision, self._device = Precision.BF16, Device.CPU
        # The owner lays out ``label`` and ``install_button`` where it wants them.
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.install_button = QPushButton(translate("PackagesBox", INSTALL_TEXT), self)
        self.install_button.clicked.connect(self._install)
        self.label.hide()
        self.install_button.hide()
        # An install (the one-click one, or a whole PyTorch install) changes what the
        # workload Python has: check again when it ends, so the message never goes stale.
        ctx.jobs.job_finished.connect(self._on_jobs_job_finished)

    def _on_jobs_job_finished(self, job: Job) -> None:
        if job.spec.worker == "pip_install" and self.checked_python is not None:
            self.refresh()

    # -- checking ----------------------------------------------------------------------
    def refresh(self) -> None:
        """Ask the workload Python what it has (off the GUI thread); ``checked`` follows."""
        self._number += 1
        number = self._number
        python = self.ctx.workload_python()
        self.checked_python = python
        run_in_background(
            lambda: read_installed(python),
            lambda installed, error: self._on_read(number, installed, error),
            owner=self,
            what="listing the chat's packages in the workload Python",
        )

    def refresh_if_changed(self) -> None:
        """Check again when the interpreter setting changed since the last check."""
        if self.checked_python != self.ctx.workload_python():
            self.refresh()

    def _on_read(
        self, number: int, installed: Installed | None, error: BaseException | None
    ) -> None:
        if number != self._number:
            return  # a newer check was asked for
        self.installed = installed
        self.error = "" if error is None else str(getattr(error, "message", error))
        self._show()
        self.checked.emit(self.ready)

    # -- what is missing ---------------------------------------------------------------
    def set_target(self, precision: Precision, device: Device) -> None:
        """The precision and device (GPU or CPU) a load would use: what is needed."""
        self._precision, self._device = precision, device
        self._show()

    @property
    def missing(self) -> tuple[Missing, ...]:
        if self.installed is None:
            return ()
        return missing_for(self.installed.versions, self._precision, self._device)

    @property
    def ready(self) -> bool:
        """The last check succeeded and found nothing missing."""
        return self.installed is not None and not self.missing

    def problem(self) -> str:
        """Why a load cannot work in this Python ("" when it can, or before a check)."""
        if self.error:
            return self.error
        missing = self.missing
        if not missing:
            return ""
        can_install = self.ctx.install_packages is not None
        return translate("PackagesBox", "The chat cannot load a model yet. {fix}").format(
            fix=describe_missing(missing, can_install=can_install)
        )

    def _show(self) -> None:
        text = self.problem()
        self.label.setVisible(bool(text))
        self.label.setText(text)
        self.label.setStyleSheet(ERROR_STYLE if self.error else WARN_STYLE)
        missing = self.missing
        others = [m for m in missing if m.name != TORCH]
        self.install_button.setVisible(bool(others) and self.ctx.install_packages is not None)
        torch_missing = len(others) != len(missing)
        text = INSTALL_WITHOUT_TORCH_TEXT if torch_missing else INSTALL_TEXT
        self.install_button.setText(translate("PackagesBox", text))

    def _install(self) -> None:
        install = self.ctx.install_packages
        if install is not None:  # the PyTorch tab comes to the front and says what it does
            install(INSTALL_PROFILE)
