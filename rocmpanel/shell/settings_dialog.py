"""File → Settings: a form built from the declared settings, nothing listed twice.

The fields sit on one page per group (General, Workload, Monitor, Chat, Network), labelled
in words with their unit after the number. An interpreter field has a Browse button and is
checked as it is edited: one that does not exist or cannot run is refused next to the field
(and OK is disabled) before a job would fail on it. Nothing is refused before the user
edits it; OK checks the fields not edited as well.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
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

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import GROUPS, PYTHON, Declared, Settings, declared
from rocmpanel.gui.report import report

# Tab titles with their mnemonics (Alt+letter); OK and Cancel keep O and C.
TAB_TITLES = {
    "General": "&General",
    "Workload": "&Workload",
    "Monitor": "&Monitor",
    "Chat": "C&hat",
    "Network": "&Network",
}
CHAT_NOTE = (
    "The chat model, precision, device, context length, sampling and system prompt are "
    "chosen in the Chat tab, which remembers them."
)
_RESERVED_MNEMONICS = {"o", "c", *(t[t.index("&") + 1].lower() for t in TAB_TITLES.values())}


def python_problem(text: str) -> str:
    """Why ``text`` cannot be the interpreter of a job ("" when it can).

    As ``rocmpanel.jobs.spec.resolve_python`` reads it: empty is the panel's own Python,
    a text with a path separator is a file, anything else a command looked up on PATH."""
    if not text:
        return ""
    if os.sep not in text and not (os.altsep and os.altsep in text):
        if shutil.which(text) is None:
            return (
                f"There is no program called {text} on PATH. Give the full path of a Python, "
                "or leave the field empty for the panel's own Python."
            )
        return ""
    path = Path(text)
    if not path.is_absolute():
        return (
            f"{text} is not a full path, so it would depend on the folder the panel starts "
            "in. Give the full path, or choose the file with Browse."
        )
    if not path.exists():
        return (
            f"{text} does not exist. Choose a Python with Browse, or leave the field empty "
            "for the panel's own Python."
        )
    if path.is_dir():
        return (
            f"{text} is a folder. Choose the Python program inside it "
            "(bin/python, or python.exe on Windows)."
        )
    if not os.access(path, os.X_OK):
        return f"{text} is not a program this user can run. Choose a Python executable."
    return ""


def with_mnemonic(label: str, taken: set[str]) -> str:
    """``label`` with ``&`` before its first letter not in ``taken`` (which it joins), so
    Alt+letter moves to the field; unchanged when every letter is taken."""
    for index, char in enumerate(label):
        if char.isalpha() and char.isascii() and char.lower() not in taken:
            taken.add(char.lower())
            return f"{label[:index]}&{label[index:]}"
    return label


def _editor_for(item: Declared, value: Any) -> QWidget:
    opt = item.option
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
    line.setPlaceholderText(opt.placeholder)
    return line


def _value_of(editor: QWidget) -> Any:
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
        self.browse_button = QPushButton("Browse…")
        self.browse_button.setToolTip(f"Choose the {name} in a file dialog")
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
        self.setWindowTitle("Settings")
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
            self.pages.addTab(page, TAB_TITLES[group])
        self.editors: list[tuple[Declared, QWidget]] = []
        self.python_fields: dict[str, PythonField] = {}
        self._page_of: dict[str, QWidget] = {}
        for item in declared():
            opt = item.option
            if not opt.visible:
                continue
            editor = _editor_for(item, settings.value(item))
            editor.setToolTip(opt.help)
            self.editors.append((item, editor))
            field: QWidget = editor
            if opt.kind == PYTHON:
                assert isinstance(editor, QLineEdit)
                python = PythonField(editor, opt.label[:1].lower() + opt.label[1:])
                python.browse_button.clicked.connect(
                    lambda _checked=False, key=opt.key: self._on_browse_clicked(key)
                )
                # Checked as it is edited, not before: connected after the stored text.
                editor.textChanged.connect(lambda _text, f=python: self._on_python_edited(f))
                self.python_fields[opt.key] = python
                self._page_of[opt.key] = group_pages[opt.group]
                field = python
            label = QLabel(with_mnemonic(opt.label, taken[opt.group]) + ":")
            label.setBuddy(editor)
            label.setToolTip(opt.help)
            forms[opt.group].addRow(label, field)
        note = QLabel(CHAT_NOTE)
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
        path, _ = QFileDialog.getOpenFileName(self, "Choose a Python", start)
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
            report(exc, "Saving settings", label=self.error)  # shown here, detail in the log
            return
        if notices:  # a damaged file was kept aside before it was replaced: say where
            self.notice_box = QMessageBox(
                QMessageBox.Icon.Information,
                "Settings saved",
                "\n\n".join(notices),
                QMessageBox.StandardButton.Ok,
                self.parentWidget(),
            )
            self.notice_box.setModal(False)
            self.notice_box.show()
        super().accept()
