"""The history of validation runs: the list, Compare two, Export Markdown…, Delete.

The store is read, written and deleted from through ``run_in_background``; the runs read
last are kept, so selecting, comparing and exporting one needs no disk read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.enums import CheckStatus
from rocmpanel.base.frozen import own_python
from rocmpanel.base.i18n import translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.report import report
from rocmpanel.knowledge.torch_builds import Override
from rocmpanel.pytorch.validation_report import (
    compare_markdown,
    damaged_text,
    run_title,
    to_markdown,
)
from rocmpanel.pytorch.validation_run import RunVerdict, ValidationRun
from rocmpanel.pytorch.validation_store import ValidationStore

VERDICT_COLOURS = {
    RunVerdict.PASS: "#2e7d32",
    RunVerdict.FAIL: "#c62828",
    RunVerdict.INCOMPLETE: "#ef6c00",
}


def short_title(run: ValidationRun) -> str:
    """A history line: number, time, where, counts (the full title is the tooltip)."""
    if run.damaged is not None:
        return translate("ValidationHistory", "#{id} damaged run").format(id=run.id)
    counts = run.counts
    when = time.strftime("%m-%d %H:%M", time.localtime(run.created_at))
    if run.env_name:
        where = run.env_name
    elif not run.python or run.python == own_python():
        where = translate("ValidationHistory", "panel's Python")
    else:
        where = Path(run.python).parent.parent.name or run.python
    return translate(
        "ValidationHistory", "#{id} {when} {where}: {passed}✓ {failed}✗ {skipped} skip"
    ).format(
        id=run.id,
        when=when,
        where=where,
        passed=counts[CheckStatus.PASS],
        failed=counts[CheckStatus.FAIL],
        skipped=counts[CheckStatus.SKIP],
    )


class MarkdownDialog(QDialog):
    """Shows Markdown (a comparison or a report) with Copy and Close."""

    def __init__(self, title: str, markdown: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(900, 600)
        self.markdown = markdown
        view = QTextBrowser()
        view.setMarkdown(markdown)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = buttons.addButton(
            translate("MarkdownDialog", "&Copy Markdown"), QDialogButtonBox.ButtonRole.ActionRole
        )
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.markdown))
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(view)
        layout.addWidget(buttons)


class ValidationHistory(QWidget):
    """Saved runs, newest first. ``loaded`` follows each reading of the store;
    ``run_selected`` carries the run the user picked alone."""

    loaded = Signal()
    run_selected = Signal(object)  # ValidationRun

    def __init__(
        self,
        store: ValidationStore,
        overrides: Callable[[], Mapping[str, Override]],
        notify: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self._overrides = overrides
        self._notify = notify
        self.runs: dict[int, ValidationRun] = {}  # as last read, newest first
        self._generation = 0  # of reload(); older readings are dropped

        self.list = QListWidget()
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.itemSelectionChanged.connect(self._on_list_selection_changed)
        self.compare_button = QPushButton(translate("ValidationHistory", "C&ompare two"))
        self.compare_button.setToolTip(
            translate("ValidationHistory", "Select two runs to compare them side by side")
        )
        self.compare_button.clicked.connect(self._on_compare_clicked)
        self.export_button = QPushButton(translate("ValidationHistory", "E&xport Markdown…"))
        self.export_button.clicked.connect(self._on_export_clicked)
        self.delete_button = QPushButton(translate("ValidationHistory", "Delete"))
        self.delete_button.clicked.connect(self._on_delete_clicked)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel(translate("ValidationHistory", "Run history")))
        # Says when a damaged history file was moved aside and a new one started.
        self.notice_label = QLabel()
        self.notice_label.setWordWrap(True)
        self.notice_label.setStyleSheet("color: #ef6c00")
        self.notice_label.hide()
        layout.addWidget(self.notice_label)
        layout.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        for button in (self.compare_button, self.export_button, self.delete_button):
            buttons.addWidget(button)
        layout.addLayout(buttons)
        self._update_buttons()

    # -- reading -----------------------------------------------------------------------
    def reload(self, select: int | None = None) -> None:
        """Read the store again in the background, then select run ``select``."""
        self._generation += 1
        run_in_background(
            self.store.list_runs,
            partial(self._on_runs_read, self._generation, select),
            owner=self,
            what="reading the validation history",
        )

    def _on_runs_read(
        self,
        generation: int,
        select: int | None,
        runs: list[ValidationRun] | None,
        error: BaseException | None,
    ) -> None:
        if generation != self._generation:
            return  # a newer reading is on its way
        if error is not None:
            report(error, translate("ValidationHistory", "Reading the validation history"))
        self.show_notice(self.store.notice)
        self.runs = {r.id: r for r in runs or [] if r.id is not None}
        self.list.blockSignals(True)
        self.list.clear()
        for run in self.runs.values():
            item = QListWidgetItem(short_title(run))
            item.setToolTip(run_title(run))
            item.setData(Qt.ItemDataRole.UserRole, run.id)
            item.setForeground(QColor(VERDICT_COLOURS[run.verdict]))
            self.list.addItem(item)
            if run.id == select:
                item.setSelected(True)
        self.list.blockSignals(False)
        self._update_buttons()
        self.loaded.emit()

    def show_notice(self, notice: str | None) -> None:
        """Show what was done about a damaged history file (None: nothing was)."""
        if notice:
            self.notice_label.setText(notice)
            self.notice_label.setToolTip(notice)
        self.notice_label.setVisible(bool(notice))

    def selected_ids(self) -> list[int]:
        return [int(i.data(Qt.ItemDataRole.UserRole)) for i in self.list.selectedItems()]

    def _update_buttons(self) -> None:
        count = len(self.selected_ids())
        self.compare_button.setEnabled(count == 2)
        self.export_button.setEnabled(count == 1)
        self.delete_button.setEnabled(count >= 1)

    @Slot()
    def _on_list_selection_changed(self) -> None:
        self._update_buttons()
        ids = self.selected_ids()
        run = self.runs.get(ids[0]) if len(ids) == 1 else None
        if run is not None:
            self.run_selected.emit(run)

    # -- actions -----------------------------------------------------------------------
    def compare_text(self) -> str | None:
        """The two selected runs compared (older as A), as Markdown; None unless two."""
        ids = self.selected_ids()
        if len(ids) != 2:
            return None
        older, newer = sorted(ids)
        a, b = self.runs.get(older), self.runs.get(newer)
        if a is None or b is None:
            return None
        bad = next((r for r in (a, b) if r.damaged is not None), None)
        return damaged_text(bad) + "\n" if bad is not None else compare_markdown(a, b)

    @Slot()
    def _on_compare_clicked(self) -> None:
        text = self.compare_text()
        if text:
            MarkdownDialog(
                translate("ValidationHistory", "Compare validation runs"), text, self
            ).exec()

    @Slot()
    def _on_export_clicked(self) -> None:
        ids = self.selected_ids()
        run = self.runs.get(ids[0]) if len(ids) == 1 else None
        if run is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self,
            translate("ValidationHistory", "Export validation run"),
            f"validation-{run.id}.md",
            translate("ValidationHistory", "Markdown (*.md)"),
        )
        if path:
            self.export(run, Path(path))

    def export(self, run: ValidationRun, path: Path) -> None:
        """Write ``run`` as Markdown to ``path`` (off the GUI thread)."""

        def done(_result: object, error: BaseException | None) -> None:
            if error is not None:
                report(
                    error,
                    translate("ValidationHistory", "Exporting the validation run"),
                    dialog_parent=self,
                )
            else:
                self._notify(translate("ValidationHistory", "Saved {path}").format(path=path))

        data = to_markdown(run, self._overrides()).encode("utf-8")
        run_in_background(
            partial(write_atomic, path, data), done, owner=self, what="exporting a validation run"
        )

    @Slot()
    def _on_delete_clicked(self) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        answer = QMessageBox.question(
            self,
            translate("ValidationHistory", "Delete runs"),
            translate(
                "ValidationHistory", "Delete {count} validation run(s) from the history?"
            ).format(count=len(ids)),
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.delete_button.setEnabled(False)

        def done(_result: None, error: BaseException | None) -> None:
            if error is not None:
                report(
                    error,
                    translate("ValidationHistory", "Deleting validation runs"),
                    dialog_parent=self,
                )
            self.reload()

        run_in_background(
            partial(self.store.delete, *ids), done, owner=self, what="deleting validation runs"
        )
