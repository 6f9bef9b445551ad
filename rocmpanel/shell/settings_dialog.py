"""File → Settings: a form built from the declared settings, nothing listed twice.

The fields sit on one page per group (General, Workload, Monitor, Chat, Network), labelled
in words with their unit after the number; a choice among fixed values (language, colours)
is a drop-down list. An interpreter field has a Browse button and is
checked as it is edited: one that does not exist or cannot run is refused next to the field
(and OK is disabled) before a job would fail on it. Nothing is refused before the user
edits it; OK checks the fields not edited as well.
"""

from __future__ import annotations

import os
import shutil
from enum import Enum
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.enums import Language, Theme
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.settings import GROUPS, PYTHON, Declared, Settings, declared
from rocmpanel.gui.report import report

# Tab titles with their mnemonics (Alt+letter); OK and Cancel keep O and C.
TAB_TITLES = {
    "General": QT_TRANSLATE_NOOP("SettingsDialog", "&General"),
    "Workload": QT_TRANSLATE_NOOP("SettingsDialog", "&Workload"),
    "Monitor": QT_TRANSLATE_NOOP("SettingsDialog", "&Monitor"),
    "Chat": QT_TRANSLATE_NOOP("SettingsDialog", "C&hat"),
    "Network": QT_TRANSLATE_NOOP("SettingsDialog", "&Network"),
}
CHAT_NOTE = QT_TRANSLATE_NOOP(
    "SettingsDialog",
    "The chat model, precision, device, context length, sampling and system prompt are "
    "chosen in the Chat tab, which remembers them.",
)
# What a drop-down list shows for each value of a setting's enum (the value where none).
CHOICE_LABELS: dict[Enum, str] = {
    Language.SYSTEM: QT_TRANSLATE_NOOP("SettingsDialog", "System"),
    Language.ENGLISH: QT_TRANSLATE_NOOP("SettingsDialog", "English"),
    # A language is offered in its own words: someone who cannot read the others finds it.
    Language.CHINESE_SIMPLIFIED: "简体中文 (zh_CN)",
    Theme.SYSTEM: QT_TRANSLATE_NOOP("SettingsDialog", "System"),
    Theme.LIGHT: QT_TRANSLATE_NOOP("SettingsDialog", "Light"),
    Theme.DARK: QT_TRANSLATE_NOOP("SettingsDialog", "Dark"),
}
RESTART_NOTE = QT_TRANSLATE_NOOP(
    "SettingsDialog", "The new language takes effect when the panel starts again."
)
_RESERVED_MNEMONICS = {"o", "c", *(t[t.index("&") + 1].lower() for t in TAB_TITLES.values())}


def choice_label(value: Enum) -> str:
    label = CHOICE_LABELS.get(value)
    return translate("SettingsDialog", label) if label is not None else str(value.value)


def python_problem(text: str) -> str:
    """Why ``text`` cannot be the interpreter of a job ("" when it can).

    As ``rocmpanel.jobs.spec.resolve_python`` reads it: empty is the panel's own Python,
    a text with a path separator is a file, anything else a command looked up on PATH."""
    if not text:
        return ""
    if os.sep not in text and not (os.altsep and os.altsep in text):
        if shutil.which(text) is None:
            return translate(
                "settings_dialog",
                "There is no program called {text} on PATH. Give the full path of a Python, "
                "or leave the field empty for the panel's own Python.",
            ).format(text=text)
        return ""
    path = Path(text)
    if not path.is_absolute():
        return translate(
            "settings_dialog",
            "{text} is not a full path, so it would depend on the folder the panel starts "
            "in. Give the full path, or choose the file with Browse.",
        ).format(text=text)
    if not path.exists():
        return translate(
            "settings_dialog",
            "{text} does not exist. Choose a Python with Browse, or leave the field empty "
            "for the panel's own Python.",
        ).format(text=text)
    if path.is_dir():
        return translate(
            "settings_dialog",
            "{text} is a folder. Choose the Python program inside it "
            "(bin/python, or python.exe on Windows).",
        ).format(text=text)
    if not os.access(path, os.X_OK):
        return translate(
            "settings_dialog",
            "{text} is not a program this user can run. Choose a Python executable.",
        ).format(text=text)
    return ""


def with_mnemonic(label: str, taken: set[str], source: str = "") -> str:
    """``label`` with ``&`` before its first letter not in ``taken`` (which it joins), so
    Alt+letter moves to the field; unchanged when every letter is taken. A label without
    Latin letters (a translation) gets the letter from ``source`` (its English text) in
    brackets after it, as Qt's translations write mnemonics: "语言(&L)"."""
    if not any(c.isascii() and c.isalpha() for c in label):
        for char in source:
            if char.isalpha() and char.isascii() and char.lower() not in taken:
                taken.add(char.lower())
                return f"{label}(&{char.upper()})"
        return label
    for index, char in enumerate(label):
        if char.isalpha() and char.isascii() and char.lower() not in taken:
            taken.add(char.lower())
            return f"{label[:index]}&{label[index:]}"
    return label


def _editor_for(item: Declared, value: Any) -> QWidget:
    opt = item.option
    if isinstance(item.type, type) and issubclass(item.type, Enum):
        combo = QComboBox()
        for member in item.type:  # by value: Qt hands a str enum back as a plain str
            combo.addItem(choice_label(member), member.value)
        combo.setCurrentIndex(max(0, combo.findData(value.value)))
        return combo
    if item.type is bool:
        box = QCheckBox()
        box.setChecked(bool(value))
        return box
    if item.type is int:
        spin = QSpinBox()
        spin.setRange(int(opt.minimum or 0), int(opt.maximum or 2_000_000_000))
        spin.setValue(int(value))
        spin.setSuffix(opt.suffix)
        return spin
    if item.type is float:
        dspin = QDoubleSpinBox()
        dspin.setDecimals(2)
        dspin.setRange(float(opt.minimum or 0.0), float(opt.maximum or 1e9))
        dspin.setValue(float(value))
        dspin.setSuffix(opt.suffix)
        return dspin
    line = QLineEdit(str(value))
    line.setClearButtonEnabled(True)
    if opt.placeholder:
        line.setPlaceholderText(translate("Settings", opt.placeholder))
    return line


def _value_of(editor: QWidget) -> Any:
    if isinstance(editor, QComboBox):
        return editor.currentData()
    if isinstance(editor, QCheckBox):
        return editor.isChecked()
    if isinstance(editor, QSpinBox | QDoubleSpinBox):
        return editor.value()
    assert isinstance(editor, QLineEdit)
    return editor.text().strip()


class PythonField(QWidget):
    """A line edit for an interpreter, a Browse button and the reason it is refused."""

    def __init__(self, line: QLineEdit, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.line = line
        self.browse_button = QPushButton(translate("PythonField", "Browse…"))
        self.browse_button.setToolTip(
            translate("PythonField", "Choose the interpreter ({name}) in a file dialog").format(
                name=name
            )
        )
        self.error = QLabel()
        self.error.setObjectName("fieldError")
        self.error.setStyleSheet("color: #c0392b")
        self.error.setWordWrap(True)
        self.error.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(line, 1)
        row.addWidget(self.browse_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.error)

    def check(self) -> str:
        """Show why the text is refused (or nothing); the reason, "" when none."""
        problem = python_problem(self.line.text().strip())
        self.error.setText(problem)
        self.error.setVisible(bool(problem))
        return problem


class SettingsDialog(QDialog):
    """Edits every visible setting; checks them all, then saves atomically on OK."""

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.notice_box: QMessageBox | None = None
        self.setWindowTitle(translate("SettingsDialog", "Settings"))
        self.setMinimumWidth(560)
        layout = QVBoxLayout(self)
        self.pages = QTabWidget()
        forms: dict[str, QFormLayout] = {}
        group_pages: dict[str, QWidget] = {}
        taken: dict[str, set[str]] = {}
        for group in GROUPS:
            page = QWidget()
            form = QFormLayout(page)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            forms[group] = form
            group_pages[group] = page
            taken[group] = set(_RESERVED_MNEMONICS)
            self.pages.addTab(page, translate("SettingsDialog", TAB_TITLES[group]))
        self.editors: list[tuple[Declared, QWidget]] = []
        self.python_fields: dict[str, PythonField] = {}
        self._page_of: dict[str, QWidget] = {}
        for item in declared():
            opt = item.option
            if not opt.visible:
                continue
            editor = _editor_for(item, settings.value(item))
            help_text = translate("Settings", opt.help) if opt.help else ""
            label_text = translate("Settings", opt.label)
            editor.setToolTip(help_text)
            self.editors.append((item, editor))
            field: QWidget = editor
            if opt.kind == PYTHON:
                assert isinstance(editor, QLineEdit)
                python = PythonField(editor, label_text)
                python.browse_button.clicked.connect(
                    lambda _checked=False, key=opt.key: self._on_browse_clicked(key)
                )
                # Checked as it is edited, not before: connected after the stored text.
                editor.textChanged.connect(lambda _text, f=python: self._on_python_edited(f))
                self.python_fields[opt.key] = python
                self._page_of[opt.key] = group_pages[opt.group]
                field = python
            label = QLabel(
                with_mnemonic(label_text, taken[opt.group], opt.label)
                + translate("SettingsDialog", ":")
            )
            label.setBuddy(editor)
            label.setToolTip(help_text)
            forms[opt.group].addRow(label, field)
            if item.type is Language:
                assert isinstance(editor, QComboBox)
                self.language_note = QLabel(translate("SettingsDialog", RESTART_NOTE))
                self.language_note.setObjectName("fieldNote")
                self.language_note.setWordWrap(True)
                self.language_note.hide()
                start = editor.currentIndex()
                editor.currentIndexChanged.connect(
                    lambda index, first=start: self.language_note.setVisible(index != first)
                )
                forms[opt.group].addRow("", self.language_note)
        note = QLabel(translate("SettingsDialog", CHAT_NOTE))
        note.setWordWrap(True)
        forms["Chat"].addRow(note)
        layout.addWidget(self.pages)
        self.error = QLabel()
        self.error.setStyleSheet("color: #c0392b")
        self.error.setWordWrap(True)
        layout.addWidget(self.error)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)

    def editor(self, key: str) -> QWidget | None:
        """The editor of the setting stored as ``key``; None when it is not shown."""
        return next((e for item, e in self.editors if item.option.key == key), None)

    def choose_path(self, key: str, path: str) -> None:
        """Put ``path`` (picked with Browse) in the field of ``key``; it is checked at once."""
        self.python_fields[key].line.setText(path)

    def _on_browse_clicked(self, key: str) -> None:
        current = self.python_fields[key].line.text().strip()
        start = str(Path(current).parent) if os.sep in current else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(
            self, translate("SettingsDialog", "Choose a Python"), start
        )
        if path:
            self.choose_path(key, str(Path(path)))  # native separators

    def _on_python_edited(self, field: PythonField) -> None:
        field.check()
        self._enable_ok()

    def _enable_ok(self) -> None:
        """OK while no field shows a reason it is refused."""
        self.ok_button.setEnabled(not any(f.error.text() for f in self.python_fields.values()))

    def accept(self) -> None:
        # Fields not edited are checked now (a stored interpreter may have gone since).
        refused = [key for key, field in self.python_fields.items() if field.check()]
        self._enable_ok()
        if refused:  # the reason is shown next to the field: bring it into view
            self.pages.setCurrentWidget(self._page_of[refused[0]])
            self.python_fields[refused[0]].line.setFocus()
            return
        trial = Settings(self.settings.path)
        try:
            for item, editor in self.editors:  # every value is checked before any is kept
                trial.assign(item, _value_of(editor))
            for item, _ in self.editors:
                self.settings.assign(item, trial.value(item))
            notices = self.settings.save()
        except (ValueError, PanelError) as exc:  # a value that does not fit, or saving failed
            # Shown here, the detail in the log.
            report(exc, translate("SettingsDialog", "Saving settings"), label=self.error)
            return
        self._apply_theme()
        if notices:  # a damaged file was kept aside before it was replaced: say where
            self.notice_box = QMessageBox(
                QMessageBox.Icon.Information,
                translate("SettingsDialog", "Settings saved"),
                "\n\n".join(notices),
                QMessageBox.StandardButton.Ok,
                self.parentWidget(),
            )
            self.notice_box.setModal(False)
            self.notice_box.show()
        super().accept()

    def _apply_theme(self) -> None:
        """The colours change at once (the language needs a new start)."""
        from rocmpanel.gui.palette import controller

        theme = controller()
        if theme is not None and theme.theme is not self.settings.general.theme:
            theme.set_theme(self.settings.general.theme)
