"""The Tuning tab: presets (choose the one jobs run under, manage them), the tuning items
(the guide's snippets answered, the settings ROCm needs), and A/B benchmarks of presets.

Each part is a page of its own; the tab connects them: "Add to preset…" on an item opens
the preset editor on a user preset (or offers a copy of a built-in).
"""

from __future__ import annotations

import contextlib
import logging
from functools import partial
from typing import ClassVar

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.presets import Preset, PresetStore
from rocmpanel.tuning.views import presets_panel
from rocmpanel.tuning.views.items_panel import ItemsPanel
from rocmpanel.tuning.views.presets_panel import PresetsPanel

log = logging.getLogger(__name__)

ADD_TO_BUILTIN = QT_TRANSLATE_NOOP(
    "TuningTab",
    "“{name}” is built in and cannot be changed. Make a copy of it and add {key} to the copy?",
)
BUSY = QT_TRANSLATE_NOOP(
    "TuningTab", "The presets are busy: ask to add the setting again in a moment."
)


class TuningTab(QWidget):
    """Presets · Items · A/B benchmark."""

    title: ClassVar[str] = "Tuning"

    def __init__(
        self, ctx: AppContext, parent: QWidget | None = None, *, store: PresetStore | None = None
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.pages = QTabWidget(self)
        self.presets = PresetsPanel(ctx, store, self)
        self.items = ItemsPanel(self)
        self.items.add_requested.connect(self._on_items_add_requested)
        self.pages.addTab(self.presets, translate("TuningTab", "&Presets"))
        self.pages.addTab(
            self.items, translate("TuningTab", "&Items: what each setting really does")
        )
        self.bench: QWidget | None = self._build_bench(ctx)
        if self.bench is not None:
            self.pages.addTab(self.bench, translate("TuningTab", "A/B benchmar&k"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages)

    def _build_bench(self, ctx: AppContext) -> QWidget | None:
        """The A/B benchmark page, where this build has it."""
        try:
            from rocmpanel.tuning.views.bench_panel import BenchPanel
        except ImportError:
            log.info("the A/B benchmark panel is not in this build")
            return None
        return BenchPanel(ctx, self)

    @Slot(str, str)
    def _on_items_add_requested(self, kind: str, key: str) -> None:
        """Open the editor on the selected user preset with ``key`` in view; a built-in is
        copied first when the user agrees."""
        preset = self.presets.selected()
        if preset is None:
            self.presets.open_editor(None).add_setting(kind, key)
            return
        if preset.builtin:
            question = translate("TuningTab", ADD_TO_BUILTIN).format(name=preset.name, key=key)
            if not presets_panel.ask(self, translate("TuningTab", "Built-in preset"), question):
                return
            self.pages.setCurrentWidget(self.presets)
            if not self.presets.duplicate_selected(partial(self._add_to_copy, kind, key)):
                self.presets.status.show_message(translate("TuningTab", BUSY), error=True)
            return
        self.pages.setCurrentWidget(self.presets)
        editor = self.presets.edit_preset(preset.id)
        if editor is not None:
            editor.add_setting(kind, key)

    def _add_to_copy(self, kind: str, key: str, copy: Preset) -> None:
        """The copy of a built-in is listed and selected: open the editor on it with the
        setting the items panel asked for (the request travels with this one duplicate)."""
        editor = self.presets.edit_preset(copy.id)
        if editor is not None:
            editor.add_setting(kind, key)

    def shutdown(self) -> None:
        """Close open dialogs; a benchmark running is stopped by its panel."""
        for dialog in (self.presets.editor, self.presets.persist_dialog):
            if dialog is not None:
                with contextlib.suppress(RuntimeError):  # already deleted by Qt
                    dialog.close()
        stop = getattr(self.bench, "shutdown", None)
        if callable(stop):
            stop()
