"""File → Export health report…: the report gathered in the background, previewed, saved.

The dialog shows the report as it will be shared, with user names in paths taken out
unless the user ticks "Include &user names in paths" (the host name and secrets are always
taken out). Save as… writes an HTML page or Markdown (by the name's suffix); Copy Markdown
puts the Markdown on the clipboard for a forum post. Gathering (detection, stores) and
saving run off the GUI thread; the telemetry peaks are read here, on the GUI thread, from
the Monitor's history (not thread-safe, and a max over an hour takes about a millisecond).
The report's own text stays English (it is for maintainers and forums); the dialog's
words are translated.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.i18n import translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report as report_error
from rocmpanel.machine.inventory import Inventory
from rocmpanel.shell.report import HealthReport, TelemetryPeaks, gather_report
from rocmpanel.shell.report_file import SUFFIXES, format_for, save_report
from rocmpanel.shell.report_redact import Redactor, redact
from rocmpanel.shell.report_render import to_html, to_markdown

log = logging.getLogger(__name__)

DEFAULT_NAME = "rocmpanel-health-report.html"
_MONITOR_MODULE = "rocmpanel.monitor.views.tab"


def monitor_peaks(parent: QWidget | None) -> TelemetryPeaks | None:
    """The peaks of the Monitor tab's history when that tab exists under ``parent``
    (its module is imported only by building the tab: no tab, no telemetry)."""
    module = sys.modules.get(_MONITOR_MODULE)
    if parent is None or module is None:
        return None
    tab = parent.findChild(module.MonitorTab)
    history = getattr(tab, "history", None)
    if history is None:
        return None
    from rocmpanel.shell.report_peaks import peaks_from_history

    return peaks_from_history(history)


@dataclass(frozen=True)
class _Inputs:
    """What the GUI thread knows, handed to the pool as plain values."""

    inventory: Inventory | None
    probe: Mapping[str, Any] | None
    demo: bool
    workload_python: str
    peaks: TelemetryPeaks | None


def _gather(inputs: _Inputs) -> tuple[HealthReport, Redactor]:
    """Runs on the pool: the report and the redactor of this machine."""
    probe = None
    if inputs.probe is not None:
        from rocmpanel.setup.probe_report import ProbeReport

        try:
            probe = ProbeReport.from_dict(inputs.probe)
        except (TypeError, ValueError):
            log.info("The last probe's report could not be read; the report goes without it")
    report = gather_report(
        inventory=inputs.inventory,
        probe=probe,
        demo=inputs.demo,
        telemetry=inputs.peaks,
        workload_python=inputs.workload_python,
    )
    return report, Redactor.for_this_machine()


class HealthReportDialog(QDialog):
    """The preview and the ways out of it. ``gathered`` follows the report's arrival;
    ``saved`` carries the path of each file written."""

    gathered = Signal()
    saved = Signal(str)

    def __init__(
        self, ctx: AppContext, peaks: TelemetryPeaks | None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setWindowTitle(translate("HealthReportDialog", "Export health report"))
        self.resize(900, 700)
        self.report: HealthReport | None = None
        self._redactor = Redactor()
        self.status = QLabel(translate("HealthReportDialog", "Gathering the report…"))
        self.status.setWordWrap(True)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # no figure to show: gathering is a handful of reads
        self.busy.setMaximumHeight(8)
        self.busy.setTextVisible(False)
        self.preview = QTextBrowser()
        self.preview.setOpenLinks(False)
        self.keep_paths = QCheckBox(translate("HealthReportDialog", "Include &user names in paths"))
        self.keep_paths.setToolTip(
            translate(
                "HealthReportDialog",
                "Off: your home folder becomes ~ and user names become <user>. The host "
                "name and secrets are always left out.",
            )
        )
        self.view_kind = QComboBox()
        self.view_kind.addItem(translate("HealthReportDialog", "&Formatted"), "html")
        self.view_kind.addItem(translate("HealthReportDialog", "&Markdown text"), "md")
        self.save_button = QPushButton(translate("HealthReportDialog", "&Save as…"))
        self.copy_button = QPushButton(translate("HealthReportDialog", "&Copy Markdown"))
        close_button = QPushButton(translate("HealthReportDialog", "Cl&ose"))
        for button in (self.save_button, self.copy_button):
            button.setEnabled(False)
        options = QHBoxLayout()
        options.addWidget(self.keep_paths)
        options.addStretch(1)
        options.addWidget(QLabel(translate("HealthReportDialog", "Preview:")))
        options.addWidget(self.view_kind)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.save_button, self.copy_button, close_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.busy)
        layout.addLayout(options)
        layout.addWidget(self.preview, 1)
        layout.addLayout(buttons)
        self.keep_paths.toggled.connect(self._on_keep_paths_toggled)
        self.view_kind.currentIndexChanged.connect(self._on_view_kind_current_index_changed)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        close_button.clicked.connect(self.close)
        probe = ctx.probe_result.data
        inputs = _Inputs(
            ctx.inventory.current,
            dict(probe) if probe is not None else None,
            ctx.demo,
            ctx.workload_python(),
            peaks,
        )
        run_in_background(
            partial(_gather, inputs),
            self._on_gathered,
            owner=self,
            what="gathering the health report",
        )

    # -- the report ---------------------------------------------------------------------
    def _on_gathered(
        self, result: tuple[HealthReport, Redactor] | None, error: BaseException | None
    ) -> None:
        self.busy.hide()
        if error is not None or result is None:
            report_error(
                error or RuntimeError("no report"),
                translate("HealthReportDialog", "Gathering the health report"),
                label=self.status,
            )
            return
        self.report, self._redactor = result
        for button in (self.save_button, self.copy_button):
            button.setEnabled(True)
        self.status.setText(
            translate(
                "HealthReportDialog",
                "Check the report before you share it. The host name and secrets are left "
                "out; user names in paths too, unless you tick the box.",
            )
        )
        self._show()
        self.gathered.emit()

    def shared(self) -> HealthReport | None:
        """The report as it would be shared now (redacted as the checkbox says)."""
        if self.report is None:
            return None
        redactor = dataclasses.replace(self._redactor, keep_paths=self.keep_paths.isChecked())
        return redact(self.report, redactor)

    def text(self, fmt: str) -> str:
        """The shared report as ``fmt`` ("html" or "md"); "" before it is gathered."""
        report = self.shared()
        if report is None:
            return ""
        return to_html(report) if fmt == "html" else to_markdown(report)

    def _show(self) -> None:
        if self.view_kind.currentData() == "md":
            self.preview.setPlainText(self.text("md"))
        else:
            self.preview.setHtml(self.text("html"))

    @Slot(bool)
    def _on_keep_paths_toggled(self, _checked: bool) -> None:
        self._show()

    @Slot(int)
    def _on_view_kind_current_index_changed(self, _index: int) -> None:
        self._show()

    # -- ways out -----------------------------------------------------------------------
    @Slot()
    def _on_copy_button_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.text("md"))
        self.status.setText(
            translate("HealthReportDialog", "Copied the Markdown to the clipboard.")
        )

    def ask_path(self) -> str:
        """The file to save to, asked of the user ("" when cancelled)."""
        html_filter = translate("HealthReportDialog", "HTML page (*.html)")
        md_filter = translate("HealthReportDialog", "Markdown (*.md)")
        path, chosen = QFileDialog.getSaveFileName(
            self,
            translate("HealthReportDialog", "Save health report"),
            str(Path.home() / DEFAULT_NAME),
            f"{html_filter};;{md_filter}",
        )
        if path and format_for(path) is None:  # no suffix typed: the chosen filter's
            path += ".md" if chosen == md_filter else ".html"
        return path

    @Slot()
    def _on_save_button_clicked(self) -> None:
        path = self.ask_path()
        if path:
            self.save_to(Path(path))

    def save_to(self, path: Path) -> None:
        """Render for ``path``'s suffix here and write it in the background."""
        fmt = format_for(path)
        if fmt is None or self.report is None:
            self.status.setText(
                translate("HealthReportDialog", "Name a file ending in {suffixes}.").format(
                    suffixes=", ".join(SUFFIXES)
                )
            )
            return
        self.save_button.setEnabled(False)
        run_in_background(
            partial(save_report, path, self.text(fmt)),
            partial(self._on_saved, path),
            owner=self,
            what="saving the health report",
        )

    def _on_saved(self, path: Path, _written: Path | None, error: BaseException | None) -> None:
        self.save_button.setEnabled(True)
        if error is not None:
            report_error(
                error,
                translate("HealthReportDialog", "Saving the health report"),
                label=self.status,
            )
            return
        self.status.setText(translate("HealthReportDialog", "Saved to {path}.").format(path=path))
        self.saved.emit(str(path))


def export_health_report(parent: QWidget, ctx: AppContext) -> HealthReportDialog:
    """Open the Export health report dialog over ``parent`` (the main window, whose
    Monitor tab's history gives the telemetry peaks); returns it (tests)."""
    dialog = HealthReportDialog(ctx, monitor_peaks(parent), parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
