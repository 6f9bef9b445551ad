"""Dialogs of the environment editor: edit one value (PATH-like ones as a list), show a diff."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.envvars import plan as env_plan
from rocmpanel.envvars.catalogue import Catalogue, Status
from rocmpanel.envvars.store import EnvConflictError


class PathListEditor(QWidget):
    """A PATH-like value as a list: add, remove, reorder and edit entries in place."""

    changed = Signal()

    def __init__(self, entries: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget(self)
        self.list.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.list.setAccessibleName(translate("PathListEditor", "Entries"))
        for entry in entries:
            self._append(entry)
        self.list.itemChanged.connect(lambda _item: self.changed.emit())
        self.list.model().rowsMoved.connect(lambda *_args: self.changed.emit())
        buttons = QVBoxLayout()
        for text, slot in (
            (translate("PathListEditor", "&Add"), self.add_entry),
            (translate("PathListEditor", "&Remove"), self.remove_entry),
            (translate("PathListEditor", "Move &up"), lambda: self.move_entry(-1)),
            (translate("PathListEditor", "Move &down"), lambda: self.move_entry(1)),
        ):
            button = QPushButton(text, self)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)

    def _append(self, text: str) -> QListWidgetItem:
        item = QListWidgetItem(text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        self.list.addItem(item)
        return item

    def entries(self) -> list[str]:
        return [self.list.item(row).text() for row in range(self.list.count())]

    def add_entry(self) -> None:
        item = self._append("")
        self.list.setCurrentItem(item)
        self.list.editItem(item)
        self.changed.emit()

    def remove_entry(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            self.list.takeItem(row)
            self.changed.emit()

    def move_entry(self, step: int) -> None:
        row = self.list.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.list.count():
            return
        item = self.list.takeItem(row)
        self.list.insertItem(target, item)
        self.list.setCurrentRow(target)
        self.changed.emit()


VALUE_LITERAL = QT_TRANSLATE_NOOP(
    "ValueDialog", "Stored literally: a $ stays a $ (nothing in the value is expanded)."
)
VALUE_REFERENCES = QT_TRANSLATE_NOOP(
    "ValueDialog",
    "A path may refer to other variables only as $NAME or ${NAME} (e.g. $HOME/rocm or "
    "$PATH); any other $ is refused.",
)
VALUE_WINDOWS = QT_TRANSLATE_NOOP(
    "ValueDialog", "Stored as typed; %NAME% refers to another variable."
)


def value_policy(takes_references: bool, platform: str) -> str:
    """The one line under the value field saying how ``$`` is treated."""
    if platform == "windows":
        return translate("ValueDialog", VALUE_WINDOWS)
    return translate("ValueDialog", VALUE_REFERENCES if takes_references else VALUE_LITERAL)


class ValueDialog(QDialog):
    """Edit (or add) one variable; the value is checked as you type and OK stays disabled
    while the catalogue refuses it. The verdict line stays empty until something is typed
    or chosen: an empty "Add" dialog opens without an error."""

    def __init__(
        self,
        catalogue: Catalogue,
        platform: str,
        name: str = "",
        value: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.catalogue = catalogue
        self.platform = platform
        self.setWindowTitle(
            translate("ValueDialog", "Edit {name}").format(name=name)
            if name
            else translate("ValueDialog", "Add a variable")
        )
        self.resize(640, 420)
        self.name_box = QComboBox(self)
        self.name_box.setEditable(True)
        self.name_box.addItems(sorted(catalogue.known_names()))
        self.name_box.setCurrentText(name)
        self.name_box.setEnabled(not name)
        self.name_box.setAccessibleName(translate("ValueDialog", "Variable name"))
        self.meaning = QLabel(self)
        self.meaning.setWordWrap(True)
        self.verdict = QLabel(self)
        self.verdict.setWordWrap(True)
        self.policy = QLabel(self)
        self.policy.setWordWrap(True)
        self.policy.setAccessibleName(translate("ValueDialog", "How the value is stored"))
        self.editor_host = QVBoxLayout()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow(translate("ValueDialog", "&Variable:"), self.name_box)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.meaning)
        layout.addLayout(self.editor_host, 1)
        layout.addWidget(self.policy)
        layout.addWidget(self.verdict)
        layout.addWidget(self.buttons)
        self.list_editor: PathListEditor | None = None
        self.line: QLineEdit | None = None
        self.choice: QComboBox | None = None
        self.edited = False  # nothing typed or chosen yet: no verdict is shown
        self._build_editor(value)
        self.name_box.currentTextChanged.connect(self._on_name_changed)

    def _clear_editor(self) -> None:
        while self.editor_host.count():
            item = self.editor_host.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.setParent(None)
                widget.deleteLater()
        self.list_editor = self.line = self.choice = None

    def _build_editor(self, value: str) -> None:
        self._clear_editor()
        info = self.catalogue.lookup(self.name())
        self.meaning.setText(
            info.meaning
            if info
            else translate("ValueDialog", "Not in the catalogue: kept as plain text.")
        )
        self.policy.setText(value_policy(info is not None and info.takes_references, self.platform))
        if info is not None and info.is_list:
            if not value and self.name() == "PATH" and self.platform == "linux":
                value = "$PATH"  # keep the system folders: the list adds to them
            self.list_editor = PathListEditor(env_plan.list_entries(value, self.platform), self)
            self.list_editor.changed.connect(self._on_edited)
            self.editor_host.addWidget(self.list_editor)
        elif info is not None and info.kind == "choices":
            self.choice = QComboBox(self)
            self.choice.addItems(list(info.choices))
            self.choice.setAccessibleName(translate("ValueDialog", "Value"))
            if value:
                self.choice.setCurrentText(value)
            self.choice.currentTextChanged.connect(self._on_edited)
            self.editor_host.addWidget(self.choice)
        else:
            self.line = QLineEdit(value, self)
            self.line.setAccessibleName(translate("ValueDialog", "Value"))
            self.line.setPlaceholderText(
                info.format_hint() if info else translate("ValueDialog", "value")
            )
            self.line.textChanged.connect(self._on_edited)
            self.editor_host.addWidget(self.line)
            self.editor_host.addStretch(1)
        self._update_verdict()

    def _on_name_changed(self, _text: str) -> None:
        self.edited = True
        self._build_editor(self.value())

    def _on_edited(self, *_args: object) -> None:
        self.edited = True
        self._update_verdict()

    def name(self) -> str:
        return self.name_box.currentText().strip()

    def value(self) -> str:
        if self.list_editor is not None:
            return env_plan.join_entries(self.list_editor.entries(), self.platform)
        if self.choice is not None:
            return self.choice.currentText()
        return self.line.text() if self.line is not None else ""

    def set_value(self, value: str) -> None:
        if self.line is not None:
            self.line.setText(value)
        elif self.choice is not None:
            self.choice.setCurrentText(value)
        else:
            self._build_editor(value)

    def _update_verdict(self, *_args: object) -> None:
        verdict = self.catalogue.validate(self.name() or "_", self.value(), self.platform)
        ok = verdict.status is not Status.INVALID and bool(self.name())
        color = {Status.INVALID: "#b00020", Status.WARNING: "#8a5a00"}.get(verdict.status, "")
        self.verdict.setStyleSheet(f"color: {color};" if color else "")
        shown = verdict.message or (translate("ValueDialog", "Valid.") if ok else "")
        self.verdict.setText(shown if self.edited else "")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ok)


class DiffDialog(QDialog):
    """Shows the diff of every file or registry key an apply would change."""

    def __init__(self, text: str, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(820, 520)
        self.view = QPlainTextEdit(self)
        self.view.setReadOnly(True)
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.view.setFont(font)
        self.view.setPlainText(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        layout.addWidget(buttons)


def conflict_box(exc: EnvConflictError, parent: QWidget) -> QMessageBox:
    """ "Changed on disk": the message, the diff as details, Reload (AcceptRole) and Cancel.

    Deleted when closed; the caller connects ``buttonClicked`` and opens it.
    """
    title = translate("conflict_box", "Changed on disk")
    box = QMessageBox(QMessageBox.Icon.Warning, title, exc.message, parent=parent)
    box.setDetailedText(exc.diff)
    box.addButton(translate("conflict_box", "Reload"), QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return box
