"""The Tuning tab's presets: the list (built-ins, the user's, unreadable files), the chosen
preset's items with their effect on this machine, and the buttons that manage them.

Every read and write of the store runs off the GUI thread through the panel's status line
(PresetStore reads files and takes locks); the editor and dialogs never block on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.envvars.checks import current_platform
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.status_line import StatusLine
from rocmpanel.jobs.preset_text import suits
from rocmpanel.jobs.presets import Preset, PresetStore, Problem
from rocmpanel.tuning.views.preset_details import PresetDetails, machine_target
from rocmpanel.tuning.views.preset_editor import PresetEditor

#: What Enter (edit) or Delete on a built-in says: one whole sentence each, so that each
#: language words it as a whole.
BUILTIN_REFUSED = {
    "edit": QT_TRANSLATE_NOOP(
        "PresetsPanel", "“{name}” is built in and cannot be edited: Duplicate it to change a copy."
    ),
    "delete": QT_TRANSLATE_NOOP(
        "PresetsPanel", "“{name}” is built in and cannot be deleted: Duplicate it to change a copy."
    ),
}
BUILTIN_TIP = QT_TRANSLATE_NOOP("PresetsPanel", "built in: Duplicate it to change a copy")
SUITS_MARK = "  ✓"
SUITS_LEGEND = QT_TRANSLATE_NOOP("PresetsPanel", "✓ suits your GPU ({gfx})")
NOT_MEANT = QT_TRANSLATE_NOOP(
    "PresetsPanel",
    "{name} is meant for {archs} GPUs; this machine's GPU is {gfx}. Use it anyway?",
)


def archs_words(archs: tuple[str, ...]) -> str:
    """("rdna3",) -> "rdna3"; ("cdna2", "cdna3") -> "cdna2 or cdna3"."""
    if len(archs) == 1:
        return archs[0]
    return translate("presets_panel", "{first} or {last}").format(
        first=", ".join(archs[:-1]), last=archs[-1]
    )


def ask(parent: QWidget, title: str, text: str) -> bool:
    """A yes/no question (tests replace it)."""
    answer = QMessageBox.question(parent, title, text)
    return answer == QMessageBox.StandardButton.Yes


def open_file_name(parent: QWidget) -> str:
    """The preset file to import ("" = cancelled; tests replace it)."""
    path, _ = QFileDialog.getOpenFileName(
        parent,
        translate("presets_panel", "Import a preset"),
        str(Path.home()),
        translate("presets_panel", "Preset files (*.yaml *.yml)"),
    )
    return path


def save_file_name(parent: QWidget, suggested: str) -> str:
    """Where to export a preset ("" = cancelled; tests replace it)."""
    path, _ = QFileDialog.getSaveFileName(
        parent,
        translate("presets_panel", "Export a preset"),
        str(Path.home() / suggested),
        translate("presets_panel", "Preset files (*.yaml)"),
    )
    return path


class PresetList(QListWidget):
    """The presets; Delete asks to delete the current one, Enter edits it."""

    delete_pressed = Signal()
    enter_pressed = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Delete:
            self.delete_pressed.emit()
        elif event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.enter_pressed.emit()
        else:
            super().keyPressEvent(event)


class PresetsPanel(QWidget):
    """Presets list + details + actions. ``presets_changed`` follows each read of the store
    (the benchmark and items panels list the same presets)."""

    presets_changed = Signal(list)

    def __init__(
        self, ctx: AppContext, store: PresetStore | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.store = store if store is not None else PresetStore()
        self.presets: list[Preset] = []
        self.problems: list[Problem] = []
        self.editor: PresetEditor | None = None
        self.persist_dialog: QWidget | None = None
        self._select_after: str | None = None
        self._message_after = ""

        self.list = PresetList(self)
        self.list.setAccessibleName(translate("PresetsPanel", "Presets"))
        self.list.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.list.currentItemChanged.connect(self._on_list_current_changed)
        self.list.delete_pressed.connect(self.delete_selected)
        self.list.enter_pressed.connect(self.edit_selected)
        self.list.itemDoubleClicked.connect(lambda _item: self.edit_selected())
        self.problems_label = QLabel(self)
        self.problems_label.setWordWrap(True)
        self.problems_label.setStyleSheet("color: #b00020;")
        self.problems_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problems_label.hide()
        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.list, 1)
        self.legend_label = QLabel(self)
        self.legend_label.hide()
        left_layout.addWidget(self.legend_label)
        left_layout.addWidget(self.problems_label)

        self.details = PresetDetails(self)
        right = self.details

        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)

        self.use_button = self._button(
            translate("PresetsPanel", "&Use for jobs"), self.use_selected
        )
        self.stop_button = self._button(translate("PresetsPanel", "S&top using"), self.stop_using)
        self.new_button = self._button(translate("PresetsPanel", "&New…"), self.new_preset)
        self.duplicate_button = self._button(
            translate("PresetsPanel", "Dupli&cate"), lambda: self.duplicate_selected()
        )
        self.edit_button = self._button(translate("PresetsPanel", "&Edit…"), self.edit_selected)
        self.delete_button = self._button(
            translate("PresetsPanel", "De&lete"), self.delete_selected
        )
        self.import_button = self._button(translate("PresetsPanel", "I&mport…"), self.import_preset)
        self.export_button = self._button(
            translate("PresetsPanel", "E&xport…"), self.export_selected
        )
        self.persist_button = self._button(
            translate("PresetsPanel", "Also set these variables for programs &outside rocmpanel…"),
            self.persist_selected,
        )
        row = QHBoxLayout()
        for button in (
            self.use_button,
            self.stop_button,
            self.new_button,
            self.duplicate_button,
            self.edit_button,
            self.delete_button,
            self.import_button,
            self.export_button,
        ):
            row.addWidget(button)
        row.addStretch(1)
        self.active_label = QLabel(self)
        self.status = StatusLine(self)
        self.status.busy_changed.connect(lambda _busy: self._update_buttons())

        layout = QVBoxLayout(self)
        layout.addWidget(self.active_label)
        layout.addWidget(split, 1)
        layout.addLayout(row)
        persist_row = QHBoxLayout()
        persist_row.addWidget(self.persist_button)
        persist_row.addStretch(1)
        layout.addLayout(persist_row)
        layout.addWidget(self.status)

        ctx.active_preset.changed.connect(self._on_active_changed)
        ctx.inventory.changed.connect(lambda _inventory: self._on_inventory_changed())
        ctx.probe_result.changed.connect(self._show_selected)
        self._on_active_changed()
        self.refresh()

    def _button(self, text: str, slot: Callable[[], object]) -> QPushButton:
        button = QPushButton(text, self)
        button.clicked.connect(lambda _checked=False: slot())
        return button

    # -- reading -------------------------------------------------------------------------
    def refresh(
        self,
        select: str | None = None,
        message: str = "",
        then: Callable[[], None] | None = None,
    ) -> bool:
        """Read the store again (in the background); ``select``: the id to select then,
        ``message``: what to say then (a message shown before the read would be replaced
        by it), ``then``: what to do once the list shows what was read (not on an error)."""
        self._select_after = select or self.selected_id()
        self._message_after = message

        def work() -> tuple[list[Preset], list[Problem]]:
            presets = self.store.all()
            return presets, list(self.store.problems)

        return self.status.run(
            translate("PresetsPanel", "Reading the presets"), work, partial(self._on_read, then)
        )

    def _on_read(
        self, then: Callable[[], None] | None, result: Any, error: BaseException | None
    ) -> None:
        if error is not None or result is None:
            self.status.show_error(
                error or PanelError(translate("PresetsPanel", "The presets could not be read."))
            )
            return
        self.presets, self.problems = result
        self._fill_list()
        if self._message_after:
            self.status.show_message(self._message_after)
        self.presets_changed.emit(list(self.presets))
        if then is not None:
            then()

    def _fill_list(self) -> None:
        wanted = self._select_after
        self.list.blockSignals(True)
        self.list.clear()
        for preset in self.presets:
            item = QListWidgetItem(self.list)
            item.setData(Qt.ItemDataRole.UserRole, preset.id)
        self.list.blockSignals(False)
        self._label_list()
        ids = [preset.id for preset in self.presets]
        row = ids.index(wanted) if wanted in ids else (0 if ids else -1)
        self.list.setCurrentRow(row)
        self._show_selected()
        if self.problems:
            lines = [f"{problem.path}: {problem.message}" for problem in self.problems]
            self.problems_label.setText(
                translate(
                    "PresetsPanel",
                    "These preset files could not be read and are left as they are:\n{files}",
                ).format(files="\n".join(lines))
            )
            self.problems_label.show()
        else:
            self.problems_label.hide()

    def gfx(self) -> str | None:
        """The GPU the effects and the "suits" marks are for (None: not known)."""
        return machine_target(self.ctx).gfx

    def _label_list(self) -> None:
        """Each preset's name, "(built in)", and a mark when it suits the detected GPU."""
        gfx = self.gfx()
        for row, preset in enumerate(self.presets):
            item = self.list.item(row)
            fits = suits(preset, gfx) is True
            text = (
                translate("PresetsPanel", "{name}  (built in)").format(name=preset.name)
                if preset.builtin
                else preset.name
            )
            item.setText(text + (SUITS_MARK if fits else ""))
            tip = preset.description or translate("PresetsPanel", "No description.")
            if fits:
                tip += "\n" + translate("PresetsPanel", "Suits your GPU ({gfx}).").format(gfx=gfx)
            item.setToolTip(tip)
        legend = translate("PresetsPanel", SUITS_LEGEND).format(gfx=gfx) if gfx else ""
        self.legend_label.setText(legend)
        self.legend_label.setVisible(bool(gfx))

    def _on_inventory_changed(self) -> None:
        self._label_list()
        self._show_selected()

    # -- the selected preset -----------------------------------------------------------
    def selected_id(self) -> str | None:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def selected(self) -> Preset | None:
        ident = self.selected_id()
        return next((p for p in self.presets if p.id == ident), None)

    def select(self, ident: str) -> None:
        for row in range(self.list.count()):
            if self.list.item(row).data(Qt.ItemDataRole.UserRole) == ident:
                self.list.setCurrentRow(row)
                return

    @Slot()
    def _on_list_current_changed(self) -> None:
        self._show_selected()

    @Slot()
    def _show_selected(self) -> None:
        preset = self.selected()
        self._update_buttons()
        try:
            self.details.show_preset(preset, machine_target(self.ctx), bool(self.presets))
        except (PanelError, ValueError) as exc:
            self.status.show_error(exc, translate("PresetsPanel", "Checking the preset's effects"))

    def _update_buttons(self) -> None:
        idle = not self.status.busy
        preset = self.selected()
        chosen = preset is not None and idle
        active = self.ctx.active_preset.ident
        self.use_button.setEnabled(chosen and preset is not None and preset.id != active)
        self.stop_button.setEnabled(idle and bool(self.ctx.active_preset.ident))
        self.new_button.setEnabled(idle)
        self.import_button.setEnabled(idle)
        for button in (self.duplicate_button, self.export_button):
            button.setEnabled(chosen)
        builtin = preset is not None and preset.builtin
        for button in (self.edit_button, self.delete_button):
            button.setEnabled(chosen and not builtin)
            button.setToolTip(translate("PresetsPanel", BUILTIN_TIP) if builtin else "")
        self.persist_button.setEnabled(chosen and bool(preset and preset.env))

    # -- the active preset -------------------------------------------------------------
    @Slot()
    def _on_active_changed(self) -> None:
        holder = self.ctx.active_preset
        self.active_label.setText(
            translate("PresetsPanel", "Jobs run under the preset “{name}”.").format(
                name=holder.name
            )
            if holder.ident
            else translate(
                "PresetsPanel", "Jobs run without a preset (their environment as it is)."
            )
        )
        self._update_buttons()

    def set_active(self, preset: Preset | None) -> None:
        """Make ``preset`` (None: no preset) the one every job runs under: the holder (and
        so the status bar) follows at once, the settings file is written in the background
        (its lock may wait on a command line holding it). When it cannot be written, the
        error is shown and the holder and the setting go back to what they were."""
        ident = preset.id if preset is not None else ""
        general = self.ctx.settings.general
        holder = self.ctx.active_preset
        before = (general.active_preset, holder.ident, holder.name)
        general.active_preset = ident
        holder.set(ident, preset.name if preset is not None else "")
        run_in_background(
            self.ctx.settings.save,
            partial(self._on_active_saved, ident, before),
            owner=self,
            what="saving the active preset",
        )

    def _on_active_saved(
        self,
        chosen: str,
        before: tuple[str, str, str],
        _notes: object,
        error: BaseException | None,
    ) -> None:
        if error is None:
            return
        self.status.show_error(error, translate("PresetsPanel", "Saving the active preset"))
        if self.ctx.active_preset.ident != chosen:
            return  # chosen again since: that choice stands (its own save answers for it)
        setting, ident, name = before
        self.ctx.settings.general.active_preset = setting
        self.ctx.active_preset.set(ident, name)

    def use_selected(self) -> None:
        """Make the selected preset the active one; one meant for other GPUs asks first."""
        preset = self.selected()
        if preset is None:
            return
        gfx = self.gfx()
        if suits(preset, gfx) is False:
            question = translate("PresetsPanel", NOT_MEANT).format(
                name=preset.name, archs=archs_words(preset.archs), gfx=gfx
            )
            if not ask(self, translate("PresetsPanel", "Preset for other GPUs"), question):
                return
        self.set_active(preset)
        self.status.show_message(
            translate("PresetsPanel", "Jobs started from now on run under “{name}”.").format(
                name=preset.name
            )
        )

    def stop_using(self) -> None:
        self.set_active(None)
        self.status.show_message(
            translate("PresetsPanel", "Jobs started from now on run without a preset.")
        )

    # -- managing presets --------------------------------------------------------------
    def _refused(self, preset: Preset, what: str) -> None:
        """A built-in cannot be changed (Enter or Delete on one): say so in the status line;
        ``what``: "edit" or "delete"."""
        text = translate("PresetsPanel", BUILTIN_REFUSED[what])
        self.status.show_message(text.format(name=preset.name))

    def _store_call(self, doing: str, work: Callable[[], Any], done: Callable[[Any], None]) -> bool:
        def on_done(result: Any, error: BaseException | None) -> None:
            if error is not None:
                self.status.show_error(error, doing)
                return
            done(result)

        return self.status.run(doing, work, on_done)

    def new_preset(self) -> None:
        self.open_editor(None)

    def edit_selected(self) -> None:
        preset = self.selected()
        if preset is None:
            return
        if preset.builtin:
            self._refused(preset, "edit")
            return
        self.open_editor(preset)

    def edit_preset(self, ident: str) -> PresetEditor | None:
        """Open the editor on the user preset ``ident`` (the items panel's "Add to
        preset…"); None if it is not one."""
        preset = next((p for p in self.presets if p.id == ident and not p.builtin), None)
        if preset is None:
            return None
        self.select(ident)
        return self.open_editor(preset)

    def open_editor(self, preset: Preset | None) -> PresetEditor:
        editor = PresetEditor(preset, self, platform=current_platform())
        editor.save_requested.connect(partial(self._on_editor_save_requested, editor))
        editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.editor = editor
        editor.open()
        return editor

    def _on_editor_save_requested(self, editor: PresetEditor, preset: Preset) -> None:
        replace = editor.original.id if editor.original is not None else None

        def done(result: Any, error: BaseException | None) -> None:
            # The editor refuses to close while saving, but Qt may still have deleted it
            # (its parent closed): the list and the active preset never depend on it.
            alive = isValid(editor)
            if error is not None:
                message = self.status.show_error(
                    error, translate("PresetsPanel", "Saving the preset")
                )
                if alive:
                    editor.set_saving(False)
                    editor.show_error(message)
                return
            saved: Preset = result
            holder = self.ctx.active_preset
            if replace is not None and holder.ident == replace:
                self.set_active(saved)  # the active preset was renamed: follow it
            self.refresh(
                saved.id,
                translate("PresetsPanel", "Saved “{name}” ({path}).").format(
                    name=saved.name, path=saved.path
                ),
            )
            if alive:
                editor.set_saving(False)
                editor.accept()

        editor.set_saving(True)
        if not self.status.run(
            translate("PresetsPanel", "Saving the preset"),
            partial(self.store.save, preset, replace=replace),
            done,
        ):
            editor.set_saving(False)
            editor.show_error(
                translate("PresetsPanel", "The presets are busy: save again in a moment.")
            )

    def duplicate_selected(self, then: Callable[[Preset], None] | None = None) -> bool:
        """Copy the selected preset; ``then(copy)`` runs once the list shows the copy
        selected (never when the copy fails). False when nothing started (no selection,
        or the presets are busy)."""
        preset = self.selected()
        if preset is None:
            return False
        return self._store_call(
            translate("PresetsPanel", "Duplicating the preset"),
            partial(self.store.duplicate, preset.id),
            partial(self._after_added, then=then),
        )

    def _after_added(self, preset: Preset, then: Callable[[Preset], None] | None = None) -> None:
        self.refresh(
            preset.id,
            translate("PresetsPanel", "Added “{name}” ({path}).").format(
                name=preset.name, path=preset.path
            ),
            partial(then, preset) if then is not None else None,
        )

    def delete_selected(self) -> None:
        preset = self.selected()
        if preset is None:
            return
        if preset.builtin:
            self._refused(preset, "delete")
            return
        question = translate(
            "PresetsPanel", "Delete the preset “{name}”? A backup of its file is kept."
        ).format(name=preset.name)
        if not ask(self, translate("PresetsPanel", "Delete preset"), question):
            return
        self._store_call(
            translate("PresetsPanel", "Deleting the preset"),
            partial(self.store.delete, preset.id),
            lambda _none: self._after_deleted(preset),
        )

    def _after_deleted(self, preset: Preset) -> None:
        message = translate("PresetsPanel", "Deleted “{name}”.").format(name=preset.name)
        if self.ctx.active_preset.ident == preset.id:
            self.set_active(None)
            message += " " + translate(
                "PresetsPanel", "It was the preset jobs ran under: they now run without a preset."
            )
            self.ctx.notify(message)
        self.refresh(message=message)

    def import_preset(self) -> None:
        path = open_file_name(self)
        if not path:
            return
        self._store_call(
            translate("PresetsPanel", "Importing the preset"),
            partial(self.store.import_file, Path(path)),
            self._after_added,
        )

    def export_selected(self) -> None:
        preset = self.selected()
        if preset is None:
            return
        path = save_file_name(self, f"{preset.id}.yaml")
        if not path:
            return
        self._store_call(
            translate("PresetsPanel", "Exporting the preset"),
            partial(self.store.export, preset.id, Path(path)),
            lambda _none: self.status.show_message(
                translate("PresetsPanel", "Exported “{name}” to {path}.").format(
                    name=preset.name, path=path
                )
            ),
        )

    def persist_selected(self) -> None:
        """Offer the preset's variables to the environment editor (preview, apply, undo)."""
        from rocmpanel.tuning.views.persist_dialog import PersistDialog

        preset = self.selected()
        if preset is None:
            return
        dialog = PersistDialog(self.ctx, preset, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.persist_dialog = dialog
        dialog.open()

    def busy(self) -> bool:
        return self.status.busy
