"""The A/B benchmark's saved results: saving a finished run's result, the list, and the
export of the result shown as .json or .csv (every read and write in the background)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.i18n import translate
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.tuning.bench import BenchResult, export_result, load_results, save_result
from rocmpanel.tuning.views.bench_table import result_label, result_tooltip


class SavedResults(QWidget):
    """The saved results, newest as the store lists them; ``chosen(result)`` follows the
    user's pick. An export error is shown in ``error_label`` (the panel's own)."""

    chosen = Signal(object)

    def __init__(self, ctx: AppContext, error_label: QLabel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.error_label = error_label
        self.shown: BenchResult | None = None
        self.list = QListWidget()
        self.list.setWordWrap(True)  # a long pair of names wraps, never scrolls off
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.list.currentItemChanged.connect(self._on_list_current_item_changed)
        self.export_button = QPushButton(translate("SavedResults", "&Export…"))
        self.export_button.setToolTip(
            translate("SavedResults", "Save the result shown as .json or .csv")
        )
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.export_shown)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel(translate("SavedResults", "Saved results")))
        layout.addWidget(self.list, 1)
        layout.addWidget(self.export_button)

    def set_shown(self, result: BenchResult | None) -> None:
        """The result the panel shows: the one Export writes (it needs cases)."""
        self.shown = result
        self.export_button.setEnabled(result is not None and bool(result.cases))

    def save(self, result: BenchResult) -> None:
        """Keep a finished run's ``result`` (in the background; one with no case is not
        worth a file), then list it selected."""
        if result.cases:
            run_in_background(
                partial(save_result, result), self._on_saved, owner=self, what="saving the result"
            )

    def _on_saved(self, saved: BenchResult | None, error: BaseException | None) -> None:
        if error is not None or saved is None:
            if error is not None:  # the result stays shown; only the list misses it
                report(error, translate("SavedResults", "Saving the benchmark result"))
            return
        if self.shown is not None and self.shown.started == saved.started:
            self.shown = saved
        self.reload(select=saved.id)

    def reload(self, select: str | None = None) -> None:
        """List the saved results (read in the background); ``select``: the id to select."""
        run_in_background(
            load_results,
            partial(self._on_loaded, select),
            owner=self,
            what="listing saved benchmark results",
        )

    def _on_loaded(
        self, select: str | None, results: list[BenchResult] | None, error: BaseException | None
    ) -> None:
        if error is not None or results is None:
            if error is not None:
                report(error, translate("SavedResults", "Listing the saved benchmark results"))
            return
        self.list.blockSignals(True)
        self.list.clear()
        for result in results:
            item = QListWidgetItem(result_label(result))
            item.setToolTip(result_tooltip(result))
            item.setData(Qt.ItemDataRole.UserRole, result)
            self.list.addItem(item)
            if select is not None and result.id == select:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)

    @Slot(object, object)
    def _on_list_current_item_changed(
        self, item: QListWidgetItem | None, _previous: object
    ) -> None:
        if item is not None:
            self.chosen.emit(item.data(Qt.ItemDataRole.UserRole))

    @Slot()
    def export_shown(self) -> None:
        """Ask where, then write the shown result as .json or .csv (in the background)."""
        result = self.shown
        if result is None:
            return
        name = f"bench-{result.id or 'result'}.json"
        path, chosen = QFileDialog.getSaveFileName(
            self,
            translate("SavedResults", "Export the benchmark result"),
            name,
            "JSON (*.json);;CSV (*.csv)",
        )
        if not path:
            return
        target = Path(path)
        if target.suffix.lower() not in (".json", ".csv"):
            target = target.with_suffix(".csv" if "csv" in chosen.lower() else ".json")
        run_in_background(
            partial(export_result, result, target),
            partial(self._on_exported, target),
            owner=self,
            what="exporting the benchmark result",
        )

    def _on_exported(self, target: Path, _none: object, error: BaseException | None) -> None:
        if error is not None:
            report(
                error,
                translate("SavedResults", "Exporting the benchmark result"),
                label=self.error_label,
            )
            self.error_label.show()
            return
        self.ctx.notify(
            translate("SavedResults", "Benchmark result exported to {path}.").format(path=target)
        )
