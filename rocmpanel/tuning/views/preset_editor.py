"""The preset editor: a form (name, description, archs, variables, torch settings) and the
same preset as raw YAML; switching tabs converts one into the other.

Both sides are checked by the one schema (``jobs.presets.parse_preset``): the form is
turned into preset YAML and parsed, so the form can never accept what a file would not.
Variable values are also checked live against the env catalogue, row by row. Save stays
disabled while the preset is invalid, and the problem shows under it: the field for the
form, the line and field for the raw YAML (whose cursor line and column show beside it).

Keyboard: the editor opens on Name; Enter in a field does not save (only Ctrl+S or
Ctrl+Return, or the Save button, do); Tab always moves focus, also out of Description and
Raw YAML (indent YAML with spaces: a tab character is not valid YAML indentation).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import yaml
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFontDatabase,
    QKeyEvent,
    QKeySequence,
    QShortcut,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.envvars.catalogue import load_catalogue
from rocmpanel.gui.report import report
from rocmpanel.jobs.preset_store import slug
from rocmpanel.jobs.preset_text import unknown_variables
from rocmpanel.jobs.presets import ARCHS, Item, Preset, PresetError, dump_preset, parse_preset
from rocmpanel.tuning.items import item_for_setting
from rocmpanel.tuning.views.items_panel import describe_item
from rocmpanel.tuning.views.torch_form import TorchForm

ERROR_COLOR = QColor("#b00020")
UNKNOWN_NOTE = QT_TRANSLATE_NOOP(
    "PresetEditor",
    "Not in rocmpanel's catalogue, so not checked (a typo, or a variable rocmpanel does not "
    "know): {names}.",
)
SAVE_KEYS = ("Ctrl+S", "Ctrl+Return")
SAVING = QT_TRANSLATE_NOOP("PresetEditor", "Saving…")


def tuning_item_text(kind: str, key: str) -> str | None:
    """What the items list says about the setting ``key`` of ``kind`` ("env" | "torch");
    None when it says nothing."""
    try:
        item = item_for_setting(kind, key)
    except PanelError as exc:  # a broken items resource must not break the editor
        return report(exc, translate("preset_editor", "Reading the tuning items"))
    return describe_item(item) if item is not None else None


class PresetEditor(QDialog):
    """Edit ``original`` (None: a new preset). ``save_requested(preset)`` asks the owner to
    save; it answers with :meth:`accept` or :meth:`show_error`."""

    save_requested = Signal(object)

    def __init__(
        self, original: Preset | None, parent: QWidget | None = None, *, platform: str = "linux"
    ) -> None:
        super().__init__(parent)
        self.original = original
        self.platform = platform
        self.catalogue = load_catalogue()
        self.file = (
            original.path.name
            if original and original.path
            else translate("PresetEditor", "new preset")  # names it in the problems shown
        )
        self._meta: dict[tuple[str, str], dict[str, Any]] = {}
        self._filling = False
        self._ident = original.id if original is not None else ""
        self._ident_name = original.name if original is not None else ""
        self.explained: QMessageBox | None = None
        self.current: Preset | None = None
        self.error = ""
        self._saving = False
        self.setWindowTitle(
            translate("PresetEditor", "Edit preset: {name}").format(name=original.name)
            if original
            else translate("PresetEditor", "New preset")
        )
        self.resize(760, 640)

        self.tabs = QTabWidget(self)
        self.tabs.addTab(self._build_form(), translate("PresetEditor", "&Form"))
        self.raw_edit = QPlainTextEdit(self)
        self.raw_edit.setAccessibleName(translate("PresetEditor", "Preset as YAML"))
        self.raw_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.raw_edit.setTabChangesFocus(True)
        self.raw_edit.textChanged.connect(self._validate)
        self.raw_edit.cursorPositionChanged.connect(self._show_cursor_position)
        self.cursor_label = QLabel(self)
        raw_page = QWidget(self)
        raw_layout = QVBoxLayout(raw_page)
        raw_layout.addWidget(self.raw_edit, 1)
        raw_layout.addWidget(self.cursor_label, 0, Qt.AlignmentFlag.AlignRight)
        self.tabs.addTab(raw_page, translate("PresetEditor", "&Raw YAML"))
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.error_label = QLabel(self)
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #b00020;")
        self.unknown_label = QLabel(self)
        self.unknown_label.setWordWrap(True)
        self.unknown_label.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setToolTip(translate("PresetEditor", "Save the preset (Ctrl+S)"))
        for button in self.buttons.buttons():
            if isinstance(button, QPushButton):  # Enter in a field must not save
                button.setAutoDefault(False)
                button.setDefault(False)
        self.save_shortcuts = [QShortcut(QKeySequence(keys), self) for keys in SAVE_KEYS]
        for shortcut in self.save_shortcuts:
            shortcut.activated.connect(self.request_save)
        self.buttons.accepted.connect(self.request_save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.unknown_label)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        start = original or Preset(
            "new-preset", translate("PresetEditor", "New preset"), archs=("any",)
        )
        self._fill_form(start)
        self._validate()
        self._show_cursor_position()
        self.name_edit.setFocus()

    def showEvent(self, event: QShowEvent) -> None:
        """Open on Name, selected: typing starts there and replaces "New preset"."""
        super().showEvent(event)
        self.save_button.setDefault(False)  # the button box makes it default when shown
        if not self.on_raw_tab():
            self.name_edit.setFocus()
            self.name_edit.selectAll()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter in a field does nothing (QDialog would press a default button); Escape
        cancels as usual."""
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()
            return
        super().keyPressEvent(event)

    @Slot()
    def _show_cursor_position(self) -> None:
        cursor = self.raw_edit.textCursor()
        self.cursor_label.setText(
            translate("PresetEditor", "Line {line}, column {column}").format(
                line=cursor.blockNumber() + 1, column=cursor.positionInBlock() + 1
            )
        )

    # -- the form ----------------------------------------------------------------------
    def _build_form(self) -> QWidget:
        page = QWidget(self)
        form = QFormLayout()
        self.name_edit = QLineEdit(page)
        self.name_edit.textChanged.connect(self._validate)
        form.addRow(translate("PresetEditor", "&Name:"), self.name_edit)
        self.description_edit = QPlainTextEdit(page)
        self.description_edit.setMaximumHeight(60)
        self.description_edit.setTabChangesFocus(True)
        self.description_edit.textChanged.connect(self._validate)
        form.addRow(translate("PresetEditor", "&Description:"), self.description_edit)
        archs = QHBoxLayout()
        self.arch_boxes: dict[str, QCheckBox] = {}
        for arch in ARCHS:
            box = QCheckBox(
                arch.upper() if arch != "any" else translate("PresetEditor", "any"), page
            )
            box.toggled.connect(partial(self._on_arch_toggled, arch))
            archs.addWidget(box)
            self.arch_boxes[arch] = box
        archs.addStretch(1)
        form.addRow(translate("PresetEditor", "Suits:"), archs)

        env_box = QGroupBox(translate("PresetEditor", "Environment variables"), page)
        self.env_table = QTableWidget(0, 3, env_box)
        self.env_table.setHorizontalHeaderLabels(
            [
                translate("PresetEditor", "Variable"),
                translate("PresetEditor", "Value"),
                translate("PresetEditor", "Check"),
            ]
        )
        self.env_table.horizontalHeader().setStretchLastSection(True)
        self.env_table.setColumnWidth(0, 320)  # the names are long (TORCH_ROCM_AOTRITON_...)
        self.env_table.setColumnWidth(1, 140)
        self.env_table.itemChanged.connect(self._validate)
        add = QPushButton(translate("PresetEditor", "&Add variable"), env_box)
        add.clicked.connect(lambda _checked=False: self.add_env_row("", ""))
        remove = QPushButton(translate("PresetEditor", "Re&move variable"), env_box)
        remove.clicked.connect(lambda _checked=False: self.remove_env_row())
        env_help = QToolButton(env_box)
        env_help.setText("?")
        env_help.setToolTip(
            translate("PresetEditor", "What the tuning items say about the selected variable")
        )
        env_help.clicked.connect(lambda _checked=False: self._explain_env())
        env_buttons = QHBoxLayout()
        for widget in (add, remove, env_help):
            env_buttons.addWidget(widget)
        env_buttons.addStretch(1)
        env_layout = QVBoxLayout(env_box)
        env_layout.addWidget(self.env_table)
        env_layout.addLayout(env_buttons)

        self.torch_form = TorchForm(page)
        self.torch_form.changed.connect(self._validate)
        self.torch_form.help_requested.connect(lambda key: self.explain("torch", key))

        layout = QVBoxLayout(page)
        layout.addLayout(form)
        layout.addWidget(env_box, 1)
        layout.addWidget(self.torch_form)
        return page

    def _on_arch_toggled(self, arch: str, checked: bool) -> None:
        """ "any" and a named arch exclude each other: ticking one unticks the other(s)."""
        if checked and not self._filling:
            others = [a for a in self.arch_boxes if (a != "any") == (arch == "any")]
            self._filling = True
            try:
                for other in others:
                    self.arch_boxes[other].setChecked(False)
            finally:
                self._filling = False
        self._validate()

    def add_env_row(self, name: str, value: str) -> int:
        row = self.env_table.rowCount()
        self.env_table.insertRow(row)
        self.env_table.setItem(row, 0, QTableWidgetItem(name))
        self.env_table.setItem(row, 1, QTableWidgetItem(value))
        check = QTableWidgetItem("")
        check.setFlags(check.flags() & ~check.flags().ItemIsEditable)
        self.env_table.setItem(row, 2, check)
        self._validate()
        return row

    def remove_env_row(self) -> None:
        row = self.env_table.currentRow()
        if row >= 0:
            self.env_table.removeRow(row)
            self._validate()

    def explain(self, kind: str, key: str) -> str:
        """Show what the tuning items say about ``key``; returns the text shown."""
        text = tuning_item_text(kind, key) or translate(
            "PresetEditor", "The tuning items say nothing about {key}."
        ).format(key=key)
        box = QMessageBox(QMessageBox.Icon.Information, key, text, parent=self)
        box.setModal(False)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.explained = box
        return text

    def _explain_env(self) -> None:
        row = self.env_table.currentRow()
        cell = self.env_table.item(row, 0) if row >= 0 else None
        name = cell.text().strip() if cell is not None else ""
        if name:
            self.explain("env", name)

    def add_setting(self, kind: str, key: str) -> None:
        """Bring the setting ``key`` into view to be set (the items panel's "Add to
        preset…"): a variable gets a row (its value to fill in), a torch setting its
        widget focused."""
        self.tabs.setCurrentIndex(0)
        if kind == "env":
            names = [
                (self.env_table.item(row, 0) or QTableWidgetItem()).text()
                for row in range(self.env_table.rowCount())
            ]
            row = names.index(key) if key in names else self.add_env_row(key, "")
            self.env_table.setCurrentCell(row, 1)
            self.env_table.setFocus()
            return
        button = self.torch_form.help_buttons.get(key)
        if button is not None:
            button.setFocus()

    # -- form <-> data ------------------------------------------------------------------
    def _item_data(self, kind: str, key: str, value: Any) -> Any:
        meta = self._meta.get((kind, key))
        if not meta:
            return value
        return {"value": value, **meta}

    def form_data(self) -> dict[str, Any]:
        """The form as the mapping a preset file holds."""
        name = self.name_edit.text().strip()
        # The id stays while the name does (a renamed preset gets an id from its name).
        ident = self._ident if self._ident and name == self._ident_name else slug(name)
        data: dict[str, Any] = {
            "id": ident,
            "name": name,
            "description": self.description_edit.toPlainText().strip(),
            "archs": [arch for arch, box in self.arch_boxes.items() if box.isChecked()],
        }
        env: dict[str, Any] = {}
        for row in range(self.env_table.rowCount()):
            key = (self.env_table.item(row, 0) or QTableWidgetItem()).text().strip()
            value = (self.env_table.item(row, 1) or QTableWidgetItem()).text()
            if key:
                env[key] = self._item_data("env", key, value)
        torch: dict[str, Any] = {}
        values = self.torch_form.values()
        for key, value in values.items():
            torch[key] = self._item_data("torch", key, value)
        if env:
            data["env"] = env
        if torch:
            data["torch"] = torch
        return data

    def form_text(self) -> str:
        return yaml.safe_dump(self.form_data(), sort_keys=False, allow_unicode=True)

    def _fill_form(self, preset: Preset) -> None:
        self._filling = True
        try:
            self._meta = {}
            for item in preset.items():
                meta: dict[str, Any] = {"why": item.why, "source": item.source}
                if item.kind == "env" and set(item.platforms) != {"linux", "windows"}:
                    meta["platforms"] = list(item.platforms)
                self._meta[(item.kind, item.key)] = {k: v for k, v in meta.items() if v}
            self.name_edit.setText(preset.name)
            self.description_edit.setPlainText(preset.description)
            for arch, box in self.arch_boxes.items():
                box.setChecked(arch in preset.archs)
            self.env_table.setRowCount(0)
            for item in preset.env:
                self.add_env_row(item.key, str(item.value))
            self.torch_form.fill({item.key: item.value for item in preset.torch})
        finally:
            self._filling = False

    # -- validation ----------------------------------------------------------------------
    def on_raw_tab(self) -> bool:
        return self.tabs.currentIndex() == 1

    def _env_problem(self) -> str:
        """Check each variable row against the catalogue; the first refusal ("" = none)."""
        first = ""
        self.env_table.blockSignals(True)
        try:
            for row in range(self.env_table.rowCount()):
                key = (self.env_table.item(row, 0) or QTableWidgetItem()).text().strip()
                value = (self.env_table.item(row, 1) or QTableWidgetItem()).text()
                check = self.env_table.item(row, 2)
                if check is None:
                    continue
                if not key:
                    check.setText("")
                    continue
                verdict = self.catalogue.validate(key, value, self.platform)
                check.setText(verdict.message or translate("PresetEditor", "ok"))
                check.setToolTip(verdict.message)
                check.setForeground(QBrush(ERROR_COLOR if not verdict.accepted else QColor()))
                if not verdict.accepted and not first:
                    first = verdict.message
        finally:
            self.env_table.blockSignals(False)
        return first

    @Slot()
    def _validate(self) -> None:
        if self._filling:
            return
        problem = ""
        if not self.on_raw_tab():
            problem = self._env_problem()
        text = self.raw_edit.toPlainText() if self.on_raw_tab() else self.form_text()
        self.current = None
        if not problem:
            try:
                self.current = parse_preset(text, self.file)
            except PresetError as exc:
                # The form has no lines: name the field; the raw YAML names the line too.
                problem = str(exc) if self.on_raw_tab() else f"{exc.field}: {exc.problem}"
        self.show_error(problem)
        self.save_button.setEnabled(self.current is not None)
        unknown = unknown_variables(self.current) if self.current is not None else []
        note = translate("PresetEditor", UNKNOWN_NOTE)
        self.unknown_label.setText(note.format(names=", ".join(unknown)) if unknown else "")
        self.unknown_label.setVisible(bool(unknown))

    def show_error(self, text: str) -> None:
        self.error = text
        self.error_label.setText(text)

    def set_saving(self, saving: bool) -> None:
        """While the owner saves, nothing can change or close the dialog: the owner's
        answer (:meth:`accept` or :meth:`show_error`) needs it to still exist."""
        self._saving = saving
        self.buttons.setEnabled(not saving)
        self.save_button.setEnabled(not saving and self.current is not None)
        self.tabs.setEnabled(not saving)
        self.error_label.setStyleSheet("color: gray;" if saving else "color: #b00020;")
        saving_text = translate("PresetEditor", SAVING)
        if saving:
            self.show_error(saving_text)  # a state, not an error: grey
        elif self.error == saving_text:  # the note this method put there, not an error
            self.show_error("")

    @property
    def saving(self) -> bool:
        return self._saving

    def reject(self) -> None:
        """Cancel, Escape or the window's close button: refused while the save runs (the
        preset may already be written; the dialog closes when the save answers)."""
        if self._saving:
            return
        super().reject()

    @Slot(int)
    def _on_tabs_current_changed(self, index: int) -> None:
        if index == 1:  # form -> YAML: the form's preset, as a file writes it
            preset = self.current
            text = dump_preset(preset) if preset is not None else self.form_text()
            self.raw_edit.blockSignals(True)
            self.raw_edit.setPlainText(text)
            self.raw_edit.blockSignals(False)
            self._validate()
            return
        try:  # YAML -> form: only a valid text converts; otherwise stay and say why
            preset = parse_preset(self.raw_edit.toPlainText(), self.file)
        except PresetError as exc:
            self.tabs.blockSignals(True)
            self.tabs.setCurrentIndex(1)
            self.tabs.blockSignals(False)
            self.show_error(
                translate(
                    "PresetEditor", "{problem} — fix it here before switching to the form."
                ).format(problem=exc)
            )
            self.save_button.setEnabled(False)
            return
        self._ident, self._ident_name = preset.id, preset.name
        self._fill_form(preset)
        self._validate()

    def request_save(self) -> None:
        """Ask the owner to save the preset shown (nothing happens while it is invalid)."""
        self._validate()
        if self.current is not None:
            self.save_requested.emit(self.current)

    def items(self) -> tuple[Item, ...]:
        return self.current.items() if self.current is not None else ()
