"""File → Settings: a form built from the declared settings, nothing listed twice."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import BY_NAME, SETTINGS, Setting, Settings


def _editor_for(setting: Setting, value: Any) -> QWidget:
    if setting.type is bool:
        box = QCheckBox()
        box.setChecked(bool(value))
        return box
    if setting.type is int:
        spin = QSpinBox()
        spin.setRange(int(setting.minimum or 0), int(setting.maximum or 2_000_000_000))
        spin.setValue(int(value))
        return spin
    if setting.type is float:
        dspin = QDoubleSpinBox()
        dspin.setDecimals(2)
        dspin.setRange(float(setting.minimum or 0.0), float(setting.maximum or 1e9))
        dspin.setValue(float(value))
        return dspin
    line = QLineEdit(str(value))
    line.setClearButtonEnabled(True)
    return line


def _value_of(setting: Setting, editor: QWidget) -> Any:
    if isinstance(editor, QCheckBox):
        return editor.isChecked()
    if isinstance(editor, QSpinBox | QDoubleSpinBox):
        return editor.value()
    assert isinstance(editor, QLineEdit)
    return editor.text().strip()


class SettingsDialog(QDialog):
    """Edits every visible setting; saves atomically on OK."""

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle("Settings")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.editors: dict[str, QWidget] = {}
        for setting in SETTINGS:
            if not setting.visible:
                continue
            editor = _editor_for(setting, settings.get(setting.name))
            editor.setToolTip(setting.help)
            self.editors[setting.name] = editor
            form.addRow(setting.label + ":", editor)
        layout.addLayout(form)
        self.error = QLabel()
        self.error.setStyleSheet("color: #c0392b")
        self.error.setWordWrap(True)
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def accept(self) -> None:
        try:
            for name, editor in self.editors.items():
                self.settings.set(name, _value_of(BY_NAME[name], editor))
            self.settings.save()
        except (ValueError, PanelError) as exc:
            self.error.setText(str(exc))
            return
        super().accept()
